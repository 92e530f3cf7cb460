"""Time-ordered event storage, shared by every rule that reads an event type.

A ``Timeline`` keeps events in arrival order, which is time order because input arrives
in non-decreasing time; scopes are two binary searches. Evicted events are skipped by
advancing ``head`` and the lists are compacted only when the dead prefix is at least half
of them, so eviction costs O(1) amortized. A ``TypeStore`` adds per-attribute hash
indexes (value -> Timeline) for the attributes that rule parameters bind, so that a
``last`` predicate with a parameter looks only at events with the right value.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable

from chronolog.cep.events import Event

_COMPACT_MIN = 64


class Timeline:
    """Events with their times and arrival numbers; ``events[head:]`` are live."""

    __slots__ = ("times", "events", "seqs", "head")

    def __init__(self) -> None:
        self.times: list[int] = []
        self.events: list[Event] = []
        self.seqs: list[int] = []
        self.head = 0

    def __len__(self) -> int:
        return len(self.times) - self.head

    def append(self, event: Event, seq: int) -> None:
        self.times.append(event.end)
        self.events.append(event)
        self.seqs.append(seq)

    def drop_front(self, count: int) -> None:
        """Forget the ``count`` oldest live events."""
        head = self.head + count
        if head >= _COMPACT_MIN and 2 * head >= len(self.times):
            del self.times[:head], self.events[:head], self.seqs[:head]
            head = 0
        self.head = head


class TypeStore:
    """The live events of one type: the main timeline plus parameter indexes.

    A store that goes from empty to holding an event enters ``live`` (shared by a state's
    stores), so that eviction visits the stores holding events, not every event type."""

    __slots__ = ("horizon", "main", "indexes", "live")

    def __init__(self, horizon: int, live: dict[int, "TypeStore"] | None = None) -> None:
        self.horizon = horizon
        self.main = Timeline()
        self.indexes: dict[str, dict[Hashable, Timeline]] = {}
        self.live = {} if live is None else live

    def __len__(self) -> int:
        return len(self.main)

    def index(self, attribute: str) -> dict[Hashable, Timeline]:
        """The index on ``attribute``, built from the live events on first use."""
        index = self.indexes.get(attribute)
        if index is None:
            index = self.indexes[attribute] = {}
            main = self.main
            for i in range(main.head, len(main.times)):
                event = main.events[i]
                timeline = index.get(event.attrs[attribute])
                if timeline is None:
                    timeline = index[event.attrs[attribute]] = Timeline()
                timeline.append(event, main.seqs[i])
        return index

    def append(self, event: Event, seq: int) -> None:
        main = self.main
        if main.head == len(main.times):
            self.live[id(self)] = self
        main.times.append(event[2])
        main.events.append(event)
        main.seqs.append(seq)
        if self.indexes:
            attrs = event.attrs
            for attribute, index in self.indexes.items():
                timeline = index.get(attrs[attribute])
                if timeline is None:
                    timeline = index[attrs[attribute]] = Timeline()
                timeline.append(event, seq)

    def evict_before(self, cutoff: int) -> None:
        """Forget the events older than ``cutoff``; they are the oldest of every index too."""
        main = self.main
        times = main.times
        head = main.head
        if head == len(times) or times[head] >= cutoff:
            return
        stop = bisect_left(times, cutoff, head)
        if self.indexes:
            events = main.events
            for attribute, index in self.indexes.items():
                for i in range(head, stop):
                    key = events[i].attrs[attribute]
                    timeline = index[key]
                    if len(timeline) == 1:
                        del index[key]
                    else:
                        timeline.drop_front(1)
        main.drop_front(stop - head)
