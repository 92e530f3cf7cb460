"""RSEP-QL's event patterns in RSP-QL (issue #14): the reference evaluator
(tests/reference/rsepql.py) gives the paper's Fig. 1 answers, the program agrees with it
on random streams, windows, patterns, instants and policies (and after a snapshot), and
errors in MATCH and CONSUME name their place. The program's golden cases are
tests/fixtures/rspql/rsepql_* and paper_ex10_*."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.lang.registry import compile_program
from chronolog.lang.rspql.events import Consumption, Event, First, Last, Pattern, Selection, Seq, is_variable
from chronolog.program import ProgramSpec
from chronolog.program.contract import Options
from chronolog.window.scope import Bounds, LandmarkWindow, SlidingWindow, Window
from pyoxigraph import Literal, NamedNode
from reference.rsepql import answers, bgp, joined, snapshot

E = "http://e/"
HEAD = "PREFIX : <http://e/>\nREGISTER {r2s} :q AS\nSELECT *\n"


def graph(*triples: str) -> frozenset:
    return frozenset(tuple(E + t for t in triple.split()) for triple in triples)


FIG1 = [(2, graph("a1 p b1")), (4, graph("a2 p b2")), (6, graph("b1 q c1", "b2 q c2")), (8, graph("b2 q c2")),
        (10, graph("a3 p b3", "b1 q c1"))]
E1, E2 = Event("w1", (("?x", E + "p", "?y"),)), Event("w2", (("?y", E + "q", "?z"),))
TWO = {"w1": ("s", LandmarkWindow(1)), "w2": ("s", SlidingWindow(5, 1, Bounds.RSEPQL))}


def xyz(events: dict) -> set[tuple[str, int, int]]:
    """Events of Fig. 1 as ``("a1 b1 c1", start, end)``."""
    return {(" ".join(dict(m)[v][len(E):] for v in ("?x", "?y", "?z")), s, e) for m, s, e in events}


@pytest.mark.parametrize("selection, policy, at8, at10", [
    (Selection.UNRESTRICTED, Consumption.UNRESTRICTED,
     {("a1 b1 c1", 2, 6), ("a2 b2 c2", 4, 6), ("a2 b2 c2", 4, 8)},
     {("a1 b1 c1", 2, 6), ("a2 b2 c2", 4, 6), ("a2 b2 c2", 4, 8), ("a1 b1 c1", 2, 10)}),
    (Selection.CHRONOLOGICAL, Consumption.CHRONOLOGICAL, {("a1 b1 c1", 2, 6), ("a2 b2 c2", 4, 6)}, set()),
    (Selection.RECENT, Consumption.RECENT, {("a1 b1 c1", 2, 6), ("a2 b2 c2", 4, 8)}, set()),
    (Selection.RECENT, Consumption.UNRESTRICTED, {("a1 b1 c1", 2, 6), ("a2 b2 c2", 4, 8)},
     {("a1 b1 c1", 2, 10), ("a2 b2 c2", 4, 8)}),
])
def test_the_reference_gives_the_papers_figure_1(selection, policy, at8, at10) -> None:
    (_, got8), (_, got10) = answers(Seq(E1, E2, selection), TWO, {"s": FIG1}, [8, 10], policy)
    assert (xyz(got8), xyz(got10)) == (at8, at10)


def test_the_reference_gives_c_sparqls_naive_sequence_over_a_7_wide_window() -> None:
    one = {"w": ("s", SlidingWindow(7, 1, Bounds.RSEPQL))}
    pattern = Seq(Event("w", E1.triples), Event("w", E2.triples), Selection.NAIVE)
    (_, got8), (_, got10) = answers(pattern, one, {"s": FIG1}, [8, 10], Consumption.UNRESTRICTED)
    assert (xyz(got8), xyz(got10)) == ({("a2 b2 c2", 4, 8)}, set())


def test_the_naive_sequence_compares_the_latest_events_only() -> None:
    """Eq. 9 as the paper's worked example reads it: the latest :p event (a2 b2 at 2) does
    not join the latest :q event, and an older one that would (a1 b1 at 1) is not looked at."""
    stream = [(1, graph("a1 p b1")), (2, graph("a2 p b2")), (3, graph("b1 q c1"))]
    one = {"w": ("s", LandmarkWindow(0))}
    pattern = Seq(Event("w", E1.triples), Event("w", E2.triples), Selection.NAIVE)
    assert answers(pattern, one, {"s": stream}, [3], Consumption.UNRESTRICTED) == [(3, {})]
    text = (HEAD.format(r2s="RSTREAM") + "FROM NAMED WINDOW :w ON :s [FROM 0]\nEVALUATE AT 3\n"
            "WHERE { MATCH ( EVENT :w { ?x :p ?y } SEQ_NAIVE EVENT :w { ?y :q ?z } ) }")
    assert run(text, stream) == {}
    assert run(text.replace("SEQ_NAIVE", "SEQ_RECENT"), stream) == {
        3: [([("x", E + "a1"), ("y", E + "b1"), ("z", E + "c1")], 1, 3)]}


def program(text: str, **options: object):
    return compile_program(ProgramSpec("rspql", text, "q.rspql", Options(**options)))  # type: ignore[arg-type]


MATCH = "FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1]\nWHERE {{ MATCH ( {e} ) }}"


@pytest.mark.parametrize("text, where, message", [
    (MATCH.format(e="EVENT :v { ?x :p ?y }"), "q.rspql:5:23:", "no window <http://e/v> is declared"),
    (MATCH.format(e="EVENT :w { ?x :p ?y } SEQ"), "q.rspql:5:43:", "expected an event pattern"),
    (MATCH.format(e="EVENT :w { ?x :p }"), "q.rspql:5:34:", "expected a variable, an IRI"),
    (MATCH.format(e="EVENT :w { ?x :p ?y } AND EVENT :w { ?y :q ?z }"), "q.rspql:5:39:", "expected ')' to close MATCH"),
    (MATCH.format(e="EVENT :w { }"), "q.rspql:5:23:", "needs at least one triple pattern"),
    (MATCH.format(e="(EVENT :w { ?x :p ?y }"), "q.rspql:5:42:", "expected ')' to close MATCH"),
    ("FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1]\nWHERE { MATCH ( EVENT :w { ?x :p ?y } ) MATCH ( EVENT :w { ?x :p ?o } ) }",
     "q.rspql:5:41:", "a query has one MATCH ( E )"),
    ("FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1]\nWHERE { MATCH ( EVENT :w { ?x :p ?y }\n SEQ EVENT :w { ?y :q ?z } ) ?x :r }",
     "q.rspql:6:30:", "syntax error"),
    ("FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1]\nCONSUME LATEST\nWHERE { MATCH ( EVENT :w { ?x :p ?y } ) }",
     "q.rspql:5:9:", "expected UNRESTRICTED, CHRONOLOGICAL or RECENT after CONSUME"),
    ("FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1]\nCONSUME RECENT\nWHERE { WINDOW :w { ?x :p ?y } }",
     "q.rspql:5:1:", "CONSUME applies to a MATCH"),
])
def test_match_errors_name_the_file_line_and_column(text: str, where: str, message: str) -> None:
    with pytest.raises(ChronologSyntaxError) as info:
        program(HEAD.format(r2s="RSTREAM") + text)
    shown = str(info.value)
    assert shown.startswith(where) and message in shown.splitlines()[0], shown


def test_a_selected_variable_must_be_the_patterns() -> None:
    text = HEAD.format(r2s="RSTREAM").replace("*", "?o") + MATCH.format(e="EVENT :w { ?x :p ?y }")
    with pytest.raises(ChronologSyntaxError, match="q.rspql:3:8: \\?o is not a variable of the MATCH pattern"):
        program(text)


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ChronologError, match="expected unrestricted, chronological or recent"):
        program(HEAD.format(r2s="RSTREAM") + MATCH.format(e="EVENT :w { ?x :p ?y }"), policy="latest")


def test_the_policy_option_needs_a_match() -> None:
    with pytest.raises(ChronologError, match="--policy applies to an RSP-QL query with MATCH"):
        program(HEAD.format(r2s="RSTREAM") + "FROM NAMED WINDOW :w ON :s [FROM 0] WHERE { WINDOW :w { ?x :p ?y } }",
                policy="recent")


# -- the program against the reference ----------------------------------------------------

NODES = [E + "n0", E + "n1"]
LITERALS = [Literal("1", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")), Literal("a")]
term = st.sampled_from(["?x", "?y", "?z", "?x", "?y", *NODES])  # variables mostly: events match
triple = st.tuples(term, st.sampled_from([E + "p", E + "q"]), st.one_of(term, st.sampled_from(LITERALS)))
basic = st.builds(Event, st.sampled_from(["w1", "w2"]), st.one_of(st.tuples(triple), st.tuples(triple), st.tuples(triple, triple)))
simple = st.builds(Event, st.sampled_from(["w1", "w2"]),
                   st.tuples(st.tuples(st.sampled_from(["?x", "?y"]), st.sampled_from([E + "p", E + "q"]),
                                       st.sampled_from(["?y", "?z"]))))
patterns = st.one_of(st.builds(Seq, simple, simple, st.sampled_from(list(Selection))), st.recursive(basic, lambda inner: st.one_of(
    st.builds(Seq, inner, inner, st.sampled_from(list(Selection))), st.builds(First, inner), st.builds(Last, inner)),
    max_leaves=4))  # a SEQ of two one-triple events often, for selection's corner cases
windows = st.one_of(st.builds(lambda r, s: SlidingWindow(r, s, Bounds.RSEPQL), st.integers(2, 10), st.integers(1, 3)),
                    st.builds(LandmarkWindow, st.integers(0, 5)))
streams = st.dictionaries(st.integers(0, 14), st.frozensets(st.tuples(st.sampled_from(NODES), st.sampled_from(
    [E + "p", E + "q"]), st.sampled_from(NODES + NODES + LITERALS)), min_size=1, max_size=4), min_size=2, max_size=10).map(
    lambda d: sorted(d.items()))


def show(e: Pattern) -> str:
    if isinstance(e, Event):
        terms = [" ".join(t if is_variable(t) else f"<{t}>" if isinstance(t, str) else str(t) for t in tr)
                 for tr in e.triples]
        return f"EVENT :{e.window} {{ {' . '.join(terms)} }}"
    if isinstance(e, Seq):
        return f"({show(e.first)} {e.selection.value} {show(e.then)})"
    return f"{type(e).__name__.upper()} ({show(e.pattern)})"


def window_text(w: Window) -> str:
    return f"[RANGE {w.range} STEP {w.step}]" if isinstance(w, SlidingWindow) else f"[FROM {w.start}]"  # type: ignore[attr-defined]


def run(text: str, stream: list, snapshot_at: int | None = None, **options: object) -> dict[int, list]:
    """The program's answers per time: (mapping with IRIs, start, end) as sorted lists."""
    engine = program(text, **options)
    out: dict[int, list] = {}

    def take(outputs: list) -> None:
        decode = engine.dictionary.decode
        for o in outputs:
            out[o.time] = sorted((sorted((k, shown(decode(v))) for k, v in s.bindings.items()), s.start, s.end)
                                 for s in o.solutions)

    for time, g in stream:
        if snapshot_at is not None and time >= snapshot_at:
            data = engine.snapshot()
            engine = program(text, **options)
            engine.restore(data)
            snapshot_at = None
        d = engine.dictionary
        element = tuple(tuple(d.encode(NamedNode(t) if isinstance(t, str) else t) for t in tr) for tr in g)
        take(engine.push(time, {E + "s": [element]}))
    take(engine.flush())
    return out


