"""Indexed fact sets: a big immutable base (the background closure) plus small overlays.

A ``Relation`` is a set of fixed-arity int tuples with hash indexes built on demand, one per
bound-position mask, and maintained on every later insert. The RDF graph is the relation
``triple`` (arity 3); Datalog programs may add local relations of any arity.

A ``Layers`` view stacks fact sets whose contents are disjoint (a fact lives in one layer
only), so lookups chain the layers' index entries with no de-duplication: the background
closure is never copied per time point, and a time point's overlay is dropped in one step.
"""
from __future__ import annotations

from itertools import chain
from operator import itemgetter
from typing import Callable, Iterable, Iterator, Sequence

Fact = tuple[int, ...]
Mask = tuple[int, ...]  # the bound positions of a lookup, ascending
Lookup = Callable[..., Sequence[Fact]]  # lookup(key, default) -> facts whose mask positions equal key

TRIPLE = "triple"
EMPTY: tuple = ()


class Relation:
    """A set of int tuples of one arity with lazily built, incrementally maintained indexes."""

    __slots__ = ("name", "arity", "facts", "_indexes", "_keys", "_maintained")

    def __init__(self, name: str, arity: int) -> None:
        self.name = name
        self.arity = arity
        self.facts: set[Fact] = set()
        self._indexes: dict[Mask, dict[object, list[Fact]]] = {}
        self._keys: dict[Mask, Callable[[Fact], object]] = {}
        self._maintained: list[tuple[Callable[[Fact], object], dict[object, list[Fact]]]] = []

    def __len__(self) -> int:
        return len(self.facts)

    def __contains__(self, fact: object) -> bool:
        return fact in self.facts

    def __iter__(self) -> Iterator[Fact]:
        return iter(self.facts)

    def add(self, fact: Fact) -> bool:
        """Insert ``fact``; True if it was new."""
        facts = self.facts
        if fact in facts:
            return False
        facts.add(fact)
        for key, index in self._maintained:
            k = key(fact)
            bucket = index.get(k)
            if bucket is None:
                index[k] = [fact]
            else:
                bucket.append(fact)
        return True

    def update(self, facts: Iterable[Fact]) -> list[Fact]:
        """Insert many facts; returns those that were new, in order (like ``add_all``,
        maintaining each index in one pass)."""
        known = self.facts
        new = []
        for fact in facts:
            if fact not in known:
                known.add(fact)
                new.append(fact)
        for key, index in self._maintained:
            for fact in new:
                k = key(fact)
                bucket = index.get(k)
                if bucket is None:
                    index[k] = [fact]
                else:
                    bucket.append(fact)
        return new

    def discard(self, fact: Fact) -> bool:
        """Remove ``fact`` (from every index too); True if it was there. Windowed reasoning
        removes facts one by one as they leave a window."""
        if fact not in self.facts:
            return False
        self.facts.discard(fact)
        for key, index in self._maintained:
            k = key(fact)
            bucket = index[k]
            bucket.remove(fact)
            if not bucket:
                del index[k]
        return True

    def clear(self) -> None:
        """Drop every fact, keeping the index objects (bound lookups stay valid)."""
        self.facts.clear()
        for index in self._indexes.values():
            index.clear()

    def add_all(self, facts: Iterable[Fact]) -> list[Fact]:
        """Insert many facts; returns those that were new, in order."""
        return [f for f in facts if self.add(f)]

    def index(self, mask: Mask) -> dict[object, list[Fact]]:
        """The index on ``mask`` (built now if missing); its dict object stays the same forever.

        Keys are the fact's value at the one bound position, or a tuple of the values at
        several positions.
        """
        index = self._indexes.get(mask)
        if index is None:
            key = itemgetter(*mask)
            index = {}
            for fact in self.facts:
                k = key(fact)
                bucket = index.get(k)
                if bucket is None:
                    index[k] = [fact]
                else:
                    bucket.append(fact)
            self._indexes[mask] = index
            self._keys[mask] = key
            self._maintained.append((key, index))
        return index

    def fanout(self, mask: Mask) -> float:
        """Expected number of facts per lookup on ``mask``: the statistic that orders joins."""
        if not mask:
            return float(len(self.facts))
        if len(mask) == self.arity:
            return 1.0
        if not self.facts:
            return 0.0
        index = self._indexes.get(mask)
        if index is None:
            index = self.index(mask)
        return len(self.facts) / max(1, len(index))


class WindowRelation(Relation):
    """A relation whose facts also leave one by one, in time independent of how many
    facts share an index key: its index buckets are insertion-ordered dicts, not lists
    (``list.remove`` would scan a bucket such as "every fact of this predicate" per fact
    that leaves a window). Lookups iterate a bucket as they iterate a list."""

    __slots__ = ()

    def add(self, fact: Fact) -> bool:
        facts = self.facts
        if fact in facts:
            return False
        facts.add(fact)
        for key, index in self._maintained:
            k = key(fact)
            bucket = index.get(k)
            if bucket is None:
                index[k] = {fact: None}
            else:
                bucket[fact] = None
        return True

    def update(self, facts: Iterable[Fact]) -> list[Fact]:
        return [f for f in facts if self.add(f)]

    def discard(self, fact: Fact) -> bool:
        if fact not in self.facts:
            return False
        self.facts.discard(fact)
        for key, index in self._maintained:
            k = key(fact)
            bucket = index[k]
            del bucket[fact]
            if not bucket:
                del index[k]
        return True

    def index(self, mask: Mask) -> dict[object, list[Fact]]:
        index = self._indexes.get(mask)
        if index is None:
            key = itemgetter(*mask)
            index = {}
            for fact in self.facts:
                k = key(fact)
                bucket = index.get(k)
                if bucket is None:
                    index[k] = {fact: None}
                else:
                    bucket[fact] = None
            self._indexes[mask] = index
            self._keys[mask] = key
            self._maintained.append((key, index))
        return index


