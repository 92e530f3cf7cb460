"""Terms and comparisons used by filters, parameters, rule conditions and outputs.

Comparison rule (documented once, followed by the engine and the reference): ``==`` and
``!=`` between two attributes compare the raw values (a TESLA parameter binds *the same
value*, which is what lets the engine index it); every other comparison of an attribute
(with a constant, or by order) compares decoded values by :func:`chronolog.values.holds`
(numbers with XPath's promotion, as SPARQL and the Datalog built-ins do). A comparison
that cannot be made (``None`` from an empty aggregate, values of incomparable types) is
false, as in SPARQL.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Union


@dataclass(frozen=True)
class Attr:
    """The value of attribute ``name`` of the event bound to ``alias``."""

    alias: str
    name: str


@dataclass(frozen=True)
class Const:
    """A constant, already in decoded form (a number, a string...)."""

    value: Hashable


@dataclass(frozen=True)
class Start:
    """The start time of the event bound to ``alias``."""

    alias: str


@dataclass(frozen=True)
class End:
    """The end time (the time) of the event bound to ``alias``."""

    alias: str


@dataclass(frozen=True)
class AggValue:
    """The value of the aggregate named ``name`` (``None`` when its scope is empty)."""

    name: str


Term = Union[Attr, Const, Start, End, AggValue]

OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Compare:
    """``left op right``; plain Python values on either side are wrapped in ``Const``."""

    left: Term
    op: str
    right: Term

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown comparison operator {self.op!r}; use one of {sorted(OPERATORS)}")
        for side in ("left", "right"):
            value = getattr(self, side)
            if not isinstance(value, (Attr, Const, Start, End, AggValue)):
                object.__setattr__(self, side, Const(value))

    def compares_raw(self) -> bool:
        """True for a parameter-style equality between two attributes (raw values)."""
        return self.op in ("==", "!=") and isinstance(self.left, Attr) and isinstance(self.right, Attr)


def attr(ref: str) -> Attr:
    """``attr("Temp.value")`` is ``Attr("Temp", "value")``."""
    alias, sep, name = ref.partition(".")
    if not sep or not alias or not name:
        raise ValueError(f"expected 'Alias.attribute', got {ref!r}")
    return Attr(alias, name)


def param(left: str, right: str, op: str = "==") -> Compare:
    """A TESLA parameter: ``param("Temp.area", "Smoke.area")`` binds the two values."""
    return Compare(attr(left), op, attr(right))


def where(ref: str, op: str, value: Hashable) -> Compare:
    """A filter on one attribute: ``where("Temp.value", ">", 45)``."""
    return Compare(attr(ref), op, Const(value))
