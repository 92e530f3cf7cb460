"""The incremental evaluator of EP-SPARQL: a network of binary interval operators, the
binarization of the paper's section 5, evaluated one time point at a time.

Every solution ``(bindings, start, end)`` of a pattern has ``end`` at most the time of the
newest triple occurrence it uses, so a time point T only adds solutions that end at T: each
node computes that *delta* from its children's deltas and what it stored of earlier time
points (SEQ and OPTIONALSEQ keep their left side, OPTIONAL its right side, AND both
sides; EQUALS and EQUALSOPTIONAL need nothing from before T). OPTIONAL is section 4.2's
LeftJoin: the optional solution must end strictly before the mandatory one does, so only
optional solutions of earlier time points extend a mandatory one ending at T. A node's condition (the FILTER of the group it
tops, plus the conjuncts pushed down to it by :mod:`.lowering`) decides which candidates
qualify; its selection (``each``: all of them, nothing consumed; ``first``/``last``: the
oldest or newest one, and both partners consumed) which of them combine. Stored solutions
expire once the node's duration bound cannot be met by any later partner.

Bindings are dicts variable -> term id; a node never decodes a term except to evaluate its
condition, or to order candidates under a consuming policy (by time, then N-Triples text:
an order that does not depend on term numbering).
"""
from __future__ import annotations

from collections import deque
from operator import itemgetter
from typing import Callable, Iterable, NamedTuple

from chronolog.terms import Var


class Sol(NamedTuple):
    """A solution: bindings (unbound variables absent) and its interval."""

    bindings: dict
    start: int
    end: int


class Explained(NamedTuple):
    """A solution of a network that explains (:func:`explain`): a ``Sol`` with ``why``, the
    triple occurrences it used, each as the explanation of its fact (docs/formats.md)."""

    bindings: dict
    start: int
    end: int
    why: tuple


Condition = Callable[[dict, int, int], bool]  # merged bindings, start, end -> qualifies
KeyText = Callable[[Sol], tuple]  # a solution's order among equal times (term texts)

