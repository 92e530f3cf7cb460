"""Scope boundaries and equal timestamps, each checked on a minimal stream.

Within(D, of=Y) is [t(Y) - D, t(Y)); Between(X, Y) is (t(X), t(Y)); events of one time
point never select, negate or aggregate each other.
"""
from __future__ import annotations

import pytest

from chronolog.cep import (
    AggValue, Aggregate, Between, Event, Negation, Predicate, Rule, TemporalEngine, Terminator,
    Within, attr, each_, event, first, last,
)


def engine_with(rule: Rule) -> TemporalEngine:
    engine = TemporalEngine()
    engine.declare("X", ["v"])
    engine.declare("Y", ["v"])
    engine.declare("Z", ["v"])
    engine.register(rule)
    return engine


def seq_rule(selection=each_(), duration: int = 5) -> Rule:
    return Rule(name="seq", emits="S", terminator=Terminator("Y", "Y"),
                predicates=[Predicate("X", "X", selection, Within(duration, of="Y"))],
                outputs={"x": attr("X.v")})


@pytest.mark.parametrize("x_time,fires", [(4, False), (5, True), (9, True), (10, False)])
def test_within_is_closed_below_open_above(x_time: int, fires: bool) -> None:
    engine = engine_with(seq_rule())
    out = engine.push_batch([event("X", x_time, v=1), event("Y", 10, v=0)])
    assert out == ([Event("S", x_time, 10, {"x": 1})] if fires else [])


def test_same_time_point_never_selects_either_way() -> None:
    for order in (["X", "Y"], ["Y", "X"]):
        engine = engine_with(seq_rule())
        assert engine.push_batch([event(t, 3, v=0) for t in order]) == []


def test_last_and_first_break_ties_by_arrival() -> None:
    stream = [event("X", 1, v=1), event("X", 1, v=2), event("X", 1, v=3), event("Y", 2, v=0)]
    assert engine_with(seq_rule(last())).push_batch(stream) == [Event("S", 1, 2, {"x": 3})]
    assert engine_with(seq_rule(first())).push_batch(stream) == [Event("S", 1, 2, {"x": 1})]
    assert engine_with(seq_rule(last(2))).push_batch(stream) == [Event("S", 1, 2, {"x": 2})]
    assert engine_with(seq_rule(first(3))).push_batch(stream) == [Event("S", 1, 2, {"x": 3})]
    assert engine_with(seq_rule(first(4))).push_batch(stream) == []


def test_empty_scope_gives_nothing_under_every_selection() -> None:
    for selection in (each_(), last(), first(), last(3), first(3)):
        assert engine_with(seq_rule(selection)).push_batch([event("Y", 10, v=0)]) == []


def negation_rule(scope) -> Rule:
    return Rule(name="neg", emits="S", terminator=Terminator("Y", "Y"),
                predicates=[Predicate("X", "X", last(), Within(10, of="Y"))],
                negations=[Negation("Z", "Z", scope)], outputs={"x": attr("X.v")})


@pytest.mark.parametrize("z_time,blocked", [(2, False), (3, False), (4, True), (6, True), (7, False)])
def test_between_is_open_on_both_sides(z_time: int, blocked: bool) -> None:
    stream = sorted([event("X", 3, v=1), event("Z", z_time, v=0), event("Y", 7, v=0)], key=lambda e: e.end)
    out = engine_with(negation_rule(Between("X", "Y"))).push_batch(stream)
    assert out == ([] if blocked else [Event("S", 3, 7, {"x": 1})])


@pytest.mark.parametrize("z_time,blocked", [(1, False), (2, True), (6, True), (7, False)])
def test_negation_within(z_time: int, blocked: bool) -> None:
    stream = sorted([event("X", 1, v=1), event("Z", z_time, v=0), event("Y", 7, v=0)], key=lambda e: e.end)
    out = engine_with(negation_rule(Within(5, of="Y"))).push_batch(stream)
    assert out == ([] if blocked else [Event("S", 1, 7, {"x": 1})])


def test_aggregate_scopes_share_the_boundaries() -> None:
    rule = Rule(name="agg", emits="S", terminator=Terminator("Y", "Y"),
                predicates=[Predicate("X", "X", last(), Within(10, of="Y"))],
                aggregates=[Aggregate("between", "count", "Z", None, Between("X", "Y")),
                            Aggregate("within", "sum", "Z", "v", Within(3, of="Y"))],
                outputs={"between": AggValue("between"), "within": AggValue("within")})
    stream = [event("Z", 2, v=1), event("X", 3, v=0), event("Z", 3, v=10), event("Z", 4, v=100),
              event("Z", 6, v=1000), event("Y", 7, v=0), event("Z", 7, v=10000)]
    # between (3, 7): Z@4, Z@6; within [4, 7): Z@4, Z@6
    assert engine_with(rule).push_batch(stream) == [Event("S", 3, 7, {"between": 2, "within": 1100})]


def test_chained_predicates_reach_back_from_each_other() -> None:
    rule = Rule(name="chain", emits="S", terminator=Terminator("Y", "Y"),
                predicates=[Predicate("X", "X", each_(), Within(5, of="Y")),
                            Predicate("Z", "Z", each_(), Within(2, of="X"))],
                outputs={"x": attr("X.v"), "z": attr("Z.v")})
    stream = [event("Z", 1, v=1), event("Z", 3, v=2), event("X", 4, v=10), event("X", 6, v=20),
              event("Z", 6, v=3), event("Y", 8, v=0)]
    # X@4 <- Z in [2, 4): Z@3; X@6 <- Z in [4, 6): none (Z@6 is not before X@6)
    assert engine_with(rule).push_batch(stream) == [Event("S", 3, 8, {"x": 10, "z": 2})]