class Database:
    """Named relations; the RDF graph is ``self.triples``. ``removable``: the relations
    are :class:`WindowRelation` (facts leave one by one, as they leave a window)."""

    __slots__ = ("relations", "_kind")

    def __init__(self, removable: bool = False) -> None:
        self._kind = WindowRelation if removable else Relation
        self.relations: dict[str, Relation] = {TRIPLE: self._kind(TRIPLE, 3)}

    @property
    def triples(self) -> Relation:
        return self.relations[TRIPLE]

    def relation(self, name: str, arity: int) -> Relation:
        """The relation ``name``, created empty on first use."""
        rel = self.relations.get(name)
        if rel is None:
            rel = self.relations[name] = self._kind(name, arity)
        return rel

    def __len__(self) -> int:
        return sum(len(r) for r in self.relations.values())

    def clear(self) -> None:
        for rel in self.relations.values():
            rel.clear()


class Layers:
    """A read view over disjoint databases, bottom (the background) first."""

    __slots__ = ("layers",)

    def __init__(self, layers: Sequence[Database]) -> None:
        self.layers = tuple(layers)

    def _relations(self, name: str) -> list[Relation]:
        return [db.relations[name] for db in self.layers if name in db.relations]

    def lookup(self, name: str, mask: Mask) -> Lookup:
        """A function ``f(key, default)`` giving the facts of ``name`` whose ``mask`` positions equal ``key``."""
        indexes = [r.index(mask) for r in self._relations(name)]
        if not indexes:
            return _nothing
        if len(indexes) == 1:
            return indexes[0].get
        return _chained_get(indexes)

    def contains(self, name: str) -> Callable[[Fact], bool]:
        """A membership test for facts of ``name``."""
        sets = [r.facts for r in self._relations(name)]
        if not sets:
            return _never
        if len(sets) == 1:
            return sets[0].__contains__
        if len(sets) == 2:
            a, b = sets
            return lambda fact: fact in a or fact in b
        if len(sets) == 3:
            a, b, c = sets
            return lambda fact: fact in a or fact in b or fact in c
        return lambda fact: any(fact in s for s in sets)

    def scan(self, name: str) -> Iterable[Fact]:
        """Every fact of ``name``."""
        return chain.from_iterable(r.facts for r in self._relations(name))

    def size(self, name: str) -> int:
        return sum(len(r) for r in self._relations(name))

    def fanout(self, name: str, mask: Mask) -> float:
        relations = self._relations(name)
        if relations and len(mask) == relations[0].arity:
            return 1.0  # a membership test: the layers are disjoint, so at most one fact
        return sum(r.fanout(mask) for r in relations)

    def count(self, name: str, mask: Mask, key: object) -> int:
        """How many facts of ``name`` have ``key`` at the ``mask`` positions."""
        relations = self._relations(name)
        if relations and len(mask) == relations[0].arity:
            return sum(1 for r in relations if key in r.facts)
        return sum(len(r.index(mask).get(key, EMPTY)) for r in relations)

    def __contains__(self, item: tuple[str, Fact]) -> bool:
        name, fact = item
        return any(fact in r.facts for r in self._relations(name))

    def match(self, name: str, pattern: Sequence[int | None]) -> Iterator[Fact]:
        """Facts of ``name`` equal to ``pattern`` where it is not None (a general, slower path)."""
        mask = tuple(i for i, v in enumerate(pattern) if v is not None)
        if not mask:
            return iter(self.scan(name))
        key = pattern[mask[0]] if len(mask) == 1 else tuple(pattern[i] for i in mask)
        if len(mask) == len(pattern):
            return iter((key,) if (name, key) in self else EMPTY)
        return iter(self.lookup(name, mask)(key, EMPTY))


def _nothing(key: object, default: Sequence[Fact] = EMPTY) -> Sequence[Fact]:
    return default


def _never(fact: Fact) -> bool:
    return False


def _chained_get(indexes: list[dict[object, list[Fact]]]) -> Lookup:
    if len(indexes) == 2:
        first, second = indexes

        def get2(key: object, default: Sequence[Fact] = EMPTY) -> Sequence[Fact] | Iterable[Fact]:
            a = first.get(key)
            b = second.get(key)
            if b is None:
                return default if a is None else a
            if a is None:
                return b
            return chain(a, b)

        return get2

    if len(indexes) == 3:  # background, derived background, overlay: the usual view at a time point
        first, second, third = indexes

        def get3(key: object, default: Sequence[Fact] = EMPTY) -> Sequence[Fact] | Iterable[Fact]:
            a = first.get(key)
            b = second.get(key)
            c = third.get(key)
            if b is None and c is None:
                return default if a is None else a
            if a is None and c is None:
                return b  # type: ignore[return-value]
            if a is None and b is None:
                return c  # type: ignore[return-value]
            return chain.from_iterable(x for x in (a, b, c) if x is not None)

        return get3

    def get_n(key: object, default: Sequence[Fact] = EMPTY) -> Iterable[Fact]:
        found = [b for b in (ix.get(key) for ix in indexes) if b]
        if not found:
            return default
        return found[0] if len(found) == 1 else chain.from_iterable(found)

    return get_n
