"""A SELECT's answer kept up to date as facts enter and leave the data it reads.

A window query's data changes a little at each evaluation instant (what entered the window,
what left, what the rules derived or retracted), while evaluating the query again reads
all of it. For a SELECT over basic graph patterns, in the default graph or in named graphs
given by IRI (RSP-QL's ``WINDOW :w { ... }``), joined, with FILTERs and BINDs, the answer is
the bag of the projections of the patterns' solutions, and a solution holds exactly while
every fact it uses does. So each solution is kept with the facts it uses:

- when facts leave, the solutions using one of them leave (an index from a fact to the
  solutions using it);
- when facts enter, the new solutions are those using at least one of them: for each
  pattern ``Pi``, a compiled join starts from the entered facts matching ``Pi``, the
  other patterns reading the whole new data (a solution using several entered facts is
  found once per such pattern, and kept once).

The work per instant follows what entered and left and the solutions they touch, not the
size of the window. A query whose answer depends on more than its data (NOW(), RAND(),
BNODE(), UUID(), an extension function such as C-SPARQL's ``f:timestamp``), or whose
shape is not a join of such patterns (OPTIONAL, UNION, aggregates, EXISTS...), is outside:
:meth:`MaintainedAnswer.of` says None and the caller evaluates it in full.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable, Mapping

from chronolog.joins import CompiledJoin, Pattern, order
from chronolog.sparql import PreparedQuery
from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import QUAD
from chronolog.sparql.incremental import join_filter, peel, post_steps, split_steps
from chronolog.store import TRIPLE, Fact, Layers
from chronolog.terms import TermDictionary, Var

_PREDICATE = {TRIPLE: 1, QUAD: 2}  # where a fact of each relation holds its predicate
VOLATILE = frozenset({"NOW", "RAND", "BNODE", "UUID", "STRUUID"})  # values not fixed by the data
XSD = "http://www.w3.org/2001/XMLSchema#"


def _outside(query: A.Query) -> bool:
    """Whether the answer may change while the data does not."""
    for node in query.walk():
        if isinstance(node, A.Call) and node.name in VOLATILE:
            return True
        if isinstance(node, A.FunctionCall) and not node.iri.value.startswith(XSD):  # casts are fixed
            return True
    return False


def _core(node: A.Pattern, graph: int | None, d: TermDictionary) -> tuple[list[Pattern], list[A.Expr]] | None:
    """The patterns (triples of the default graph, quads of a named one) and FILTERs of a
    join of basic graph patterns, or None for another shape. A FILTER inside a group
    joins the same as outside it when it reads only the group's pattern variables."""
    if isinstance(node, A.BGP):
        enc = d.encode
        args = [tuple(a if isinstance(a, Var) else enc(a) for a in tr) for tr in node.triples]
        return [Pattern(TRIPLE, a) if graph is None else Pattern(QUAD, (graph,) + a) for a in args], []
    if isinstance(node, A.Join):
        left, right = _core(node.left, graph, d), _core(node.right, graph, d)
        return None if left is None or right is None else (left[0] + right[0], left[1] + right[1])
    if isinstance(node, A.Graph) and graph is None and not isinstance(node.name, Var):
        inner = _core(node.pattern, d.encode(node.name), d)
        return None if inner is None or not inner[0] else inner  # GRAPH :g {} asks whether :g exists
    if isinstance(node, A.Filter) and node.expr.find(A.Exists) is None:
        inner = _core(node.pattern, graph, d)
        bound = {a for p in inner[0] for a in p.args if isinstance(a, Var)} if inner is not None else set()
        if inner is None or not {n.var for n in node.expr.walk() if isinstance(n, A.VarRef)} <= bound:
            return None
        return inner[0], inner[1] + [node.expr]
    return None


