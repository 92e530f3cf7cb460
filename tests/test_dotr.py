"""DOTR end to end: the paper's fire example through the command line, the language's
errors with their places, and bad streams."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyoxigraph
import pytest

from chronolog.engine import Engine
from chronolog.errors import ChronologError, ChronologSyntaxError, LateElementError
from chronolog.streams import read_stream

ROOT = Path(__file__).resolve().parents[1]
EX = "http://example.org/"
FIRE = ROOT / "examples" / "fire"


def chronolog(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chronolog", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def graphs(trig: Path) -> list[tuple[str, set[tuple[str, str, str]]]]:
    """(time, triples) per output element, fresh urn:chronolog: IRIs replaced by '_fresh'."""
    def name(term: object) -> str:
        text = term.value if isinstance(term, pyoxigraph.NamedNode) else str(term)
        return "_fresh" if text.startswith("urn:chronolog:") and "element" not in text else text

    times: dict[str, str] = {}
    contents: dict[str, set] = {}
    for q in pyoxigraph.parse(path=str(trig), format=pyoxigraph.RdfFormat.TRIG):
        if isinstance(q.graph_name, pyoxigraph.DefaultGraph):
            times[q.subject.value] = q.object.value
        else:
            contents.setdefault(q.graph_name.value, set()).add((name(q.subject), name(q.predicate), name(q.object)))
    return sorted((times[g], triples) for g, triples in contents.items())


def test_fire_example_gives_the_papers_output(tmp_path: Path) -> None:
    """Seed 000 section 3: { dotr:id a :Fire ; :at_room :roomA } @ 12 (plus the max temperature)."""
    out = tmp_path / "out.trig"
    done = chronolog("run", "examples/fire", "--runner", "inprocess", "-o", str(out), "--stats")
    assert done.returncode == 0, done.stderr
    assert graphs(out) == [("12", {
        ("_fresh", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", EX + "Fire"),
        ("_fresh", EX + "at_room", EX + "roomA"),
        ("_fresh", EX + "max_temp", '"65"^^<http://www.w3.org/2001/XMLSchema#integer>'),
    })]
    assert "2 time points" in done.stderr and "reasoning" in done.stderr


def test_fire_example_as_json_lines(tmp_path: Path) -> None:
    engine = Engine.from_file(FIRE / "fire.dotr", background=[str(FIRE / "background.ttl")],
                              rules=[str(FIRE / "rooms.dl")])
    stream = tmp_path / "stream.jsonl"
    stream.write_text(
        '{"time": 10, "graph": "<http://example.org/r1> a <http://example.org/TempReading> ; '
        '<http://example.org/sensor> <http://example.org/s1> ; <http://example.org/value> 65 . '
        '<http://example.org/s1> <http://example.org/is_at_location> <http://example.org/locA> ."}\n'
        '{"time": 12, "graph": "<http://example.org/r2> a <http://example.org/SmokeReading> ; '
        '<http://example.org/sensor> <http://example.org/s2> . '
        '<http://example.org/s2> <http://example.org/is_at_location> <http://example.org/locB> ."}\n'
        '{"time": 13, "graph": "<http://example.org/r3> a <http://example.org/SmokeReading> ; '
        '<http://example.org/sensor> <http://example.org/s2> ."}\n')
    out = [engine.program.decode(g) for g in engine.run(read_stream(stream, engine.dictionary))]
    assert [(t, sorted(p for _, p, _ in triples)) for t, triples in out] == [
        (12, sorted([EX + "at_room", EX + "max_temp", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"]))]
    # r3 at 13 is no Smoke event: where :s2 is holds only at 12 (nothing leaks across time points)
    assert engine.program.stats.events == 2 and engine.program.stats.detections == 1


def test_check_reports_ok_and_errors(tmp_path: Path) -> None:
    done = chronolog("check", "examples/fire/fire.dotr")
    assert done.returncode == 0 and "ok: 2 events, 1 rules" in done.stdout
    bad = tmp_path / "bad.dotr"
    bad.write_text((FIRE / "fire.dotr").read_text().replace("HighTemp.room", "HighTemp.rooom", 1))
    done = chronolog("check", str(bad))
    assert done.returncode == 2
    assert f"{bad}:12:22: event 'HighTemp' has no attribute 'rooom'" in done.stderr
    assert "^" in done.stderr


PROGRAM = (FIRE / "fire.dotr").read_text()


@pytest.mark.parametrize("old, new, where, message", [
    ("FROM Smoke AND", "FROM Smok AND", "11:8", "unknown event 'Smok'"),
    ("WHERE Smoke.room", "WHERE Smoky.room", "12:9", "unknown alias 'Smoky'"),
    ("WITHIN 5 min FROM Smoke\n", "WITHIN 5 min FROM Rain\n", "11:32", "the scope refers to 'Rain'"),
    ("WITHIN 5 min FROM Smoke\n", "WITHIN 5 parsecs FROM Smoke\n", "11:41", "expected FROM alias, found 'parsecs'"),
    ("LAST HighTemp WITHIN 5 min FROM Smoke", "NOT HighTemp", "11:22", "NOT HighTemp needs a scope"),
    ("CONSUMING HighTemp", "CONSUMING Rain", "14:13", "CONSUMING Rain: not an event selected"),
    ("?room = Smoke.room,", "?roomz = Smoke.room,", "13:8", "?roomz is bound in WITH but not used in DEFINE"),
    ("FILTER(?val > 60) }", "FILTER(?val > ) }", "7:72", "syntax error"),
    ("?read a :SmokeReading", "?read a ex:SmokeReading", "5:54", "unknown prefix 'ex'"),
    ("RULE :fire", "RULE fire :x", "9:11", "expected DEFINE"),
])
def test_program_errors_name_the_place(old: str, new: str, where: str, message: str) -> None:
    assert old in PROGRAM
    with pytest.raises(ChronologSyntaxError) as info:
        Engine(PROGRAM.replace(old, new, 1), filename="fire.dotr")
    shown = str(info.value)
    assert shown.startswith("fire.dotr:" + where), shown
    assert message in shown


def test_stream_going_back_in_time_is_an_error_naming_it(tmp_path: Path) -> None:
    stream = tmp_path / "back.trig"
    stream.write_text((FIRE / "stream.trig").read_text() + (
        ':g11 { :r9 a :SmokeReading ; :sensor :s2 . }\n:g11 prov:generatedAtTime "11"^^xsd:integer .\n'))
    out = tmp_path / "out.trig"
    done = chronolog("run", "examples/fire/fire.dotr", "--runner", "inprocess", "--stream", str(stream), "--background",
                     "examples/fire/background.ttl", "--rules", "examples/fire/rooms.dl", "-o", str(out))
    assert done.returncode == 2
    assert "late element at time 11, older than the stream's current time 12" in done.stderr
    assert [t for t, _ in graphs(out)] == ["12"]  # what was detected before the error is written


def test_malformed_element_mid_stream_keeps_what_came_before(tmp_path: Path) -> None:
    stream = tmp_path / "broken.jsonl"
    stream.write_text(
        '{"time": 10, "graph": "<http://example.org/r1> a <http://example.org/TempReading> ; '
        '<http://example.org/sensor> <http://example.org/s1> ; <http://example.org/value> 65 . '
        '<http://example.org/s1> <http://example.org/is_at_location> <http://example.org/locA> ."}\n'
        '{"time": 12, "graph": "<http://example.org/r2> a <http://example.org/SmokeReading> ; '
        '<http://example.org/sensor> <http://example.org/s2> . '
        '<http://example.org/s2> <http://example.org/is_at_location> <http://example.org/locB> ."}\n'
        '{"time": 14, "graph": "<http://example.org/r3> a <http://example.org/SmokeReading"}\n')
    out = tmp_path / "out.jsonl"
    done = chronolog("run", "examples/fire/fire.dotr", "--runner", "inprocess", "--stream", str(stream), "--background",
                     "examples/fire/background.ttl", "--rules", "examples/fire/rooms.dl", "-o", str(out))
    assert done.returncode == 2
    assert f"{stream}:3:" in done.stderr
    assert [line.split(",")[0] for line in out.read_text().splitlines()] == ['{"time": 12']


def test_same_time_point_twice_is_refused() -> None:
    engine = Engine(PROGRAM)
    engine.push(5, [])
    with pytest.raises(ChronologError, match="time point 5 was already processed"):
        engine.push(5, [])
    with pytest.raises(LateElementError, match="late time point 4"):
        engine.push(4, [])


@pytest.mark.parametrize("values, expected", [
    (["1", "2"], '"1.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'),  # integer / integer is a decimal
    (["1", "2", "2"], '"1.666666666666666666666666667"^^<http://www.w3.org/2001/XMLSchema#decimal>'),
    (["1", "0.5"], '"0.75"^^<http://www.w3.org/2001/XMLSchema#decimal>'),  # integer + decimal: decimal
    (["1", "2.0e0"], '"1.5"^^<http://www.w3.org/2001/XMLSchema#double>'),  # a double makes a double
    (["2", "4"], '"3.0"^^<http://www.w3.org/2001/XMLSchema#decimal>'),
])
def test_avg_follows_sparql_numeric_type_promotion(values: list[str], expected: str) -> None:
    """SPARQL 1.1: Avg(M) = Sum(M) / Count(M) with op:numeric-add and op:numeric-divide, so
    the average of integers or decimals is an xsd:decimal, with a double among them a double;
    SUM of integers stays an integer."""
    engine = Engine("""PREFIX : <http://example.org/>
