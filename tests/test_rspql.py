"""RSP-QL: errors that name their place, window contents checked against RSEP-QL's
definitions on random streams (tests/reference/windows.py), and state that survives a
snapshot. The papers' examples are golden cases (tests/fixtures/rspql/)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec
from chronolog.program.contract import Options
from pyoxigraph import NamedNode
from reference.windows import landmark_content, rsepql_content

HEAD = "PREFIX : <http://e/>\nREGISTER RSTREAM :q AS\n"


def program(text: str, **options: object):
    return compile_program(ProgramSpec("rspql", text, "q.rspql", Options(**options)))  # type: ignore[arg-type]


@pytest.mark.parametrize("text, where, message", [
    ("PREFIX : <http://e/>\nSELECT * FROM NAMED WINDOW :w ON :s [RANGE 1 STEP 1] WHERE { WINDOW :w { ?s ?p ?o } }",
     "q.rspql:1:1:", "expected REGISTER RSTREAM|ISTREAM|DSTREAM name AS"),
    (HEAD + "SELECT *\nFROM NAMED WINDOW :w ON :s [RANGE 1 STEP 1]\nWHERE { WINDOW :v { ?s ?p ?o } }",
     "q.rspql:5:16:", "no window <http://e/v> is declared"),
    (HEAD + "SELECT *\nFROM NAMED WINDOW :w ON :s [RANGE 5x STEP 1]\nWHERE { WINDOW :w { ?s ?p ?o } }",
     "q.rspql:4:35:", "unknown time unit 'x' in '5x'"),
    (HEAD + "SELECT *\nFROM NAMED WINDOW :w :s [RANGE 1 STEP 1]\nWHERE { WINDOW :w { ?s ?p ?o } }",
     "q.rspql:4:21:", "expected ON and the stream's IRI"),
    (HEAD + "SELECT *\nFROM NAMED WINDOW :w ON :s [RANGE 1]\nWHERE { WINDOW :w { ?s ?p ?o } }",
     "q.rspql:4:27:", "expected the window after the stream"),
    (HEAD + "SELECT *\nEVALUATE AT 5\nFROM NAMED WINDOW :w ON :s [FROM 0]\nWHERE { WINDOW :w { ?s ?p ?o } }",
     "q.rspql:4:1:", "EVALUATE AT goes after the dataset clause"),
    (HEAD + "SELECT *\nFROM NAMED WINDOW :w ON :s [FROM 9 TO 2]\nWHERE { WINDOW :w { ?s ?p ?o } }",
     "q.rspql:4:39:", "needs t1 <= t2"),
    (HEAD + "SELECT *\nFROM NAMED WINDOW :w ON :s [FROM 1]\nWHERE { WINDOW :w { ?s ?p ?o FILTER(?o >) } }",
     "q.rspql:5:", "syntax error"),  # in the SPARQL part: at its place, its line as written
])
def test_errors_name_the_file_line_and_column(text: str, where: str, message: str) -> None:
    with pytest.raises(ChronologSyntaxError) as info:
        program(text)
    shown = str(info.value)
    assert shown.startswith(where) and message in shown.splitlines()[0], shown
    assert shown.splitlines()[-1].strip() == "^" and shown.splitlines()[1].strip() in text.splitlines()


def test_a_static_graph_must_be_a_file() -> None:
    with pytest.raises(ChronologError, match="reads static graphs from files"):
        program(HEAD + "SELECT * FROM NAMED WINDOW :w ON :s [FROM 1] FROM NAMED <http://e/g> "
                       "WHERE { WINDOW :w { ?s ?p ?o } }")


P = "http://e/p"


def run(text: str, stream: list[tuple[int, int]], snapshot_at: int | None = None) -> list[tuple[int, list[int]]]:
    """The answers (time, sorted objects) of ``text`` over a stream of ``:s :p n`` triples;
    with ``snapshot_at``, the program is snapshot there and the rest runs on a restored copy."""
    engine = program(text)
    out: list[tuple[int, list[int]]] = []

    def take(outputs: list) -> None:  # decoded now: a restored program has its own dictionary
        decode = engine.dictionary.decode
        out.extend((o.time, sorted(int(decode(sol.bindings["o"]).value) for sol in o.solutions)) for o in outputs)

    for t in sorted({t for t, _ in stream}):
        if snapshot_at is not None and t >= snapshot_at:
            data = engine.snapshot()
            engine = program(text)
            engine.restore(data)
            snapshot_at = None
        d = engine.dictionary
        triples = tuple((d.iri("http://e/s"), d.iri(P), d.encode_value(n)) for time, n in stream if time == t)
        take(engine.push(t, {"http://e/stream": [triples]}))
    take(engine.flush())
    return out


streams = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 5)), min_size=1, max_size=12).map(sorted)


@settings(max_examples=100, deadline=None)
@given(streams, st.integers(1, 8), st.integers(1, 5), st.lists(st.integers(0, 50), min_size=1, max_size=6))
def test_evaluate_at_gives_definition_3_content(stream, alpha, beta, instants) -> None:
    text = (HEAD + f"SELECT ?o FROM NAMED WINDOW :w ON :stream [RANGE {alpha} STEP {beta}]\n"
            f"EVALUATE AT {', '.join(map(str, instants))}\nWHERE {{ WINDOW :w {{ ?x :p ?o }} }}")
    items = [(t, n) for t, n in stream]
    first = min(t for t, _ in stream)
    want = [(t, sorted(set(rsepql_content(items, alpha, beta, t)))) for t in sorted(set(instants))
            if -(-first // beta) * beta <= t]  # none before an element can be in the window
    assert run(text, stream) == [(t, c) for t, c in want if c]


@settings(max_examples=100, deadline=None)
@given(streams, st.integers(1, 8), st.integers(1, 5), st.integers(0, 40))
def test_every_step_by_default_and_state_survives_a_snapshot(stream, alpha, beta, cut) -> None:
    text = (HEAD + f"SELECT ?o FROM NAMED WINDOW :w ON :stream [RANGE {alpha} STEP {beta}]\n"
            "WHERE { WINDOW :w { ?x :p ?o } }")
    items = [(t, n) for t, n in stream]
    first, last = min(t for t, _ in stream), max(t for t, _ in stream)
    instants = range(-(-first // beta) * beta, last + alpha + beta + 1, beta)
    want = [(t, c) for t in instants if (c := sorted(set(rsepql_content(items, alpha, beta, t))))]
    assert run(text, stream) == want
    assert run(text, stream, snapshot_at=cut) == want


@settings(max_examples=100, deadline=None)
@given(streams, st.integers(0, 20))
def test_a_landmark_window_holds_everything_from_t0(stream, t0) -> None:
    text = HEAD + f"SELECT ?o FROM NAMED WINDOW :w ON :stream [FROM {t0}] WHERE {{ WINDOW :w {{ ?x :p ?o }} }}"
    items = [(t, n) for t, n in stream]
    want = [(t, c) for t in sorted({t for t, _ in stream}) if (c := sorted(set(landmark_content(items, t0, t))))]
    assert run(text, stream) == want


def test_two_windows_are_two_named_graphs() -> None:
    text = (HEAD + "SELECT ?o FROM NAMED WINDOW :short ON :stream [RANGE 2 STEP 1]\n"
            "FROM NAMED WINDOW :long ON :stream [RANGE 10 STEP 1] EVALUATE AT 10\n"
            "WHERE { WINDOW :long { ?x :p ?o } FILTER NOT EXISTS { WINDOW :short { ?x :p ?o } } }")
    assert run(text, [(1, 1), (5, 2), (9, 3)]) == [(10, [1, 2])]


def test_the_query_name_is_the_registered_iri() -> None:
    engine = program(HEAD + "SELECT ?o FROM NAMED WINDOW :w ON :s [FROM 0] WHERE { WINDOW :w { ?x :p ?o } }")
    d = engine.dictionary
    (out,) = engine.push(1, {"http://e/s": [((d.iri("http://e/x"), d.iri(P), d.encode(NamedNode("http://e/y"))),)]})
    assert out.query == "http://e/q"


def test_keywords_are_not_read_inside_variables_or_names() -> None:
    text = (HEAD + "SELECT ?o FROM NAMED WINDOW :w ON :stream [RANGE 2 STEP 1]\n"
            "WHERE { WINDOW :w { ?from :p ?o } FILTER(!BOUND(?window)) }")
    assert run(text, [(1, 4)]) == [(1, [4]), (2, [4])]


def test_a_landmark_window_does_not_make_the_stream_longer() -> None:
    """At the end of the stream, a sliding window is evaluated until what it holds has left
    (RSEP-QL Definition 3 for its content); a landmark window beside it keeps its items for
    good, so it must not keep the stream going (flush used never to end)."""
    text = (HEAD + "SELECT ?o FROM NAMED WINDOW :w1 ON :stream [FROM 0] FROM NAMED WINDOW :w ON :stream [RANGE 4 STEP 2]\n"
            "WHERE { WINDOW :w { ?x :p ?o } }")
    stream = [(1, 1), (3, 3), (5, 5)]
    got = run(text, stream)
    ends = [(t, c) for t, c in got if t > 5]
    assert ends == [(t, sorted(rsepql_content(stream, 4, 2, t))) for t in (6, 8)]
