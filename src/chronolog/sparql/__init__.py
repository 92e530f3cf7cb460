"""SPARQL 1.1 over chronolog's store: one entry point, :func:`prepare`.

``prepare(text, dictionary)`` parses and compiles a query once; ``execute(view)`` runs it
over a :class:`chronolog.store.Layers` view (background closure + a time point's overlay)
and returns a :class:`~chronolog.sparql.results.SelectResult`, ``BooleanResult`` or
``GraphResult``. chronolog's own evaluator runs every query: all of SPARQL 1.1 query
except SERVICE and functions outside the standard library, which ``prepare`` rejects at
their place in the text. :class:`~chronolog.sparql.incremental.StandingQueries` evaluates
registered queries per time point, delta-driven.

>>> from chronolog.terms import TermDictionary
>>> from chronolog.store import Database, Layers
>>> from pyoxigraph import NamedNode, Literal
>>> d = TermDictionary(); db = Database()
>>> db.triples.add((d.iri("http://e/a"), d.iri("http://e/p"), d.encode(Literal("7", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")))))
True
>>> q = prepare("PREFIX : <http://e/> SELECT ?s (?o * 2 AS ?d) WHERE { ?s :p ?o FILTER(?o > 5) }", d)
>>> [(s.value, o.value) for s, o in q.execute(Layers([db]))]
[('http://e/a', '14')]
"""
from __future__ import annotations

import weakref
from typing import Any, Iterator

from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog.sparql import algebra as A
from chronolog.errors import SourceMap
from chronolog.sparql.evaluate import Evaluator, dataset_view
from chronolog.sparql.expressions import Functions, supported
from chronolog.sparql.parse import BNODE_PREFIX, Unsupported, parse_query
from chronolog.sparql.results import BooleanResult, GraphResult, SelectResult, write_results
from chronolog.store import TRIPLE, Layers
from chronolog.terms import TermDictionary

__all__ = ["prepare", "PreparedQuery", "SelectResult", "BooleanResult", "GraphResult", "parse_query", "Unsupported",
           "write_results"]


def prepare(text: str, dictionary: TermDictionary, base: str | None = None,
            filename: str | None = None, functions: Functions | None = None) -> "PreparedQuery":
    """Parse and compile ``text`` for chronolog's evaluator.

    Syntax and static errors raise ``ChronologSyntaxError`` at FILE:LINE:COL; a valid
    query that uses what the evaluator does not run (SERVICE, a function outside the
    SPARQL 1.1 library nor in ``functions``) raises its subclass ``Unsupported``, at that
    construct. ``functions`` are extension functions by IRI (a query language's own, over
    terms: C-SPARQL's ``f:timestamp``).
    """
    query = parse_query(text, filename=filename, base=base)
    source = SourceMap(text, filename)
    for n in query.walk():
        if isinstance(n, A.Expr) and not supported(n, functions):
            name = n.iri.value if isinstance(n, A.FunctionCall) else n.name
            line, column, line_text = source.position(n.pos or 0)
            raise Unsupported(f"unknown function {name} (with {len(n.args)} argument(s))", filename, line, column, line_text)
    return PreparedQuery(dictionary, query, functions)


class PreparedQuery:
    """A compiled query; ``execute(view, time)`` runs it. Compiled state never changes per run."""

    def __init__(self, dictionary: TermDictionary, query: A.Query, functions: Functions | None = None) -> None:
        self.dictionary = dictionary
        self.query = query
        self.form = query.form
        self.functions = functions
        self._evaluator = Evaluator(dictionary, query.base, functions)
        self._live: "weakref.ref | None" = None

    @property
    def variables(self) -> list[str]:
        return [str(v) for v in self.query.vars]

    def execute(self, view: Layers, time: int = 0) -> Any:
        """Run over ``view`` as evaluated at ``time`` (milliseconds since the epoch, what
        NOW() returns for the whole execution: a stream's time point, or the moment a
        one-off query started)."""
        q = self.query
        if q.dataset is not None:
            view = dataset_view(view, self.dictionary, q.dataset)
        # one evaluator runs one execution at a time (it holds the view): while an earlier
        # result is still alive, this execution gets a fresh evaluator
        live = self._live() if self._live is not None else None
        evaluator = self._evaluator if live is None else Evaluator(self.dictionary, q.base, self.functions)
        solutions = _keep_going(evaluator.run(q.pattern, view, time))
        if evaluator is self._evaluator:
            self._live = weakref.ref(solutions)
        decode = self.dictionary.decode
        if q.form == "SELECT":
            vars_ = q.vars

            def rows() -> Iterator[tuple]:
                for m in solutions:
                    yield tuple(None if (i := m.get(v)) is None else decode(i) for v in vars_)
            return SelectResult([str(v) for v in vars_], rows())
        if q.form == "ASK":
            return BooleanResult(next(solutions, None) is not None)
        if q.form == "CONSTRUCT":
            return GraphResult(_construct(q.template, solutions, decode))
        return GraphResult(_describe(q, solutions, view, self.dictionary))


def _keep_going(solutions: Iterator[dict]) -> Iterator[dict]:
    yield from solutions


def _construct(template: tuple, solutions: Iterator[dict], decode: Any) -> Iterator[tuple]:
    seen = set()
    for m in solutions:
        fresh: dict = {}
        for tr in template:
            out = []
            for x in tr:
                if isinstance(x, A.Var):
                    i = m.get(x)
                    if i is None:
                        if x.startswith(BNODE_PREFIX):
                            x = fresh.setdefault(x, BlankNode())
                            out.append(x)
                            continue
                        break
                    out.append(decode(i))
                elif isinstance(x, BlankNode):
                    out.append(fresh.setdefault(x.value, BlankNode()))
                else:
                    out.append(x)
            else:
                s, p, o = out
                if isinstance(s, Literal) or not isinstance(p, NamedNode):
                    continue
                t = (s, p, o)
                if t not in seen:
                    seen.add(t)
                    yield t


def _describe(q: A.Query, solutions: Iterator[dict], view: Layers, d: TermDictionary) -> Iterator[tuple]:
    resources = []
    consts = [t for t in q.describe if not isinstance(t, A.Var)]
    vars_ = [t for t in q.describe if isinstance(t, A.Var)]
    resources.extend(d.encode(t) for t in consts)
    for m in solutions:
        resources.extend(m[v] for v in vars_ if v in m)
    seen, done = set(), set()
    todo = list(dict.fromkeys(resources))
    while todo:
        r = todo.pop()
        if r in done:
            continue
        done.add(r)
        for t in view.match(TRIPLE, (r, None, None)):
            if t not in seen:
                seen.add(t)
                yield tuple(d.decode(i) for i in t)
                if d.is_blank(t[2]):
                    todo.append(t[2])
