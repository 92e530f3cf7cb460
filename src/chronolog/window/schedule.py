"""The windows of one continuous query and the instants it is evaluated at.

A query reads several named windows, each over one named stream. ``push(time, inputs)``
adds a time point's items to the windows over its streams and yields, in time order, every
evaluation instant up to ``time`` the report policy names, with what each window's slide
to that instant changed; ``flush()`` ends the stream: the instants still to come while
some window still holds an item that will leave it, up to the one at which the last such
item has left (what DSTREAM reports leaving); a window that never drops items (landmark,
tuple) does not make the stream longer. A fixed list of instants is evaluated to its end.

Empty stretches are jumped over: an instant at which every window is empty is skipped
when the policy skips empty content, or when the windows were already empty at the
previous evaluation (the answer could not change); the next instant tried is then the
first at which a held item enters a window.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Mapping, NamedTuple, Sequence

from chronolog.window.buffer import Change, WindowBuffer
from chronolog.window.report import ReportPolicy
from chronolog.window.scope import FOREVER, Window


class Instant(NamedTuple):
    """An evaluation instant and each window's change since the previous one; a skipped
    instant at which items left is yielded unevaluated (``evaluated`` False), so that
    whoever keeps state from the changes sees every item leave."""

    time: int
    changes: dict[str, Change]
    evaluated: bool = True


class Schedule:
    """Named windows over named streams, evaluated at the instants of ``policy``."""

    def __init__(self, windows: Mapping[str, tuple[str, Window]], policy: ReportPolicy) -> None:
        self.streams = {name: stream for name, (stream, _) in windows.items()}
        self.buffers = {name: WindowBuffer(window) for name, (_, window) in windows.items()}
        self.windows: Sequence[Window] = [w for _, w in windows.values()]
        self.policy = policy
        self.last: int | None = None  # the last instant tried
        self.origin: int | None = None  # the time of the stream's first time point
        self.was_empty = True
        self._arrivals = policy.on_arrival(self.windows)
        self._candidate: tuple[int, int | None] | None = None  # (after, the policy's next instant)

    def held(self) -> int:
        """The items the windows hold (in their scope or waiting to enter it)."""
        return sum(len(buffer.items) for buffer in self.buffers.values())

    def push(self, time: int, inputs: Mapping[str, Iterable[object]]) -> Iterator[Instant]:
        arrived = False
        for name, buffer in self.buffers.items():
            values = list(inputs.get(self.streams[name], ()))
            if values:
                buffer.add(time, values)
                arrived = True
        if self.last is None:
            self.last = self._start(time)
        yield from self._run(time, final=False)
        if arrived and self._arrivals and self.last < time:
            self.last = time
            instant = self._at(time)
            if instant.evaluated or _changed(instant):
                yield instant

    def flush(self) -> Iterator[Instant]:
        if self.last is not None:
            yield from self._run(FOREVER, final=True)

    def _start(self, time: int) -> int:
        """The instant before the first one worth trying: none before the first item can
        enter a window, nor before the window's own start (``Window.start_instant``)."""
        self.origin = time
        return min(w.start_instant(time) for w in self.windows) - 1

    def _run(self, upto: int, final: bool) -> Iterator[Instant]:
        assert self.last is not None
        while True:
            c = self._next(self.last)
            if c is None or c > upto:
                return
            if final and not self.policy.bounded() and not any(b.leaves() for b in self.buffers.values()):
                return  # nothing left to leave: the last evaluation saw the windows as they stay
            self.last = c
            instant = self._at(c)
            if instant.evaluated or _changed(instant):
                yield instant
            if not instant.evaluated and (not final or not self.policy.bounded()):
                self._jump(upto)

    def _next(self, after: int) -> int | None:
        """The policy's next instant after ``after``, remembered: most time points fall
        before the next window close, and ask again with the same ``after``."""
        if self._candidate is None or self._candidate[0] != after:
            self._candidate = (after, self.policy.next(self.windows, after))
        return self._candidate[1]

    def _at(self, c: int) -> Instant:
        """Slide every window to ``c``: the instant, evaluated or skipped."""
        origin = self.origin
        changes = {name: buffer.slide(c) if origin is None or c >= buffer.window.start_instant(origin)
                   else Change([], [])  # this window's first one is not closed yet
                   for name, buffer in self.buffers.items()}
        empty = not any(b.inside for b in self.buffers.values())
        skip = empty and (self.policy.skip_empty or self.was_empty)
        self.was_empty = empty
        return Instant(c, changes, not skip)

    def _jump(self, upto: int) -> None:
        """After a skipped empty instant: on to the first instant a held item enters a window."""
        origin = self.origin if self.origin is not None else -FOREVER
        firsts = [max(b.window.first_instant(t), b.window.start_instant(origin))
                  for b in self.buffers.values() if (t := b.earliest()) is not None]
        target = min(firsts) - 1 if firsts else upto
        if target > self.last:  # type: ignore[operator]
            self.last = target

    def state(self) -> tuple:
        return (self.last, self.was_empty, {name: b.state() for name, b in self.buffers.items()}, self.origin)

    def set_state(self, state: tuple) -> None:
        self.last, self.was_empty, buffers, self.origin = state
        for name, data in buffers.items():
            self.buffers[name].set_state(data)


def _changed(instant: Instant) -> bool:
    return any(change.entered or change.left for change in instant.changes.values())
