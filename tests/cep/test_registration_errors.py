"""Bad rules fail at registration with a RuleError that names the rule and the problem,
and leave the engine unchanged."""
from __future__ import annotations

import pytest

from chronolog.cep import (
    AggValue, Aggregate, Attr, Between, Compare, CyclicRulesError, MissingScopeError, Negation,
    Predicate, Rule, RuleError, TemporalEngine, Terminator, UnknownAliasError,
    UnknownAttributeError, UnknownEventTypeError, Within, attr, consuming, last, param, where,
)
from chronolog.errors import ChronologError


@pytest.fixture
def engine() -> TemporalEngine:
    engine = TemporalEngine()
    engine.declare("Smoke", ["area"])
    engine.declare("Temp", ["area", "value"])
    return engine


def rule(**overrides) -> Rule:
    parts = dict(
        name="fire", emits="Fire", terminator=Terminator("S", "Smoke"),
        predicates=[Predicate("T", "Temp", last(), Within(300, of="S"), where=[param("T.area", "S.area")])],
        outputs={"area": attr("S.area")},
    )
    parts.update(overrides)
    return Rule(**parts)


def rejects(engine: TemporalEngine, bad: Rule, error: type[RuleError], *fragments: str) -> None:
    """``bad`` is rejected with ``error``, naming the rule and each fragment; nothing changes."""
    before = (list(engine.rules.plans), dict(engine.rules.types))
    with pytest.raises(error) as info:
        engine.register(bad)
    message = str(info.value)
    assert isinstance(info.value, ChronologError)
    assert f"rule {bad.name!r}" in message
    for fragment in fragments:
        assert fragment in message, message
    assert (list(engine.rules.plans), dict(engine.rules.types)) == before


def test_a_good_rule_registers(engine: TemporalEngine) -> None:
    assert engine.register(rule()).name == "fire"


def test_unknown_terminator_type(engine: TemporalEngine) -> None:
    rejects(engine, rule(terminator=Terminator("S", "Smok")), UnknownEventTypeError, "'Smok'", "Smoke, Temp")


def test_unknown_predicate_type(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temperature", last(), Within(300, of="S"))])
    rejects(engine, bad, UnknownEventTypeError, "predicate 'T'", "'Temperature'")


def test_unknown_negation_type(engine: TemporalEngine) -> None:
    bad = rule(negations=[Negation("R", "Rain", Within(10, of="S"))])
    rejects(engine, bad, UnknownEventTypeError, "negation 'R'", "'Rain'")


def test_within_refers_to_an_event_not_in_the_pattern(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Within(300, of="Fog"))])
    rejects(engine, bad, UnknownAliasError, "within 300 from Fog", "'Fog'", "bound so far: S")


def test_within_refers_to_a_later_event(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Within(300, of="U")),
                           Predicate("U", "Temp", last(), Within(300, of="S"))])
    rejects(engine, bad, UnknownAliasError, "'U'")


def test_parameter_on_a_missing_attribute(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
                                     where=[param("T.room", "S.area")])])
    rejects(engine, bad, UnknownAttributeError, "T.room", "'Temp' has no attribute 'room'", "area, value")


def test_parameter_on_a_missing_attribute_of_the_other_event(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
                                     where=[param("T.area", "S.value")])])
    rejects(engine, bad, UnknownAttributeError, "S.value", "'Smoke'")


def test_parameter_on_an_unbound_event(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
                                     where=[param("T.area", "Q.area")])])
    rejects(engine, bad, UnknownAliasError, "'Q'")


def test_negation_with_no_scope(engine: TemporalEngine) -> None:
    bad = rule(negations=[Negation("R", "Temp", None)])
    rejects(engine, bad, MissingScopeError, "negation 'R' needs a scope")


def test_aggregate_with_no_scope(engine: TemporalEngine) -> None:
    bad = rule(aggregates=[Aggregate("m", "avg", "Temp", "value", None)])
    rejects(engine, bad, MissingScopeError, "aggregate 'm' needs a scope")


def test_predicate_with_no_scope(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), None)])
    rejects(engine, bad, MissingScopeError, "predicate 'T' needs a scope")


