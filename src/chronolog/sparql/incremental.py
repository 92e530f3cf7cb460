"""Standing queries, evaluated per time point, delta-driven.

The enriched knowledge at a time point is ``background ∪ overlay`` (disjoint). A standing
query's answer there is its background-only answer (computed once at registration, cached)
plus the *new* solutions: those that use at least one overlay fact. Only the new solutions
are computed per time point, semi-naive style: for a basic graph pattern ``P1 ... Pn``,

    new = ∪_i  P1..P(i-1) over the background only ⋈ Pi over the overlay ⋈ P(i+1)..Pn over all

which finds each new solution exactly once (no de-duplication needed). Each term of the
union is a :class:`~chronolog.joins.CompiledJoin` with ``Pi`` first, run with the overlay
facts matching ``Pi`` as its ``source``; overlay facts are dispatched to the terms by
predicate, so the work per time point follows what arrived, not the background or the
number of registered queries. The "background only" patterns read the relation
``triple@bg``, an alias of the background's ``triple`` relation (no copy).

Queries with the same basic graph pattern and projection, differing only in FILTERs, share
one evaluation: the join runs once and each query's filter is applied to its solutions
(DOTR's filter merging). Queries outside the fragment (SELECT [DISTINCT-free] over BGP +
FILTER) are evaluated in full per time point and the cached background answer is subtracted;
a query that calls NOW() is one of those, and its background answer is evaluated again at
every time point (NOW() is the time point's time, so the background answer depends on it).

>>> from chronolog.terms import TermDictionary
>>> from chronolog.store import Database
>>> d = TermDictionary(); bg = Database()
>>> E = "http://e/"
>>> bg.triples.add((d.iri(E + "r1"), d.iri(E + "in"), d.iri(E + "b1")))
True
>>> sq = StandingQueries(d, bg)
>>> reg = sq.register("hot", "PREFIX : <http://e/> SELECT ?r ?b WHERE { ?r :temp ?t . ?r :in ?b FILTER(?t > 60) }")
>>> reg.incremental
True
>>> t1 = Database(); t1.triples.add((d.iri(E + "r1"), d.iri(E + "temp"), d.encode_value(70)))
True
>>> [(name, [tuple(d.decode(i).value for i in row) for row in rows]) for name, rows in sq.step(t1).items()]
[('hot', [('http://e/r1', 'http://e/b1')])]
"""
from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from chronolog.joins import CompiledJoin, Filter as JFilter, Pattern, PlanError, order
from chronolog.sparql import algebra as A
from chronolog.sparql import PreparedQuery, prepare
from chronolog.sparql.evaluate import DEFAULT, Evaluator, comparison, id_test
from chronolog.sparql.expressions import Context, compile_expr, ebv
from chronolog.store import TRIPLE, Database, Layers
from chronolog.terms import V_NUMERIC, TermDictionary, Var
from bisect import bisect_left, bisect_right

OLD = TRIPLE + "@bg"


class BackgroundOnlyWarning(UserWarning):
    """A standing query that can only match background facts: same events at every time point."""


@dataclass
class Registration:
    """What registering a standing query found out."""

    name: str
    variables: list[str]
    incremental: bool  # delta-driven fast path (else full evaluation minus the background answer)
    background_only: bool
    shared_with: list[str] = field(default_factory=list)
    reason: str | None = None


def peel(q: A.Query) -> tuple[A.Pattern, list[tuple]] | None:
    """(the pattern under the projection, its FILTERs and BINDs innermost first, as
    ("filter", expr) or ("extend", var, expr)) when ``q`` is a SELECT of that shape with
    no aggregate, else None."""
    if q.form != "SELECT" or q.dataset is not None:
        return None
    node = q.pattern
    if isinstance(node, A.Project):
        node = node.pattern
    steps: list[tuple] = []
    while isinstance(node, (A.Filter, A.Extend)):
        expr = node.expr
        if expr.find(A.Aggregate) is not None:
            return None
        steps.append(("filter", expr) if isinstance(node, A.Filter) else ("extend", node.var, expr))
        node = node.pattern
    steps.reverse()  # innermost first: the evaluation order
    return node, steps