def shown(term: object) -> str:
    """An IRI as it is, a literal as N-Triples writes it."""
    return term if isinstance(term, str) else term.value if isinstance(term, NamedNode) else str(term)


def expected(events: dict) -> list:
    return sorted((sorted((k[1:], shown(v)) for k, v in m), s, e) for m, s, e in events)


@settings(max_examples=100, deadline=None)
@given(patterns, windows, windows, streams, st.lists(st.integers(4, 18), min_size=1, max_size=5),
       st.sampled_from(list(Consumption)), st.integers(0, 17))
def test_the_program_agrees_with_the_reference(pattern, w1, w2, stream, instants, policy, cut) -> None:
    text = (HEAD.format(r2s="RSTREAM") + f"FROM NAMED WINDOW :w1 ON :s {window_text(w1)}\n"
            f"FROM NAMED WINDOW :w2 ON :s {window_text(w2)}\nEVALUATE AT {', '.join(map(str, instants))}\n"
            f"CONSUME {policy.name}\nWHERE {{ MATCH ( {show(pattern)} ) }}")
    want = {t: expected(ev) for t, ev in answers(pattern, {"w1": ("s", w1), "w2": ("s", w2)}, {"s": stream},
                                                 instants, policy) if ev}
    assert run(text, stream) == want
    assert run(text, stream, snapshot_at=cut) == want