EVENT V AS SELECT ?v WHERE { ?r :v ?v }
EVENT B AS SELECT ?r WHERE { ?r :b true }
RULE :avg DEFINE { ?o :avg ?m ; :sum ?s . } FROM B
  WITH ?m = AVG(V.v WITHIN 100 FROM B), ?s = SUM(V.v WITHIN 100 FROM B)
""")
    d = engine.dictionary
    ex = lambda name: d.encode(pyoxigraph.NamedNode(EX + name))  # noqa: E731
    for i, text in enumerate(values):
        term = pyoxigraph.Literal(text, datatype=pyoxigraph.NamedNode(
            "http://www.w3.org/2001/XMLSchema#" + ("double" if "e" in text else "decimal" if "." in text else "integer")))
        engine.push(i + 1, [(ex(f"r{i}"), ex("v"), d.encode(term))])
    (graph,) = engine.push(10, [(ex("b"), ex("b"), d.encode(pyoxigraph.Literal(True)))])
    found = {p: o for _, p, o in engine.program.decode(graph)[1]}
    assert found[EX + "avg"] == expected
    if all("." not in v and "e" not in v for v in values):
        assert found[EX + "sum"].endswith("^^<http://www.w3.org/2001/XMLSchema#integer>")


def test_define_template_errors_name_their_place_in_the_program() -> None:
    """DEFINE is read by chronolog's SPARQL front end: its errors point into the DOTR file."""
    with pytest.raises(ChronologSyntaxError) as info:
        Engine(PROGRAM.replace("DEFINE {", "DEFINE {\n    ?o nope:p 1 .", 1), filename="fire.dotr")
    assert str(info.value).startswith("fire.dotr:11:8: unknown prefix 'nope'\n        ?o nope:p 1 .")
    with pytest.raises(ChronologSyntaxError) as info:
        Engine(PROGRAM.replace("DEFINE {", "DEFINE {\n    ?nope :p [ ;", 1), filename="fire.dotr")
    assert (info.value.lineno, info.value.message.split(":")[0]) == (11, "syntax error")


