"""Temporal reasoning: TESLA complex-event patterns over time-ordered events.

Pure Python, no RDF inside: events are a type, an interval and opaque attribute values.
Build rules with the object model (``Rule``, ``Terminator``, ``Predicate``, ``Negation``,
``Aggregate``, scopes ``Within``/``Between``, conditions ``Compare``/``param``/``where``,
policies ``each_``/``last``/``first`` and ``consuming``/``consume_all``; late events follow a ``LatePolicy``), register them on
a ``TemporalEngine`` and push events; see ``TemporalEngine`` for an example.
"""
from chronolog.cep.compiler import RulePlan
from chronolog.cep.engine import RuleEvaluationError, TemporalEngine
from chronolog.cep.errors import (
    CyclicRulesError,
    EventError,
    MissingScopeError,
    PolicyError,
    RuleError,
    UnknownAliasError,
    UnknownAttributeError,
    UnknownEventTypeError,
)
from chronolog.cep.events import WHY, Event, EventType, event
from chronolog.cep.expressions import AggValue, Attr, Compare, Const, End, Start, attr, param, where
from chronolog.cep.policies import (
    Consumption,
    Selection,
    consume_all,
    consuming,
    each_,
    first,
    last,
    no_consumption,
)
from chronolog.cep.rules import Aggregate, Between, Negation, Predicate, Rule, Terminator, Within
from chronolog.cep.ruleset import RuleSet
from chronolog.cep.state import TemporalState
from chronolog.lateness import LatePolicy
from chronolog.plain import SnapshotError

__all__ = [
    "AggValue", "Aggregate", "Attr", "Between", "Compare", "Const", "Consumption",
    "CyclicRulesError", "End", "Event", "EventError", "EventType", "LatePolicy", 
    "MissingScopeError", "Negation", "PolicyError", "Predicate", "Rule", "RuleError",
    "RuleEvaluationError", "RulePlan", "RuleSet", "Selection", "SnapshotError", "Start",
    "TemporalEngine", "TemporalState", "Terminator", "UnknownAliasError",
    "UnknownAttributeError", "UnknownEventTypeError", "Within", "attr", "consume_all",
    "consuming", "each_", "event", "first", "last", "no_consumption",
    "param", "where", "WHY",
]