@settings(max_examples=50, deadline=None)
@given(patterns, windows, streams, st.lists(st.integers(4, 18), min_size=1, max_size=5))
def test_istream_emits_the_events_new_since_the_previous_evaluation(pattern, w, stream, instants) -> None:
    text = (HEAD.format(r2s="ISTREAM") + f"FROM NAMED WINDOW :w1 ON :s {window_text(w)}\n"
            f"FROM NAMED WINDOW :w2 ON :s {window_text(w)}\nEVALUATE AT {', '.join(map(str, instants))}\n"
            f"WHERE {{ MATCH ( {show(pattern)} ) }}")
    want, before = {}, set()
    for t, ev in answers(pattern, {"w1": ("s", w), "w2": ("s", w)}, {"s": stream}, instants, Consumption.UNRESTRICTED):
        if set(ev) - before:
            want[t] = expected(set(ev) - before)
        before = set(ev)
    assert run(text, stream) == want


def test_every_declared_window_sets_the_instants() -> None:
    """Without EVALUATE AT a query runs at its windows' instants, those of a window its
    MATCH does not read included (as a query with WINDOW patterns does)."""
    text = (HEAD.format(r2s="RSTREAM") + "FROM NAMED WINDOW :w1 ON :s [RANGE 10 STEP 5]\n"
            "FROM NAMED WINDOW :w2 ON :s [RANGE 2 STEP 1]\nWHERE { MATCH ( EVENT :w1 { ?x :p ?y } ) }")
    want = [([("x", E + "a1"), ("y", E + "b1")], 1, 1)]
    assert run(text, [(1, graph("a1 p b1"))]) == {t: want for t in range(5, 15)}
    alone = text.replace("FROM NAMED WINDOW :w2 ON :s [RANGE 2 STEP 1]\n", "")
    assert run(alone, [(1, graph("a1 p b1"))]) == {5: want, 10: want}


