"""Window scopes: which stream items a window holds at an evaluation instant.

Time points are integers, so every time-based scope is a half-open interval ``[lo, hi)``
of time points; the two bound conventions of the papers are two ways of placing it:

- ``Bounds.CSPARQL`` (C-SPARQL's engine, the CSRBench oracle): windows aligned to 0, the
  k-th holds ``k*STEP <= time < k*STEP + RANGE`` and closes at ``k*STEP + RANGE``; at
  instant t the scope is the last window closed at or before t. No partial window at
  start-up: the first window reported is the first at or after time 0 (k >= 0), or, for a
  stream that starts before 0, the one its first item's time falls in the step of
  (``start_instant``);
- ``Bounds.RSEPQL`` (RSEP-QL Definition 3): with ``t' = floor(t/STEP)*STEP``, the items
  with ``t' - RANGE < time <= t'``.

A landmark window holds ``t0 <= time <= t``, an interval window ``t1 <= time <= t2``
(never past t), a tuple window the last n items at or before t. Scopes only move forward
as t grows, which is what lets :class:`chronolog.window.WindowBuffer` slide incrementally
and lets a fact carry the last instant it can be in a window (``last_instant``).

>>> w = SlidingWindow(10, 5, Bounds.CSPARQL)
>>> w.start_instant(3), w.scope(10), w.scope(17), w.next_instant(10), w.start_instant(-7)
(10, Scope(lo=0, hi=10), Scope(lo=5, hi=15), 15, 0)
>>> SlidingWindow(5, 1, Bounds.RSEPQL).scope(12)
Scope(lo=8, hi=13)
"""
from __future__ import annotations

import enum
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import NamedTuple

FOREVER = sys.maxsize  # the last instant of an item no window slide ever drops


class Bounds(enum.Enum):
    """Where a sliding window's scope lies relative to the evaluation instant."""

    CSPARQL = "[k*STEP, k*STEP+RANGE), reported at its close"
    RSEPQL = "(t'-RANGE, t'], t' = floor(t/STEP)*STEP"


class Scope(NamedTuple):
    """The time points ``lo <= time < hi``."""

    lo: int
    hi: int


class Window(ABC):
    """A window function (RSEP-QL Definition 3)."""

    count_based = False

    @abstractmethod
    def scope(self, t: int) -> Scope | None:
        """The time points the window holds at instant ``t`` (None: no window yet)."""

    def next_instant(self, after: int) -> int | None:
        """The first instant after ``after`` at which the window slides or closes (None:
        its content changes only when items arrive)."""
        return None

    def last_instant(self, time: int) -> int:
        """The last instant at which an item of time ``time`` is in the window."""
        return FOREVER

    def first_instant(self, time: int) -> int:
        """The first instant at which an item of time ``time`` is in the window."""
        return time

    def start_instant(self, time: int) -> int:
        """The first instant worth evaluating when the stream starts at ``time``."""
        return self.first_instant(time)


@dataclass(frozen=True)
class SlidingWindow(Window):
    """A time-based window ``[RANGE, STEP]``; tumbling when ``step == range``."""

    range: int
    step: int
    bounds: Bounds = Bounds.CSPARQL

    def __post_init__(self) -> None:
        if self.range <= 0 or self.step <= 0:
            raise ValueError(f"a window's range and step must be positive (got {self.range}, {self.step})")

    @classmethod
    def tumbling(cls, range: int, bounds: Bounds = Bounds.CSPARQL) -> "SlidingWindow":
        return cls(range, range, bounds)

    def scope(self, t: int) -> Scope | None:
        if self.bounds is Bounds.CSPARQL:
            k = (t - self.range) // self.step
            return Scope(k * self.step, k * self.step + self.range)
        top = t // self.step * self.step
        return Scope(top - self.range + 1, top + 1)

    def next_instant(self, after: int) -> int:
        if self.bounds is Bounds.CSPARQL:
            return ((after - self.range) // self.step + 1) * self.step + self.range
        return (after // self.step + 1) * self.step

    def last_instant(self, time: int) -> int:
        if self.bounds is Bounds.CSPARQL:  # up to the instant before the close of the next window
            return time // self.step * self.step + self.step + self.range - 1
        return -(-(time + self.range) // self.step) * self.step - 1

    def first_instant(self, time: int) -> int:
        if self.bounds is Bounds.CSPARQL:  # the close of the first window holding it
            return ((time - self.range) // self.step + 1) * self.step + self.range
        return -(-time // self.step) * self.step

    def start_instant(self, time: int) -> int:
        if self.bounds is Bounds.CSPARQL:  # no window begun before time 0, or before the first item's step
            first = min(0, time // self.step)
            return max(first, (time - self.range) // self.step + 1) * self.step + self.range
        return self.first_instant(time)


@dataclass(frozen=True)
class LandmarkWindow(Window):
    """Everything from ``start`` on (RSEP-QL's W^λ(t0))."""

    start: int

    def scope(self, t: int) -> Scope:
        return Scope(self.start, t + 1)

    def first_instant(self, time: int) -> int:
        return max(time, self.start)


@dataclass(frozen=True)
class IntervalWindow(Window):
    """The fixed interval ``[start, end]`` (RSEP-QL's W^⊔(t1, t2)), never past the instant."""

    start: int
    end: int

    def scope(self, t: int) -> Scope:
        return Scope(self.start, min(t, self.end) + 1)

    def first_instant(self, time: int) -> int:
        return max(time, self.start)


@dataclass(frozen=True)
class TupleWindow(Window):
    """The last ``count`` items at or before the instant (C-SPARQL's ``[TRIPLES n]``)."""

    count: int
    count_based = True

    def __post_init__(self) -> None:
        if self.count <= 0:
            raise ValueError(f"a tuple window holds a positive number of items (got {self.count})")

    def scope(self, t: int) -> Scope:
        return Scope(-FOREVER, t + 1)  # by time: everything so far; the buffer keeps the last `count`
