"""chronolog's SPARQL evaluator over the int-encoded store.

Solutions are dicts ``Var -> term id``; they are produced lazily (generators), so SELECT
results stream. Basic graph patterns run on :class:`chronolog.joins.CompiledJoin` (the one
join engine), compiled once per (pattern, bound input variables, active graph); a BGP on
the right of a join or OPTIONAL is run once per left solution with the shared variables
as inputs (index nested loops). Other operators follow the SPARQL 1.1 algebra.

The default graph is the relation ``triple`` of the view; named graphs are the relation
``quad`` with facts ``(graph, subject, predicate, object)``.
"""
from __future__ import annotations

import operator
from collections import defaultdict
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

from pyoxigraph import Literal

from chronolog.joins import CompiledJoin, Filter as JFilter, Pattern, PlanError, order
from chronolog.sparql import algebra as A
from chronolog.sparql.algebra import Var
from chronolog.sparql.expressions import Context, Functions, OrderKey, compile_expr, string_parts
from chronolog.store import TRIPLE, Database, Layers
from chronolog.terms import V_NUMERIC, XSD_INTEGER, TermDictionary
from chronolog.values import (
    INTEGER, arith, compare_numbers, ebv, make_numeric, numeric, numeric_avg, numeric_literal, numeric_sum,
)

QUAD = "quad"
DEFAULT = None  # the active graph when it is the default graph
Solution = dict


def is_bgp_like(node: A.Node) -> bool:
    """Patterns whose evaluation under a substitution equals joining with it (no filters)."""
    if isinstance(node, (A.BGP, A.PathPattern)):
        return True
    if isinstance(node, A.Join):
        return is_bgp_like(node.left) and is_bgp_like(node.right)
    return False