def test_literals_in_an_event_pattern_are_read_and_matched() -> None:
    """Typed, plain, language-tagged and escaped literals, numbers and booleans, as Turtle writes them."""
    xsd = "http://www.w3.org/2001/XMLSchema#"
    lit = {"25": Literal("25", datatype=NamedNode(xsd + "integer")), "-2.5": Literal("-2.5", datatype=NamedNode(xsd + "decimal")),
           "1e3": Literal("1e3", datatype=NamedNode(xsd + "double")), "true": Literal("true", datatype=NamedNode(xsd + "boolean")),
           "a": Literal("a"), "b": Literal('b"\n', language="en"), "d": Literal("1.5", datatype=NamedNode(xsd + "decimal"))}
    stream = [(1, frozenset({(E + "s1", E + "t", lit["25"]), (E + "s1", E + "m", lit["-2.5"])})),
              (2, frozenset({(E + "s1", E + "n", lit["a"]), (E + "s1", E + "l", lit["b"]), (E + "s1", E + "v", lit["d"]),
                             (E + "s1", E + "f", lit["1e3"]), (E + "s1", E + "k", lit["true"])})),
              (3, frozenset({(E + "s2", E + "t", Literal("26", datatype=NamedNode(xsd + "integer")))}))]
    text = ("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n" + HEAD.format(r2s="RSTREAM") +
            "FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1]\nEVALUATE AT 4\nWHERE { MATCH ( EVENT :w { ?x :t 25 . ?x :m -2.5 }"
            " SEQ EVENT :w { ?x :n 'a' . ?x :l \"b\\\"\\n\"@en . ?x :v \"1.5\"^^xsd:decimal . ?x :f 1e3 . ?x :k true } ) }")
    assert run(text, stream) == {4: [([("x", E + "s1")], 1, 2)]}
    with pytest.raises(ChronologSyntaxError, match="expected the datatype's IRI after"):
        program(text.replace("^^xsd:decimal", "^^nope:decimal"))


