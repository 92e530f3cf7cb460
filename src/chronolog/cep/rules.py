"""The rule object model: TESLA's ``define ... from ... where ... consuming``.

A rule is a tree of predicates rooted at its terminator: each predicate reaches back
``within D from`` the terminator or an earlier predicate. Object model only; checking
and compiling happen at registration (``chronolog.cep.compiler``).

Scopes (``t(e)`` is an event's time, its ``end``):

- ``Within(D, of="Y")`` with D > 0 holds the events x with ``t(Y) - D <= t(x) < t(Y)``:
  an event at the same time point as Y is *not* before Y, so these scopes never join the
  events of one time point and the order of arrival within a time point cannot change
  which combinations exist;
- ``Within(0, of="Y")`` holds the events x of Y's own time point, ``t(x) = t(Y)``, Y
  itself excepted: for events that happen together (``TemporalEngine.push_point`` takes
  a time point's events at once, so that they all see each other);
- ``Between("X", "Y")`` holds the events z with ``t(X) < t(z) < t(Y)`` (empty unless X
  is before Y); it is for negations and aggregates.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

from chronolog.cep.expressions import Compare, Term
from chronolog.cep.policies import Consumption, Selection, no_consumption


@dataclass(frozen=True)
class Within:
    """Events in ``[t(of) - duration, t(of))``, or of ``of``'s time point when ``duration`` is 0."""

    duration: int
    of: str


@dataclass(frozen=True)
class Between:
    """Events strictly between ``t(after)`` and ``t(before)``."""

    after: str
    before: str


Scope = Union[Within, Between]


def _conditions(value: Sequence[Compare] | Compare) -> tuple[Compare, ...]:
    return (value,) if isinstance(value, Compare) else tuple(value)


@dataclass(frozen=True)
class Terminator:
    """The event that fires the rule; ``where`` filters it (own attributes only)."""

    alias: str
    type: str
    where: tuple[Compare, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", _conditions(self.where))


@dataclass(frozen=True)
class Predicate:
    """``<selection> type(where) within D from Y``, bound under ``alias``.

    ``where`` holds filters on the event's own attributes and parameters relating them
    to events bound earlier in the pattern; they decide which events *qualify*, before
    the selection picks among them.
    """

    alias: str
    type: str
    selection: Selection
    scope: Within
    where: tuple[Compare, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", _conditions(self.where))


@dataclass(frozen=True)
class Negation:
    """``not type(where)`` in ``scope``: the rule fires only if no such event exists."""

    alias: str
    type: str
    scope: Scope | None
    where: tuple[Compare, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", _conditions(self.where))


AggregateFunction = Literal["avg", "sum", "min", "max", "count"]


@dataclass(frozen=True)
class Aggregate:
    """``func(type.attribute)`` over the events of ``type`` in ``scope`` that satisfy
    ``where`` (which refers to the aggregated event as ``name``).

    The value is read with ``AggValue(name)``: ``count`` and ``sum`` of nothing are 0,
    ``avg``, ``min`` and ``max`` of nothing are ``None`` (so comparisons with it fail).
    Values are decoded before aggregation. ``sum`` and ``avg`` follow SPARQL 1.1's numeric
    type promotion (``chronolog.values.numeric_sum``, ``numeric_avg``): the average of integers is a
    ``Decimal``, a double among the values makes a float, a non-number makes ``None``.
    """

    name: str
    func: AggregateFunction
    type: str
    attribute: str | None
    scope: Scope | None
    where: tuple[Compare, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", _conditions(self.where))


@dataclass(frozen=True)
class Rule:
    """A TESLA rule: ``define emits(outputs) from terminator and predicates ...``.

    ``where`` holds conditions over the whole combination (and aggregates), checked
    after selection; ``outputs`` maps each attribute of the composite event to a term.
    """

    name: str
    emits: str
    terminator: Terminator
    predicates: tuple[Predicate, ...] = ()
    negations: tuple[Negation, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    where: tuple[Compare, ...] = ()
    outputs: tuple[tuple[str, Term], ...] = ()
    consuming: Consumption = field(default_factory=no_consumption)

    def __post_init__(self) -> None:
        for name in ("predicates", "negations", "aggregates"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "where", _conditions(self.where))
        outputs = self.outputs
        if isinstance(outputs, Mapping):
            outputs = tuple(outputs.items())
        object.__setattr__(self, "outputs", tuple((str(k), v) for k, v in outputs))

    def aliases(self) -> tuple[str, ...]:
        """The aliases the pattern binds: terminator first, then predicates in order."""
        return (self.terminator.alias, *(p.alias for p in self.predicates))
