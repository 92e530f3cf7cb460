"""A reference evaluator of EP-SPARQL's unrestricted semantics, straight from section 4.2 of
seed 001: solutions are sets of (mu, t_alpha, t_omega) over the whole stream, each operator
is its definition (SeqJoin, EqJoin, SeqRightJoin, EqLeftJoin, LeftJoin, Join, Union, Filter, and
SPARQL's Extend and Project for subqueries and SELECT expressions), and
clos_Q is a fixpoint. Slow on purpose: no indexes, no increments, no expiry.

Choices where the paper leaves room (docs/languages/epsparql.md says the same):
- a group's FILTER above OPTIONALSEQ/EQUALSOPTIONAL/OPTIONAL filters the group's solutions (the
  optional operator's own condition F is true);
- clos_Q is built in order of t_omega: for each time point T, the rules are applied over the
  occurrences ending at or before T until nothing new ends at T (for monotone rules this is
  the least fixpoint of section 4.2; with optional operators it is the inflationary one,
  time point by time point).
"""
from __future__ import annotations

from itertools import product

from pyoxigraph import Literal

from chronolog.lang.epsparql import syntax as S
from chronolog.sparql import algebra as A
from chronolog.sparql.expressions import Context, compile_expr, compile_filter
from chronolog.terms import XSD, XSD_DATETIME, XSD_INTEGER, TermDictionary, Var
from chronolog.timeunits import parse_duration, time_to_datetime

Occurrence = tuple[tuple, int, int]  # (triple of terms, t_alpha, t_omega)
Solution = tuple[frozenset, int, int]  # (mu as frozenset of (var, term) items, t_alpha, t_omega)