class Evaluator:
    """Evaluates algebra patterns over a view; compiled pieces are cached across calls."""

    def __init__(self, dictionary: TermDictionary, base: str | None = None, functions: Functions | None = None) -> None:
        self.d = dictionary
        self.base = base
        self.functions = functions
        self._joins: dict = {}
        self._exprs: dict = {}
        self._contexts: dict = {}
        self._numbers: dict = {}  # term id -> (numeric rank, value) or None
        self._keep: list = []
        self.view: Layers = Layers([])
        self.time = 0

    # ---- compiled pieces -------------------------------------------------------------
    def context(self, graph: Any) -> Context:
        ctx = self._contexts.get(graph)
        if ctx is None:
            ctx = self._contexts[graph] = Context(self.d, self.base, self.functions)
            ctx.reset(self.time)
            ctx.exists = lambda pattern, sol, g=graph: next(iter(self.eval(pattern, g, sol)), None) is not None
        return ctx

    def expr(self, expr: A.Expr, graph: Any) -> Callable[[dict], Any]:
        key = (id(expr), graph)
        f = self._exprs.get(key)
        if f is None:
            f = self._exprs[key] = compile_expr(expr, self.context(graph))
            self._keep.append(expr)  # cache keys are ids: keep the nodes alive
        return f

    def bgp_join(self, node: A.BGP, inputs: frozenset, graph: Any,
                 filters: tuple = ()) -> tuple[CompiledJoin, tuple, tuple]:
        key = (id(node), inputs, graph, tuple(map(id, filters)))
        hit = self._joins.get(key)
        if hit is not None:
            return hit
        enc = self.d.encode
        body = []
        for s, p, o in node.triples:
            args = tuple(a if isinstance(a, Var) else enc(a) for a in (s, p, o))
            if graph is DEFAULT:
                body.append(Pattern(TRIPLE, args))
            else:
                body.append(Pattern(QUAD, (graph,) + args))
        outs = tuple(sorted({a for p in body for a in p.args if isinstance(a, Var)} - inputs))
        for f in (c for f in filters for c in _conjuncts(f)):
            # each conjunct of a FILTER runs inside the nested loops as soon as its variables are bound
            fvars = tuple(sorted({n.var for n in f.walk() if isinstance(n, A.VarRef)}))
            body.append(JFilter(fvars, id_test(f, fvars, self.d, self.context(graph))))
        ins = tuple(sorted(inputs))
        view = self.view

        def estimate(p: Pattern, mask: tuple) -> float:
            return view.fanout(p.relation, mask) if view.size(p.relation) else 0.0

        try:
            steps = order(body, estimate, bound=ins)
        except PlanError:
            steps = body
        join = CompiledJoin(steps, outs, ins)
        hit = (join, ins, outs)
        self._joins[key] = hit
        self._keep.append(node)
        return hit

    # ---- evaluation ------------------------------------------------------------------
    def run(self, pattern: A.Pattern, view: Layers, time: int, start: Solution | None = None) -> Iterator[Solution]:
        """Solutions of ``pattern`` over ``view``; NOW() is ``time`` (ms since the epoch);
        ``start``: variables bound before (the solutions that agree with them)."""
        self.view = view
        self.time = time
        for ctx in self._contexts.values():
            ctx.reset(time)
        return self.eval(pattern, DEFAULT, dict(start or {}))

    def eval(self, node: A.Pattern, graph: Any, sub: Solution) -> Iterator[Solution]:
        method = getattr(self, "_" + type(node).__name__)
        return method(node, graph, sub)

    def _BGP(self, node: A.BGP, graph: Any, sub: Solution, filters: tuple = ()) -> Iterator[Solution]:
        if not node.triples:
            yield dict(sub)
            return
        vars_ = node.pattern_vars()
        inputs = frozenset(v for v in vars_ if v in sub)
        join, ins, outs = self.bgp_join(node, inputs, graph, filters)
        run = join.bind(self.view)
        args = [sub[v] for v in ins]
        first = join.steps[0]
        if not isinstance(first, Pattern) or all(not isinstance(a, Var) or a in sub for a in first.args):
            batches: Iterable = (None,)
        else:
            # stream: feed the first pattern's facts to the compiled join in small batches,
            # so memory is bounded by a batch's fan-out, never by the whole result
            key = tuple(sub[a] if a in sub else None if isinstance(a, Var) else a for a in first.args)
            batches = _batched(self.view.match(first.relation, key))
        for batch in batches:
            rows = run(batch, *args)
            if batch is not None:
                batches.send(len(rows))  # type: ignore[attr-defined]
            for row in rows:
                sol = dict(sub)
                sol.update(zip(outs, row))
                yield sol

    def _Join(self, node: A.Join, graph: Any, sub: Solution) -> Iterator[Solution]:
        if is_bgp_like(node.right):
            for m in self.eval(node.left, graph, sub):
                yield from self.eval(node.right, graph, m)
            return
        if is_bgp_like(node.left):
            for m in self.eval(node.right, graph, sub):
                yield from self.eval(node.left, graph, m)
            return
        right = list(self.eval(node.right, graph, sub))
        yield from _hash_join(self.eval(node.left, graph, sub), right,
                              A.certain_vars(node.left) & A.certain_vars(node.right))

    def _LeftJoin(self, node: A.LeftJoin, graph: Any, sub: Solution) -> Iterator[Solution]:
        test = None
        if node.expr is not None:
            f = self.expr(node.expr, graph)
            test = lambda sol: ebv(f(sol)) is True  # noqa: E731
        if is_bgp_like(node.right):
            for m in self.eval(node.left, graph, sub):
                found = False
                for x in self.eval(node.right, graph, m):
                    if test is None or test(x):
                        found = True
                        yield x
                if not found:
                    yield m
            return
        right = list(self.eval(node.right, graph, sub))
        keys = tuple(A.certain_vars(node.left) & A.certain_vars(node.right))
        index = _index(right, keys)
        for m in self.eval(node.left, graph, sub):
            found = False
            for r in index.get(tuple(m[k] for k in keys), ()) if keys else right:
                merged = _merge(m, r)
                if merged is not None and (test is None or test(merged)):
                    found = True
                    yield merged
            if not found:
                yield m

    def _Filter(self, node: A.Filter, graph: Any, sub: Solution) -> Iterator[Solution]:
        inner = node.pattern
        if isinstance(inner, A.BGP) and inner.triples and node.expr.find(A.Exists) is None:
            fvars = {n.var for n in node.expr.walk() if isinstance(n, A.VarRef)}
            if fvars <= inner.pattern_vars():
                yield from self._BGP(inner, graph, sub, (node.expr,))
                return
        f = self.expr(node.expr, graph)
        for m in self.eval(node.pattern, graph, sub):
            if ebv(f(m)) is True:
                yield m

    def _Union(self, node: A.Union, graph: Any, sub: Solution) -> Iterator[Solution]:
        yield from self.eval(node.left, graph, sub)
        yield from self.eval(node.right, graph, sub)

    def _Minus(self, node: A.Minus, graph: Any, sub: Solution) -> Iterator[Solution]:
        right = list(self.eval(node.right, graph, {}))
        for m in self.eval(node.left, graph, sub):
            drop = False
            for r in right:
                shared = m.keys() & r.keys()
                if shared and all(m[k] == r[k] for k in shared):
                    drop = True
                    break
            if not drop:
                yield m

    def _Graph(self, node: A.Graph, graph: Any, sub: Solution) -> Iterator[Solution]:
        name = node.name
        if not isinstance(name, Var):
            g = self.d.encode(name)
            if g in self.graph_names():
                yield from self.eval(node.pattern, g, sub)
            return
        if name in sub:
            if sub[name] in self.graph_names():
                yield from self.eval(node.pattern, sub[name], sub)
            return
        for g in sorted(self.graph_names()):
            for m in self.eval(node.pattern, g, sub):
                if m.get(name, g) == g:
                    m = dict(m)
                    m[name] = g
                    yield m

    def graph_names(self) -> set[int]:
        names = getattr(self, "_graph_names", None)
        if names is None or names[0] is not self.view:
            names = (self.view, {q[0] for q in self.view.scan(QUAD)})
            self._graph_names = names
        return names[1]

    def _Extend(self, node: A.Extend, graph: Any, sub: Solution) -> Iterator[Solution]:
        # a chain of BINDs / SELECT expressions runs as one step per solution, so that
        # BNODE(str) gives the same blank node for the same string within one solution
        chain_: list[tuple[Var, Callable]] = []
        inner: A.Pattern = node
        while isinstance(inner, A.Extend):
            chain_.append((inner.var, self.expr(inner.expr, graph)))
            inner = inner.pattern
        chain_.reverse()
        ctx = self.context(graph)
        enc = self.d.encode
        for m in self.eval(inner, graph, sub):
            ctx.row = object()
            ctx.bnodes.clear()  # BNODE(str) scope: this solution
            out = m
            for var, f in chain_:
                v = f(out)
                if v is not None:
                    out = dict(out)
                    out[var] = enc(v)
            yield out

    def _Values(self, node: A.Values, graph: Any, sub: Solution) -> Iterator[Solution]:
        enc = self.d.encode
        for row in node.rows:
            sol = dict(sub)
            ok = True
            for v, t in zip(node.vars, row):
                if t is None:
                    continue
                i = enc(t)
                if sol.get(v, i) != i:
                    ok = False
                    break
                sol[v] = i
            if ok:
                yield sol

    def _PathPattern(self, node: A.PathPattern, graph: Any, sub: Solution) -> Iterator[Solution]:
        s, o = node.subject, node.object
        sv = sub.get(s) if isinstance(s, Var) else self.d.encode(s)
        ov = sub.get(o) if isinstance(o, Var) else self.d.encode(o)
        both_vars = isinstance(s, Var) and isinstance(o, Var)
        for a, b in self.path(node.path, sv, ov, graph):
            if isinstance(s, Var) and s == o and a != b:
                continue
            if a == b and both_vars and not self._in_graph(a, graph):
                continue  # a zero-length path from a variable's value needs a node of the graph
            sol = dict(sub)
            if isinstance(s, Var):
                sol[s] = a
            if isinstance(o, Var):
                sol[o] = b
            yield sol

    def _Group(self, node: A.Group, graph: Any, sub: Solution) -> Iterator[Solution]:
        enc = self.d.encode

        def keyfn(k: A.Expr) -> Callable[[dict], Any]:
            if isinstance(k, A.VarRef):  # group on the term id itself
                return lambda m, v=k.var: m.get(v)
            f = self.expr(k, graph)
            return lambda m: None if (t := f(m)) is None else enc(t)

        keyfns = [keyfn(k) for k in node.keys]
        groups: dict[tuple, list] = defaultdict(list)
        for m in self.eval(node.pattern, graph, sub):
            groups[tuple(f(m) for f in keyfns)].append(m)
        if not groups and not node.keys:
            groups[()] = []
        aggs = [(var, agg, None if agg.expr is None else self.expr(agg.expr, graph)) for var, agg in node.aggregates]
        for key, rows in groups.items():
            out: Solution = {}
            for var, agg, f in aggs:
                if isinstance(agg.expr, A.VarRef) and agg.name in ("COUNT", "SUM", "AVG"):
                    v = self._numeric_aggregate(agg, [r.get(agg.expr.var) for r in rows])
                else:
                    v = self.aggregate(agg, f, rows)
                if v is not None:
                    out[var] = enc(v)
            yield out

    def _numeric_aggregate(self, agg: A.Aggregate, ids: list) -> Any:
        """COUNT / SUM / AVG of a variable, on term ids and cached numeric values."""
        ids = [i for i in ids if i is not None]
        if agg.distinct:
            ids = list(dict.fromkeys(ids))
        if agg.name == "COUNT":
            return make_numeric(INTEGER, len(ids))
        cache = self._numbers
        decode = self.d.decode
        numbers = []
        for i in ids:
            n = cache.get(i, False)
            if n is False:
                n = cache[i] = numeric(decode(i))
            if n is None:
                return None  # a non-numeric value: the aggregate is an error
            numbers.append(n[1])
        if agg.name == "SUM":
            return numeric_literal(numeric_sum(numbers))
        if not numbers:
            return make_numeric(INTEGER, 0)
        return numeric_literal(numeric_avg(numbers))

    def aggregate(self, agg: A.Aggregate, f: Callable | None, rows: list) -> Any:
        name = agg.name
        if f is None:  # COUNT(*)
            if agg.distinct:
                return make_numeric(INTEGER, len({frozenset(r.items()) for r in rows}))
            return make_numeric(INTEGER, len(rows))
        values = [f(r) for r in rows]
        values = [v for v in values if v is not None]
        if agg.distinct:
            seen, uniq = set(), []
            for v in values:
                if v not in seen:
                    seen.add(v)
                    uniq.append(v)
            values = uniq
        if name == "COUNT":
            return make_numeric(INTEGER, len(values))
        if name == "SAMPLE":
            return values[0] if values else None
        if name in ("SUM", "AVG"):
            total: Any = Literal("0", datatype=XSD_INTEGER)
            for v in values:
                total = arith("+", total, v)
                if total is None:
                    return None
            if name == "SUM":
                return total
            if not values:
                return Literal("0", datatype=XSD_INTEGER)
            return arith("/", total, Literal(str(len(values)), datatype=XSD_INTEGER))
        if name in ("MIN", "MAX"):
            if not values:
                return None
            keyed = sorted(values, key=OrderKey)
            return keyed[0] if name == "MIN" else keyed[-1]
        if name == "GROUPCONCAT":
            parts = []
            for v in values:
                p = string_parts(v)
                if p is None:
                    return None
                parts.append(p)
            return Literal((agg.separator if agg.separator is not None else " ").join(p[0] for p in parts))
        return None

    def _Project(self, node: A.Project, graph: Any, sub: Solution) -> Iterator[Solution]:
        keep = node.vars
        inner_sub = {k: v for k, v in sub.items() if k in keep}
        for m in self.eval(node.pattern, graph, inner_sub):
            out = dict(sub)
            for v in keep:
                if v in m:
                    out[v] = m[v]
            yield out

    def _Distinct(self, node: A.Distinct, graph: Any, sub: Solution) -> Iterator[Solution]:
        seen = set()
        for m in self.eval(node.pattern, graph, sub):
            key = frozenset(m.items())
            if key not in seen:
                seen.add(key)
                yield m

    def _Reduced(self, node: A.Reduced, graph: Any, sub: Solution) -> Iterator[Solution]:
        return self.eval(node.pattern, graph, sub)  # REDUCED permits keeping duplicates

    def _OrderBy(self, node: A.OrderBy, graph: Any, sub: Solution) -> Iterator[Solution]:
        rows = list(self.eval(node.pattern, graph, sub))
        for expr, desc in reversed(node.conditions):
            f = self.expr(expr, graph)
            rows.sort(key=lambda m: OrderKey(f(m)), reverse=desc)
        yield from rows

    def _Slice(self, node: A.Slice, graph: Any, sub: Solution) -> Iterator[Solution]:
        start = node.start or 0
        stop = None if node.length is None else start + node.length
        yield from islice(self.eval(node.pattern, graph, sub), start, stop)

    def _Service(self, node: A.Service, graph: Any, sub: Solution) -> Iterator[Solution]:
        raise NotImplementedError("SERVICE")

    # ---- property paths --------------------------------------------------------------
    def path(self, p: A.Path, s: int | None, o: int | None, graph: Any) -> Iterator[tuple[int, int]]:
        if isinstance(p, A.PathLink):
            yield from self._link(self.d.encode(p.iri), s, o, graph)
        elif isinstance(p, A.PathInv):
            for a, b in self.path(p.path, o, s, graph):
                yield b, a
        elif isinstance(p, A.PathAlt):
            for part in p.parts:
                yield from self.path(part, s, o, graph)
        elif isinstance(p, A.PathSeq):
            yield from self._seq(list(p.parts), s, o, graph)
        elif isinstance(p, A.PathNeg):
            yield from self._neg(p, s, o, graph)
        elif isinstance(p, A.PathMod):
            yield from self._mod(p, s, o, graph)
        else:
            raise TypeError(p)

    def _triples(self, graph: Any, s: int | None, p: int | None, o: int | None) -> Iterator[tuple]:
        if graph is DEFAULT:
            return self.view.match(TRIPLE, (s, p, o))
        return (q[1:] for q in self.view.match(QUAD, (graph, s, p, o)))

    def _link(self, pid: int, s: int | None, o: int | None, graph: Any) -> Iterator[tuple[int, int]]:
        for t in self._triples(graph, s, pid, o):
            yield t[0], t[2]

    def _seq(self, parts: list, s: int | None, o: int | None, graph: Any) -> Iterator[tuple[int, int]]:
        if len(parts) == 1:
            yield from self.path(parts[0], s, o, graph)
            return
        if s is None and o is not None:
            for mid, b in self.path(parts[-1], None, o, graph):
                for a, _ in self._seq(parts[:-1], None, mid, graph):
                    yield a, b
            return
        for a, mid in self.path(parts[0], s, None, graph):
            for _, b in self._seq(parts[1:], mid, o, graph):
                yield a, b

    def _neg(self, p: A.PathNeg, s: int | None, o: int | None, graph: Any) -> Iterator[tuple[int, int]]:
        fwd = {self.d.encode(i) for i in p.iris}
        inv = {self.d.encode(i) for i in p.inverse_iris}
        if p.iris or not p.inverse_iris:
            for t in self._triples(graph, s, None, o):
                if t[1] not in fwd:
                    yield t[0], t[2]
        if p.inverse_iris:
            for t in self._triples(graph, o, None, s):
                if t[1] not in inv:
                    yield t[2], t[0]

    def _in_graph(self, n: int, graph: Any) -> bool:
        return next(iter(self._triples(graph, n, None, None)), None) is not None or \
            next(iter(self._triples(graph, None, None, n)), None) is not None

    def _nodes(self, graph: Any) -> set[int]:
        out = set()
        for t in self._triples(graph, None, None, None):
            out.add(t[0])
            out.add(t[2])
        return out

    def _reach(self, p: A.Path, start: int, graph: Any, zero: bool, forward: bool) -> list[int]:
        seen: dict[int, None] = {}
        if zero:
            seen[start] = None
        frontier = [start]
        visited = {start} if zero else set()
        while frontier:
            nxt = []
            for n in frontier:
                pairs = self.path(p, n, None, graph) if forward else self.path(p, None, n, graph)
                for a, b in pairs:
                    m = b if forward else a
                    if m not in visited:
                        visited.add(m)
                        seen[m] = None
                        nxt.append(m)
            frontier = nxt
        return list(seen)

    def _mod(self, p: A.PathMod, s: int | None, o: int | None, graph: Any) -> Iterator[tuple[int, int]]:
        mod = p.mod
        if mod == "?":
            out = {}
            if s is not None:
                if o is None or o == s:
                    out[(s, s)] = None
            elif o is not None:
                out[(o, o)] = None
            else:
                for n in self._nodes(graph):
                    out[(n, n)] = None
            for pair in self.path(p.path, s, o, graph):
                out[pair] = None
            yield from out
            return
        zero = mod == "*"
        if s is not None:
            for b in self._reach(p.path, s, graph, zero, True):
                if o is None or b == o:
                    yield s, b
        elif o is not None:
            for a in self._reach(p.path, o, graph, zero, False):
                yield a, o
        else:
            starts = self._nodes(graph) if zero else {a for a, _ in self.path(p.path, None, None, graph)}
            for a in starts:
                for b in self._reach(p.path, a, graph, zero, True):
                    yield a, b