@settings(max_examples=40, deadline=None)
@given(patterns, windows, windows, streams, st.lists(st.integers(4, 18), min_size=1, max_size=5),
       st.sampled_from(list(Consumption)), st.sampled_from(["w1", "w2"]), st.one_of(st.tuples(triple), st.tuples(triple, triple)),
       st.integers(0, 17))
def test_a_match_joined_with_a_window_pattern_agrees_with_the_reference(pattern, w1, w2, stream, instants, policy,
                                                                         window, triples, cut) -> None:
    """SPARQL's Join of MATCH's event mappings (each with its interval) and a WINDOW pattern's
    solutions over the window's content, under every consumption policy."""
    text = (HEAD.format(r2s="RSTREAM") + f"FROM NAMED WINDOW :w1 ON :s {window_text(w1)}\n"
            f"FROM NAMED WINDOW :w2 ON :s {window_text(w2)}\nEVALUATE AT {', '.join(map(str, instants))}\n"
            f"CONSUME {policy.name}\nWHERE {{ MATCH ( {show(pattern)} ) {show(Event(window, triples))[6:].replace(':', 'WINDOW :', 1)} }}")
    spec = {"w1": ("s", w1), "w2": ("s", w2)}
    want = {}
    for t, events in answers(pattern, spec, {"s": stream}, instants, policy):
        rows = joined(events, bgp(triples, snapshot(spec[window][1], stream, t), {}))
        if rows:
            want[t] = expected(rows)
    assert run(text, stream) == want
    assert run(text, stream, snapshot_at=cut) == want


@pytest.mark.parametrize("query, times", [
    ("SELECT ?x ?n WHERE { MATCH ( EVENT :w { ?x :p ?y } ) { SELECT (COUNT(*) AS ?n) WHERE { WINDOW :w { ?a :q ?b } } } }",
     {3: [([("n", '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'), ("x", E + "a1")], 1, 1)]}),
    ("SELECT ?x WHERE { MATCH ( EVENT :w { ?x :p ?y } ) FILTER NOT EXISTS { WINDOW :w { ?y :q ?z } } }", {}),
    ("SELECT ?x ?z WHERE { MATCH ( EVENT :w { ?x :p ?y } ) OPTIONAL { WINDOW :w { ?y :r ?z } } }",
     {3: [([("x", E + "a1")], 1, 1)]}),
])
def test_a_match_is_a_graph_pattern_among_others(query: str, times: dict) -> None:
    text = (HEAD.format(r2s="RSTREAM").replace("SELECT *\n", "") + "FROM NAMED WINDOW :w ON :s [FROM 0]\nEVALUATE AT 3\n"
            ).replace("REGISTER RSTREAM :q AS\n", "REGISTER RSTREAM :q AS\n" + query.split(" WHERE")[0] + "\n")
    text += "WHERE" + query.split(" WHERE", 1)[1]
    assert run(text, [(1, graph("a1 p b1")), (2, graph("b1 q c1"))]) == times
