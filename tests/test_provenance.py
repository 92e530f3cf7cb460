"""Provenance (``chronolog run --provenance``, ``chronolog explain``): the events a firing
combined, the triples a query solution matched, where each fact came from, and, on the
fire and CityBench examples, that every detection's explained inputs alone produce it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chronolog import cep
from chronolog.cep import Rule, Terminator, Predicate, Within, attr, event, last, param, where
from chronolog.cep.rules import Aggregate, Negation
from chronolog.datalog import Reasoner, load_program
from chronolog.engine import Engine
from chronolog.errors import ChronologError
from chronolog.formats import encode_text
from chronolog.lang.registry import compile_program, load_spec
from chronolog.program import Options, ProgramSpec, explanation
from chronolog.formats import graph_text
from chronolog.provenance.facts import Derivations
from chronolog.provenance.records import explain_text, read_records
from chronolog.provenance.solutions import SolutionSupport
from chronolog.sparql import prepare
from chronolog.store import TRIPLE
from chronolog.terms import TermDictionary

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
EX = "http://example.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def fire_engine(**given) -> Engine:
    return Engine(fire_spec(**given))


def fire_spec(**given) -> ProgramSpec:
    options = Options((str(EXAMPLES / "fire/background.ttl"),), (str(EXAMPLES / "fire/rooms.dl"),), **given)
    return load_spec(str(EXAMPLES / "fire/fire.dotr"), None, options)


# -- the temporal engine ---------------------------------------------------------------

def fire_rule() -> Rule:
    return Rule(name="fire", emits="Fire", terminator=Terminator("S", "Smoke"),
                predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
                                      where=[param("T.area", "S.area"), where("T.value", ">", 45)])],
                negations=[Negation("R", "Rain", Within(300, of="S"), where=[param("R.area", "S.area")])],
                aggregates=[Aggregate("hottest", "max", "Temp", "value", Within(300, of="S"),
                                      where=[param("hottest.area", "S.area")])],
                outputs={"area": attr("S.area"), "temp": attr("T.value")})


def temporal(explain: bool) -> cep.TemporalEngine:
    engine = cep.TemporalEngine(explain=explain)
    engine.declare("Smoke", ["area"])
    engine.declare("Temp", ["area", "value"])
    engine.declare("Rain", ["area"])
    engine.register(fire_rule())
    return engine


def test_an_explaining_engine_says_which_events_each_firing_combined() -> None:
    stream = [event("Temp", 5, area="A", value=50), event("Temp", 10, area="A", value=60),
              event("Temp", 11, area="B", value=99), event("Rain", 11, area="B"), event("Smoke", 12, area="A")]
    (fire,) = temporal(True).push_batch(stream)
    (plain,) = temporal(False).push_batch(stream)
    why = fire.attrs.pop(cep.WHY)
    assert fire == plain  # only what the event carries differs
    bound, read, absent = why
    assert bound == (("S", tuple(stream[4])), ("T", tuple(stream[1])))  # last(): the later of the two readings
    assert read == (("hottest", (tuple(stream[0]), tuple(stream[1]))),)  # area B's reading is not aggregated
    assert absent == ("R",)


def test_what_a_composite_event_was_built_from_survives_a_snapshot() -> None:
    engine = temporal(True)
    engine.push_batch([event("Temp", 10, area="A", value=60)])
    again = temporal(True)
    again.restore(engine.snapshot())  # plain data: restorable in another process
    (fire,) = again.push_batch([event("Smoke", 12, area="A")])
    assert fire.attrs[cep.WHY][0][1] == ("T", ("Temp", 10, 10, {"area": "A", "value": 60}))


def test_without_explain_the_compiled_rule_records_nothing() -> None:
    plain, explaining = temporal(False), temporal(True)
    constants = lambda engine: [v for v in engine.rules.plans[0].fire.__globals__.values() if isinstance(v, str)]  # noqa: E731
    assert cep.WHY not in constants(plain) and "xs" not in plain.rules.plans[0].source
    assert cep.WHY in constants(explaining) and "xs" in explaining.rules.plans[0].source
    (out,) = plain.push_batch([event("Temp", 10, area="A", value=60), event("Smoke", 12, area="A")])
    assert set(out.attrs) == {"area", "temp"}


def test_a_dotr_program_without_provenance_makes_plain_outputs() -> None:
    engine = fire_engine()
    assert engine.program.explainer is None
    outputs = list(engine.run_files({"": str(EXAMPLES / "fire/stream.trig")}))
    assert len(outputs) == 1 and explanation(outputs[0]) is None


# -- facts ---------------------------------------------------------------------------

RULES = """PREFIX : <http://example.org/>
:knows(?b, ?a) :- :knows(?a, ?b).
:reach(?a, ?c) :- :knows(?a, ?b), :reach(?b, ?c).
:reach(?a, ?b) :- :knows(?a, ?b).
:lonely(?a) :- :Person(?a), not :knows(?a, :bob).
"""


def facts_setup(inputs: list[tuple[str, str, str]], background: list[tuple[str, str, str]]):
    d = TermDictionary()
    iri = lambda name: d.iri(RDF_TYPE if name == "a" else EX + name)  # noqa: E731
    program = load_program([(RULES, "people.dl")], d)
    reasoner = Reasoner(program, d)
    asserted = [tuple(map(iri, t)) for t in background]
    reasoner.add_background(asserted)
    triples = [tuple(map(iri, t)) for t in inputs]
    view = reasoner.at(triples)
    origins = Derivations(program, d, set(asserted).__contains__).at(view, {t: (("s", 7),) for t in triples})
    return d, iri, view, origins


def leaves(origin: dict) -> list[dict]:
    if origin["from"] == "rule":
        return [leaf for premise in origin["premises"] for leaf in leaves(premise)]
    return [origin]


def test_a_derived_fact_is_explained_down_to_inputs_and_background() -> None:
    d, iri, view, origins = facts_setup([("ann", "knows", "bob")], [("bob", "knows", "cat"), ("cat", "knows", "dan")])
    why = origins.explain(TRIPLE, (iri("ann"), iri("reach"), iri("dan")))
    assert why["from"] == "rule" and why["rule"].startswith("people.dl:3:1: :reach(?a, ?c)")
    found = {(leaf["from"], leaf["fact"]) for leaf in leaves(why)}
    assert ("input", f"<{EX}ann> <{EX}knows> <{EX}bob> .") in found
    assert all(origin in ("input", "background") for origin, _ in found)

    def check(origin: dict) -> None:  # every node holds in the view
        assert origin["fact"] in texts
        for premise in origin.get("premises", ()):
            check(premise)
    texts = {f"{d.decode(s)} {d.decode(p)} {d.decode(o)} ." for s, p, o in view.scan(TRIPLE)}
    check(why)


def test_a_symmetric_rule_never_explains_a_fact_by_itself() -> None:
    _, iri, _, origins = facts_setup([("ann", "knows", "bob")], [])
    why = origins.explain(TRIPLE, (iri("bob"), iri("knows"), iri("ann")))
    assert why["from"] == "rule" and [p["from"] for p in why["premises"]] == ["input"]
    assert origins.explain(TRIPLE, (iri("ann"), iri("knows"), iri("bob")))["from"] == "input"


def test_a_rule_with_negation_lists_what_did_not_hold() -> None:
    d, iri, _, origins = facts_setup([], [("eve", "a", "Person")])
    why = origins.explain(TRIPLE, (iri("eve"), iri("a"), iri("lonely")))
    assert why["from"] == "rule"
    assert why["absent"] == [f"<{EX}eve> <{EX}knows> <{EX}bob> ."]
    assert why["premises"][0]["from"] == "background"


# -- solutions -------------------------------------------------------------------------

def test_a_solution_is_explained_by_the_triples_it_matched_hidden_variables_included() -> None:
    d, iri, view, _ = facts_setup([("r1", "sensor", "s1"), ("s1", "in", "roomA"), ("r2", "sensor", "s2")],
                                  [("s2", "in", "roomB")])
    query = prepare("PREFIX : <http://example.org/> SELECT ?r WHERE { ?r :sensor ?s . ?s :in ?room "
                    "OPTIONAL { ?s :colour ?c } }", d)
    support = SolutionSupport(query)
    assert support.facts(view, 0, {"r": iri("r1")}) == [(TRIPLE, (iri("r1"), iri("sensor"), iri("s1"))),
                                                        (TRIPLE, (iri("s1"), iri("in"), iri("roomA")))]
    assert support.facts(view, 0, {"r": iri("r2")}) == [(TRIPLE, (iri("r2"), iri("sensor"), iri("s2"))),
                                                        (TRIPLE, (iri("s2"), iri("in"), iri("roomB")))]


def test_a_union_solution_is_explained_by_its_own_branch() -> None:
    d, iri, view, _ = facts_setup([("a", "p", "b"), ("c", "q", "d")], [])
    support = SolutionSupport(prepare("PREFIX : <http://example.org/> SELECT ?x ?y WHERE "
                                      "{ { ?x :p ?y } UNION { ?x :q ?y } }", d))
    assert support.facts(view, 0, {"x": iri("c"), "y": iri("d")}) == [(TRIPLE, (iri("c"), iri("q"), iri("d")))]


def test_a_grouped_solution_is_explained_by_its_whole_group() -> None:
    d, iri, view, _ = facts_setup([("r1", "sensor", "s1"), ("r2", "sensor", "s1"), ("r3", "sensor", "s2")], [])
    support = SolutionSupport(prepare("PREFIX : <http://example.org/> SELECT ?s (COUNT(?r) AS ?n) WHERE "
                                      "{ ?r :sensor ?s } GROUP BY ?s", d))
    assert sorted(support.facts(view, 0, {"s": iri("s1"), "n": None})) == sorted(
        [(TRIPLE, (iri("r1"), iri("sensor"), iri("s1"))), (TRIPLE, (iri("r2"), iri("sensor"), iri("s1")))])


# -- the examples ------------------------------------------------------------------------

def test_the_fire_detection_is_explained() -> None:
    engine = fire_engine(provenance=True)
    (output,) = engine.run_files({"": str(EXAMPLES / "fire/stream.trig")})
    record = explanation(output)
    assert record["rule"] == EX + "fire" and record["time"] == 12 and record["firing"] == "12-0-1"
    assert record["at"].endswith("fire.dotr:9:1")
    assert [(e["alias"], e["time"]) for e in record["events"]] == [("Smoke", 12), ("HighTemp", 10)]
    smoke, high = record["events"]
    assert high["bindings"]["val"] == '"65"^^<http://www.w3.org/2001/XMLSchema#integer>'
    room = high["facts"][-1]
    assert room["fact"] == f"<{EX}s1> <{EX}is_in_room> <{EX}roomA> ."
    assert room["rule"].endswith("rooms.dl:3:1: :is_in_room(?A, ?B) :- :is_at_location(?A, ?C), :is_in_room(?C, ?B).")
    assert [(p["from"], p["fact"]) for p in room["premises"]] == [
        ("input", f"<{EX}s1> <{EX}is_at_location> <{EX}locA> ."), ("background", f"<{EX}locA> <{EX}is_in_room> <{EX}roomA> .")]
    assert room["premises"][0]["elements"] == [{"stream": "", "time": 10}]
    assert record["aggregates"] == [{"name": "?max = max(HighTemp.val)",
                                     "events": [{"type": "HighTemp", "time": 10, "same_as": "HighTemp"}]}]
    assert record["graph"] == graph_text(output.triples, engine.dictionary)


def input_facts(record: dict) -> dict[int, dict[str, list[str]]]:
    """The input triples a record names, by time and stream."""
    found: dict[int, dict[str, list[str]]] = {}

    def fact(origin: dict) -> None:
        if origin["from"] == "input":
            for element in origin["elements"]:
                found.setdefault(element["time"], {}).setdefault(element["stream"], []).append(origin["fact"])
        for premise in origin.get("premises", ()):
            fact(premise)

    def composite(node: dict) -> None:
        for ev in node["events"] + [e for a in node.get("aggregates", ()) for e in a["events"]]:
            if "events" in ev:
                composite(ev)
            for origin in ev.get("facts", ()):
                fact(origin)

    if "solutions" in record:
        for solution in record["solutions"]:
            for origin in solution["facts"]:
                fact(origin)
    else:
        composite(record)
    return found


def without_firing(record: dict) -> str:
    return record["graph"].replace(record["firing"], "FIRING")


@pytest.mark.parametrize("example, count", [("fire", 1), ("citybench/q1", 539), ("citybench/q2", 149)])
def test_every_detection_is_produced_by_its_explained_inputs_alone(example: str, count: int) -> None:
    folder = EXAMPLES / example
    options = Options(tuple(map(str, folder.glob("background.*"))), tuple(map(str, folder.glob("*.dl"))),
                      provenance=True)
    spec = load_spec(str(next(folder.glob("*.dotr"))), None, options)
    engine = Engine(spec)
    records = [explanation(o) for o in engine.run_files({"": str(next(folder.glob("*.trig")))})]
    assert len(records) == count and all(records)
    replay = compile_program(spec)
    fresh = replay.snapshot()
    for record in records:
        replay.restore(fresh)
        outputs = []
        for time, streams in sorted(input_facts(record).items()):
            element = tuple(dict.fromkeys(t for texts in streams.values() for t in
                                          encode_text("\n".join(texts), replay.dictionary, format="nt")))
            outputs.extend(replay.push(time, {"": [element]}))
        outputs.extend(replay.flush())
        made = {(o.time, o.rule, without_firing(explanation(o))) for o in outputs}
        assert (record["time"], record["rule"], without_firing(record)) in made, explain_text({**record, "element": "?"})


# -- the command line --------------------------------------------------------------------

def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "chronolog", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_run_provenance_then_explain(tmp_path: Path) -> None:
    why = tmp_path / "why.jsonl"
    done = run_cli("run", "examples/citybench/q2", "--runner", "inprocess", "-o", str(tmp_path / "out.trig"),
                   "--provenance", str(why))
    assert done.returncode == 0, done.stderr
    records = list(read_records(str(why)))
    assert len(records) == 149
    elements = [r["element"] for r in records]
    written = (tmp_path / "out.trig").read_text()
    assert all(f"<{e}> {{" in written for e in elements)  # named like the output's elements
    first = records[0]
    shown = run_cli("explain", str(why), first["element"])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"{first['element']} at {first['time']}: rule <{first['rule']}>")
    assert "[input: the stream at " in shown.stdout and "[background]" in shown.stdout
    by_time = run_cli("explain", str(why), str(first["time"]), "--json")
    assert [json.loads(line)["time"] for line in by_time.stdout.splitlines()] == [
        r["time"] for r in records if r["time"] == first["time"]]
    missing = run_cli("explain", str(why), "urn:chronolog:element:1:9")
    assert missing.returncode == 2 and "no provenance record for urn:chronolog:element:1:9" in missing.stderr


def test_explain_names_a_broken_file_line(tmp_path: Path) -> None:
    bad = tmp_path / "why.jsonl"
    bad.write_text('{"element": "urn:chronolog:element:1:0", "events": []}\n{"time": 3\n')
    with pytest.raises(ChronologError, match=r"why.jsonl:2:\d+: not a provenance record"):
        list(read_records(str(bad)))


def test_the_explanation_of_an_output_is_the_same_as_rendered(tmp_path: Path) -> None:
    engine = fire_engine(provenance=True)
    (output,) = engine.run_files({"": str(EXAMPLES / "fire/stream.trig")})
    text = explain_text({**explanation(output), "element": "urn:chronolog:element:12:0"})
    assert text.splitlines()[0] == (f"urn:chronolog:element:12:0 at 12: rule <{EX}fire> "
                                    f"({EXAMPLES / 'fire/fire.dotr'}:9:1), firing 12-0-1")
    assert "  ?max = max(HighTemp.val) over 1 event:\n    HighTemp at 10 (the HighTemp above)" in text


@pytest.mark.parametrize("flags, explains", [
    (["--ui"], False),  # the live view alone records nothing: recording costs time
    (["--ui", "--provenance"], True),  # for the page only
    (["--provenance", "why.jsonl"], True),
    ([], False),
])
def test_which_runs_record_provenance(flags: list[str], explains: bool) -> None:
    from chronolog import cli

    args = cli.build_parser().parse_args(["run", "examples/fire/fire.dotr", *flags])
    assert cli._options(args).provenance is explains


def test_a_lars_run_with_the_live_view_is_not_refused(tmp_path: Path) -> None:
    done = run_cli("run", "examples/lars/cooling.lars", "--stream", "examples/lars/temp.jsonl", "--runner",
                   "inprocess", "--ui", "127.0.0.1:0", "-o", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr


def window_cases() -> list:
    from golden import cases

    return [case for case in cases() if case.lang in ("csparql", "rspql")]


@pytest.mark.parametrize("case", window_cases(), ids=lambda c: c.id)
def test_window_query_outputs_are_explained_by_the_elements_in_their_windows(case) -> None:  # type: ignore[no-untyped-def]
    """With provenance, a C-SPARQL or RSP-QL program outputs what it outputs without; each
    output's record explains each solution by facts that hold, and each input fact names
    elements of its stream, at their times, that hold it."""
    from dataclasses import replace

    from chronolog.program.outputs import render
    from chronolog.streams import read_stream

    spec = case.spec()
    sources = {name: str(path) for name, path in case.streams.items()}
    plain = Engine(spec)
    expected = [render(o, plain.dictionary) for o in plain.run_files(sources)]
    engine = Engine(replace(spec, options=replace(spec.options, provenance=True)))
    outputs = list(engine.run_files(sources))
    assert [render(o, engine.dictionary) for o in outputs] == expected
    d = TermDictionary()
    elements = {}
    for name, path in sources.items():
        for e in read_stream(path, d, ms_per_unit=engine.ms_per_unit):
            stream = name or next(iter(engine.program.streams), "")
            elements.setdefault((stream, e.time), set()).update(
                f"{d.decode(s)} {d.decode(p)} {d.decode(o)} ." for s, p, o in e.triples)
    inputs = 0

    def check(fact: dict) -> None:
        nonlocal inputs
        if fact["from"] == "input":
            inputs += 1
            for element in fact["elements"]:
                assert fact["fact"] in elements.get((element["stream"], element["time"]), ()), (fact, element)
        for premise in fact.get("premises", ()):
            check(premise)

    for output in outputs:
        record = explanation(output)
        assert record["time"] == output.time and record["solutions"]
        for solution in record["solutions"]:
            for fact in solution["facts"]:
                check(fact)
    assert inputs or not outputs or all("DSTREAM" in explanation(o).get("note", "") for o in outputs)


@pytest.mark.parametrize("case", [c for c in __import__("golden").cases() if c.lang == "epsparql"], ids=lambda c: c.id)
def test_every_ep_sparql_solution_is_produced_by_its_explained_inputs_alone(case) -> None:  # type: ignore[no-untyped-def]
    """With provenance, an EP-SPARQL program outputs what it outputs without; each
    solution's explained input triples, alone, at their times, give that solution again."""
    from dataclasses import replace

    from chronolog.program.outputs import render

    spec = case.spec()
    sources = {name: str(path) for name, path in case.streams.items()}
    plain = Engine(spec)
    expected = [render(o, plain.dictionary) for o in plain.run_files(sources)]
    explaining = replace(spec, options=replace(spec.options, provenance=True))
    engine = Engine(explaining)
    outputs = list(engine.run_files(sources))
    assert [render(o, engine.dictionary) for o in outputs] == expected
    replay = compile_program(explaining)
    fresh = replay.snapshot()
    checked = 0
    for output in outputs:
        record = explanation(output)
        for solution in record["solutions"]:
            replay.restore(fresh)
            made = []
            for time, streams in sorted(input_facts({"solutions": [solution]}).items()):
                element = tuple(dict.fromkeys(t for texts in streams.values() for t in
                                              encode_text("\n".join(texts), replay.dictionary, format="nt")))
                made.extend(replay.push(time, {"": [element]}))
            made.extend(replay.flush())
            again = [s for o in made if o.time == output.time for s in explanation(o)["solutions"]]
            assert any(s["bindings"] == solution["bindings"] and (s.get("start"), s.get("end")) ==
                       (solution.get("start"), solution.get("end")) for s in again), (case.id, solution)
            checked += 1
    assert checked or not outputs