def _conjuncts(expr: A.Expr) -> list[A.Expr]:
    """The operands of a top-level ``&&`` chain (a FILTER keeps a solution iff all are true)."""
    if isinstance(expr, A.Call) and expr.name == "&&":
        return [c for a in expr.args for c in _conjuncts(a)]
    return [expr]


class _batched:
    """Batches of facts, sized so that a batch yields about 4096 rows (1 to 256 facts)."""

    def __init__(self, it: Iterable) -> None:
        self.it = iter(it)
        self.size = 1

    def __iter__(self) -> "_batched":
        return self

    def __next__(self) -> list:
        batch = list(islice(self.it, self.size))
        if not batch:
            raise StopIteration
        return batch

    def send(self, rows: int) -> None:
        if rows > 4096 and self.size > 1:
            self.size //= 2
        elif rows < 1024 and self.size < 256:
            self.size *= 2


def _merge(a: Solution, b: Solution) -> Solution | None:
    out = dict(a)
    for k, v in b.items():
        w = out.get(k)
        if w is None:
            out[k] = v
        elif w != v:
            return None
    return out


def _index(rows: list[Solution], keys: tuple) -> dict:
    index: dict = defaultdict(list)
    if keys:
        for r in rows:
            index[tuple(r[k] for k in keys)].append(r)
    return index


