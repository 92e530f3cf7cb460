"""Selection, consumption and lateness policies: small validated strategy objects.

Selection (which of the qualifying events in a scope a predicate binds), per TESLA and
RSEP-QL section 4.3:

==================  ==========================  ======================================
factory             TESLA                       RSEP-QL / EP-SPARQL
==================  ==========================  ======================================
``each_()``         ``each X within D from Y``  unrestricted (SEQ)
``last()``          ``last X ...``              recent (SEQ^r; SEQ^n without consuming)
``first()``         ``first X ...``             chronological (SEQ^c)
``last(n)``         ``n-last X ...``            the n-th most recent
``first(n)``        ``n-first X ...``           the n-th oldest
==================  ==========================  ======================================

``last(n)``/``first(n)`` select exactly one event, the *n-th* (TESLA's meaning): with
qualifying events x1 < x2 < x3 in the scope, ``last(2)`` binds x2 and ``first(3)`` binds
x3; with fewer than n qualifying events the predicate binds nothing and the rule does not
fire for that partial match. Events are ordered by time, ties by arrival.

Consumption (RSEP-QL section 4.4): ``no_consumption()`` is P^u, ``consume_all()`` is
P^c / P^r (every event a firing selected is unavailable to later firings of the same
rule), ``consuming("T", ...)`` is TESLA's ``consuming`` clause.

Lowering the other languages onto these objects (the next step; seed 004 sections
4.3-4.4, seed 001 section 4.2): RSEP-QL's ``SEQ``, ``SEQ^r``, ``SEQ^c`` and ``SEQ^n`` are
``each_()``, ``last()`` and ``first()`` with ``consume_all()``, and ``last()`` without
consumption, each within the query window. EP-SPARQL's ``SEQ`` over intervals
(``t_omega(X) < t_alpha(Y)``) is ``each_()`` plus the condition
``Compare(End("X"), "<", Start("Y"))``, and getDURATION/getSTARTTIME/getENDTIME are
``Start``/``End`` terms. ``OPTIONALSEQ``, ``EQUALS`` and ``EQUALSOPTIONAL`` need two
local extensions that are not built yet: an ``optional`` flag on ``Selection`` (bind
nothing when no event qualifies) and a co-occurrence scope (same interval as Y rather
than before it).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from chronolog.cep.errors import PolicyError

if TYPE_CHECKING:
    pass

SelectionKind = Literal["each", "last", "first"]


@dataclass(frozen=True)
class Selection:
    """How a predicate picks among the qualifying events of its scope."""

    kind: SelectionKind
    n: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("each", "last", "first"):
            raise PolicyError(f"unknown selection {self.kind!r}; use each, last or first")
        if not isinstance(self.n, int) or isinstance(self.n, bool) or self.n < 1:
            raise PolicyError(f"selection {self.kind}: n must be an integer >= 1, got {self.n!r}")
        if self.kind == "each" and self.n != 1:
            raise PolicyError("'each' selects every qualifying event; it takes no n")

    def __str__(self) -> str:
        return self.kind if self.n == 1 else f"{self.n}-{self.kind}"


def each_() -> Selection:
    """Every qualifying event: one combination per event (TESLA ``each``)."""
    return Selection("each")


def last(n: int = 1) -> Selection:
    """The n-th most recent qualifying event (TESLA ``last`` / ``n-last``)."""
    return Selection("last", n)


def first(n: int = 1) -> Selection:
    """The n-th oldest qualifying event (TESLA ``first`` / ``n-first``)."""
    return Selection("first", n)


@dataclass(frozen=True)
class Consumption:
    """Which bound events a firing consumes for later firings of the same rule.

    ``aliases`` names them; ``everything`` stands for every event the pattern binds.
    Consumed events are still seen by negations and aggregates (they only stop being
    *selected*), and other rules are unaffected.
    """

    aliases: frozenset[str] = frozenset()
    everything: bool = False

    def __post_init__(self) -> None:
        if self.everything and self.aliases:
            raise PolicyError("consume_all() already consumes every bound event; name no aliases")
        for alias in self.aliases:
            if not isinstance(alias, str) or not alias:
                raise PolicyError(f"consuming: expected event aliases, got {alias!r}")

    def consumed(self, bound: Iterable[str]) -> frozenset[str]:
        """The aliases consumed, given the aliases the pattern binds."""
        return frozenset(bound) if self.everything else self.aliases


def no_consumption() -> Consumption:
    """Nothing is consumed: RSEP-QL's P^u (unrestricted)."""
    return Consumption()


def consuming(*aliases: str) -> Consumption:
    """TESLA's ``consuming X, Y``."""
    if not aliases:
        raise PolicyError("consuming() needs at least one alias; use no_consumption() for none")
    return Consumption(frozenset(aliases))


def consume_all() -> Consumption:
    """Every bound event is consumed: RSEP-QL's P^c and P^r."""
    return Consumption(everything=True)