def test_firing_names_do_not_depend_on_the_order_of_a_graphs_triples() -> None:
    """A firing is named by its event's place among the time point's events, so events come
    in the order the program declares their queries whatever order the triples came in and
    however terms were numbered (a Spark executor has an order and a dictionary of its own)."""
    program = (ROOT / "tests/fixtures/dotr/within_zero/together.dotr").read_text()
    node, literal = lambda name: pyoxigraph.NamedNode(EX + name), pyoxigraph.Literal  # noqa: E731
    triples = [(node("t1"), node("temp"), literal(70)), (node("t1"), node("room"), node("kitchen")),
               (node("d1"), node("smoke"), literal(True)), (node("d1"), node("room"), node("kitchen"))]
    named = set()
    for order in (triples, triples[::-1], triples[1:] + triples[:1]):
        engine = Engine(program)
        encoded = [tuple(engine.dictionary.encode(term) for term in triple) for triple in order]
        named.add(tuple(sorted(str(engine.program.decode(graph)) for graph in engine.push(10, encoded))))
    (outputs,) = named
    assert len(outputs) == 2 and "together:10-1-1" in str(outputs)


def test_two_rules_firing_on_one_event_have_blank_nodes_of_their_own() -> None:
    """Both firings are named T-S-1; their blank nodes must still differ, or a reader of
    the TriG stream (blank node labels are the document's) would see one node in both."""
    program = """PREFIX : <http://example.org/>
EVENT Smoke AS SELECT ?s WHERE { ?s :smoke true }
RULE :Alarm
  DEFINE { ?s :alarm _:b . }
  FROM Smoke
  WITH ?s = Smoke.s
RULE <http://example.org/x/Alarm-2>
  DEFINE { ?s :alarm _:b . }
  FROM Smoke
  WITH ?s = Smoke.s
"""
    engine = Engine(program)
    d = engine.dictionary
    outputs = engine.push(5, [(d.iri(EX + "s1"), d.iri(EX + "smoke"), d.encode_value(True))])
    blanks = [o for graph in outputs for _, _, o in engine.program.decode(graph)[1]]
    assert blanks == ["_:Alarm.5-0-1xb", "_:Alarm_2d2.5-0-1xb"]


