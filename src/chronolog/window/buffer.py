"""The items of one window over one stream, slid from instant to instant.

Items are ``(time, value)`` pairs in time order (a value is a triple for RDF streams). A
buffer holds the items in the window's current scope, then those that arrived but have
not entered it yet; ``slide(t)`` moves the scope to instant ``t`` and says which items
entered (with the last instant they can stay, for expiration-time maintenance) and which
left. Items that left are dropped, so memory follows the window, not the stream.

>>> from chronolog.window.scope import SlidingWindow
>>> b = WindowBuffer(SlidingWindow(10, 5))
>>> b.add(1, ["a"]); b.add(7, ["b"]); b.add(12, ["c"])
>>> b.slide(10), b.content()
(Change(entered=[('a', 14), ('b', 19)], left=[]), ['a', 'b'])
>>> b.slide(15), b.content()
(Change(entered=[('c', 24)], left=['a']), ['b', 'c'])
"""
from __future__ import annotations

from collections import deque
from typing import Generic, Iterable, NamedTuple, TypeVar

from chronolog.window.scope import FOREVER, TupleWindow, Window

T = TypeVar("T")


class Change(NamedTuple):
    """What one slide changed: items that entered (value, last instant), items that left."""

    entered: list
    left: list


class WindowBuffer(Generic[T]):
    """One window's items (see the module docstring)."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.items: deque[tuple[int, T]] = deque()
        self.inside = 0  # the first `inside` items are in the current scope

    def add(self, time: int, values: Iterable[T]) -> None:
        """Items that arrived at ``time`` (never earlier than items added before)."""
        self.items.extend((time, v) for v in values)

    def slide(self, t: int) -> Change:
        """Move the scope to instant ``t`` (never earlier than the last one)."""
        entered: list = []
        left: list = []
        scope = self.window.scope(t)
        if scope is None:
            return Change(entered, left)
        lo, hi = scope.lo, min(scope.hi, t + 1)
        items, window = self.items, self.window
        while self.inside and items[0][0] < lo:
            left.append(items.popleft()[1])
            self.inside -= 1
        if not self.inside:
            while items and items[0][0] < lo:
                items.popleft()
        before = self.inside
        while self.inside < len(items) and items[self.inside][0] < hi:
            time, value = items[self.inside]
            entered.append((value, window.last_instant(time)))
            self.inside += 1
        if isinstance(window, TupleWindow) and self.inside > window.count:
            excess = self.inside - window.count
            left.extend(items.popleft()[1] for _ in range(min(excess, before)))
            for _ in range(excess - min(excess, before)):
                items.popleft()
            entered = entered[excess - min(excess, before):]
            self.inside = window.count
        return Change(entered, left)

    def content(self) -> list[T]:
        """The values in the current scope, oldest first."""
        return [self.items[i][1] for i in range(self.inside)]

    def earliest(self) -> int | None:
        """The time of the oldest item held (in the scope or waiting), None when empty."""
        return self.items[0][0] if self.items else None

    def leaves(self) -> bool:
        """Whether some item held will leave the window by time (an item of a landmark or
        tuple window stays for good once the stream has ended)."""
        return bool(self.items) and self.window.last_instant(self.items[-1][0]) != FOREVER

    def state(self) -> tuple[list[tuple[int, T]], int]:
        return list(self.items), self.inside

    def set_state(self, state: tuple[list[tuple[int, T]], int]) -> None:
        items, inside = state
        self.items = deque(items)
        self.inside = inside