class MaintainedAnswer:
    """The answer (a bag of projected id rows) of one query over a changing view."""

    def __init__(self, patterns: list[Pattern], filters: list[A.Expr], post: list[tuple], proj: tuple,
                 d: TermDictionary, base: str | None) -> None:
        self.patterns = patterns
        self.variables = tuple(sorted({a for p in patterns for a in p.args if isinstance(a, Var)}))
        self._places = [tuple(("var", self.variables.index(a)) if isinstance(a, Var) else ("id", a) for a in p.args)
                        for p in patterns]
        self._filters = [join_filter(f, d) for f in filters]
        positions = tuple(self.variables.index(v) if v in self.variables else -1 for v in proj)
        self._project: Callable[[tuple], tuple | None] = (
            post_steps(d, post, self.variables, proj, base) if post
            else (lambda row: tuple(None if p < 0 else row[p] for p in positions)))
        self.answer: Counter = Counter()
        self._rows: dict[tuple, tuple | None] = {}  # a solution -> its projected row (None: filtered out)
        self._using: dict[Fact, set[tuple]] = {}  # a fact -> the solutions that use it
        self._joins: list[tuple[tuple[str, int | None], CompiledJoin]] = []  # per pattern: its route, its join
        self._full: CompiledJoin | None = None
        self._bound: tuple[Layers | None, list[tuple[tuple[str, int | None], Any]]] = (None, [])

    @classmethod
    def of(cls, query: PreparedQuery) -> "MaintainedAnswer | None":
        """The maintained answer of ``query``, or None when it is outside the fragment."""
        peeled = None if _outside(query.query) else peel(query.query)
        if peeled is None:
            return None
        d = query.dictionary
        core = _core(peeled[0], None, d)
        if core is None or not core[0]:
            return None
        patterns, inner = core
        pushed, post, exists = split_steps(peeled[1], {a for p in patterns for a in p.args if isinstance(a, Var)})
        if exists:  # EXISTS reads the data beside the solution's facts
            return None
        return cls(patterns, inner + pushed, post, query.query.vars, d, query.query.base)

    def start(self, view: Layers) -> Counter:
        """The answer over ``view`` in full (the first instant, or after a restore)."""
        self._rows.clear()
        self._using.clear()
        self.answer = Counter()
        self._plan(view)
        self._add(self._full.bind(view)(None))  # type: ignore[union-attr]
        return self.answer

    def update(self, view: Layers, entered: Mapping[str, Iterable[Fact]], left: Iterable[Fact]) -> Counter:
        """The answer over ``view`` once ``left`` (facts the previous view held) went and
        ``entered`` (by relation, facts it did not hold) came."""
        for fact in left:
            for solution in self._using.pop(fact, ()):
                self._drop(solution)
        routes: dict[tuple[str, int | None], list[Fact]] = {}
        for relation, facts in entered.items():
            place = _PREDICATE[relation]
            for fact in facts:
                routes.setdefault((relation, None), []).append(fact)
                routes.setdefault((relation, fact[place]), []).append(fact)
        if routes:
            bound, plans = self._bound
            if bound is not view:
                plans = [(route, join.bind(view)) for route, join in self._joins]
                self._bound = (view, plans)
            found: dict[tuple, None] = {}
            for route, run in plans:
                source = routes.get(route)
                if source:
                    found.update(dict.fromkeys(run(source)))
            self._add(found)
        return self.answer

    def _plan(self, view: Layers) -> None:
        """One join per pattern, that pattern first (compiled once, for the first view's sizes)."""
        if self._full is not None:
            return

        def estimate(p: Pattern, mask: tuple) -> float:
            return view.fanout(p.relation, mask) if view.size(p.relation) else 0.0

        body: list = list(self.patterns) + self._filters
        self._full = CompiledJoin(order(body, estimate), self.variables)
        routes = [(p.relation, None if isinstance(pred := p.args[_PREDICATE[p.relation]], Var) else pred)
                  for p in self.patterns]
        self._joins = [(route, CompiledJoin(order(body, estimate, first=i), self.variables))
                       for i, route in enumerate(routes)]

    def _add(self, solutions: Iterable[tuple]) -> None:
        rows, using, answer, project = self._rows, self._using, self.answer, self._project
        for solution in solutions:
            if solution in rows:
                continue
            row = rows[solution] = project(solution)
            if row is not None:
                answer[row] += 1
            for fact in self._facts(solution):
                using.setdefault(fact, set()).add(solution)

    def _drop(self, solution: tuple) -> None:
        row = self._rows.pop(solution, False)
        if row is False:
            return
        if row is not None:
            answer = self.answer
            answer[row] -= 1
            if not answer[row]:
                del answer[row]
        for fact in self._facts(solution):
            held = self._using.get(fact)
            if held is not None:
                held.discard(solution)
                if not held:
                    del self._using[fact]

    def _facts(self, solution: tuple) -> list[Fact]:
        return [tuple(solution[v] if kind == "var" else v for kind, v in place) for place in self._places]
