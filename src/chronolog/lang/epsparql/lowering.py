"""EP-SPARQL parse tree -> the operator network of :mod:`.network`.

A group's FILTER becomes the condition of the operator that tops the group (SEQ, EQUALS,
AND), so a candidate it rejects is never selected (nor consumed); above UNION it goes into
both branches; above OPTIONALSEQ, EQUALSOPTIONAL, OPTIONAL or a single triple pattern it filters the
group's solutions. Its conjuncts are then pushed down as far as they can be decided:

- a conjunct without interval functions goes to the operand (never an optional one) whose
  every solution binds all its variables;
- ``getDURATION() < D`` (or ``<=``) bounds every operator below it on non-optional sides
  (a sub-solution's interval lies inside the solution's), which is what lets stored
  solutions expire.

Filter expressions are the SPARQL layer's (:func:`chronolog.sparql.expressions.compile_filter`);
``getDURATION()`` is the integer number of time units ``end - start`` and xsd:duration
constants are converted to time units (``--time-unit``); ``getSTARTTIME()`` and
``getENDTIME()`` are xsd:dateTime values, the epoch plus that many time units.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Callable

from pyoxigraph import Literal

from chronolog.errors import ChronologSyntaxError, SourceMap
from chronolog.lang.epsparql import network as N
from chronolog.lang.epsparql import syntax as S
from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import id_test
from chronolog.sparql.expressions import Context, UnsupportedFunction, compile_expr, compile_filter
from chronolog.terms import XSD, XSD_DATETIME, XSD_INTEGER, TermDictionary, Var
from chronolog.timeunits import TimeFormatError, parse_duration, time_to_datetime

XSD_DURATION = XSD + "duration"
DURATION, START, END = Var("@duration"), Var("@start"), Var("@end")
_INTERVAL_VARS = {"GETDURATION": DURATION, "GETSTARTTIME": START, "GETENDTIME": END}
SELECTIONS = {"unrestricted": "each", "chronological": "first", "recent": "last"}


class _IntervalTerms:
    """The dictionary seen by compiled filters: a binding is a term id, or (for the
    interval functions) a term made for this one evaluation, so no term piles up."""

    def __init__(self, dictionary: TermDictionary) -> None:
        real = dictionary.decode
        self.decode = lambda x: real(x) if type(x) is int else x


def conjuncts(expr: A.Expr) -> list[A.Expr]:
    if isinstance(expr, A.Call) and expr.name == "&&":
        return conjuncts(expr.args[0]) + conjuncts(expr.args[1])
    return [expr]


def expr_vars(expr: A.Expr) -> set[Var]:
    return {n.var for n in expr.walk() if isinstance(n, A.VarRef)}


def uses_interval(expr: A.Expr) -> bool:
    return any(isinstance(n, A.Call) and n.name in _INTERVAL_VARS for n in expr.walk())


def certain(pattern: S.Pattern) -> frozenset[Var]:
    """The variables every solution of ``pattern`` binds."""
    if isinstance(pattern, S.Triples):
        return frozenset(t for tp in pattern.triples for t in (tp.subject, tp.predicate, tp.object) if isinstance(t, Var))
    if isinstance(pattern, S.Filtered):
        return certain(pattern.pattern)
    if isinstance(pattern, S.Projected):
        return certain(pattern.pattern) & {var for var, expr in pattern.items if expr is None}
    left, right = certain(pattern.left), certain(pattern.right)
    return {"OPTIONALSEQ": right, "EQUALSOPTIONAL": left, "OPTIONAL": left, "UNION": left & right}.get(
        pattern.op, left | right)


class Lowering:
    def __init__(self, dictionary: TermDictionary, source: SourceMap, ms_per_unit: int | Decimal, policy: str) -> None:
        self.dictionary = dictionary
        self.source = source
        self.ms_per_unit = ms_per_unit
        self.selection = SELECTIONS[policy]
        self.context = Context(dictionary)
        self.context.dictionary = _IntervalTerms(dictionary)  # type: ignore[assignment]

    def error(self, message: str, pos: int | None) -> ChronologSyntaxError:
        return self.source.error(message, pos or 0)

    def label(self, what: str, pos: int) -> str:
        line, column, _ = self.source.position(pos)
        return f"{what} at {line}:{column}"

    # -- patterns --
    def pattern(self, p: S.Pattern, conds: list[A.Expr], bound: int | None, order: N.KeyText) -> N.Node:
        if isinstance(p, S.Filtered):
            own = [c for f in p.filters for c in conjuncts(f)]
            for c in own:
                b = self.duration_bound(c)
                if b is not None:
                    bound = b if bound is None else min(bound, b)
            return self.pattern(p.pattern, conds + own, bound, order)
        if isinstance(p, S.Triples):
            tree: S.Pattern = S.Triples(p.triples[:1], p.triples[0].pos)
            for tp in p.triples[1:]:
                tree = S.Binary("AND", tree, S.Triples((tp,), tp.pos), tp.pos)
            if len(p.triples) > 1:
                return self.pattern(tree, conds, bound, order)
            leaf = N.Leaf(tuple(self.term(t, p.pos) for t in (p.triples[0].subject, p.triples[0].predicate,
                                                                 p.triples[0].object)), self.label("triple pattern", p.pos))
            return self.filtered(leaf, conds, p.pos)
        if isinstance(p, S.Projected):  # the conditions above read what it projects: they stay above
            inner = self.pattern(p.pattern, [], bound, order)
            items = [(var, None if expr is None else self.value(expr, p.pos)) for var, expr in p.items]
            return self.filtered(N.Project(inner, items, self.label("SELECT", p.pos)), conds, p.pos)
        if p.op == "UNION":
            left = self.pattern(p.left, conds, bound, order)
            right = self.pattern(p.right, conds, bound, order)
            return N.Union(left, right, self.selection == "each", self.label("UNION", p.pos))
        optional = {"OPTIONALSEQ": "left", "EQUALSOPTIONAL": "right", "OPTIONAL": "right"}.get(p.op)
        lc, rc = certain(p.left), certain(p.right)
        down_left, down_right, here = [], [], []
        for c in conds:
            vs = expr_vars(c)
            if not uses_interval(c) and vs <= lc and optional != "left":
                down_left.append(c)
            elif not uses_interval(c) and vs <= rc and optional != "right":
                down_right.append(c)
            else:
                here.append(c)
        left = self.pattern(p.left, down_left, None if optional == "left" else bound, order)
        right = self.pattern(p.right, down_right, None if optional == "right" else bound, order)
        label = self.label(p.op, p.pos)
        if optional:
            node = N.Binary(p.op, left, right, None, None, self.selection, order, label)
            return self.filtered(node, here, p.pos)
        if bound is not None:  # a duration bound the node enforces needs no test of its own
            here = [c for c in here if (b := self.duration_bound(c)) is None or b < bound]
        return N.Binary(p.op, left, right, self.condition(here, p.pos), bound, self.selection, order, label)

    def filtered(self, node: N.Node, conds: list[A.Expr], pos: int) -> N.Node:
        condition = self.condition(conds, pos)
        return node if condition is None else N.Filter(node, condition, self.label("FILTER", pos))

    def term(self, t: S.Term, pos: int) -> Var | int:
        if isinstance(t, Var):
            return t
        return self.dictionary.encode(t)

    # -- expressions --
    def duration_bound(self, expr: A.Expr) -> int | None:
        """The largest duration ``expr`` accepts, when it is ``getDURATION() < D`` (or alike)."""
        if not isinstance(expr, A.Call) or expr.name not in ("<", "<=", ">", ">=") or len(expr.args) != 2:
            return None
        a, b = expr.args
        op = expr.name
        if isinstance(b, A.Call) and b.name == "GETDURATION":
            a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        if not (isinstance(a, A.Call) and a.name == "GETDURATION" and op in ("<", "<=")):
            return None
        limit = self.units(b)
        if limit is None:
            return None
        return limit - 1 if op == "<" else limit

    def units(self, expr: A.Expr) -> int | None:
        """A constant duration (or integer) in time units."""
        if not isinstance(expr, A.Const) or not isinstance(expr.term, Literal):
            return None
        lit = expr.term
        if lit.datatype.value == XSD_DURATION:
            try:
                return parse_duration(lit.value, ms_per_unit=self.ms_per_unit)
            except TimeFormatError as exc:
                raise self.error(str(exc), expr.pos) from None
        if lit.datatype.value == XSD_INTEGER.value:
            return int(lit.value)
        return None

    def lower_expr(self, expr: A.Expr) -> A.Expr:
        def convert(node: A.Node) -> A.Node:
            if isinstance(node, A.Call) and node.name in _INTERVAL_VARS:
                return A.VarRef(pos=node.pos, var=_INTERVAL_VARS[node.name])
            if isinstance(node, A.Const) and isinstance(node.term, Literal) and node.term.datatype.value == XSD_DURATION:
                return A.Const(pos=node.pos, term=Literal(str(self.units(node)), datatype=XSD_INTEGER))
            return node
        return expr.transform(convert)

    def value(self, expr: A.Expr, pos: int) -> Callable[[dict, int, int], int | None]:
        """A projected expression: (bindings, start, end) -> the id of its value, None on error."""
        try:
            compute = compile_expr(self.lower_expr(expr), self.context)
        except UnsupportedFunction as exc:
            raise self.error(f"unsupported function {exc}", expr.pos if expr.pos is not None else pos) from None
        encode, ms = self.dictionary.encode, self.ms_per_unit
        interval = uses_interval(expr)

        def value(bindings: dict, start: int, end: int) -> int | None:
            if interval:
                bindings = {**bindings, **self.interval_terms(start, end, ms)}
            term = compute(bindings)
            return None if term is None else encode(term)
        return value

    @staticmethod
    def interval_terms(start: int, end: int, ms: int | Decimal) -> dict[Var, Literal]:
        """What the interval functions read: getDURATION(), getSTARTTIME(), getENDTIME()."""
        return {DURATION: Literal(str(end - start), datatype=XSD_INTEGER),
                START: Literal(time_to_datetime(start, ms_per_unit=ms), datatype=XSD_DATETIME),
                END: Literal(time_to_datetime(end, ms_per_unit=ms), datatype=XSD_DATETIME)}

    def condition(self, conds: list[A.Expr], pos: int) -> N.Condition | None:
        """The conjunction of ``conds``: those without interval functions as tests on term
        ids (numeric comparisons on cached values), the others over the interval's terms."""
        if not conds:
            return None
        tests: list[N.Condition] = []
        for c in (c for cond in conds for c in conjuncts(cond)):
            try:
                tests.append(self._conjunct(c))
            except UnsupportedFunction as exc:
                raise self.error(f"unsupported function {exc}", c.pos if c.pos is not None else pos) from None
        if len(tests) == 1:
            return tests[0]
        return lambda bindings, start, end: all(t(bindings, start, end) for t in tests)

    def _conjunct(self, expr: A.Expr) -> N.Condition:
        lowered = self.lower_expr(expr)
        if not uses_interval(expr):
            names = tuple(sorted(expr_vars(expr)))
            test = id_test(lowered, names, self.dictionary, self.context)
            if len(names) == 2:  # the common case, a comparison of two variables, without a list
                a, b = names
                return lambda bindings, start, end: test(bindings.get(a), bindings.get(b))
            return lambda bindings, start, end: test(*[bindings.get(v) for v in names])
        check = compile_filter(lowered, self.context)
        ms = self.ms_per_unit
        return lambda bindings, start, end: check({**bindings, **self.interval_terms(start, end, ms)})


def order_by_text(decode: Callable[[int], object]) -> N.KeyText:
    """A solution's tie-break among equal times: its bindings' N-Triples texts, by variable."""
    def key(sol: N.Sol) -> tuple:
        return tuple((str(v), str(decode(sol.bindings[v]))) for v in sorted(sol.bindings))
    return key


class Fresh(str):
    """A blank node of a CONSTRUCT template (its label): a new blank node per solution."""


def template(construct: S.Construct, lowering: Lowering) -> tuple[tuple, ...]:
    """A CONSTRUCT template with constants encoded and blank nodes as :class:`Fresh`."""
    out = []
    for tp in construct.template:
        if isinstance(tp.subject, Literal) or isinstance(tp.predicate, Literal):
            raise lowering.error("a triple's subject and predicate cannot be literals", tp.pos)
        if isinstance(tp.predicate, Var) and tp.predicate.startswith("_b_"):
            raise lowering.error("a triple's predicate cannot be a blank node", tp.pos)
        out.append(tuple(Fresh(t[3:]) if isinstance(t, Var) and t.startswith("_b_") else lowering.term(t, tp.pos)
                         for t in (tp.subject, tp.predicate, tp.object)))
    return tuple(out)
