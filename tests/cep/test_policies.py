"""Policies are validated when built; late events follow the engine's explicit policy."""
from __future__ import annotations

import pytest

from chronolog.cep import (
    Consumption, Event, EventError, LatePolicy, PolicyError, Selection, TemporalEngine, consume_all,
    consuming, each_, event, first, last, no_consumption,
)
from chronolog.errors import LateElementError


@pytest.mark.parametrize("build,text", [
    (each_, "each"), (last, "last"), (first, "first"), (lambda: last(3), "3-last"), (lambda: first(2), "2-first"),
])
def test_selection_factories(build, text: str) -> None:
    assert str(build()) == text


@pytest.mark.parametrize("build,message", [
    (lambda: last(0), "n must be an integer >= 1"),
    (lambda: first(-1), "n must be an integer >= 1"),
    (lambda: last(1.5), "n must be an integer >= 1"),
    (lambda: last(True), "n must be an integer >= 1"),
    (lambda: Selection("each", 2), "takes no n"),
    (lambda: Selection("recent"), "unknown selection 'recent'"),
])
def test_invalid_selections(build, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        build()


def test_consumption_factories() -> None:
    assert no_consumption().consumed(["S", "T"]) == frozenset()
    assert consume_all().consumed(["S", "T"]) == {"S", "T"}
    assert consuming("T").consumed(["S", "T"]) == {"T"}
    with pytest.raises(PolicyError, match="at least one alias"):
        consuming()
    with pytest.raises(PolicyError, match="name no aliases"):
        Consumption(frozenset({"T"}), everything=True)
    with pytest.raises(PolicyError, match="expected event aliases"):
        consuming("")


def test_late_policy_validation() -> None:
    with pytest.raises(ValueError, match="takes no sink"):
        LatePolicy.named("reject", print)
    with pytest.raises(TypeError, match="callable or a list"):
        LatePolicy.divert(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LatePolicy"):
        TemporalEngine(late="drop")  # type: ignore[arg-type]


def smoke_engine(late: LatePolicy | None = None) -> TemporalEngine:
    engine = TemporalEngine(late=late)
    engine.declare("Smoke", ["area"])
    return engine


def test_late_event_rejected_by_default_naming_it() -> None:
    engine = smoke_engine()
    engine.push(event("Smoke", 10, area="A"))
    engine.push(event("Smoke", 10, area="B"))  # same time point: not late
    with pytest.raises(LateElementError, match=r"late event Event\(type='Smoke', start=9, end=9.*current time 10"):
        engine.push(event("Smoke", 9, area="C"))
    assert engine.now == 10


def test_late_events_diverted_to_a_list_and_counted() -> None:
    late: list[Event] = []
    engine = smoke_engine(LatePolicy.divert(late))
    assert engine.push_batch([event("Smoke", 10, area="A"), event("Smoke", 5, area="B"),
                              event("Smoke", 11, area="C"), event("Smoke", 7, area="D")]) == []
    assert late == [event("Smoke", 5, area="B"), event("Smoke", 7, area="D")]
    assert engine.late_count == 2
    assert engine.now == 11


def test_late_events_diverted_to_a_callback() -> None:
    seen: list[int] = []
    engine = smoke_engine(LatePolicy.divert(lambda e: seen.append(e.end)))
    engine.push_batch([event("Smoke", 10, area="A"), event("Smoke", 3, area="B")])
    assert seen == [3] and engine.late_count == 1


def test_reject_late_is_the_default_policy() -> None:
    assert smoke_engine().late == LatePolicy.reject()


@pytest.mark.parametrize("bad,message", [
    (event("Fog", 1, area="A"), "unknown event type 'Fog'"),
    (event("Smoke", 1, room="A"), "missing attribute"),
    (Event("Smoke", 5, 4, {"area": "A"}), "start 5 is after end 4"),
    (("Smoke", 1, 1, {"area": "A"}), "expected an Event"),
])
def test_malformed_events(bad, message: str) -> None:
    engine = smoke_engine()
    with pytest.raises(EventError, match=message):
        engine.push(bad)
    assert engine.now is None