def split_steps(steps: list[tuple], bound: set) -> tuple[list[A.Expr], list[tuple], bool]:
    """(pushable filters, post steps, reads EXISTS): a FILTER reading only ``bound``
    variables can run inside the join; BINDs, filters reading BIND results and anything
    with [NOT] EXISTS run per solution, in order."""
    pushed, post = [], []
    exists = False
    for step in steps:
        if step[-1].find(A.Exists) is not None:
            exists = True
            post.append(step)
        elif step[0] == "filter" and {n.var for n in step[1].walk() if isinstance(n, A.VarRef)} <= bound:
            pushed.append(step[1])
        else:
            post.append(step)
    return pushed, post, exists


def _fragment(q: A.Query) -> tuple[tuple, list[A.Expr], list[tuple], tuple, bool] | None:
    """(triples, pushable filters, post steps, projected vars, reads EXISTS) when ``q`` is a
    SELECT over a BGP with FILTERs and BINDs, else None. A query with EXISTS is only
    delta-driven when its BGP has no solution over the background alone (see
    ``StandingQueries.register``)."""
    peeled = peel(q)
    if peeled is None or not isinstance(peeled[0], A.BGP) or not peeled[0].triples:
        return None
    node, steps = peeled
    pushed, post, exists = split_steps(steps, node.pattern_vars())
    return node.triples, pushed, post, q.vars, exists


def join_filter(expr: A.Expr, d: TermDictionary) -> JFilter:
    """A FILTER over BGP variables as a join step on term ids (it prunes inside the join)."""
    vars_ = tuple(sorted({n.var for n in expr.walk() if isinstance(n, A.VarRef)}))
    return JFilter(vars_, id_test(expr, vars_, d))


def post_steps(d: TermDictionary, steps: list[tuple], all_vars: tuple, proj: tuple, base: str | None = None,
               exists: Callable[[A.Pattern, dict], bool] | None = None) -> Callable[[tuple], tuple | None]:
    """BINDs and late FILTERs of one query (``_fragment``'s post steps), applied to a BGP
    solution row (``all_vars``), then projection onto ``proj``; None when a FILTER rejects."""
    ctx = Context(d, base)
    if exists is not None:
        ctx.exists = exists
    compiled = [(s[0], s[1] if s[0] == "extend" else None, compile_expr(s[-1], ctx)) for s in steps]
    enc = d.encode

    def post(row: tuple) -> tuple | None:
        sol = dict(zip(all_vars, row))
        ctx.row = object()
        ctx.bnodes.clear()
        for kind, var, f in compiled:
            v = f(sol)
            if kind == "filter":
                if ebv(v) is not True:
                    return None
            elif v is not None:
                sol[var] = enc(v)
        return tuple(sol.get(v) for v in proj)
    return post


