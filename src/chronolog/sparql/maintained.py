"""A SELECT's answer kept up to date as facts enter and leave the data it reads.

A window query's data changes a little at each evaluation instant (what entered the window,
what left, what the rules derived or retracted), while evaluating the query again reads
all of it. For a SELECT over a basic graph pattern with FILTERs and BINDs (the fragment
of :mod:`chronolog.sparql.incremental`, without EXISTS), the answer is the bag of the
projections of the pattern's solutions, and a solution holds exactly while every fact it
uses does. So each solution is kept with the facts it uses:

- when facts leave, the solutions using one of them leave (an index from a fact to the
  solutions using it);
- when facts enter, the new solutions are those using at least one of them: for each
  pattern ``Pi``, a compiled join starts from the entered facts matching ``Pi``, the
  other patterns reading the whole new data (a solution using several entered facts is
  found once per such pattern, and kept once).

The work per instant follows what entered and left and the solutions they touch, not the
size of the window. A query whose answer depends on more than its data (NOW(), RAND(),
BNODE(), UUID(), an extension function such as C-SPARQL's ``f:timestamp``) is outside:
:meth:`MaintainedAnswer.of` says None and the caller evaluates it in full.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

from chronolog.joins import CompiledJoin, Pattern, order
from chronolog.sparql import PreparedQuery
from chronolog.sparql import algebra as A
from chronolog.sparql.incremental import _fragment, join_filter, post_steps
from chronolog.store import TRIPLE, Layers
from chronolog.terms import TermDictionary, Var

Triple = tuple[int, int, int]
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


class MaintainedAnswer:
    """The answer (a bag of projected id rows) of one query over a changing view."""

    def __init__(self, fragment: tuple, d: TermDictionary, base: str | None) -> None:
        triples, filters, post, proj, _ = fragment
        enc = d.encode
        self.patterns = [tuple(a if isinstance(a, Var) else enc(a) for a in tr) for tr in triples]
        self.variables = tuple(sorted({a for p in self.patterns for a in p if isinstance(a, Var)}))
        self._places = [tuple(("var", self.variables.index(a)) if isinstance(a, Var) else ("id", a) for a in p)
                        for p in self.patterns]
        self._filters = [join_filter(f, d) for f in filters]
        positions = tuple(self.variables.index(v) if v in self.variables else -1 for v in proj)
        self._project: Callable[[tuple], tuple | None] = (
            post_steps(d, post, self.variables, proj, base) if post
            else (lambda row: tuple(None if p < 0 else row[p] for p in positions)))
        self.answer: Counter = Counter()
        self._rows: dict[tuple, tuple | None] = {}  # a solution -> its projected row (None: filtered out)
        self._using: dict[Triple, set[tuple]] = {}  # a fact -> the solutions that use it
        self._joins: list[tuple[int | None, CompiledJoin]] = []  # per pattern: (predicate or None, join)
        self._full: CompiledJoin | None = None
        self._bound: tuple[Layers | None, list[tuple[int | None, Any]]] = (None, [])

    @classmethod
    def of(cls, query: PreparedQuery) -> "MaintainedAnswer | None":
        """The maintained answer of ``query``, or None when it is outside the fragment."""
        if _outside(query.query):
            return None
        fragment = _fragment(query.query)
        if fragment is None or fragment[4]:  # EXISTS reads the data beside the solution's facts
            return None
        return cls(fragment, query.dictionary, query.query.base)

    def start(self, view: Layers) -> Counter:
        """The answer over ``view`` in full (the first instant, or after a restore)."""
        self._rows.clear()
        self._using.clear()
        self.answer = Counter()
        self._plan(view)
        self._add(self._full.bind(view)(None))  # type: ignore[union-attr]
        return self.answer

    def update(self, view: Layers, entered: Iterable[Triple], left: Iterable[Triple]) -> Counter:
        """The answer over ``view`` once ``left`` (facts the previous view held) went and
        ``entered`` (facts it did not hold) came."""
        for fact in left:
            for solution in self._using.pop(fact, ()):
                self._drop(solution)
        entered = list(entered)
        if entered:
            bound, plans = self._bound
            if bound is not view:
                plans = [(pred, join.bind(view)) for pred, join in self._joins]
                self._bound = (view, plans)
            by_predicate: dict[int, list[Triple]] = {}
            for fact in entered:
                by_predicate.setdefault(fact[1], []).append(fact)
            found: dict[tuple, None] = {}
            for pred, run in plans:
                source = entered if pred is None else by_predicate.get(pred)
                if source:
                    found.update(dict.fromkeys(run(source)))
            self._add(found)
        return self.answer

    def _plan(self, view: Layers) -> None:
        """One join per pattern, that pattern first (compiled once, for the first view's sizes)."""
        if self._full is not None:
            return

        def estimate(p: Pattern, mask: tuple) -> float:
            return view.fanout(TRIPLE, mask)

        body: list = [Pattern(TRIPLE, p) for p in self.patterns] + self._filters
        self._full = CompiledJoin(order(body, estimate), self.variables)
        self._joins = [(None if isinstance(pattern[1], Var) else pattern[1],
                        CompiledJoin(order(body, estimate, first=i), self.variables))
                       for i, pattern in enumerate(self.patterns)]

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

    def _facts(self, solution: tuple) -> list[Triple]:
        return [tuple(solution[v] if kind == "var" else v for kind, v in place)  # type: ignore[misc]
                for place in self._places]
