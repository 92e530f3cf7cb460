"""Golden tests: the papers' examples and hand-computed streams, with exact outputs."""
from __future__ import annotations

import pytest

from chronolog.cep import (
    AggValue, Aggregate, Between, Compare, Event, Negation, Predicate, Rule, TemporalEngine,
    Terminator, Within, attr, consuming, each_, event, first, last, no_consumption, param, where,
)
from reference.tesla import ReferenceTesla

MIN = 60  # time unit: seconds


def fire_rule(selection, consumption=no_consumption()) -> Rule:
    """TESLA's Rule T: smoke, and a temperature above 45 in the same area within 5 min."""
    return Rule(
        name="fire", emits="Fire",
        terminator=Terminator("Smoke", "Smoke"),
        predicates=[Predicate("Temp", "Temp", selection, Within(5 * MIN, of="Smoke"),
                              where=[param("Temp.area", "Smoke.area"), where("Temp.value", ">", 45)])],
        outputs={"area": attr("Smoke.area"), "measuredTemp": attr("Temp.value")},
        consuming=consumption,
    )


def fire_engine(rule: Rule) -> TemporalEngine:
    engine = TemporalEngine()
    engine.declare("Smoke", ["area"])
    engine.declare("Temp", ["area", "value"])
    engine.register(rule)
    return engine


FIRE_STREAM = [
    event("Temp", 10, area="A", value=50),    # t1
    event("Temp", 20, area="A", value=40),    # too cold
    event("Temp", 30, area="B", value=60),    # other area
    event("Temp", 40, area="A", value=55),    # t2
    event("Temp", 40, area="A", value=47),    # t3: same time as t2, arrives later
    event("Smoke", 100, area="A"),            # s1
    event("Smoke", 100, area="A"),            # s2: same time point as s1
    event("Temp", 100, area="A", value=70),   # t4: same time point as the smokes, not before them
    event("Smoke", 320, area="A"),            # s3: scope [20, 320) holds t2, t3, t4
    event("Temp", 450, area="B", value=46),   # t5
    event("Smoke", 500, area="B"),            # s4
]


def fires(*pairs: tuple[int, int, str, int]) -> list[Event]:
    return [Event("Fire", start, end, {"area": area, "measuredTemp": temp}) for start, end, area, temp in pairs]


FIRE_GOLDEN = {
    ("each", False): fires((10, 100, "A", 50), (40, 100, "A", 55), (40, 100, "A", 47),
                           (10, 100, "A", 50), (40, 100, "A", 55), (40, 100, "A", 47),
                           (40, 320, "A", 55), (40, 320, "A", 47), (100, 320, "A", 70),
                           (450, 500, "B", 46)),
    ("last", False): fires((40, 100, "A", 47), (40, 100, "A", 47), (100, 320, "A", 70), (450, 500, "B", 46)),
    ("first", False): fires((10, 100, "A", 50), (10, 100, "A", 50), (40, 320, "A", 55), (450, 500, "B", 46)),
    ("2-last", False): fires((40, 100, "A", 55), (40, 100, "A", 55), (40, 320, "A", 47)),
    ("2-first", False): fires((40, 100, "A", 55), (40, 100, "A", 55), (40, 320, "A", 47)),
    ("each", True): fires((10, 100, "A", 50), (40, 100, "A", 55), (40, 100, "A", 47),
                          (100, 320, "A", 70), (450, 500, "B", 46)),
    ("last", True): fires((40, 100, "A", 47), (40, 100, "A", 55), (100, 320, "A", 70), (450, 500, "B", 46)),
    ("first", True): fires((10, 100, "A", 50), (40, 100, "A", 55), (40, 320, "A", 47), (450, 500, "B", 46)),
    ("2-last", True): fires((40, 100, "A", 55), (10, 100, "A", 50), (40, 320, "A", 47)),
    ("2-first", True): fires((40, 100, "A", 55), (40, 100, "A", 47)),
}
SELECTIONS = {"each": each_(), "last": last(), "first": first(), "2-last": last(2), "2-first": first(2)}


@pytest.mark.parametrize("selection,consumed", sorted(FIRE_GOLDEN))
def test_fire_rule(selection: str, consumed: bool) -> None:
    rule = fire_rule(SELECTIONS[selection], consuming("Temp") if consumed else no_consumption())
    engine = fire_engine(rule)
    assert engine.push_batch(FIRE_STREAM) == FIRE_GOLDEN[selection, consumed]
    reference = ReferenceTesla([rule])
    assert [e for ev in FIRE_STREAM for e in reference.push(ev)] == FIRE_GOLDEN[selection, consumed]


def test_fire_rule_outputs_arrive_with_their_terminator() -> None:
    engine = fire_engine(fire_rule(last()))
    outputs = [engine.push(ev) for ev in FIRE_STREAM]
    assert [len(o) for o in outputs] == [0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1]