@pytest.mark.parametrize("case", [c for c in __import__("golden").cases() if c.lang == "lars"], ids=lambda c: c.id)
def test_every_lars_atom_is_explained_by_its_rules_and_input_atoms(case) -> None:  # type: ignore[no-untyped-def]
    """With provenance, a LARS program outputs what it outputs without; each output's
    record explains each atom it holds, down to input atoms that are in the stream at
    their times, through the program's rules."""
    from dataclasses import replace

    from chronolog.atomstreams import read_atom_stream

    spec = case.spec()
    sources = {name: str(path) for name, path in case.streams.items()}
    expected = list(Engine(spec).run_files(sources))
    engine = Engine(replace(spec, options=replace(spec.options, provenance=True)))
    outputs = list(engine.run_files(sources))
    assert outputs == expected
    given = {(e.time, atom) for path in sources.values() for e in read_atom_stream(path) for atom in e.triples}
    rules = {line.strip() for line in spec.text.splitlines()}
    seen = {"input": 0, "rule": 0}

    def check(fact: dict) -> None:
        seen[fact["from"]] = seen.get(fact["from"], 0) + 1
        if fact["from"] == "input":
            atom = fact["fact"].rsplit(" at ", 1)[0]
            assert all((e["time"], atom) in given for e in fact["elements"]), fact
        elif fact["from"] == "rule":
            assert fact["rule"].split(": ", 1)[1] in rules
        for premise in fact.get("premises", ()):
            check(premise)

    for output in outputs:
        record = explanation(output)
        assert [a["fact"].rsplit(" at ", 1)[0] for a in record["atoms"]] == list(output.atoms)
        for atom in record["atoms"]:
            check(atom)
    assert seen["rule"] and seen.get("unexplained", 0) == 0
