"""Window queries answered from what entered and left the view (chronolog.sparql.maintained)
give what evaluating the query in full at every instant gives: random streams, windows,
queries of the fragment, rules and maintenance strategies, with a restore mid-stream."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec
from chronolog.program.contract import Options
from chronolog.program.windowed import WindowedProgram
from chronolog.sparql import prepare
from chronolog.sparql.maintained import MaintainedAnswer
from chronolog.terms import TermDictionary

E = "http://e/"
RULES = {
    "none": None,
    "transitive": ":p(?x, ?z) :- :p(?x, ?y), :p(?y, ?z).",
    "chain": ":q(?x, ?y) :- :p(?x, ?y).\n:q(?y, ?x) :- :q(?x, ?y), :r(?y, ?w).",
}
QUERIES = [  # the fragment: BGP with FILTERs and BINDs, projections with repeats and constants
    "SELECT ?x ?y WHERE { ?x :p ?y }",
    "SELECT ?x WHERE { ?x :p ?y . ?y :p ?z }",
    "SELECT ?x ?z WHERE { ?x :p ?y . ?y :q ?z FILTER(?x != ?z) }",
    "SELECT ?y WHERE { :a ?pred ?y . ?y :r ?w }",
    "SELECT ?x ?n WHERE { ?x :p ?y BIND(STRLEN(STR(?y)) AS ?n) FILTER(?n > 11) }",
    "SELECT ?x WHERE { ?x ?pred ?x }",
    "SELECT * WHERE { ?x :q ?y . ?x :r ?y }",
]
nodes = st.sampled_from([f"<{E}{c}>" for c in "abcd"])
predicates = st.sampled_from([f"<{E}{p}>" for p in ("p", "q", "r")])
elements = st.lists(st.tuples(nodes, predicates, nodes), min_size=1, max_size=3)
streams = st.lists(st.tuples(st.integers(0, 30), elements), min_size=1, max_size=12).map(
    lambda s: sorted({t: e for t, e in s}.items()))


@pytest.fixture(scope="module")
def rule_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, ...]]:
    folder = tmp_path_factory.mktemp("rules")
    files: dict[str, tuple[str, ...]] = {}
    for name, text in RULES.items():
        if text is None:
            files[name] = ()
        else:
            path = folder / f"{name}.dl"
            path.write_text(f"PREFIX : <{E}>\n{text}\n")
            files[name] = (str(path),)
    return files


def answers(text: str, options: Options, stream: list, restore_at: int | None, maintain: bool,
            lang: str = "csparql") -> list:
    """Every output (time, bag of solutions as text) of the query over ``stream``."""
    spec = ProgramSpec(lang, text, f"q.{lang}", options)
    program = compile_program(spec) if maintain else _without_maintenance(spec)
    out = []

    def take(outputs: list) -> None:
        decode = program.dictionary.decode
        for o in outputs:
            out.append((o.time, Counter(tuple(sorted((k, str(decode(v))) for k, v in s.bindings.items()))
                                        for s in o.solutions)))

    for time, element in stream:
        if restore_at is not None and time >= restore_at:
            data = program.snapshot()
            program = compile_program(spec) if maintain else _without_maintenance(spec)
            program.restore(data)
            restore_at = None
        d = program.dictionary
        triples = tuple(tuple(d.iri(term[1:-1]) for term in triple) for triple in element)
        take(program.push(time, {program.streams[0]: [triples]}))
    take(program.flush())
    return out


def _without_maintenance(spec: ProgramSpec) -> WindowedProgram:
    """The program with every query evaluated in full (read when a query registers)."""
    WindowedProgram.maintain_answers = False
    try:
        return compile_program(spec)  # type: ignore[return-value]
    finally:
        WindowedProgram.maintain_answers = True


@settings(max_examples=120, deadline=None)
@given(streams, st.sampled_from(QUERIES), st.sampled_from(sorted(RULES)), st.sampled_from(["naive", "dred", "expiration"]),
       st.integers(1, 8), st.integers(1, 8), st.none() | st.integers(0, 30))
def test_maintained_answers_equal_full_evaluation(rule_files, stream, query, rules, strategy, range_, step,
                                                  restore_at) -> None:
    text = (f"REGISTER QUERY q AS\nPREFIX : <{E}>\n" + query.replace(
        " WHERE", f"\nFROM STREAM <{E}s> [RANGE {range_}ms STEP {step}ms]\nWHERE"))
    options = Options(rules=rule_files[rules], maintenance=strategy)
    program = compile_program(ProgramSpec("csparql", text, "q.csparql", options))
    assert program.running[0].maintained is not None  # the fast path is what is tested
    want = answers(text, options, stream, restore_at, maintain=False)
    assert answers(text, options, stream, restore_at, maintain=True) == want


WINDOWED = [  # RSP-QL: patterns in named windows, joined across windows and with FILTERs inside
    "SELECT ?x ?y WHERE { WINDOW :w1 { ?x :p ?y } }",
    "SELECT ?x ?z WHERE { WINDOW :w1 { ?x :p ?y } WINDOW :w2 { ?y :q ?z FILTER(?z != :a) } }",
    "SELECT ?x WHERE { WINDOW :w2 { ?x ?pred ?x } WINDOW :w1 { ?x :r ?w } }",
    "SELECT * WHERE { WINDOW :w1 { ?x :q ?y } WINDOW :w2 { ?x :q ?y } FILTER(?x != ?y) }",
]


@settings(max_examples=80, deadline=None)
@given(streams, st.sampled_from(WINDOWED), st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]),
       st.sampled_from(sorted(RULES)), st.integers(1, 8), st.integers(1, 8), st.integers(1, 4), st.none() | st.integers(0, 30))
def test_maintained_answers_over_named_windows(rule_files, stream, query, r2s, rules, range1, range2, step,
                                               restore_at) -> None:
    text = (f"PREFIX : <{E}>\nREGISTER {r2s} :q AS\n" + query.replace(
        " WHERE", f"\nFROM NAMED WINDOW :w1 ON :s [RANGE {range1} STEP {step}]\n"
                  f"FROM NAMED WINDOW :w2 ON :s [RANGE {range2} STEP {step}]\nWHERE"))
    options = Options(rules=rule_files[rules])
    program = compile_program(ProgramSpec("rspql", text, "q.rspql", options))
    assert program.running[0].maintained is not None
    want = answers(text, options, stream, restore_at, maintain=False, lang="rspql")
    assert answers(text, options, stream, restore_at, maintain=True, lang="rspql") == want


@pytest.mark.parametrize("query", [
    "SELECT ?x WHERE { ?x :p ?y FILTER(?y < NOW()) }",
    "SELECT DISTINCT ?x WHERE { ?x :p ?y }",
    "SELECT ?x WHERE { ?x :p ?y OPTIONAL { ?y :q ?z } }",
    "SELECT (COUNT(*) AS ?n) WHERE { ?x :p ?y }",
    "SELECT ?x WHERE { ?x :p ?y FILTER NOT EXISTS { ?y :q ?x } }",
    "SELECT ?x WHERE { ?x :p ?y BIND(BNODE() AS ?b) }",
    "SELECT ?x WHERE { ?x :p ?y BIND(<http://e/f>(?y) AS ?b) }",
    "SELECT ?x WHERE { GRAPH ?g { ?x :p ?y } }",
    "SELECT ?x WHERE { GRAPH :g { } ?x :p ?y }",
    "SELECT ?x WHERE { GRAPH :g { ?x :p ?y FILTER(?z) } ?x :q ?z }",
])
def test_queries_outside_the_fragment_are_evaluated_in_full(query: str) -> None:
    """Their answer may change while the view does not, or is not a bag of BGP solutions."""
    d = TermDictionary()
    assert MaintainedAnswer.of(prepare(f"PREFIX : <{E}>\n" + query, d, functions={f"{E}f": lambda *a: None})) is None


def test_casts_stay_in_the_fragment() -> None:
    query = f"PREFIX : <{E}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n" \
            "SELECT ?x WHERE { ?x :p ?y FILTER(xsd:string(?y) != \"\") }"
    assert MaintainedAnswer.of(prepare(query, TermDictionary())) is not None