class _Body:
    """One shared basic graph pattern: its delta plans and the queries that use it."""

    def __init__(self, triples: tuple, vars_: tuple, d: TermDictionary, view: Layers,
                 stream_predicates: set[int] | None, background: Layers) -> None:
        enc = d.encode
        self.patterns = [tuple(a if isinstance(a, Var) else enc(a) for a in tr) for tr in triples]
        self.out_vars = vars_  # the solution tuple layout: all variables of the BGP, sorted
        self.queries: list[tuple] = []  # (name, row test or None, positions, comparison or None)
        self.indexed: list[tuple] = []  # (column, op, sorted constants, queries) for threshold filters
        self.unindexed: list[tuple] = []
        self.plans: list[tuple[int | None, Any]] = []  # (predicate or None, runnable)
        self.view = view
        self.background = background
        # anchors: patterns no background fact matches; every solution matches them with
        # overlay facts, so one plan from any anchor finds all (new) solutions
        self.anchors = [i for i, p in enumerate(self.patterns) if not _matches(background, p)]
        self.anchored: list[tuple[Any, object, Any]] = []  # (overlay index on the constants, key, runnable)
        self.route: int | None = None
        self.d = d
        self.filters: list = []  # the sole query's filters, compiled into the joins
        self._stream_predicates = stream_predicates

    def add_query(self, name: str, test: Callable | None, positions: tuple, cmp: tuple | None,
                  join_filters: list) -> None:
        """Add a query; a body with one query runs its filters inside the joins (pruning
        early), a shared body runs the bare join and filters per query afterwards."""
        self.queries.append((name, test, positions, cmp))
        if len(self.queries) == 1:
            self.filters = join_filters
            self.compile()
        elif len(self.queries) == 2:
            self.filters = []
            self.compile()
        self.index_filters()

    def compile(self) -> None:
        view, n = self.view, len(self.patterns)
        self.plans = []
        self.anchored = []
        self.background_only = True

        def estimate(p: Pattern, mask: tuple) -> float:
            return view.fanout(TRIPLE, mask)

        stream = self._stream_predicates
        if self.anchors and all(stream is None or isinstance(self.patterns[k][1], Var) or self.patterns[k][1] in stream
                                for k in self.anchors):
            # the BGP has no background solution: all its solutions are new, and each is found
            # once by a plan that starts from an anchor's overlay facts (every other pattern
            # reads background + overlay). At a time point, the anchor with the fewest overlay
            # facts starts; an anchor with none means no solution at all.
            overlay = view.layers[-1].triples
            body0: list = [Pattern(TRIPLE, p) for p in self.patterns] + (self.filters or [])
            for k in self.anchors:
                pattern = self.patterns[k]
                mask = tuple(j for j, a in enumerate(pattern) if not isinstance(a, Var))
                key = pattern[mask[0]] if len(mask) == 1 else tuple(pattern[j] for j in mask)
                try:
                    steps = order(body0, estimate, first=k)
                except PlanError:
                    continue
                run = CompiledJoin(steps, self.out_vars).bind(view)
                self.anchored.append((overlay.index(mask) if mask else None, key, run))
            if len(self.anchored) == len(self.anchors):
                self.background_only = False
                preds = [self.patterns[k][1] for k in self.anchors if not isinstance(self.patterns[k][1], Var)]
                self.route = preds[0] if preds else None
                return
            self.anchored = []
        for i in range(n):
            pred = self.patterns[i][1]
            pred = None if isinstance(pred, Var) else pred
            if self._stream_predicates is not None and pred is not None and pred not in self._stream_predicates:
                continue
            self.background_only = False
            body: list = [Pattern(OLD if j < i else TRIPLE, self.patterns[j]) for j in range(n)]
            body += self.filters or []
            try:
                steps = order(body, estimate, first=i)
            except PlanError:
                continue
            join = CompiledJoin(steps, self.out_vars)
            self.plans.append((pred, join.bind(view)))

    def index_filters(self) -> None:
        """Group queries whose filter is ``?v op constant`` by (column, op), sorted by constant:
        a solution then finds the queries it satisfies by binary search (DOTR filter merging)."""
        groups: dict = defaultdict(list)
        self.unindexed = []
        for q in self.queries:
            if q[3] is not None and len(self.queries) > 1:
                col, op, const = q[3]
                groups[(col, op)].append((const, q))
            else:
                self.unindexed.append(q)
        self.indexed = []
        for (col, op), items in groups.items():
            items.sort(key=lambda x: x[0])
            self.indexed.append((col, op, [c for c, _ in items], [q for _, q in items]))

    def dispatch(self, rows: list[tuple], out: dict) -> None:
        """Apply every query's filter and projection to the shared solutions."""
        filtered = bool(self.filters)  # a sole query's filters already ran in the join
        for name, test, positions, _ in self.unindexed:
            sel = rows if test is None or filtered else [r for r in rows if test(r)]
            if not sel:
                continue
            if callable(positions):  # BINDs / late FILTERs, then projection
                got = [x for x in map(positions, sel) if x is not None]
                if got:
                    out.setdefault(name, []).extend(got)
            else:
                out.setdefault(name, []).extend(tuple(None if p < 0 else r[p] for p in positions) for r in sel)
        if not self.indexed:
            return
        value = self.d.value
        for col, op, consts, qs in self.indexed:
            for r in rows:
                cls, v = value(r[col])
                if cls != V_NUMERIC or v != v:
                    continue
                if op == ">":
                    hit = qs[:bisect_left(consts, v)]
                elif op == ">=":
                    hit = qs[:bisect_right(consts, v)]
                elif op == "<":
                    hit = qs[bisect_right(consts, v):]
                else:
                    hit = qs[bisect_left(consts, v):]
                for name, _, positions, _ in hit:
                    out.setdefault(name, []).append(tuple(None if p < 0 else r[p] for p in positions))

    def delta(self, by_pred: dict, all_facts: list) -> list[tuple]:
        if self.anchored:
            best = None
            for index, key, run in self.anchored:
                src = all_facts if index is None else index.get(key)
                if not src:
                    return []
                if best is None or len(src) < len(best[0]):
                    best = (src, run)
            src, run = best  # type: ignore[misc]
            return run(src)
        out: list[tuple] = []
        for pred, run in self.plans:
            src = all_facts if pred is None else by_pred.get(pred)
            if src:
                out.extend(run(src))
        return out

    def predicates(self) -> set[int | None]:
        """The predicates whose overlay facts start a plan (None: any predicate)."""
        if self.anchored:
            return {self.route}  # every anchor needs overlay facts: one anchor's predicate routes
        return {pred for pred, _ in self.plans}