def test_dotr_rule_r() -> None:
    """DOTR section 3: HighTemp at 10 and Smoke at 12 in roomA give exactly one Fire at 12."""
    engine = TemporalEngine()
    engine.declare("Smoke", ["read1", "room1"])
    engine.declare("HighTemp", ["read2", "room2"])
    engine.register(Rule(
        name="R", emits="Fire",
        terminator=Terminator("Smoke", "Smoke"),
        predicates=[Predicate("HighTemp", "HighTemp", last(), Within(5 * 60_000, of="Smoke"),
                              where=[param("HighTemp.room2", "Smoke.room1")])],
        outputs={"room": attr("Smoke.room1")},
    ))
    out = engine.push_batch([
        event("HighTemp", 10, read2=":r1", room2=":roomA"),
        event("Smoke", 12, read1=":r2", room1=":roomA"),
    ])
    assert out == [Event("Fire", 10, 12, {"room": ":roomA"})]


def negation_engine(scope) -> TemporalEngine:
    engine = TemporalEngine()
    engine.declare("Smoke", ["area"])
    engine.declare("Temp", ["area", "value"])
    engine.declare("Rain", ["area"])
    engine.register(Rule(
        name="dry-fire", emits="Fire",
        terminator=Terminator("S", "Smoke"),
        predicates=[Predicate("T", "Temp", last(), Within(5 * MIN, of="S"),
                              where=[param("T.area", "S.area"), where("T.value", ">", 45)])],
        negations=[Negation("R", "Rain", scope, where=[param("R.area", "S.area")])],
        outputs={"area": attr("S.area"), "measuredTemp": attr("T.value")},
    ))
    return engine


NEGATION_STREAM = [
    event("Temp", 10, area="A", value=50),
    event("Rain", 20, area="A"),
    event("Smoke", 30, area="A"),           # rain between Temp@10 and Smoke@30: no fire
    event("Temp", 40, area="A", value=60),
    event("Smoke", 50, area="A"),           # rain@20 is before Temp@40: fire
    event("Rain", 60, area="B"),
    event("Smoke", 70, area="A"),           # rain in another area: fire
    event("Rain", 80, area="A"),
    event("Smoke", 80, area="A"),           # rain at the same time point is not before: fire
    event("Smoke", 90, area="A"),           # rain@80 between Temp@40 and Smoke@90: no fire
]


def test_negation_between() -> None:
    assert negation_engine(Between("T", "S")).push_batch(NEGATION_STREAM) == fires(
        (40, 50, "A", 60), (40, 70, "A", 60), (40, 80, "A", 60))


def test_negation_within() -> None:
    # not Rain(area=$a) within 5 from Smoke
    assert negation_engine(Within(5, of="S")).push_batch(NEGATION_STREAM) == fires(
        (10, 30, "A", 50), (40, 50, "A", 60), (40, 70, "A", 60), (40, 80, "A", 60), (40, 90, "A", 60))


def test_aggregates_in_condition_and_outputs() -> None:
    engine = TemporalEngine()
    engine.declare("Smoke", ["area"])
    engine.declare("Temp", ["area", "value"])
    scope = Within(MIN, of="S")

    def agg(name: str, func: str, attribute: str | None = "value") -> Aggregate:
        return Aggregate(name, func, "Temp", attribute, scope, where=[param(f"{name}.area", "S.area")])

    engine.register(Rule(
        name="hot-area", emits="Alarm",
        terminator=Terminator("S", "Smoke"),
        aggregates=[agg("m", "avg"), agg("n", "count", None), agg("lo", "min"), agg("hi", "max"), agg("s", "sum")],
        where=[Compare(AggValue("m"), ">", 45)],
        outputs={"area": attr("S.area"), "avg": AggValue("m"), "count": AggValue("n"),
                 "min": AggValue("lo"), "max": AggValue("hi"), "sum": AggValue("s")},
    ))
    out = engine.push_batch([
        event("Temp", 0, area="A", value=40),
        event("Temp", 10, area="A", value=50),
        event("Temp", 20, area="A", value=60),
        event("Temp", 20, area="B", value=100),
        event("Smoke", 30, area="A"),    # avg(40, 50, 60) = 50 > 45
        event("Smoke", 30, area="B"),    # avg(100) > 45
        event("Temp", 70, area="A", value=10),
        event("Smoke", 75, area="A"),    # scope [15, 75): 60, 10 -> avg 35: no alarm
        event("Smoke", 200, area="A"),   # empty scope: avg is None, no alarm
    ])
    assert out == [
        Event("Alarm", 30, 30, {"area": "A", "avg": 50.0, "count": 3, "min": 40, "max": 60, "sum": 150}),
        Event("Alarm", 30, 30, {"area": "B", "avg": 100.0, "count": 1, "min": 100, "max": 100, "sum": 100}),
    ]


def test_hierarchy_of_rules() -> None:
    """Composite events feed other rules: two Fires in an area within 10 min is a Blaze."""
    engine = fire_engine(fire_rule(last()))
    engine.register(Rule(
        name="blaze", emits="Blaze",
        terminator=Terminator("F2", "Fire"),
        predicates=[Predicate("F1", "Fire", last(), Within(10 * MIN, of="F2"),
                              where=[param("F1.area", "F2.area")])],
        outputs={"area": attr("F2.area"), "first": attr("F1.measuredTemp"), "second": attr("F2.measuredTemp")},
    ))
    out = engine.push_batch(FIRE_STREAM)
    assert [e for e in out if e.type == "Blaze"] == [
        Event("Blaze", 40, 320, {"area": "A", "first": 47, "second": 70}),
    ]
    # Fire@100 twice: the second does not select the first (same time point, not before).
    assert [e.type for e in out] == ["Fire", "Fire", "Fire", "Blaze", "Fire"]
