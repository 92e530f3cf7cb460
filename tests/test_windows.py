"""The window layer against windows computed from scratch (tests/reference/windows.py)."""
from __future__ import annotations

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
        got += [(i.time, schedule.buffers["w"].content()) for i in schedule.push(t, {"s": [v for u, v in items if u == t]})]
    got += [(i.time, schedule.buffers["w"].content()) for i in schedule.flush()]
    assert got == csparql_reports(items, range_, step)


def test_last_instant_is_barbieris_expiration_tag_with_a_one_second_step():
    """Fig. 4: a 10 s window sliding every second tags a triple entering at second s with
    s + 10. C-SPARQL's windows are [from, to) reported at `to`: the triple of second s is in
    the windows closing at s+1 .. s+10, so the last instant it holds is the close s + 10."""
    window = SlidingWindow(10, 1, Bounds.CSPARQL)
    assert [window.last_instant(s) for s in (1, 2, 3, 4)] == [11, 12, 13, 14]