def _matches(view: Layers, pattern: tuple) -> bool:
    """Whether some fact of ``view`` has ``pattern``'s constants (repeated variables ignored)."""
    mask = tuple(j for j, a in enumerate(pattern) if not isinstance(a, Var))
    if not mask:
        return view.size(TRIPLE) > 0
    key = pattern[mask[0]] if len(mask) == 1 else tuple(pattern[j] for j in mask)
    return view.count(TRIPLE, mask, key) > 0


class StandingQueries:
    """Registered standing queries over one background; ``step(overlay)`` per time point.

    ``stream_predicates`` (IRIs), when known, names the predicates overlay facts can carry;
    patterns with another constant predicate never start a delta plan, and a query none of
    whose patterns can match the stream is reported (``BackgroundOnlyWarning``).
    ``share`` merges queries that differ only in FILTER (on by default).
    """

    def __init__(self, dictionary: TermDictionary, background: Database | Layers,
                 stream_predicates: Iterable[str] | None = None, share: bool = True) -> None:
        self.d = dictionary
        layers = background.layers if isinstance(background, Layers) else (background,)
        aliased = []
        for db in layers:
            alias = Database()
            alias.relations = dict(db.relations)
            alias.relations[OLD] = db.triples
            aliased.append(alias)
        self._background_layers = tuple(layers)
        self._aliased = tuple(aliased)
        self._overlay = Database()
        self._by_predicate = self._overlay.triples.index((1,))
        self._view = Layers(self._aliased + (self._overlay,))
        self._bg_view = Layers(self._background_layers)
        self.stream_predicates = None if stream_predicates is None else {dictionary.iri(p) for p in stream_predicates}
        self.share = share
        self._bodies: dict[tuple, _Body] = {}
        self._by_pred: dict = {}
        self._any_pred: list = []
        self._general: list[tuple[str, Any, Counter]] = []
        self.registrations: dict[str, Registration] = {}
        self._background_answers: dict[str, list[tuple]] = {}
        self._prepared: dict[str, Any] = {}

    # ---- registration ----------------------------------------------------------------
    def register(self, name: str, text: str, base: str | None = None, filename: str | None = None) -> Registration:
        if name in self.registrations:
            raise ValueError(f"a standing query named {name!r} is already registered")
        pq = prepare(text, self.d, base=base, filename=filename)
        self._prepared[name] = pq
        timed = any(isinstance(n, A.Call) and n.name == "NOW" for n in pq.query.walk())
        frag = None if timed else _fragment(pq.query)
        if frag is not None and frag[4] and not self._no_background_solution(frag[0]):
            # [NOT] EXISTS reads the overlay: a background solution may gain or lose the
            # filter at a time point, so only a BGP without background solutions is delta-driven
            frag = None
        bg_result = pq.execute(self._bg_view)
        if pq.form == "SELECT":
            enc = self.d.encode
            bg_rows = [tuple(None if t is None else enc(t) for t in row) for row in bg_result]
        else:
            bg_rows = []
        self._background_answers[name] = bg_rows
        if frag is None:
            static = not timed and not any(
                (isinstance(n, A.BGP) and n.triples) or isinstance(n, A.PathPattern) for n in pq.query.walk())
            reg = Registration(name, pq.variables, False, static,
                               reason="outside the delta-driven fragment (SELECT over BGP + FILTER/BIND)")
            if static:
                warnings.warn(f"standing query {name!r} reads no triples: it gives the same "
                              f"{len(bg_rows)} solution(s) at every time point", BackgroundOnlyWarning, stacklevel=2)
            else:
                self._general.append((name, pq, None if timed else Counter(bg_rows)))
            self.registrations[name] = reg
            return reg
        triples, filters, post_steps, proj, exists = frag
        all_vars = tuple(sorted({a for tr in triples for a in tr if isinstance(a, Var)}))
        key = (tuple(sorted(map(str, triples))), all_vars)
        post = self._post(post_steps, all_vars, proj, pq.query.base if exists else None, exists) if post_steps else None
        positions = tuple(all_vars.index(v) if v in all_vars else -1 for v in proj)
        own_key = key if self.share else (key, name)
        body = self._bodies.get(own_key)
        if body is None:
            body = self._bodies[own_key] = _Body(triples, all_vars, self.d, self._view, self.stream_predicates, self._bg_view)
        test = self._row_filter(filters, all_vars) if filters else None
        cmp = None
        if len(filters) == 1 and post is None:
            c = comparison(filters[0])
            if c is not None and c[0] in all_vars:
                cmp = (all_vars.index(c[0]), c[1], c[2])
        others = [q for q, _, _, _ in body.queries]
        body.add_query(name, test, positions if post is None else post, cmp,
                       [join_filter(f, self.d) for f in filters])
        self._route()
        reg = Registration(name, [str(v) for v in proj], True, body.background_only, shared_with=others)
        if body.background_only:
            warnings.warn(f"standing query {name!r} can only match background facts: "
                          f"it gives the same {len(bg_rows)} solution(s) at every time point",
                          BackgroundOnlyWarning, stacklevel=2)
        self.registrations[name] = reg
        return reg

    def prepared(self, name: str) -> PreparedQuery:
        """The compiled query registered as ``name``."""
        return self._prepared[name]

    def _route(self) -> None:
        """Index the bodies by the predicates that start their plans (dispatch per fact)."""
        by_pred: dict = defaultdict(list)
        self._any_pred: list[_Body] = []
        for body in self._bodies.values():
            for pred in body.predicates():
                (self._any_pred if pred is None else by_pred[pred]).append(body)
        self._by_pred = dict(by_pred)

    def background_answer(self, name: str) -> list[tuple]:
        """The solutions (id tuples) of ``name`` over the background alone, computed once."""
        return self._background_answers[name]

    # ---- compiled filters --------------------------------------------------------------
    def _no_background_solution(self, triples: tuple) -> bool:
        """Whether the BGP ``triples`` has no solution over the background alone."""
        enc = self.d.encode
        if any(not _matches(self._bg_view, tuple(a if isinstance(a, Var) else enc(a) for a in tr)) for tr in triples):
            return True
        ev = Evaluator(self.d)
        return next(iter(ev.run(A.BGP(triples=tuple(triples)), self._bg_view, 0)), None) is None

    def _post(self, steps: list[tuple], all_vars: tuple, proj: tuple, base: str | None = None,
              exists: bool = False) -> Callable[[tuple], tuple | None]:
        """BINDs and late FILTERs; [NOT] EXISTS is evaluated over this time point's
        background + overlay."""
        return post_steps(self.d, steps, all_vars, proj, base, self._exists(base) if exists else None)

    def _exists(self, base: str | None) -> Callable[[A.Pattern, dict], bool]:
        """EXISTS over this time point's background + overlay (the general path's view): a
        plain BGP runs as a compiled join bound once (the overlay's objects never change),
        anything else through the evaluator."""
        ev = Evaluator(self.d, base)
        view = ev.view = Layers(self._background_layers + (self._overlay,))
        bound: dict = {}

        def exists(pattern: A.Pattern, sol: dict) -> bool:
            node = pattern
            while isinstance(node, A.Join) and isinstance(node.left, A.BGP) and not node.left.triples:
                node = node.right
            if not (isinstance(node, A.BGP) and node.triples):
                return next(iter(ev.eval(pattern, DEFAULT, sol)), None) is not None
            inputs = frozenset(v for v in node.pattern_vars() if v in sol)
            hit = bound.get((id(node), inputs))
            if hit is None:
                join, ins, _ = ev.bgp_join(node, inputs, DEFAULT)
                hit = bound[(id(node), inputs)] = (join.bind(view), ins)
            run, ins = hit
            return bool(run(None, *[sol[v] for v in ins]))
        return exists

    def _row_filter(self, filters: list[A.Expr], all_vars: tuple) -> Callable[[tuple], bool]:
        tests = []
        for f in filters:
            vars_ = tuple(sorted({n.var for n in f.walk() if isinstance(n, A.VarRef)}))
            idx = tuple(all_vars.index(v) if v in all_vars else None for v in vars_)
            t = id_test(f, vars_, self.d)
            tests.append((idx, t))
        if len(tests) == 1 and len(tests[0][0]) == 1 and tests[0][0][0] is not None:
            (i,), t = tests[0]
            return lambda row: t(row[i])
        return lambda row: all(t(*(None if i is None else row[i] for i in idx)) for idx, t in tests)

    # ---- per time point ----------------------------------------------------------------
    def step(self, overlay: Database | Iterable[tuple[int, int, int]], time: int = 0) -> dict[str, list[tuple]]:
        """The new solutions (id tuples, projected) of every query at this time point.

        ``overlay`` holds the time point's facts (disjoint from the background): a
        Database, or an iterable of encoded triples; ``time`` is the time point's time in
        milliseconds since the epoch (what NOW() returns).
        """
        ov = self._overlay
        rel = ov.triples
        rel.clear()  # same Relation and index objects: the compiled plans stay bound
        facts = rel.update(overlay.triples if isinstance(overlay, Database) else overlay)
        by_pred: dict[int, list] = self._by_predicate  # the overlay's index on the predicate
        out: dict[str, list[tuple]] = {}
        if self._bodies:
            routed = self._by_pred
            bodies = list(self._any_pred)
            for pred in by_pred:
                bodies.extend(routed.get(pred, ()))
            seen = set()
            for body in bodies:
                if id(body) in seen:
                    continue
                seen.add(id(body))
                rows = body.delta(by_pred, facts)
                if rows:
                    body.dispatch(rows, out)
        if self._general:
            view = Layers(self._background_layers + (ov,))
            for name, pq, bg in self._general:
                new = self._new_solutions(pq, view, bg, time)
                if new:
                    out[name] = new
        return out

    def from_scratch(self, view: Layers, time: int = 0) -> dict[str, list[tuple]]:
        """Every query's solutions on ``view`` that are not background solutions (as
        multisets), evaluated in full: for a time point whose view is not the background
        plus an overlay (when Datalog negation retracted background-derived facts)."""
        out = {}
        timed = {name for name, _, bg in self._general if bg is None}
        for name, pq in self._prepared.items():
            bg = None if name in timed else Counter(self._background_answers[name])
            new = self._new_solutions(pq, view, bg, time)
            if new:
                out[name] = new
        return out

    def _new_solutions(self, pq: Any, view: Layers, background: Counter | None, time: int) -> list[tuple]:
        """Solutions at ``time`` not in ``background`` (None: the background answer at ``time``)."""
        if pq.form != "SELECT":
            return []
        enc = self.d.encode
        if background is None:
            background = Counter(tuple(None if t is None else enc(t) for t in row) for row in pq.execute(self._bg_view, time))
        left = Counter(background)
        new = []
        for row in pq.execute(view, time):
            key = tuple(None if t is None else enc(t) for t in row)
            if left[key] > 0:
                left[key] -= 1
            else:
                new.append(key)
        return new

    def decode(self, row: Sequence[int | None]) -> tuple:
        dec = self.d.decode
        return tuple(None if i is None else dec(i) for i in row)


