"""State: snapshots to bytes and back, and memory bounded by the rules' horizons."""
from __future__ import annotations

import pickle

import pytest

from chronolog.cep import (
    AggValue, Event, Negation, Predicate, Rule, RuleEvaluationError, SnapshotError, TemporalEngine, Terminator,
    Within, Aggregate, attr, consuming, event, last, param, where,
)

MINUTE = 60_000  # milliseconds


def sensor_engine() -> TemporalEngine:
    """Two rules with a 1-minute horizon, consumption, a negation and a parameter index."""
    engine = TemporalEngine()
    engine.declare("A", ["sensor", "value"])
    engine.declare("B", ["sensor", "value"])
    engine.register(Rule(
        name="pair", emits="Pair", terminator=Terminator("A", "A"),
        predicates=[Predicate("B", "B", last(), Within(MINUTE // 2, of="A"),
                              where=[param("B.sensor", "A.sensor"), where("B.value", ">", 10)])],
        negations=[Negation("N", "A", Within(20, of="B"), where=[param("N.sensor", "A.sensor")])],
        outputs={"sensor": attr("A.sensor")}, consuming=consuming("B"),
    ))
    engine.register(Rule(
        name="pairs", emits="Pairs", terminator=Terminator("P", "Pair"),
        predicates=[Predicate("Q", "Pair", last(), Within(MINUTE // 2, of="P"))],
        outputs={"sensor": attr("P.sensor")},
    ))
    return engine


def stream(n: int, start: int = 0):
    """n events, one per millisecond, 20% of type A, 50 sensors."""
    for i in range(start, start + n):
        yield event("A" if i % 5 == 0 else "B", i, sensor=i // 3 % 50, value=i % 50)


def test_snapshot_restores_the_whole_state() -> None:
    events = list(stream(5000))
    whole = sensor_engine().push_batch(events)
    engine = sensor_engine()
    head = engine.push_batch(events[:3001])
    data = engine.snapshot()
    assert isinstance(data, bytes)
    resumed = sensor_engine()
    resumed.restore(data)
    assert resumed.now == engine.now
    assert resumed.stored_event_count() == engine.stored_event_count()
    assert head + resumed.push_batch(events[3001:]) == whole
    assert {e.type for e in whole} == {"Pair", "Pairs"}
    assert len(whole) < 2 * len(events) // 5  # the negation and the filter do reject


def test_snapshot_of_a_fresh_engine() -> None:
    engine = sensor_engine()
    other = sensor_engine()
    other.restore(engine.snapshot())
    assert other.now is None and other.stored_event_count() == 0


def test_snapshot_refuses_other_rules() -> None:
    data = sensor_engine().snapshot()
    other = TemporalEngine()
    other.declare("A", ["sensor", "value"])
    with pytest.raises(SnapshotError, match="other event types or rules"):
        other.restore(data)


def test_snapshot_refuses_code_and_garbage() -> None:
    engine = sensor_engine()
    with pytest.raises(SnapshotError, match="only plain data"):
        engine.restore(pickle.dumps(Event("A", 1, 1, {})))
    with pytest.raises(SnapshotError, match="not a temporal engine snapshot"):
        engine.restore(b"not a pickle")
    with pytest.raises(SnapshotError, match="unknown format"):
        engine.restore(pickle.dumps({"format": "other"}))


def test_a_stored_average_survives_a_snapshot() -> None:
    """An avg aggregate's value is a Decimal; a rule reading the composite event stores it."""
    engine = TemporalEngine()
    engine.declare("A", ["v"])
    engine.register(Rule(name="mean", emits="M", terminator=Terminator("A", "A"),
                         aggregates=[Aggregate("m", "avg", "A", "v", Within(10, of="A"))],
                         outputs={"m": AggValue("m")}))
    engine.register(Rule(name="twice", emits="T", terminator=Terminator("A", "A"),
                         predicates=[Predicate("M", "M", last(), Within(10, of="A"))],
                         outputs={"m": attr("M.m")}))
    for t, v in ((1, 1), (2, 2)):
        engine.push(event("A", t, v=v))
    other = TemporalEngine()
    other.declare("A", ["v"])
    for rule in engine.rules.plans:
        other.register(rule.rule)
    other.restore(engine.snapshot())
    assert [e.attrs for e in other.push(event("A", 3, v=3))] == [e.attrs for e in engine.push(event("A", 3, v=3))]


def test_snapshot_needs_plain_attribute_values() -> None:
    engine = sensor_engine()
    engine.push(event("B", 1, sensor=1, value=lambda: 0))
    with pytest.raises(SnapshotError, match="not plain data"):
        engine.snapshot()


def test_runtime_failures_name_the_rule_and_event() -> None:
    engine = TemporalEngine()
    engine.declare("A", ["v"])
    engine.register(Rule(name="total", emits="T", terminator=Terminator("A", "A"),
                         aggregates=[Aggregate("s", "max", "A", "v", Within(10, of="A"))],
                         outputs={"v": attr("A.v")}))
    engine.push(event("A", 1, v="text"))  # (a sum of strings is no failure: SPARQL's error, None)
    engine.push(event("A", 1, v=2))
    with pytest.raises(RuleEvaluationError, match=r"rule 'total' failed on Event\(type='A', start=2"):
        engine.push(event("A", 2, v=3))  # max("text", 2): no order between them


BOUND = 2 * MINUTE + 1000  # 1-minute horizons, one event per ms: at most ~60k events per type


def run_bounded(total: int, chunk: int = 100_000) -> int:
    engine = sensor_engine()
    peak = 0
    for start in range(0, total, chunk):
        engine.push_batch(stream(chunk, start))
        peak = max(peak, engine.stored_event_count())
        assert engine.stored_event_count() < BOUND
    return peak


def test_bounded_state() -> None:
    # over three horizons of events: the horizon is full, and no fuller (10 million events:
    # benchmarks/bench_cep_state.py)
    assert run_bounded(200_000, chunk=20_000) > MINUTE // 2


def test_rule_registered_mid_stream_sees_the_events_still_stored() -> None:
    engine = sensor_engine()
    engine.push_batch([event("B", 1, sensor=3, value=50), event("B", 2, sensor=4, value=60)])
    # B is stored (rule "pair" reads it); a new rule with a parameter on another
    # attribute builds its index from the stored events.
    engine.register(Rule(
        name="by-value", emits="Same", terminator=Terminator("A", "A"),
        predicates=[Predicate("B", "B", last(), Within(MINUTE, of="A"), where=[param("B.value", "A.value")])],
        outputs={"sensor": attr("B.sensor")},
    ))
    assert engine.push(event("A", 3, sensor=9, value=50)) == [Event("Same", 1, 3, {"sensor": 3})]
