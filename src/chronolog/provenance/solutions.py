"""Which facts a query solution matched: the solution's pattern evaluated again with the
solution's values bound, and the triple patterns of the first full match instantiated
(a pattern inside ``GRAPH g { }`` as a quad of ``g``).

For a query that groups (aggregates), the facts of every row of the solution's group
(at most ``GROUP_ROWS``). Paths contribute no facts. A basic graph pattern whose every
variable the solution binds (with FILTERs: the solution passed them) needs no
evaluation: its triples are the patterns instantiated.
"""
from __future__ import annotations

from typing import Callable, Iterator, Mapping

from chronolog.sparql import PreparedQuery
from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import QUAD, Evaluator, dataset_view
from chronolog.store import TRIPLE, Fact, Layers
from chronolog.terms import Var

GROUP_ROWS = 100
_MODIFIERS = (A.Project, A.Distinct, A.Reduced, A.OrderBy, A.Slice)
Held = tuple[str, Fact]  # (relation, fact): a triple, or a quad (graph, s, p, o)


class SolutionSupport:
    """The facts behind the solutions of one prepared query."""

    def __init__(self, query: PreparedQuery, extra: Callable[[Mapping[Var, int]], list[Held]] | None = None) -> None:
        """``extra`` gives the facts behind a part of a solution that no triple pattern
        matched (RSP-QL's MATCH, as VALUES rows)."""
        self.query = query
        self.extra = extra
        node = query.query.pattern
        while isinstance(node, _MODIFIERS):
            node = node.pattern
        group = node.find(A.Group)
        self._grouped = group is not None
        self._pattern = group.pattern if group is not None else node
        self._keys = set(group.key_vars) if group is not None else None
        encode = query.dictionary.encode
        # (graph or None, triple pattern), constants encoded
        self._slots = [(None if graph is None else graph if isinstance(graph, Var) else encode(graph),
                        tuple(a if isinstance(a, Var) else encode(a) for a in triple))
                       for graph, triple in _patterns(self._pattern, None)]
        self._vars = {a for graph, triple in self._slots for a in (graph, *triple) if isinstance(a, Var)}
        self._named = any(graph is not None for graph, _ in self._slots)
        self._evaluator = Evaluator(query.dictionary, query.query.base, query.functions)
        node = self._pattern
        while isinstance(node, A.Filter):
            node = node.pattern
        self._plain = isinstance(node, A.BGP) and not self._grouped  # a BGP under FILTERs only

    def facts(self, view: Layers, time: int, bindings: Mapping[str, int | None]) -> list[Held]:
        """The facts of ``view`` that the solution ``bindings`` (variable name -> term id)
        matched, in the query's order of triple patterns."""
        start = {Var(name): tid for name, tid in bindings.items()
                 if tid is not None and Var(name) in self._vars and (self._keys is None or Var(name) in self._keys)}
        view = self._view(view)
        if self._plain and len(start) == len(self._vars):
            return self._instances(view, start)
        found: dict[Held, None] = {}
        for n, solution in enumerate(self._evaluator.run(self._pattern, view, time, start)):
            if not self._grouped and any(solution.get(Var(k), tid) != tid for k, tid in bindings.items()
                                         if tid is not None and Var(k) in self._vars):
                continue
            found.update(dict.fromkeys(self._instances(view, solution)))
            if not self._grouped or n + 1 >= GROUP_ROWS:
                break
        return list(found)

    def matches(self, view: Layers, time: int, limit: int = GROUP_ROWS) -> Iterator[tuple[dict[str, int], list[Held]]]:
        """Every solution of the pattern (at most ``limit``) with the facts it matched:
        what a CONSTRUCT or an ASK was built from."""
        view = self._view(view)
        for n, solution in enumerate(self._evaluator.run(self._pattern, view, time)):
            if n >= limit:
                return
            yield {str(k): v for k, v in solution.items()}, self._instances(view, solution)

    def _view(self, view: Layers) -> Layers:
        q = self.query.query
        return view if q.dataset is None else dataset_view(view, self.query.dictionary, q.dataset)

    def _instances(self, view: Layers, solution: Mapping[Var, int]) -> list[Held]:
        """The triple patterns instantiated by ``solution``, those that hold in ``view``."""
        triples = view.contains(TRIPLE)
        quads = view.contains(QUAD) if self._named else None
        found: dict[Held, None] = {}
        for graph, slots in self._slots:
            triple = tuple(solution.get(a) if isinstance(a, Var) else a for a in slots)
            if None in triple:
                continue
            if graph is None:
                if triples(triple):
                    found[(TRIPLE, triple)] = None  # type: ignore[index]
                continue
            g = solution.get(graph) if isinstance(graph, Var) else graph
            if g is not None and quads((g, *triple)):  # type: ignore[misc]
                found[(QUAD, (g, *triple))] = None
        if self.extra is not None:
            found.update(dict.fromkeys(self.extra(solution)))
        return list(found)


def _patterns(node: A.Node, graph: object) -> Iterator[tuple[object, tuple]]:
    """The triple patterns under ``node``, each with the graph it is matched in (None: the
    default graph)."""
    if isinstance(node, A.BGP):
        for triple in node.triples:
            yield graph, triple
        return
    if isinstance(node, A.Graph):
        yield from _patterns(node.pattern, node.name)
        return
    for child in node.children():
        if isinstance(child, A.Pattern):
            yield from _patterns(child, graph)
