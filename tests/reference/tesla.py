"""A naive TESLA evaluator, written from the definitions for checking ``TemporalEngine``.

It keeps the whole history and, for every terminator, enumerates every combination of
history events for the rule's predicates, keeping a combination when:

- each predicate's event is of the right type, not consumed by this rule, in its scope
  (``t(Y) - D <= t(X) < t(Y)``, times being ends) and satisfies its filters and
  parameters given the events bound before it;
- the selection holds: with Q the qualifying events (same tests) ordered by (time,
  arrival), ``each`` accepts any member of Q, ``last(n)`` only ``Q[-n]`` and ``first(n)``
  only ``Q[n-1]``;
- no negated event exists in its scope (``Between(X, Y)``: ``t(X) < t(Z) < t(Y)``);
- the rule's conditions hold, aggregates computed over every event of the type in their
  scope that satisfies their filters (in time order).

Combinations come out in the lexicographic order of the bound events' arrival; the
events they bind under consumed aliases are then consumed for the rule. Events are
processed in arrival order, each one firing the rules it terminates in registration
order, then the composite events produced, first produced first. Nothing is indexed,
evicted or compiled; comparisons follow ``chronolog.cep.expressions``' documented rule.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Sequence
from decimal import Decimal
from typing import Any

from chronolog.cep import AggValue, Attr, Between, Compare, Const, End, Event, Rule, Start, Within

_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


def _rank(v: Any) -> int | None:
    """XPath numeric type promotion: integer 0 < decimal 1 < double 2; None: not a number."""
    return {int: 0, Decimal: 1, float: 2}.get(type(v))


def numeric_add(a: Any, b: Any) -> Any:
    """op:numeric-add: both operands promoted to the greater of their types."""
    rank = max(_rank(a), _rank(b))
    if rank == 2:
        return float(a) + float(b)
    if rank == 1:
        return Decimal(a) + Decimal(b)
    return a + b


def numeric_divide(a: Any, b: Any) -> Any:
    """op:numeric-divide: as add, except that integer / integer is a decimal."""
    if max(_rank(a), _rank(b)) == 2:
        return float(a) / float(b)
    return Decimal(a) / Decimal(b)


def sparql_sum(values: list) -> Any:
    """SPARQL 1.1 Sum: 0 for no value, an error (None) when a value is not a number."""
    total: Any = 0
    for v in values:
        if _rank(v) is None:
            return None
        total = numeric_add(total, v)
    return total


class ReferenceTesla:
    """Push events one at a time; each push returns the composite events produced."""

    def __init__(self, rules: Sequence[Rule], decode: Callable[[Hashable], Any] | None = None) -> None:
        self.rules = list(rules)
        self.decode = decode if decode is not None else (lambda value: value)
        self.history: list[tuple[int, Event]] = []
        self.consumed: dict[str, set[int]] = {rule.name: set() for rule in self.rules}

    def push(self, event: Event) -> list[Event]:
        return self.push_point([event])[0]

    def push_point(self, events: Sequence[Event]) -> list[list[Event]]:
        """The input events of one time point: all in the history before any fires (a
        ``within 0`` scope sees them all); then each in turn, with the composite events
        it leads to, first produced first."""
        first = len(self.history)
        self.history.extend(enumerate(events, first))
        results = []
        for seq, event in enumerate(events, first):
            queue = [event]
            for rule in self.rules:
                if rule.terminator.type == event.type:
                    queue.extend(self.fire(rule, seq, event))
            i = 1
            while i < len(queue):
                current = queue[i]
                i += 1
                seq = len(self.history)
                for rule in self.rules:
                    if rule.terminator.type == current.type:
                        queue.extend(self.fire(rule, seq, current))
                self.history.append((seq, current))
            results.append(queue[1:])
        return results

    # -- one firing ------------------------------------------------------------------
    def fire(self, rule: Rule, seq0: int, e0: Event) -> list[Event]:
        term = rule.terminator
        if not all(self.holds(c, {term.alias: e0}, {}) for c in term.where):
            return []
        combinations: list[tuple[dict[str, Event], dict[str, int]]] = []
        self.extend(rule, 0, {term.alias: e0}, {term.alias: seq0}, combinations)
        produced = []
        consumed_now: set[int] = set()
        consumed_aliases = rule.consuming.consumed(rule.aliases())
        for bind, seqs in combinations:
            if any(self.negated(neg, bind) for neg in rule.negations):
                continue
            aggs = {agg.name: self.aggregate(agg, bind) for agg in rule.aggregates}
            if not all(self.holds(c, bind, aggs) for c in rule.where):
                continue
            produced.append(Event(
                rule.emits,
                min(e.start for e in bind.values()),
                e0.end,
                {name: self.value(term_, bind, aggs, False) for name, term_ in rule.outputs},
            ))
            consumed_now.update(seqs[a] for a in consumed_aliases)
        self.consumed[rule.name] |= consumed_now
        return produced

    def extend(self, rule: Rule, i: int, bind: dict[str, Event], seqs: dict[str, int],
               out: list[tuple[dict[str, Event], dict[str, int]]]) -> None:
        """Every valid assignment of predicates i.. given the events bound so far."""
        if i == len(rule.predicates):
            out.append((dict(bind), dict(seqs)))
            return
        pred = rule.predicates[i]
        qualifying = sorted(
            ((s, x) for s, x in self.history if self.qualifies(rule, pred, s, x, bind)),
            key=lambda sx: (sx[1].end, sx[0]),
        )
        for s, x in self.history:
            if x.type != pred.type or not self.selected(pred.selection, qualifying, s):
                continue
            bind[pred.alias], seqs[pred.alias] = x, s
            self.extend(rule, i + 1, bind, seqs, out)
            del bind[pred.alias], seqs[pred.alias]

    def qualifies(self, rule: Rule, pred: Any, s: int, x: Event, bind: dict[str, Event]) -> bool:
        if x.type != pred.type or s in self.consumed[rule.name]:
            return False
        if not self.in_scope(pred.scope, x, bind):
            return False
        return all(self.holds(c, {**bind, pred.alias: x}, {}) for c in pred.where)

    @staticmethod
    def selected(selection: Any, qualifying: list[tuple[int, Event]], s: int) -> bool:
        seqs = [q for q, _ in qualifying]
        if selection.kind == "each":
            return s in seqs
        if len(seqs) < selection.n:
            return False
        return seqs[-selection.n] == s if selection.kind == "last" else seqs[selection.n - 1] == s

    @staticmethod
    def in_scope(scope: Within | Between, x: Event, bind: dict[str, Event]) -> bool:
        if isinstance(scope, Within) and scope.duration == 0:  # the same time point, the event itself aside
            return x.end == bind[scope.of].end and x is not bind[scope.of]
        if isinstance(scope, Within):
            ref = bind[scope.of].end
            return ref - scope.duration <= x.end < ref
        return bind[scope.after].end < x.end < bind[scope.before].end

    def negated(self, neg: Any, bind: dict[str, Event]) -> bool:
        return any(
            x.type == neg.type and self.in_scope(neg.scope, x, bind)
            and all(self.holds(c, {**bind, neg.alias: x}, {}) for c in neg.where)
            for _, x in self.history
        )

    def aggregate(self, agg: Any, bind: dict[str, Event]) -> Any:
        events = sorted(
            ((s, x) for s, x in self.history
             if x.type == agg.type and self.in_scope(agg.scope, x, bind)
             and all(self.holds(c, {**bind, agg.name: x}, {}) for c in agg.where)),
            key=lambda sx: (sx[1].end, sx[0]),
        )
        if agg.func == "count":
            return len(events)
        values = [self.decode(x.attrs[agg.attribute]) for _, x in events]
        if agg.func == "sum":
            return sparql_sum(values)
        if not values:
            return None
        if agg.func == "avg":  # SPARQL 1.1: Sum(M) / Count(M), with op:numeric-divide
            total = sparql_sum(values)
            return None if total is None else numeric_divide(total, len(values))
        return min(values) if agg.func == "min" else max(values)

    # -- terms -----------------------------------------------------------------------
    def holds(self, cond: Compare, bind: dict[str, Event], aggs: dict[str, Any]) -> bool:
        raw = cond.op in ("==", "!=") and isinstance(cond.left, Attr) and isinstance(cond.right, Attr)
        left = self.value(cond.left, bind, aggs, not raw)
        right = self.value(cond.right, bind, aggs, not raw)
        try:
            return bool(_OPS[cond.op](left, right))
        except TypeError:
            return False

    def value(self, term: Any, bind: dict[str, Event], aggs: dict[str, Any], decoded: bool) -> Any:
        if isinstance(term, Const):
            return term.value
        if isinstance(term, AggValue):
            return aggs[term.name]
        if isinstance(term, Start):
            return bind[term.alias].start
        if isinstance(term, End):
            return bind[term.alias].end
        value = bind[term.alias].attrs[term.name]
        return self.decode(value) if decoded else value
