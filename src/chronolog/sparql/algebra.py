"""The SPARQL algebra of chronolog: one tree type for every operator and expression.

Every node declares its arguments (``fields``), keeps a parent pointer, supports
``walk``/``find``/``find_all``/``transform``/``replace``, prints itself as an indented tree
in ``repr`` and serializes with ``to_dict``. Leaves are RDF terms (pyoxigraph ``NamedNode``,
``BlankNode``, ``Literal``), variables (``terms.Var``), strings, ints and tuples of those.

>>> from pyoxigraph import NamedNode
>>> bgp = BGP(triples=((Var("s"), NamedNode("http://e/p"), Var("o")),))
>>> tree = Filter(expr=Call(name="BOUND", args=(VarRef(var=Var("o")),)), pattern=bgp)
>>> bgp.parent is tree
True
>>> sorted(tree.pattern_vars())
[?o, ?s]
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from chronolog.terms import Var



class Node:
    """A node of the algebra; subclasses list their arguments in ``fields``."""

    fields: tuple[str, ...] = ()
    __slots__ = ("_fields", "parent", "pos")

    def __init__(self, pos: int | None = None, **args: Any) -> None:
        unknown = set(args) - set(self.fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no argument(s) {sorted(unknown)}")
        self._fields = {f: args.get(f) for f in self.fields}
        self.parent: Node | None = None
        self.pos = pos
        for value in self._fields.values():
            for child in _nodes_in(value):
                child.parent = self

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "_fields")[name]
        except KeyError:
            raise AttributeError(name) from None

    def children(self) -> Iterator["Node"]:
        for value in self._fields.values():
            yield from _nodes_in(value)

    def walk(self) -> Iterator["Node"]:
        """This node and all its descendants, depth first, parents before children."""
        yield self
        for child in self.children():
            yield from child.walk()

    def find_all(self, *types: type) -> Iterator["Node"]:
        return (n for n in self.walk() if isinstance(n, types))

    def find(self, *types: type) -> "Node | None":
        return next(self.find_all(*types), None)

    def transform(self, fn: Callable[["Node"], "Node"]) -> "Node":
        """A copy rebuilt bottom-up, ``fn`` applied to every (rebuilt) node."""
        new_args = {k: _map(v, lambda n: n.transform(fn)) for k, v in self._fields.items()}
        return fn(type(self)(pos=self.pos, **new_args))

    def replace(self, new: "Node") -> "Node":
        """Put ``new`` in place of this node in its parent; returns ``new``."""
        parent = self.parent
        if parent is not None:
            for k, v in parent._fields.items():
                parent._fields[k] = _map(v, lambda n: new if n is self else n, deep=False)
            new.parent = parent
        return new

    def to_dict(self) -> dict:
        return {"type": type(self).__name__, **{k: _ser(v) for k, v in self._fields.items()}}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._fields == other._fields  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))

    def __repr__(self) -> str:
        return "\n".join(self._lines(0))

    def _lines(self, depth: int) -> list[str]:
        pad = "  " * depth
        head = [f"{pad}({type(self).__name__}"]
        for k, v in self._fields.items():
            if v is None or v == () or v == []:
                continue
            if isinstance(v, Node):
                head.append(f"{pad}  {k}:")
                head.extend(v._lines(depth + 2))
            elif isinstance(v, (tuple, list)) and any(isinstance(x, Node) for x in v):
                head.append(f"{pad}  {k}:")
                for x in v:
                    head.extend(x._lines(depth + 2) if isinstance(x, Node) else [f"{pad}    {_leaf(x)}"])
            else:
                head.append(f"{pad}  {k}: {_leaf(v)}")
        head[-1] += ")"
        return head

    # ---- analysis helpers --------------------------------------------------------------
    def pattern_vars(self) -> set[Var]:
        """Variables that may be bound by solutions of this pattern (in-scope variables)."""
        return _scope(self)


def _nodes_in(value: Any) -> Iterator[Node]:
    if isinstance(value, Node):
        yield value
    elif isinstance(value, (tuple, list)):
        for x in value:
            yield from _nodes_in(x)


def _map(value: Any, fn: Callable[[Node], Node], deep: bool = True) -> Any:
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_map(x, fn, deep) for x in value)
    if isinstance(value, list):
        return [_map(x, fn, deep) for x in value]
    return value


def _leaf(v: Any) -> str:
    if isinstance(v, Var):
        return "?" + v
    if isinstance(v, (tuple, list)):
        return "(" + " ".join(_leaf(x) for x in v) + ")"
    if hasattr(v, "value") and not isinstance(v, (str, int)):
        return str(v)
    return repr(v)


def _ser(v: Any) -> Any:
    if isinstance(v, Node):
        return v.to_dict()
    if isinstance(v, (tuple, list)):
        return [_ser(x) for x in v]
    if isinstance(v, Var):
        return {"var": str(v)}
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return {"term": str(v)}


# ---- graph patterns ------------------------------------------------------------------
class Pattern(Node):
    """Base of graph patterns."""


class BGP(Pattern):
    fields = ("triples",)  # tuple of (s, p, o): Var or term


class PathPattern(Pattern):
    fields = ("subject", "path", "object")


class Join(Pattern):
    fields = ("left", "right")


class LeftJoin(Pattern):
    fields = ("left", "right", "expr")


class Filter(Pattern):
    fields = ("expr", "pattern")


class Union(Pattern):
    fields = ("left", "right")


class Minus(Pattern):
    fields = ("left", "right")


class Graph(Pattern):
    fields = ("name", "pattern")


class Extend(Pattern):
    fields = ("pattern", "var", "expr")


class Values(Pattern):
    fields = ("vars", "rows")  # rows: tuple of tuples of term-or-None


class Group(Pattern):
    """GROUP BY ``keys`` (expressions; a Var key names itself) computing ``aggregates``.

    ``aggregates`` is a tuple of (result Var, Aggregate); ``key_vars`` names each key.
    """

    fields = ("pattern", "keys", "key_vars", "aggregates")


class Project(Pattern):
    fields = ("pattern", "vars")


class Distinct(Pattern):
    fields = ("pattern",)


class Reduced(Pattern):
    fields = ("pattern",)


class OrderBy(Pattern):
    fields = ("pattern", "conditions")  # tuple of (expr, descending: bool)


class Slice(Pattern):
    fields = ("pattern", "start", "length")


class Service(Pattern):
    fields = ("name", "pattern", "silent", "text")


# ---- property paths ------------------------------------------------------------------
class Path(Node):
    """Base of property path expressions."""


class PathLink(Path):
    fields = ("iri",)


class PathInv(Path):
    fields = ("path",)


class PathSeq(Path):
    fields = ("parts",)


class PathAlt(Path):
    fields = ("parts",)


class PathMod(Path):
    fields = ("path", "mod")  # mod: "*", "+", "?"


class PathNeg(Path):
    fields = ("iris", "inverse_iris")


# ---- expressions ---------------------------------------------------------------------
class Expr(Node):
    """Base of expressions."""


class Const(Expr):
    fields = ("term",)


class VarRef(Expr):
    fields = ("var",)


class Call(Expr):
    """A built-in operator or function by upper-case ``name`` (e.g. "=", "&&", "STRLEN")."""

    fields = ("name", "args")


class FunctionCall(Expr):
    """An IRI-named function (casts like xsd:integer, or extension functions)."""

    fields = ("iri", "args")


class Exists(Expr):
    fields = ("pattern", "negated")


class Aggregate(Expr):
    fields = ("name", "expr", "distinct", "separator")  # expr None means COUNT(*)


# ---- queries -------------------------------------------------------------------------
class Query(Node):
    """A query form over ``pattern``; ``dataset`` = (default graph IRIs, named graph IRIs) or None."""

    fields = ("form", "pattern", "vars", "template", "describe", "dataset", "base")


def _scope(node: Node) -> set[Var]:
    if isinstance(node, BGP):
        return {t for tr in node.triples for t in tr if isinstance(t, Var)}
    if isinstance(node, PathPattern):
        return {t for t in (node.subject, node.object) if isinstance(t, Var)}
    if isinstance(node, (Join, LeftJoin, Union)):
        return _scope(node.left) | _scope(node.right)
    if isinstance(node, Minus):
        return _scope(node.left)
    if isinstance(node, (Filter, Distinct, Reduced, OrderBy, Slice)):
        return _scope(node.pattern)
    if isinstance(node, Graph):
        return _scope(node.pattern) | ({node.name} if isinstance(node.name, Var) else set())
    if isinstance(node, Extend):
        return _scope(node.pattern) | {node.var}
    if isinstance(node, Values):
        return set(node.vars)
    if isinstance(node, Group):  # keys are re-bound from SAMPLE aggregates by the lowering
        return {v for v, _ in node.aggregates}
    if isinstance(node, Project):
        return set(node.vars)
    if isinstance(node, Service):
        return _scope(node.pattern)
    return set()


def certain_vars(node: Node) -> set[Var]:
    """Variables bound in every solution of ``node`` (a static under-approximation)."""
    if isinstance(node, BGP):
        return _scope(node)
    if isinstance(node, PathPattern):
        return _scope(node)
    if isinstance(node, Join):
        return certain_vars(node.left) | certain_vars(node.right)
    if isinstance(node, (LeftJoin, Minus)):
        return certain_vars(node.left)
    if isinstance(node, Union):
        return certain_vars(node.left) & certain_vars(node.right)
    if isinstance(node, (Filter, Distinct, Reduced, OrderBy, Slice, Extend)):
        return certain_vars(node.pattern)
    if isinstance(node, Graph):
        return certain_vars(node.pattern) | ({node.name} if isinstance(node.name, Var) else set())
    if isinstance(node, Values):
        return {v for i, v in enumerate(node.vars) if all(r[i] is not None for r in node.rows)}
    if isinstance(node, Project):
        return certain_vars(node.pattern) & set(node.vars)
    return set()