def _hash_join(left: Iterable[Solution], right: list[Solution], certain: set) -> Iterator[Solution]:
    keys = tuple(certain)
    index = _index(right, keys)
    for m in left:
        for r in index.get(tuple(m[k] for k in keys), ()) if keys else right:
            merged = _merge(m, r)
            if merged is not None:
                yield merged


def dataset_view(view: Layers, dictionary: TermDictionary, dataset: tuple) -> Layers:
    """The view of FROM / FROM NAMED: the default graph is the merge of the FROM graphs."""
    default, named = dataset
    dflt = {dictionary.encode(g) for g in default}
    nmd = {dictionary.encode(g) for g in named}
    db = Database()
    quads = db.relation(QUAD, 4)
    for q in view.scan(QUAD):
        if q[0] in dflt:
            db.triples.add(q[1:])
        if q[0] in nmd:
            quads.add(q)
    return Layers([db])


# ---- filters over ids ---------------------------------------------------------------------
_CMP = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}


def id_test(expr: A.Expr, vars_: tuple, d: TermDictionary, ctx: Context | None = None) -> Callable[..., bool]:
    """A test over term ids; numeric ``?v op constant`` and ``?a op ?b`` compile to
    cached-value comparisons (the general evaluation when a value is not numeric)."""
    fast = fast_cmp(expr, d)
    if fast is not None and len(vars_) == 1:
        return fast
    if isinstance(expr, A.Call) and expr.name in _CMP and len(expr.args) == 2 and len(vars_) == 2 \
            and all(isinstance(a, A.VarRef) for a in expr.args):
        return _pair_cmp(expr, vars_, d, ctx)
    if isinstance(expr, A.Call) and expr.name == "&&":
        parts = [(tuple(sorted({n.var for n in a.walk() if isinstance(n, A.VarRef)})), a) for a in expr.args]
        tests = [(tuple(vars_.index(v) for v in pv), id_test(a, pv, d, ctx)) for pv, a in parts]
        return lambda *vals: all(t(*(vals[i] for i in idx)) for idx, t in tests)
    f = compile_expr(expr, ctx or Context(d))
    return lambda *vals: ebv(f(dict(zip(vars_, vals)))) is True


