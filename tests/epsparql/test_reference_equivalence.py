"""The incremental engine equals the section-4.2 reference (tests/reference/epsparql.py) under
the unrestricted policy, on random streams and random patterns of every operator, nested,
with FILTERs on values and durations and several (recursive) CONSTRUCT rules."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode

from chronolog.lang.registry import compile_program
from chronolog.program.contract import Options, ProgramSpec
from reference.epsparql import Reference

E = "http://e/"
PREFIX = "PREFIX : <http://e/>\n"
OPS = ["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "OPTIONAL", "AND", "UNION"]
XSD_INT = NamedNode("http://www.w3.org/2001/XMLSchema#integer")


@st.composite
def triple_patterns(draw: st.DrawFn) -> str:
    subject = draw(st.sampled_from(["?x", "?x", ":a"]))
    predicate = draw(st.sampled_from([":p", ":q", ":r"]))
    obj = draw(st.sampled_from(["?u", "?v", "?w", "1", "2"]))
    return f"{subject} {predicate} {obj}"


FILTERS = ["?u < ?v", "?v <= 2", "!BOUND(?w)", "BOUND(?u) || ?v = 1", "getDURATION() < 2", "getDURATION() <= 1",
           'getDURATION() < "PT0.003S"^^xsd:duration', "?u != ?w", "getDURATION() > 0",
           'getSTARTTIME() < "1970-01-01T00:00:00.002Z"^^xsd:dateTime']


SUBQUERY_ITEMS = ["?x ?u", "?x (?v + 1 AS ?u)", "?x ?w (STR(?u) AS ?v)", "(getDURATION() AS ?w) ?x ?v",
                  "?x ?u ?v ?w"]


def patterns(depth: int) -> st.SearchStrategy[str]:
    leaf = st.lists(triple_patterns(), min_size=1, max_size=2).map(lambda ts: " . ".join(ts))
    if depth == 0:
        return leaf
    sub = patterns(depth - 1)
    binary = st.tuples(sub, st.sampled_from(OPS), sub).map(lambda t: f"{{ {t[0]} }} {t[1]} {{ {t[2]} }}")
    subquery = st.tuples(sub, st.sampled_from(SUBQUERY_ITEMS)).map(lambda t: f"{{ SELECT {t[1]} WHERE {{ {t[0]} }} }}")
    filtered = st.tuples(binary | leaf, st.lists(st.sampled_from(FILTERS), min_size=1, max_size=2)).map(
        lambda t: f"{t[0]} FILTER({' && '.join(t[1])})")
    return st.one_of(leaf, binary, binary, filtered, subquery)


@st.composite
def programs(draw: st.DrawFn) -> str:
    rules = draw(st.lists(patterns(1), max_size=2))
    text = PREFIX
    for where in rules:
        head = draw(st.sampled_from(["?x :r ?u", "?x :r ?v", ":a :r ?x", "?x :q 2"]))
        text += f"CONSTRUCT {{ {head} }} WHERE {{ {where} }}\n"
    projection = draw(st.sampled_from(["*", "*", "?x ?u (?v * 2 AS ?n)", "?x ?w"]))
    text += f"SELECT {projection} WHERE {{ {draw(patterns(2))} }}\n"
    return text


def term(text: str) -> NamedNode | Literal:
    return Literal(text, datatype=XSD_INT) if text.isdigit() else NamedNode(E + text)


streams = st.lists(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["p", "q", "r"]),
                                      st.sampled_from(["1", "2", "3", "a"])), min_size=1, max_size=3),
                   min_size=1, max_size=5)


def engine_run(text: str, elements: list[tuple[int, set]], policy: str = "unrestricted") -> dict[int, set]:
    program = compile_program(ProgramSpec("epsparql", text, "t.eps", Options(policy=policy)))
    d = program.dictionary
    out: dict[int, set] = {}
    for time, triples in elements:
        element = tuple(tuple(d.encode(t) for t in triple) for triple in triples)
        for output in program.push(time, {"": [element]}):
            for s in output.solutions:
                items = frozenset((k, str(d.decode(v))) for k, v in s.bindings.items())
                out.setdefault(output.time, set()).add((items, s.start, s.end))
                assert s.end == output.time
        snapshot = program.snapshot()  # restoring the state changes nothing
        program.restore(snapshot)
    return out


def elements_of(stream: list[list[tuple[str, str, str]]], gaps: list[int]) -> list[tuple[int, set]]:
    time, out = 0, []
    for triples, gap in zip(stream, gaps):
        out.append((time, {(term(s), term(p), term(o)) for s, p, o in triples}))
        time += gap
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams, st.lists(st.integers(1, 2), min_size=5, max_size=5))
def test_engine_equals_the_reference(text: str, stream: list, gaps: list[int]) -> None:
    elements = elements_of(stream, gaps)
    assert engine_run(text, elements) == Reference(text).run(elements), text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams, st.lists(st.integers(1, 2), min_size=5, max_size=5), st.sampled_from(["chronological", "recent"]))
def test_consuming_policies_give_a_subset_of_the_unrestricted_answers(text: str, stream: list, gaps: list[int],
                                                                       policy: str) -> None:
    """Without optional operators, a consuming policy only ever drops combinations."""
    if "OPTIONAL" in text or "BOUND" in text:
        return
    elements = elements_of(stream, gaps)
    unrestricted = engine_run(text, elements)
    consumed = engine_run(text, elements, policy)
    for time, found in consumed.items():
        assert found <= unrestricted.get(time, set()), text
