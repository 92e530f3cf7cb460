"""Which triples a query solution matched: the solution's pattern evaluated again with the
solution's values bound, and the triple patterns of the first full match instantiated.

For a query that groups (aggregates), the triples of every row of the solution's group
(at most ``GROUP_ROWS``). Paths and named graphs contribute no triples. A basic graph
pattern whose every variable the solution binds (with FILTERs: the solution passed them)
needs no evaluation: its triples are the patterns instantiated.
"""
from __future__ import annotations

from typing import Mapping

from chronolog.sparql import PreparedQuery
from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import Evaluator, dataset_view
from chronolog.store import TRIPLE, Fact, Layers
from chronolog.terms import Var

GROUP_ROWS = 100
_MODIFIERS = (A.Project, A.Distinct, A.Reduced, A.OrderBy, A.Slice)


class SolutionSupport:
    """The triples behind the solutions of one prepared query."""

    def __init__(self, query: PreparedQuery) -> None:
        self.query = query
        node = query.query.pattern
        while isinstance(node, _MODIFIERS):
            node = node.pattern
        group = node.find(A.Group)
        self._grouped = group is not None
        self._pattern = group.pattern if group is not None else node
        self._keys = set(group.key_vars) if group is not None else None
        self._triples = [t for bgp in self._pattern.find_all(A.BGP) for t in bgp.triples]
        self._vars = {a for t in self._triples for a in t if isinstance(a, Var)}
        self._evaluator = Evaluator(query.dictionary, query.query.base, query.functions)
        encode = query.dictionary.encode
        self._slots = [tuple(a if isinstance(a, Var) else encode(a) for a in t) for t in self._triples]
        node = self._pattern
        while isinstance(node, A.Filter):
            node = node.pattern
        self._plain = isinstance(node, A.BGP) and not self._grouped  # a BGP under FILTERs only

    def triples(self, view: Layers, time: int, bindings: Mapping[str, int | None]) -> list[Fact]:
        """The triples of ``view`` that the solution ``bindings`` (variable name -> term
        id) matched, in the query's order of triple patterns."""
        q = self.query.query
        if q.dataset is not None:
            view = dataset_view(view, self.query.dictionary, q.dataset)
        start = {Var(name): tid for name, tid in bindings.items()
                 if tid is not None and Var(name) in self._vars and (self._keys is None or Var(name) in self._keys)}
        held = view.contains(TRIPLE)
        if self._plain and len(start) == len(self._vars):
            return list(dict.fromkeys(t for t in (tuple(start[a] if isinstance(a, Var) else a for a in slots)
                                                  for slots in self._slots) if held(t)))
        found: dict[Fact, None] = {}
        for n, solution in enumerate(self._evaluator.run(self._pattern, view, time, start)):
            if not self._grouped and any(solution.get(Var(k), tid) != tid for k, tid in bindings.items()
                                         if tid is not None and Var(k) in self._vars):
                continue
            for slots in self._slots:
                triple = tuple(solution.get(a) if isinstance(a, Var) else a for a in slots)
                if None not in triple and held(triple):
                    found[triple] = None  # type: ignore[index]
            if not self._grouped or n + 1 >= GROUP_ROWS:
                break
        return list(found)
