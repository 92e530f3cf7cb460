"""A time-annotated fact store: facts that hold from a consideration time to a horizon.

Windowed reasoning keeps facts that are true only for a while. A fact here carries the time
point it is about (``at``, or None: the current evaluation time, whatever it is), its
consideration time (when it was derived: semi-naive evaluation across time points joins
only combinations with at least one fact considered now) and its expiration in two
dimensions, a time horizon and a count horizon (a number of atoms received); it is dropped
as soon as either is passed. Facts are found by predicate and by the values at any set of
argument positions through hash indexes built on first use and kept up to date.

One store serves every windowed maintenance scheme: Laser's annotations (consideration and
horizon times and their tuple-count counterparts, :mod:`chronolog.lang.lars.engine`) use
it now, and Barbieri's expiration-time maintenance is the same store with the count
horizon left at infinity (a fact's horizon is its expiration time).

>>> store = AnnotatedStore()
>>> store.insert(Fact(("p", 2), ("a", "b"), None, 1, horizon=3))
>>> store.insert(Fact(("p", 2), ("a", "c"), None, 1, horizon=5))
>>> [f.args for f in store.matching(("p", 2), (1,), ("c",))]
[('a', 'c')]
>>> [f.args for f in store.expire(4, 0)], len(store)
([('a', 'b')], 1)
"""
from __future__ import annotations

import heapq
import itertools
import sys
from operator import itemgetter
from typing import Callable, Iterable, Iterator

INFINITY = sys.maxsize


class Fact:
    """A fact with its annotation; ``seq`` is free for the owner (Laser: a data atom's
    arrival number)."""

    __slots__ = ("pred", "args", "at", "consider", "horizon", "count_horizon", "seq", "serial", "alive")

    def __init__(self, pred: tuple[str, int], args: tuple, at: int | None, consider: int, *,
                 horizon: int = INFINITY, count_horizon: int = INFINITY, seq: int | None = None) -> None:
        self.pred = pred
        self.args = args
        self.at = at
        self.consider = consider
        self.horizon = horizon
        self.count_horizon = count_horizon
        self.seq = seq
        self.serial = 0
        self.alive = False

    def state(self) -> tuple:
        """The fact as plain data (for snapshots)."""
        return (self.pred, self.args, self.at, self.consider, self.horizon, self.count_horizon, self.seq)

    @classmethod
    def from_state(cls, state: tuple) -> "Fact":
        pred, args, at, consider, horizon, count_horizon, seq = state
        return cls(pred, args, at, consider, horizon=horizon, count_horizon=count_horizon, seq=seq)

    def __repr__(self) -> str:
        return f"Fact({self.pred[0]}{self.args}@{self.at}[{self.consider},{self.horizon}|{self.count_horizon}])"


def _schedule(by_horizon: tuple[dict[int, list[Fact]], list[int]], horizon: int, fact: Fact) -> None:
    buckets, heap = by_horizon
    bucket = buckets.get(horizon)
    if bucket is None:
        buckets[horizon] = [fact]
        heapq.heappush(heap, horizon)
    else:
        bucket.append(fact)


def _same(args: tuple) -> tuple:
    return args


def _key(positions: tuple[int, ...], arity: int) -> Callable[[tuple], tuple]:
    """The function from a fact's arguments to its key in the index on ``positions``."""
    if positions == tuple(range(arity)):
        return _same
    if len(positions) == 1:
        position = positions[0]
        return lambda args: (args[position],)
    return itemgetter(*positions)


class AnnotatedStore:
    """Facts by predicate, with hash indexes on argument positions, and by horizon: one
    bucket per horizon value (facts derived together share it), the values in a heap."""

    def __init__(self) -> None:
        self._serials = itertools.count(1)
        self._by_pred: dict[tuple[str, int], dict[int, Fact]] = {}
        self._indexes: dict[tuple[tuple[str, int], tuple[int, ...]], dict[tuple, dict[int, Fact]]] = {}
        # pred -> (index, the key of a fact's arguments in it) for each index of pred
        self._keyed: dict[tuple[str, int], list[tuple[dict[tuple, dict[int, Fact]], Callable[[tuple], tuple]]]] = {}
        # (horizon -> its facts in insertion order, heap of those horizons): time, then count
        self._by_horizon: tuple[dict[int, list[Fact]], list[int]] = ({}, [])
        self._by_count: tuple[dict[int, list[Fact]], list[int]] = ({}, [])
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def insert(self, fact: Fact) -> None:
        fact.serial = next(self._serials)
        fact.alive = True
        self._size += 1
        facts = self._by_pred.get(fact.pred)
        if facts is None:
            self._by_pred[fact.pred] = {fact.serial: fact}
        else:
            facts[fact.serial] = fact
        for index, key in self._keyed.get(fact.pred, ()):
            bucket = index.get(key(fact.args))
            if bucket is None:
                index[key(fact.args)] = {fact.serial: fact}
            else:
                bucket[fact.serial] = fact
        if fact.horizon != INFINITY:
            _schedule(self._by_horizon, fact.horizon, fact)
        if fact.count_horizon != INFINITY:
            _schedule(self._by_count, fact.count_horizon, fact)

    def remove(self, fact: Fact) -> None:
        """Drop a fact now (before its horizons)."""
        if not fact.alive:
            return
        fact.alive = False
        self._size -= 1
        del self._by_pred[fact.pred][fact.serial]
        for index, key in self._keyed.get(fact.pred, ()):
            args = key(fact.args)
            bucket = index[args]
            del bucket[fact.serial]
            if not bucket:
                del index[args]

    def expire(self, time: int, count: int) -> list[Fact]:
        """Drop and return the facts whose horizon is before ``time`` or whose count
        horizon is below ``count``."""
        gone = []
        for (buckets, heap), now in ((self._by_horizon, time), (self._by_count, count)):
            while heap and heap[0] < now:
                for fact in buckets.pop(heapq.heappop(heap)):
                    if fact.alive:
                        self.remove(fact)
                        gone.append(fact)
        return gone

    def facts(self, pred: tuple[str, int]) -> Iterable[Fact]:
        """Every fact of ``pred``, oldest first."""
        return self._by_pred.get(pred, {}).values()

    def matching(self, pred: tuple[str, int], positions: tuple[int, ...], key: tuple) -> Iterable[Fact]:
        """The facts of ``pred`` whose arguments at ``positions`` are ``key``."""
        if not positions:
            return self.facts(pred)
        index = self._indexes.get((pred, positions))
        if index is None:
            index = self._build(pred, positions)
        return index.get(key, {}).values()

    def _build(self, pred: tuple[str, int], positions: tuple[int, ...]) -> dict[tuple, dict[int, Fact]]:
        index: dict[tuple, dict[int, Fact]] = {}
        key = _key(positions, pred[1])
        for fact in self.facts(pred):
            index.setdefault(key(fact.args), {})[fact.serial] = fact
        self._indexes[pred, positions] = index
        self._keyed.setdefault(pred, []).append((index, key))
        return index

    def __iter__(self) -> Iterator[Fact]:
        """Every fact, by predicate, oldest first."""
        for facts in self._by_pred.values():
            yield from facts.values()
