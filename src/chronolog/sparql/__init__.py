"""SPARQL 1.1 over chronolog's store: one entry point, :func:`prepare`.

``prepare(text, dictionary)`` parses and compiles a query once; ``execute(view)`` runs it
over a :class:`chronolog.store.Layers` view (background closure + a time point's overlay)
and returns a :class:`~chronolog.sparql.results.SelectResult`, ``BooleanResult`` or
``GraphResult``. chronolog's own evaluator runs every query it can (all of SPARQL 1.1
query except SERVICE and functions outside the standard library); for the rest the query
text goes unchanged to pyoxigraph's evaluator over the decoded view (``engine`` says
which). :class:`~chronolog.sparql.incremental.StandingQueries`, built on ``prepare``,
evaluates registered queries per time point, delta-driven; this module never imports it.

>>> from chronolog.terms import TermDictionary
>>> from chronolog.store import Database, Layers
>>> from pyoxigraph import NamedNode, Literal
>>> d = TermDictionary(); db = Database()
>>> db.triples.add((d.iri("http://e/a"), d.iri("http://e/p"), d.encode(Literal("7", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")))))
True
>>> q = prepare("PREFIX : <http://e/> SELECT ?s (?o * 2 AS ?d) WHERE { ?s :p ?o FILTER(?o > 5) }", d)
>>> q.engine
'chronolog'
>>> [(s.value, o.value) for s, o in q.execute(Layers([db]))]
[('http://e/a', '14')]
"""
from __future__ import annotations

import weakref
from typing import Any, Iterator

import pyoxigraph as ox
from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import QUAD, Evaluator, dataset_view
from chronolog.sparql.expressions import Functions, supported
from chronolog.sparql.parse import BNODE_PREFIX, Unsupported, parse_query
from chronolog.sparql.results import BooleanResult, GraphResult, SelectResult, write_results
from chronolog.store import TRIPLE, Database, Layers
from chronolog.terms import TermDictionary

__all__ = ["prepare", "PreparedQuery", "SelectResult", "BooleanResult", "GraphResult", "parse_query",
           "write_results"]


def prepare(text: str, dictionary: TermDictionary, base: str | None = None,
            filename: str | None = None, engine: str = "auto", functions: Functions | None = None) -> "PreparedQuery":
    """Parse and compile ``text``; syntax errors raise ``ChronologSyntaxError`` (FILE:LINE:COL).

    ``engine`` is "auto" (chronolog's evaluator when it covers the query), "chronolog"
    (fail with ``NotImplementedError`` if it does not) or "pyoxigraph". ``functions`` are
    extension functions by IRI (a query language's own, over terms; chronolog's evaluator
    only).
    """
    query: A.Query | None = None
    reason = None
    try:
        query = parse_query(text, filename=filename, base=base)
    except Unsupported as e:
        reason = str(e)
    if query is not None and engine != "pyoxigraph":
        reason = _unsupported_reason(query, functions)
    if engine == "chronolog" and reason:
        raise NotImplementedError(f"chronolog's evaluator does not cover this query: {reason}")
    if engine == "pyoxigraph" or reason:
        _check_with_pyoxigraph(text, base, filename)
        return PreparedQuery(text, dictionary, base, query, "pyoxigraph", reason or "requested")
    return PreparedQuery(text, dictionary, base, query, "chronolog", None, functions)


def _unsupported_reason(query: A.Query, functions: Functions | None) -> str | None:
    for n in query.walk():
        if isinstance(n, A.Service):
            return "SERVICE"
        if isinstance(n, A.Expr) and not isinstance(n, (A.Exists, A.Aggregate)) and not supported(n, functions):
            return "a function outside the SPARQL 1.1 library"
    return None