def _pair_cmp(expr: A.Call, vars_: tuple, d: TermDictionary, ctx: Context | None) -> Callable[[int, int], bool]:
    """``?a op ?b`` on the cached values when both are numbers, else as SPARQL evaluates it."""
    cmp = _CMP[expr.name]
    first = vars_.index(expr.args[0].var)  # type: ignore[attr-defined]
    f = compile_expr(expr, ctx or Context(d))
    value = d.value

    def test(*ids: int) -> bool:
        a, b = ids[first], ids[1 - first]
        if a is not None and b is not None:
            ca, va = value(a)
            cb, vb = value(b)
            if ca == V_NUMERIC and cb == V_NUMERIC:
                if type(va) is type(vb):
                    return cmp(va, vb)
                order = compare_numbers(va, vb)  # XPath promotion of mixed types
                return order is not None and cmp(order, 0)
        return ebv(f(dict(zip(vars_, ids)))) is True
    return test


def comparison(expr: A.Expr) -> tuple[Var, str, object] | None:
    """(variable, op, number) when ``expr`` is ``?v op numeric-constant`` (op one of < > <= >=)."""
    if not (isinstance(expr, A.Call) and expr.name in _CMP and len(expr.args) == 2):
        return None
    a, b = expr.args
    op = expr.name
    if isinstance(a, A.Const) and isinstance(b, A.VarRef):
        a, b = b, a
        op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}[op]
    if not (isinstance(a, A.VarRef) and isinstance(b, A.Const)):
        return None
    n = numeric(b.term)
    if n is None or (isinstance(n[1], float) and n[1] != n[1]):
        return None
    return a.var, op, n[1]


def fast_cmp(expr: A.Expr, d: TermDictionary) -> Callable[[int], bool] | None:
    """``?v op constant`` as a test on the term id's cached value (no term decoding)."""
    found = comparison(expr)
    if found is None:
        return None
    _, op, c = found
    cmp = _CMP[op]
    value = d.value
    ctype = type(c)
    as_double = float(c)  # against an xsd:double, every numeric constant is promoted to one

    def test(i: int) -> bool:
        if i is None:
            return False
        cls, v = value(i)
        if cls != V_NUMERIC:
            return False
        if type(v) is ctype:
            return cmp(v, c)
        if type(v) is float:
            return cmp(v, as_double)
        order = compare_numbers(v, c)  # XPath promotion of mixed types
        return order is not None and cmp(order, 0)
    return test
