"""When a continuous query is evaluated (SECRET's report and tick dimensions).

A report policy names the candidate evaluation instants; a time point's arrival is one
when the policy reacts to content changes. ``NonEmptyContent`` wraps another policy and
drops the instants at which every window is empty (C-SPARQL reports no empty window).

The tick is what makes the engine check the policy: chronolog receives a stream one whole
time point at a time, so it is time-driven (``Tick.TIME_DRIVEN``); the instants a policy
names between two time points are evaluated when the later one arrives, or at the end of
the stream, since time comes only from the stream.

>>> from chronolog.window.scope import SlidingWindow, Bounds
>>> w = [SlidingWindow(10, 5, Bounds.CSPARQL)]
>>> WindowClose().next(w, 9), WindowClose().next(w, 10), Periodic(3).next(w, 10)
(10, 15, 12)
"""
from __future__ import annotations

import bisect
import enum
from dataclasses import dataclass
from typing import Sequence

from chronolog.window.scope import Window


class Tick(enum.Enum):
    """What drives the check of the report policy."""

    TIME_DRIVEN = "each time point of the stream"


class ReportPolicy:
    """The candidate evaluation instants of a query over ``windows``."""

    skip_empty = False  # instants at which every window is empty are not evaluated

    def next(self, windows: Sequence[Window], after: int) -> int | None:
        """The first candidate instant after ``after`` (None: none but arrivals)."""
        return None

    def on_arrival(self, windows: Sequence[Window]) -> bool:
        """Whether every arriving time point is an instant too."""
        return False

    def bounded(self) -> bool:
        """Whether the instants are a fixed finite list (evaluated to its end at flush)."""
        return False


def _earliest(windows: Sequence[Window], after: int) -> int | None:
    found = [i for i in (w.next_instant(after) for w in windows) if i is not None]
    return min(found) if found else None


@dataclass(frozen=True)
class WindowClose(ReportPolicy):
    """At each window close (a sliding window's slide); windows that never close (landmark,
    interval, tuple) report when items arrive."""

    def next(self, windows: Sequence[Window], after: int) -> int | None:
        return _earliest(windows, after)

    def on_arrival(self, windows: Sequence[Window]) -> bool:
        return any(w.next_instant(0) is None for w in windows)


@dataclass(frozen=True)
class ContentChange(ReportPolicy):
    """Whenever the content may change: items arrive, or a window slides."""

    def next(self, windows: Sequence[Window], after: int) -> int | None:
        return _earliest(windows, after)

    def on_arrival(self, windows: Sequence[Window]) -> bool:
        return True


@dataclass(frozen=True)
class Periodic(ReportPolicy):
    """Every ``period`` time units, aligned to 0."""

    period: int

    def __post_init__(self) -> None:
        if self.period <= 0:
            raise ValueError(f"a report period must be positive (got {self.period})")

    def next(self, windows: Sequence[Window], after: int) -> int:
        return (after // self.period + 1) * self.period


@dataclass(frozen=True)
class EvaluateAt(ReportPolicy):
    """At the listed instants only (RSP-QL's ``EVALUATE AT``)."""

    instants: tuple[int, ...]

    def next(self, windows: Sequence[Window], after: int) -> int | None:
        ordered = sorted(self.instants)
        i = bisect.bisect_right(ordered, after)
        return ordered[i] if i < len(ordered) else None

    def bounded(self) -> bool:
        return True


@dataclass(frozen=True)
class NonEmptyContent(ReportPolicy):
    """``inner``'s instants at which some window holds an item."""

    inner: ReportPolicy
    skip_empty = True

    def on_arrival(self, windows: Sequence[Window]) -> bool:
        return self.inner.on_arrival(windows)

    def next(self, windows: Sequence[Window], after: int) -> int | None:
        return self.inner.next(windows, after)

    def bounded(self) -> bool:
        return self.inner.bounded()
