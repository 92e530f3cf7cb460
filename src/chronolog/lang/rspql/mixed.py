"""``MATCH ( E )`` beside other patterns of its WHERE (``WINDOW`` and static graph patterns,
FILTER, OPTIONAL, aggregates): a graph pattern whose solutions are the event mappings
(section 4.2's MATCH drops the time annotations; chronolog keeps the interval as ``?@start``
and ``?@end``), joined with the rest by the SPARQL evaluator.

The parser put ``VALUES (?v ...) {( UNDEF ...)}`` over the MATCH's variables in its place;
:meth:`MatchJoin.lower` swaps it for a VALUES whose rows are a list this object refills at
every instant (:meth:`MatchJoin.fill`) from :class:`~chronolog.lang.rspql.matching.EventMatching`,
and adds the interval to the projection of a SELECT when the MATCH's solutions reach it
ungrouped, so that each solution carries the interval of the event it came from. Consumption counts the triples
every event of E used, joined or not (section 4.4: those "used to match E").
"""
from __future__ import annotations

from typing import Mapping

from pyoxigraph import Literal

from chronolog.lang.rspql.events import Consumption, Pattern, variables_of
from chronolog.lang.rspql.matching import EventMatching
from chronolog.program.windowed import END, START, XSD_INTEGER
from chronolog.sparql import PreparedQuery
from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import QUAD
from chronolog.terms import TermDictionary, Var
from chronolog.window.buffer import WindowBuffer

INTERVAL = (Var(START), Var(END))


class MatchJoin:
    """The MATCH of one query, as the rows of a VALUES (the module docstring says how)."""

    def __init__(self, pattern: Pattern, consumption: Consumption, dictionary: TermDictionary,
                 explain: bool = False) -> None:
        self.matching = EventMatching(pattern, consumption, dictionary, explain)
        self.dictionary = dictionary
        self.variables = tuple(Var(v) for v in variables_of(pattern))
        self.rows: list[tuple] = []
        self.used: dict[tuple, frozenset] = {}  # explaining: a row's ids -> the (window, triple) pairs it used

    def lower(self, prepared: PreparedQuery) -> PreparedQuery:
        """``prepared`` with the parser's VALUES read from :attr:`rows`."""
        query = prepared.query
        pattern = query.pattern
        holder = next(n for n in pattern.walk()
                      if isinstance(n, A.Values) and n.vars == self.variables and len(n.rows) <= 1
                      and not any(v is not None for row in n.rows for v in row))  # no variable: no row
        values = A.Values(vars=self.variables + INTERVAL, rows=self.rows)
        pattern = _swap(pattern, holder, values)
        names = query.vars
        if query.form == "SELECT" and not _grouped(values):
            top = pattern
            while not isinstance(top, A.Project):
                top = top.pattern
            pattern = _swap(pattern, top, A.Project(pattern=top.pattern, vars=top.vars + INTERVAL))
            names = names + INTERVAL
        lowered = A.Query(form=query.form, pattern=pattern, vars=names, template=query.template,
                          describe=query.describe, dataset=query.dataset, base=query.base)
        return PreparedQuery(self.dictionary, lowered, prepared.functions)

    def fill(self, time: int, buffers: Mapping[str, WindowBuffer]) -> None:
        decode, encode = self.dictionary.decode, self.dictionary.encode
        rows = []
        self.used = {}
        for (mapping, start, end), used in self.matching.events(time, buffers).items():
            terms = dict(mapping)
            rows.append(tuple(decode(terms[v]) for v in self.variables) + (_integer(start), _integer(end)))
            if self.matching.explain:
                key = tuple(terms[v] for v in self.variables) + (encode(_integer(start)), encode(_integer(end)))
                self.used[key] = self.used.get(key, frozenset()) | used
        self.rows[:] = rows

    def facts(self, solution: Mapping[Var, int]) -> list[tuple[str, tuple]]:
        """The window items the MATCH row of ``solution`` used, as quads of their window."""
        key = tuple(solution.get(v) for v in self.variables + INTERVAL)
        iri = self.dictionary.iri
        return [(QUAD, (iri(window), *triple)) for window, triple in sorted(self.used.get(key, ()))]

    def state(self) -> object:
        return self.matching.state(self.dictionary)

    def set_state(self, state: object) -> None:
        self.matching.set_state(state, self.dictionary)  # type: ignore[arg-type]


def _integer(n: int) -> Literal:
    return Literal(str(n), datatype=XSD_INTEGER)


def _grouped(node: A.Node) -> bool:
    """Whether ``node``'s solutions reach the query's projection through a GROUP BY."""
    while node.parent is not None:
        node = node.parent
        if isinstance(node, A.Group):
            return True
    return False


def _swap(root: A.Pattern, old: A.Pattern, new: A.Pattern) -> A.Pattern:
    """``new`` in place of ``old`` in the tree of ``root``; the root."""
    if old is root:
        return new
    old.replace(new)
    return root
