"""Events: a type, an occurrence interval and attribute values.

An event is a named tuple so that creating one in the hot path is cheap and the
compiled rule code can read its fields by position. Attribute values are opaque
hashable values (in chronolog, term ids); the engine only compares them through the
decoder it was built with.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import NamedTuple


class Event(NamedTuple):
    """An event occurring over ``[start, end]``; a primitive event has ``start == end``.

    The event's *time* is ``end``: streams are ordered by it, scopes are measured on it,
    and a composite event takes its terminator's ``end`` (its ``start`` is the earliest
    start among the events it was built from). Treat ``attrs`` as read-only.
    """

    type: str
    start: int
    end: int
    attrs: Mapping[str, Hashable]


WHY = "@why"
"""The attribute that says what an event was built from, in an engine that explains
(``TemporalEngine(explain=True)``): a composite event's is ``(events, aggregated,
negations)``: (alias, event as a plain tuple) for each event its pattern bound, (aggregate
name, those events) for each aggregate, and the aliases of the negations that found
nothing; an input event's is whatever its producer gives (DOTR: the query and the facts
that made it). Plain data, so snapshots keep it."""


def event(type: str, time: int, **attrs: Hashable) -> Event:
    """A primitive event at ``time``.

    >>> event("Smoke", 12, area="A")
    Event(type='Smoke', start=12, end=12, attrs={'area': 'A'})
    """
    return Event(type, time, time, attrs)


@dataclass(frozen=True)
class EventType:
    """An event type's name and attribute names; rules are checked against it."""

    name: str
    attributes: tuple[str, ...]
    derived: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("an event type needs a non-empty name")
        if len(set(self.attributes)) != len(self.attributes):
            raise ValueError(f"event type {self.name!r} repeats an attribute: {self.attributes}")