SEQ, EQUALS, OPTIONALSEQ, EQUALSOPTIONAL, OPTIONAL, AND = (
    "SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "OPTIONAL", "AND")


def solution_key(sol: Sol) -> tuple:
    return frozenset(sol.bindings.items()), sol.start, sol.end


def dedupe(sols: Iterable[Sol]) -> list[Sol]:
    seen: set = set()
    out = []
    for sol in sols:
        key = solution_key(sol)
        if key not in seen:
            seen.add(key)
            out.append(sol)
    return out


class Round:
    """What one evaluation of a time point sees and what it would change, committed only
    for the last round (CONSTRUCT rules may need several rounds to reach their fixpoint)."""

    def __init__(self, time: int, occurrences: dict[int | None, list[tuple[tuple[int, int, int], int]]],
                 origins: dict | None = None) -> None:
        self.time = time
        self.occurrences = occurrences  # predicate id -> [(triple, start)], all ending at time
        self.origins = origins  # when explaining: (triple, start) -> the occurrence's explanation
        self.commits: list[Callable[[], None]] = []


class Node:
    """A pattern's operator. ``variables``: every variable a solution may bind;
    ``certain``: those every solution binds."""

    variables: frozenset[Var]
    certain: frozenset[Var]
    label: str = ""

    def delta(self, rnd: Round) -> list[Sol]:
        raise NotImplementedError

    def children(self) -> tuple["Node", ...]:
        return ()

    def stores(self) -> list["Store"]:
        return []


class Leaf(Node):
    """A triple pattern: constants are term ids, variables match (repeated ones equal)."""

    def __init__(self, pattern: tuple, label: str) -> None:
        self.pattern = pattern
        self.predicate = pattern[1] if not isinstance(pattern[1], Var) else None
        self.variables = self.certain = frozenset(t for t in pattern if isinstance(t, Var))
        self.label = label
        slots = [(i, t) for i, t in enumerate(pattern)]
        self.consts = tuple((i, t) for i, t in slots if not isinstance(t, Var))
        self.vars = tuple((i, t) for i, t in slots if isinstance(t, Var))

    def delta(self, rnd: Round) -> list[Sol]:
        found = rnd.occurrences.get(self.predicate, ()) if self.predicate is not None else \
            [o for group in rnd.occurrences.values() for o in group]
        out = []
        time, consts, vars_ = rnd.time, self.consts, self.vars
        for triple, start in found:
            if any(triple[i] != c for i, c in consts):
                continue
            bindings: dict = {}
            for i, v in vars_:
                bound = bindings.get(v)
                if bound is not None and bound != triple[i]:
                    break
                bindings[v] = triple[i]
            else:
                out.append(Sol(bindings, start, time))
        return out


class Filter(Node):
    def __init__(self, child: Node, condition: Condition, label: str) -> None:
        self.child, self.condition, self.label = child, condition, label
        self.variables, self.certain = child.variables, child.certain

    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def delta(self, rnd: Round) -> list[Sol]:
        cond = self.condition
        return [s for s in self.child.delta(rnd) if cond(s.bindings, s.start, s.end)]


class Project(Node):
    """A subquery's or SELECT's projection: each solution keeps the listed variables, some
    bound to a computed value (``compute(bindings, start, end)``: a term id, None for an
    error, which leaves the variable unbound as SPARQL's BIND does); the interval stays."""

    def __init__(self, child: Node, items: list[tuple[Var, Callable[[dict, int, int], int | None] | None]],
                 label: str) -> None:
        self.child, self.items, self.label = child, items, label
        self.variables = frozenset(var for var, _ in items)
        self.certain = frozenset(var for var, compute in items if compute is None and var in child.certain)

    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def delta(self, rnd: Round) -> list[Sol]:
        return dedupe([Sol(self.bindings(sol), sol.start, sol.end) for sol in self.child.delta(rnd)])

    def bindings(self, sol: Sol) -> dict:
        """A solution's projected bindings."""
        bindings = {}
        for var, compute in self.items:
            value = sol.bindings.get(var) if compute is None else compute(sol.bindings, sol.start, sol.end)
            if value is not None:
                bindings[var] = value
        return bindings


class Union(Node):
    def __init__(self, left: Node, right: Node, each: bool, label: str) -> None:
        self.left, self.right, self.each, self.label = left, right, each, label
        self.variables = left.variables | right.variables
        self.certain = left.certain & right.certain

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def delta(self, rnd: Round) -> list[Sol]:
        both = self.left.delta(rnd) + self.right.delta(rnd)
        return dedupe(both) if self.each else both


def _no_key(bindings: dict) -> tuple:
    return ()


class Store:
    """The solutions a node keeps from earlier time points, by join key, in time order;
    those a later partner can no longer use (``max_duration``) expire."""

    def __init__(self, key_vars: tuple[Var, ...], max_duration: int | None) -> None:
        self.max_duration = max_duration
        # a solution's join key: its values of key_vars (one value alone for one variable)
        self.key: Callable[[dict], object] = itemgetter(*key_vars) if key_vars else _no_key
        self.buckets: dict[object, deque[Sol]] = {}
        self.oldest: dict[object, int] = {}  # per bucket, the earliest start it holds
        self.count = 0

    def clear(self) -> None:
        self.buckets.clear()
        self.oldest.clear()
        self.count = 0

    def candidates(self, bindings: dict, now: int) -> deque[Sol] | tuple:
        bucket = self.buckets.get(self.key(bindings))
        if bucket is None:
            return ()
        if self.max_duration is not None:
            limit = now - self.max_duration
            while bucket and bucket[0].end < limit:
                bucket.popleft()
                self.count -= 1
        return bucket

    def add(self, sols: Iterable[Sol]) -> None:
        """Solutions of one time point (each once: a node's delta is a set under ``each``,
        and they all end at that time point, so none was stored before)."""
        buckets, oldest, key_of = self.buckets, self.oldest, self.key
        for sol in sols:
            key = key_of(sol.bindings)
            bucket = buckets.get(key)
            if bucket is None:
                buckets[key] = deque((sol,))
                oldest[key] = sol.start
            else:
                bucket.append(sol)
                if sol.start < oldest[key]:
                    oldest[key] = sol.start
            self.count += 1

    def remove(self, sol: Sol) -> None:
        bucket = self.buckets[self.key(sol.bindings)]
        for i, stored in enumerate(bucket):
            if stored is sol:
                del bucket[i]
                self.count -= 1
                return

    def expire(self, now: int) -> None:
        """Drop what no later partner can use (a solution that starts at s joins, at the
        earliest, a partner ending at now + 1: a duration of now + 1 - s)."""
        if self.max_duration is None:
            return
        limit = now + 1 - self.max_duration
        for key in [k for k, oldest in self.oldest.items() if oldest < limit]:
            bucket = self.buckets.get(key)
            if bucket is None:  # emptied by candidates() or remove()
                del self.oldest[key]
                continue
            kept = deque(s for s in bucket if s.start >= limit)
            self.count -= len(bucket) - len(kept)
            if kept:
                self.buckets[key] = kept
                self.oldest[key] = min(s.start for s in kept)
            else:
                del self.buckets[key]
                del self.oldest[key]

    def solutions(self) -> list[Sol]:
        return [s for b in self.buckets.values() for s in b]


class Binary(Node):
    """SEQ, EQUALS, OPTIONALSEQ, EQUALSOPTIONAL, OPTIONAL or AND of two patterns (see the module docstring)."""

    def __init__(self, op: str, left: Node, right: Node, condition: Condition | None, max_duration: int | None,
                 selection: str, order: KeyText, label: str) -> None:
        self.op, self.left, self.right, self.label = op, left, right, label
        self.condition = condition
        self.max_duration = max_duration
        self.selection = selection
        self.each = selection == "each"
        self.order = order
        self.variables = left.variables | right.variables
        if op == OPTIONALSEQ:
            self.certain = right.certain
        elif op in (EQUALSOPTIONAL, OPTIONAL):
            self.certain = left.certain
        else:
            self.certain = left.certain | right.certain
        self.shared = tuple(sorted(left.variables & right.variables))
        key = tuple(sorted(left.certain & right.certain))
        self.left_store = Store(key, max_duration if op != OPTIONALSEQ else None) \
            if op in (SEQ, OPTIONALSEQ, AND) else None
        self.right_store = Store(key, max_duration) if op == AND else Store(key, None) if op == OPTIONAL else None

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def stores(self) -> list[Store]:
        return [s for s in (self.left_store, self.right_store) if s is not None]

    def _merge(self, a: Sol, b: Sol) -> Sol | None:
        ab, bb = a.bindings, b.bindings
        for v in self.shared:
            x = ab.get(v)
            if x is not None:
                y = bb.get(v)
                if y is not None and x != y:
                    return None
        start = a.start if a.start < b.start else b.start
        end = a.end if a.end > b.end else b.end
        if self.max_duration is not None and end - start > self.max_duration:
            return None
        merged = {**ab, **bb}
        if self.condition is not None and not self.condition(merged, start, end):
            return None
        return Sol(merged, start, end)

    def _select(self, partner: Sol, candidates: Iterable[Sol], partner_left: bool, used: set) -> list[tuple[Sol, Sol]]:
        """(candidate, combination) pairs the selection keeps among those that qualify."""
        found = []
        merge = self._merge
        for cand in candidates:
            if id(cand) in used:
                continue
            combined = merge(partner, cand) if partner_left else merge(cand, partner)
            if combined is not None:
                found.append((cand, combined))
        if self.each or not found:
            return found
        order = self.order
        found.sort(key=lambda pair: (pair[0].end, pair[0].start, order(pair[0])))
        return [found[0] if self.selection == "first" else found[-1]]

    def _ordered(self, sols: list[Sol]) -> list[Sol]:
        if self.each:
            return sols
        order = self.order
        return sorted(sols, key=lambda s: (s.start, order(s)))

    def delta(self, rnd: Round) -> list[Sol]:
        left, right = self._ordered(self.left.delta(rnd)), self._ordered(self.right.delta(rnd))
        op, now = self.op, rnd.time
        out: list[Sol] = []
        used: set[int] = set()  # id() of consumed solutions (consuming policies)
        consumed: list[tuple[Store, Sol]] = []
        if op in (SEQ, OPTIONALSEQ):
            store = self.left_store
            assert store is not None
            for r in right:
                cands = [c for c in store.candidates(r.bindings, now) if c.end < r.start]
                picked = self._select(r, cands, False, used)
                for cand, combined in picked:
                    out.append(combined)
                    if not self.each:
                        used.add(id(cand))
                        consumed.append((store, cand))
                if not picked and op == OPTIONALSEQ:
                    out.append(r)
            rnd.commits.append(lambda: self._commit(now, consumed, left, ()))
        elif op == OPTIONAL:
            store = self.right_store
            assert store is not None
            for mandatory in left:
                picked = self._select(mandatory, list(store.candidates(mandatory.bindings, now)), True, used)
                for cand, combined in picked:
                    out.append(combined)
                    if not self.each:
                        used.add(id(cand))
                        consumed.append((store, cand))
                if not picked:
                    out.append(mandatory)
            rnd.commits.append(lambda: self._commit(now, consumed, (), right))
        elif op == AND:
            ls, rs = self.left_store, self.right_store
            assert ls is not None and rs is not None
            waiting_left: list[Sol] = []
            for l in left:
                picked = self._select(l, rs.candidates(l.bindings, now), True, used)
                for cand, combined in picked:
                    out.append(combined)
                    if not self.each:
                        used.add(id(cand))
                        consumed.append((rs, cand))
                if self.each or not picked:
                    waiting_left.append(l)
            waiting_right: list[Sol] = []
            for r in right:
                key = ls.key(r.bindings)
                same = [l for l in waiting_left if ls.key(l.bindings) == key]
                picked = self._select(r, [*ls.candidates(r.bindings, now), *same], False, used)
                for cand, combined in picked:
                    out.append(combined)
                    if not self.each:
                        used.add(id(cand))
                        if any(cand is l for l in same):
                            waiting_left = [w for w in waiting_left if w is not cand]
                        else:
                            consumed.append((ls, cand))
                if self.each or not picked:
                    waiting_right.append(r)
            rnd.commits.append(lambda: self._commit(now, consumed, waiting_left, waiting_right))
        else:  # EQUALS, EQUALSOPTIONAL: partners end at the same time point
            for mandatory in (left if op == EQUALSOPTIONAL else right):
                partners = right if op == EQUALSOPTIONAL else left
                cands = [p for p in partners if p.start == mandatory.start]
                picked = self._select(mandatory, cands, op == EQUALSOPTIONAL, used)
                for cand, combined in picked:
                    out.append(combined)
                    if not self.each:
                        used.add(id(cand))
                if not picked and op == EQUALSOPTIONAL:
                    out.append(mandatory)
        return dedupe(out) if self.each else out

    def _commit(self, now: int, consumed: list[tuple[Store, Sol]], left: Iterable[Sol], right: Iterable[Sol]) -> None:
        for store, sol in consumed:
            store.remove(sol)
        if self.left_store is not None:
            self.left_store.add(left)
        if self.right_store is not None:
            self.right_store.add(right)


def explain(node: Node) -> None:
    """Make the network under ``node`` explain its solutions (``Explained.why``): a leaf's
    solution holds its occurrence's explanation (from ``Round.origins``), a combination the
    explanations of both sides. Without it, nothing of this runs."""
    for n in walk(node):
        if isinstance(n, Leaf):
            n.delta = _explaining_leaf(n)  # type: ignore[method-assign]
        elif isinstance(n, Project):
            n.delta = _explaining_project(n)  # type: ignore[method-assign]
        elif isinstance(n, Binary):
            plain = n._merge

            def merge(a: Sol, b: Sol, plain=plain) -> Explained | None:
                combined = plain(a, b)
                return None if combined is None else Explained(*combined[:3], why_of(a) + why_of(b))
            n._merge = merge  # type: ignore[method-assign]


def why_of(sol: Sol | Explained) -> tuple:
    """The explanations of what a solution used (none for a plain ``Sol``)."""
    return sol.why if isinstance(sol, Explained) else ()


def _explaining_leaf(leaf: Leaf) -> Callable[[Round], list[Explained]]:
    plain = leaf.delta
    pattern = leaf.pattern

    def delta(rnd: Round) -> list[Explained]:
        origins = rnd.origins or {}
        out = []
        for sol in plain(rnd):
            triple = tuple(sol.bindings[t] if isinstance(t, Var) else t for t in pattern)
            out.append(Explained(*sol, (origins.get((triple, sol.start)),)))
        return out

    return delta


def _explaining_project(project: Project) -> Callable[[Round], list[Explained]]:
    def delta(rnd: Round) -> list[Explained]:
        return dedupe([Explained(project.bindings(sol), sol.start, sol.end, why_of(sol))
                       for sol in project.child.delta(rnd)])

    return delta


def walk(node: Node) -> Iterable[Node]:
    yield node
    for child in node.children():
        yield from walk(child)