def test_predicate_with_a_between_scope(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Between("S", "S"))])
    rejects(engine, bad, RuleError, "predicates take 'within D from <event>'")


def test_negative_duration(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Within(-1, of="S"))])
    rejects(engine, bad, RuleError, "non-negative integer duration")


def test_aggregate_on_a_missing_attribute(engine: TemporalEngine) -> None:
    bad = rule(aggregates=[Aggregate("m", "avg", "Temp", "celsius", Within(10, of="S"))])
    rejects(engine, bad, UnknownAttributeError, "aggregate 'm'", "'celsius'")


def test_unknown_aggregate_function(engine: TemporalEngine) -> None:
    bad = rule(aggregates=[Aggregate("m", "median", "Temp", "value", Within(10, of="S"))])
    rejects(engine, bad, RuleError, "unknown function 'median'")


def test_unknown_aggregate_in_where(engine: TemporalEngine) -> None:
    rejects(engine, rule(where=[Compare(AggValue("m"), ">", 1)]), UnknownAliasError, "aggregate 'm'")


def test_aggregate_in_a_predicate_filter(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
                                     where=[Compare(Attr("T", "value"), ">", AggValue("m"))])],
               aggregates=[Aggregate("m", "avg", "Temp", "value", Within(10, of="S"))])
    rejects(engine, bad, UnknownAliasError, "usable only in the rule's where clause")


def test_output_on_a_missing_attribute(engine: TemporalEngine) -> None:
    rejects(engine, rule(outputs={"room": attr("S.room")}), UnknownAttributeError, "output 'room'")


def test_consuming_an_unknown_alias(engine: TemporalEngine) -> None:
    rejects(engine, rule(consuming=consuming("Fog")), UnknownAliasError, "consuming 'Fog'")


def test_duplicate_alias(engine: TemporalEngine) -> None:
    bad = rule(predicates=[Predicate("S", "Temp", last(), Within(300, of="S"))])
    rejects(engine, bad, RuleError, "alias 'S' is used twice")


def test_terminator_filter_on_another_event(engine: TemporalEngine) -> None:
    bad = rule(terminator=Terminator("S", "Smoke", where=[where("T.value", ">", 1)]))
    rejects(engine, bad, UnknownAliasError, "terminator 'S'", "'T'")


def test_emitting_an_input_type(engine: TemporalEngine) -> None:
    rejects(engine, rule(emits="Temp"), RuleError, "declared as an input event type")


def test_emitting_a_type_with_other_attributes(engine: TemporalEngine) -> None:
    engine.register(rule())
    with pytest.raises(RuleError, match="another rule emits it"):
        engine.register(rule(name="fire2", outputs={"where": attr("S.area"), "extra": attr("T.value")}))


def test_duplicate_rule_name(engine: TemporalEngine) -> None:
    engine.register(rule())
    with pytest.raises(RuleError, match="already registered"):
        engine.register(rule())


def test_self_cycle(engine: TemporalEngine) -> None:
    engine.register(rule())  # Fire now exists
    bad = Rule(name="loop", emits="Fire", terminator=Terminator("F", "Fire"), outputs={"area": attr("F.area")})
    rejects(engine, bad, CyclicRulesError, "Fire", "cyclic")


def test_longer_cycle(engine: TemporalEngine) -> None:
    engine.register(rule())  # Smoke, Temp -> Fire
    engine.register(Rule(name="a", emits="Blaze", terminator=Terminator("F", "Fire"),
                         outputs={"area": attr("F.area")}))  # Fire -> Blaze
    loop = Rule(name="loop", emits="Fire", terminator=Terminator("B", "Blaze"),
                outputs={"area": attr("B.area")})  # Blaze -> Fire closes the cycle
    rejects(engine, loop, CyclicRulesError, "Fire -> Blaze")
    assert [p.name for p in engine.rules.plans] == ["fire", "a"]


def test_declared_type_conflicts() -> None:
    engine = TemporalEngine()
    engine.declare("Smoke", ["area"])
    assert engine.declare("Smoke", ["area"]).attributes == ("area",)
    with pytest.raises(RuleError, match="already declared"):
        engine.declare("Smoke", ["room"])