class Reference:
    def __init__(self, text: str, ms_per_unit: int = 1) -> None:
        self.program = S.parse(text)
        self.ms_per_unit = ms_per_unit
        self.context = Context(TermDictionary())

    # -- operators of section 4.2 --
    @staticmethod
    def compatible(a: Solution, b: Solution) -> bool:
        mu, nu = dict(a[0]), dict(b[0])
        return all(nu[v] == t for v, t in mu.items() if v in nu)

    @staticmethod
    def combine(a: Solution, b: Solution) -> Solution:
        return a[0] | b[0], min(a[1], b[1]), max(a[2], b[2])

    def join(self, left: set, right: set, when) -> set:
        return {self.combine(a, b) for a in left for b in right if self.compatible(a, b) and when(a, b)}

    def evaluate(self, p: S.Pattern, stream: set[Occurrence]) -> set[Solution]:
        if isinstance(p, S.Triples):
            out: set[Solution] = set()
            for occs in product(stream, repeat=len(p.triples)):
                mu: dict = {}
                if all(self.match(tp, occ[0], mu) for tp, occ in zip(p.triples, occs)):
                    out.add((frozenset(mu.items()), min(o[1] for o in occs), max(o[2] for o in occs)))
            return out
        if isinstance(p, S.Filtered):
            cond = A.Call(name="&&", args=p.filters) if len(p.filters) > 1 else p.filters[0]
            return {s for s in self.evaluate(p.pattern, stream) if self.holds(cond, s)}
        if isinstance(p, S.Projected):  # Extend per item (an error leaves it unbound), then Project
            out = set()
            for s in self.evaluate(p.pattern, stream):
                mu = dict(s[0])
                kept = {var: mu.get(var) if expr is None else self.value(expr, s) for var, expr in p.items}
                out.add((frozenset((v, t) for v, t in kept.items() if t is not None), s[1], s[2]))
            return out
        left, right = self.evaluate(p.left, stream), self.evaluate(p.right, stream)
        if p.op == "UNION":
            return left | right
        if p.op == "AND":
            return self.join(left, right, lambda a, b: True)
        if p.op == "SEQ":
            return self.join(left, right, lambda a, b: a[2] < b[1])
        if p.op == "EQUALS":
            return self.join(left, right, lambda a, b: a[1:] == b[1:])
        if p.op == "OPTIONALSEQ":  # SeqRightJoin(left, right, true)
            joined = self.join(left, right, lambda a, b: a[2] < b[1])
            alone = {b for b in right if not any(self.compatible(a, b) and b[1] > a[2] for a in left)}
            return joined | alone
        if p.op == "OPTIONAL":  # LeftJoin(left, right, true): the optional part ends before
            joined = self.join(left, right, lambda a, b: b[2] < a[2])
            alone = {a for a in left if not any(self.compatible(a, b) and b[2] < a[2] for b in right)}
            return joined | alone
        assert p.op == "EQUALSOPTIONAL"  # EqLeftJoin(left, right, true)
        joined = self.join(left, right, lambda a, b: a[1:] == b[1:])
        alone = {a for a in left if not any(self.compatible(a, b) and a[1:] == b[1:] for b in right)}
        return joined | alone

    @staticmethod
    def match(tp: S.TriplePattern, triple: tuple, mu: dict) -> bool:
        for t, value in zip((tp.subject, tp.predicate, tp.object), triple):
            if isinstance(t, Var):
                if mu.setdefault(t, value) != value:
                    return False
            elif t != value:
                return False
        return True

    def holds(self, cond: A.Expr, s: Solution) -> bool:
        """sigma_{t_alpha t_omega}(F) under mu: the interval functions replaced by values."""
        d = self.context.dictionary
        bindings = {v: d.encode(t) for v, t in s[0]}
        return compile_filter(self.sigma(cond, s), self.context)(bindings)

    def value(self, expr: A.Expr, s: Solution) -> object:
        """The term ``expr`` gives under mu and sigma, None on an error."""
        d = self.context.dictionary
        return compile_expr(self.sigma(expr, s), self.context)({v: d.encode(t) for v, t in s[0]})

    def sigma(self, expr: A.Expr, s: Solution) -> A.Expr:
        """sigma_{t_alpha t_omega}: the interval functions and durations replaced by values."""
        start, end = s[1], s[2]

        def sigma(node: A.Node) -> A.Node:
            if isinstance(node, A.Call) and node.name == "GETDURATION":
                return A.Const(term=Literal(str(end - start), datatype=XSD_INTEGER))
            if isinstance(node, A.Call) and node.name in ("GETSTARTTIME", "GETENDTIME"):
                t = start if node.name == "GETSTARTTIME" else end
                return A.Const(term=Literal(time_to_datetime(t, ms_per_unit=self.ms_per_unit), datatype=XSD_DATETIME))
            if isinstance(node, A.Const) and isinstance(node.term, Literal) and node.term.datatype.value == XSD + "duration":
                units = parse_duration(node.term.value, ms_per_unit=self.ms_per_unit)
                return A.Const(term=Literal(str(units), datatype=XSD_INTEGER))
            return node

        return expr.transform(sigma)

    # -- CONSTRUCT closure and SELECT --
    def closure(self, stream: set[Occurrence]) -> set[Occurrence]:
        closed = set(stream)
        for now in sorted({o[2] for o in stream}):
            while True:
                upto = {o for o in closed if o[2] <= now}
                new = set()
                for rule in self.program.rules:
                    for mu, start, end in self.evaluate(rule.where, upto):
                        if end != now:
                            continue
                        bindings = dict(mu)
                        if all(t in bindings for tp in rule.template for t in (tp.subject, tp.predicate, tp.object)
                               if isinstance(t, Var)):
                            for tp in rule.template:
                                triple = tuple(bindings[t] if isinstance(t, Var) else t
                                               for t in (tp.subject, tp.predicate, tp.object))
                                if (triple, start, end) not in closed:
                                    new.add((triple, start, end))
                if not new:
                    break
                closed |= new
        return closed

    def run(self, elements: list[tuple[int, set[tuple]]]) -> dict[int, set]:
        """time -> the SELECT's projected solutions ending then, as (mu text items, start, end);
        without a SELECT, time -> the derived triples (as text) ending then."""
        stream = {(triple, t, t) for t, triples in elements for triple in triples}
        closed = self.closure(stream)
        out: dict[int, set] = {}
        select = self.program.select
        if select is None:
            for triple, start, end in closed - stream:
                out.setdefault(end, set()).add(" ".join(str(x) for x in triple))
            return out
        for mu, start, end in self.evaluate(select.where, closed):
            chosen = select.variables
            items = frozenset((str(v), str(t)) for v, t in mu if (chosen is None and not v.startswith("_b_")) or
                              (chosen is not None and v in chosen))
            out.setdefault(end, set()).add((items, start, end))
        return out
