"""The window layer against windows computed from scratch (tests/reference/windows.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from chronolog.window import (Bounds, LandmarkWindow, NonEmptyContent, SlidingWindow, TupleWindow, WindowBuffer,
                              WindowClose)
from chronolog.window.schedule import Schedule
from reference.windows import csparql_content, csparql_reports, landmark_content, rsepql_content, tuple_content

times = st.lists(st.integers(0, 60), min_size=1, max_size=25).map(sorted)
sizes = st.integers(1, 12)


def items_of(ts: list[int]) -> list[tuple[int, object]]:
    return [(t, f"v{i}") for i, t in enumerate(ts)]


def slide_all(window, items, instants):
    buffer, held, out = WindowBuffer(window), [], []
    pending = list(items)
    for t in instants:
        while pending and pending[0][0] <= t:
            buffer.add(*pending[0][:1], [pending[0][1]])
            pending.pop(0)
        change = buffer.slide(t)
        held = [v for v in held if v not in change.left] + [v for v, _ in change.entered]
        assert held == buffer.content()
        out.append(list(held))
    return out


@settings(max_examples=150, deadline=None)
@given(times, sizes, sizes, st.lists(st.integers(0, 80), min_size=1, max_size=15).map(sorted))
def test_sliding_windows_hold_what_the_definitions_say(ts, range_, step, instants):
    items = items_of(ts)
    got = slide_all(SlidingWindow(range_, step, Bounds.RSEPQL), items, instants)
    assert got == [rsepql_content(items, range_, step, t) for t in instants]
    window = SlidingWindow(range_, step, Bounds.CSPARQL)
    if items:  # no window is evaluated before the first one of the stream (no partial window at start-up)
        instants = [t for t in instants if t >= window.start_instant(items[0][0])]
    got = slide_all(window, items, instants)
    assert got == [csparql_content(items, range_, step, t) or [] for t in instants]


@settings(max_examples=100, deadline=None)
@given(times, sizes, st.lists(st.integers(0, 80), min_size=1, max_size=15).map(sorted))
def test_landmark_and_tuple_windows(ts, n, instants):
    items = items_of(ts)
    assert slide_all(LandmarkWindow(n), items, instants) == [landmark_content(items, n, t) for t in instants]
    assert slide_all(TupleWindow(n), items, instants) == [tuple_content(items, n, t) for t in instants]


@settings(max_examples=150, deadline=None)
@given(times, sizes, sizes)
def test_csparql_reports_every_non_empty_window_at_its_close(ts, range_, step):
    items = items_of(ts)
    schedule = Schedule({"w": ("s", SlidingWindow(range_, step, Bounds.CSPARQL))}, NonEmptyContent(WindowClose()))
    got = []
    for t in sorted(set(ts)):
        got += [(i.time, schedule.buffers["w"].content()) for i in schedule.push(t, {"s": [v for u, v in items if u == t]})
                if i.evaluated]
    got += [(i.time, schedule.buffers["w"].content()) for i in schedule.flush() if i.evaluated]
    assert got == csparql_reports(items, range_, step)


def test_last_instant_is_barbieris_expiration_tag_with_a_one_second_step():
    """Fig. 4: a 10 s window sliding every second tags a triple entering at second s with
    s + 10. C-SPARQL's windows are [from, to) reported at `to`: the triple of second s is in
    the windows closing at s+1 .. s+10, so the last instant it holds is the close s + 10."""
    window = SlidingWindow(10, 1, Bounds.CSPARQL)
    assert [window.last_instant(s) for s in (1, 2, 3, 4)] == [11, 12, 13, 14]


@settings(max_examples=100, deadline=None)
@given(times, sizes, sizes, st.none() | st.integers(1, 7))
def test_csparql_answers_are_the_window_contents(ts, range_, step, every):
    """Through the whole program: each report's answer holds the values of the last window
    closed by then (at each close, or every ``every`` with COMPUTED EVERY), however long the
    windows in between were empty (a skipped empty report still lets items leave)."""
    from chronolog.lang.registry import compile_program
    from chronolog.program import ProgramSpec
    from chronolog.program.contract import Options

    head = "REGISTER QUERY q AS" if every is None else f"REGISTER QUERY q COMPUTED EVERY {every}ms AS"
    text = (f"{head}\nPREFIX : <http://e/>\nSELECT ?o FROM STREAM <http://e/s> [RANGE {range_}ms STEP {step}ms]\n"
            "WHERE { ?x :p ?o }")
    program = compile_program(ProgramSpec("csparql", text, "q.csparql", Options()))
    d = program.dictionary
    items = [(t, i) for i, t in enumerate(ts)]
    outputs = []
    for t in sorted(set(ts)):
        element = tuple((d.iri("http://e/x"), d.iri("http://e/p"), d.encode_value(i)) for u, i in items if u == t)
        outputs += program.push(t, {"http://e/s": [element]})
    outputs += program.flush()
    got = [(o.time, sorted(int(d.decode(s.bindings["o"]).value) for s in o.solutions)) for o in outputs]
    if every is None:
        want = [(t, sorted(c)) for t, c in csparql_reports(items, range_, step)]
    else:
        last = max(ts) + range_ + step
        contents = [(t, csparql_content(items, range_, step, t)) for t in range(every, last + every, every)]
        want = [(t, sorted(c)) for t, c in contents if c]
    assert got == want


@pytest.mark.parametrize("every, column, message", [
    ("0s", 33, "COMPUTED EVERY must be positive"),
    ("5x", 33, "unknown time unit 'x' in '5x'"),
])
def test_computed_every_errors_name_their_place(every: str, column: int, message: str) -> None:
    from chronolog.errors import ChronologSyntaxError
    from chronolog.lang.registry import compile_program
    from chronolog.program import ProgramSpec
    from chronolog.program.contract import Options

    text = (f"PREFIX : <http://e/>\nREGISTER QUERY q COMPUTED EVERY {every} AS\n"
            "SELECT ?o FROM STREAM <http://e/s> [RANGE 1s STEP 1s] WHERE { ?x :p ?o }")
    with pytest.raises(ChronologSyntaxError) as info:
        compile_program(ProgramSpec("csparql", text, "q.csparql", Options()))
    assert str(info.value).startswith(f"q.csparql:2:{column}: {message}"), str(info.value)