TEMPLATES = """PREFIX : <http://example.org/>
EVENT R AS SELECT ?s ?v ?p WHERE { ?s :reads ?v OPTIONAL { ?s :prop ?p } }
RULE :checked
  DEFINE { ?v :is ?s . ?s ?v :x . ?s :p ?s . ?s :p ?s . ?s ?p _:b . _:b :of ?o . ?o a :Thing . }
  FROM R
  WITH ?s = R.s, ?v = R.v, ?p = R.p
RULE :plain
  DEFINE { ?n a :Seen . ?n :at :here . }
  FROM R
"""


def test_define_builds_what_construct_would(tmp_path: Path) -> None:
    """A triple with a literal subject, a non-IRI predicate or an unbound term is left out;
    a triple the template holds twice comes out once; each firing has its own blank nodes
    and fresh IRIs."""
    program = tmp_path / "templates.dotr"
    program.write_text(TEMPLATES)
    engine = Engine.from_file(program)
    d = engine.dictionary
    a, reads, prop, q = (d.iri(EX + n) for n in ("a", "reads", "prop", "q"))
    outputs = engine.push(1, [(a, reads, d.encode_value(5))]) + engine.push(2, [(a, reads, d.encode_value(6)),
                                                                                 (a, prop, q)])
    got = [(g.time, g.rule, sorted(engine.program.decode(g)[1])) for g in outputs]
    fresh1, fresh2, blank1, blank2 = "urn:chronolog:checked:1-0-1", "urn:chronolog:checked:2-0-1", "_:checked.1-0-1xb", "_:checked.2-0-1xb"
    rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    assert got == [
        (1, EX + "checked", sorted([(EX + "a", EX + "p", EX + "a"), (blank1, EX + "of", fresh1),
                                    (fresh1, rdf_type, EX + "Thing")])),
        (1, EX + "plain", sorted([("urn:chronolog:plain:1-0-1", rdf_type, EX + "Seen"),
                                  ("urn:chronolog:plain:1-0-1", EX + "at", EX + "here")])),
        (2, EX + "checked", sorted([(EX + "a", EX + "p", EX + "a"), (EX + "a", EX + "q", blank2),
                                    (blank2, EX + "of", fresh2), (fresh2, rdf_type, EX + "Thing")])),
        (2, EX + "plain", sorted([("urn:chronolog:plain:2-0-1", rdf_type, EX + "Seen"),
                                  ("urn:chronolog:plain:2-0-1", EX + "at", EX + "here")])),
    ]