def _check_with_pyoxigraph(text: str, base: str | None, filename: str | None) -> None:
    from chronolog.errors import ChronologSyntaxError
    import re

    try:
        ox.Store().query(text, base_iri=base) if "SERVICE" not in text.upper() else None
    except SyntaxError as e:
        m = re.match(r"error at (\d+):(\d+)", str(e))
        line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        lines = text.splitlines() or [""]
        message = re.sub(r"^error at \d+:\d+: ", "syntax error: ", str(e))
        raise ChronologSyntaxError(message, filename, line, col, lines[min(line, len(lines)) - 1]) from None
    except Exception:
        pass


class PreparedQuery:
    """A compiled query; ``execute(view)`` runs it. Compiled state never changes per run."""

    def __init__(self, text: str, dictionary: TermDictionary, base: str | None,
                 query: A.Query | None, engine: str, reason: str | None, functions: Functions | None = None) -> None:
        self.text = text
        self.dictionary = dictionary
        self.base = base
        self.query = query
        self.engine = engine
        self.fallback_reason = reason
        self.form = query.form if query is not None else _form_of(text)
        self.functions = functions
        self._evaluator = (Evaluator(dictionary, query.base if query is not None else base, functions)
                           if engine == "chronolog" else None)
        self._live: "weakref.ref | None" = None

    @property
    def variables(self) -> list[str]:
        return [str(v) for v in self.query.vars] if self.query is not None else []

    def execute(self, view: Layers) -> Any:
        if self.engine == "pyoxigraph":
            return _pyoxigraph_execute(self, view)
        q = self.query
        assert q is not None and self._evaluator is not None
        if q.dataset is not None:
            view = dataset_view(view, self.dictionary, q.dataset)
        # one evaluator runs one execution at a time (it holds the view): while an earlier
        # result is still alive, this execution gets a fresh evaluator
        live = self._live() if self._live is not None else None
        evaluator = self._evaluator if live is None else Evaluator(self.dictionary, q.base, self.functions)
        solutions = _keep_going(evaluator.run(q.pattern, view))
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


def _form_of(text: str) -> str:
    import re

    m = re.search(r"\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.sub(r"#[^\n]*|<[^>]*>|\"[^\"]*\"", " ", text), re.I)
    return m.group(1).upper() if m else "SELECT"


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


# ---- the general path: pyoxigraph over the decoded view ---------------------------------------
_STORES: dict[int, tuple[Database, int, ox.Store]] = {}  # a few recent background stores


def _load(store: ox.Store, db: Database, d: TermDictionary) -> list[ox.Quad]:
    dec = d.decode
    quads = [ox.Quad(dec(s), dec(p), dec(o)) for s, p, o in db.triples]
    if QUAD in db.relations:
        quads += [ox.Quad(dec(s), dec(p), dec(o), dec(g)) for g, s, p, o in db.relations[QUAD]]
    store.extend(quads)
    return quads


def store_for(db: Database, d: TermDictionary) -> ox.Store:
    """A pyoxigraph store holding ``db`` (cached while ``db`` lives and keeps its size)."""
    hit = _STORES.get(id(db))
    if hit is not None and hit[0] is db and hit[1] == len(db):
        return hit[2]
    store = ox.Store()
    _load(store, db, d)
    if len(_STORES) >= 4:
        _STORES.pop(next(iter(_STORES)))
    _STORES[id(db)] = (db, len(db), store)
    return store


def _pyoxigraph_execute(pq: PreparedQuery, view: Layers) -> Any:
    layers = view.layers
    d = pq.dictionary
    if not layers:
        store, extra = ox.Store(), []
    else:
        store = store_for(layers[0], d)
        extra = []
        for db in layers[1:]:
            extra += _load(store, db, d)
    try:
        r = store.query(pq.text, base_iri=pq.base)
        if isinstance(r, ox.QueryBoolean):
            return BooleanResult(bool(r))
        if isinstance(r, ox.QuerySolutions):
            names = [v.value for v in r.variables]
            rows = [tuple(sol[i] for i in range(len(names))) for sol in r]
            return SelectResult(names, rows)
        return GraphResult([(t.subject, t.predicate, t.object) for t in r])
    finally:
        for q in extra:
            store.remove(q)
