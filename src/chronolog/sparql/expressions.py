"""SPARQL 1.1 expressions: operators, the function library, casts, EBV, ordering.

Expressions compile once to closures ``f(solution) -> term | None``. ``None`` is SPARQL's
error value (an unbound variable, a type error, a bad argument): errors are values that
flow through the operators, ``||`` and ``&&`` recover from them as the spec says, and
FILTER drops a solution whose condition is an error. No error escapes as an exception.

A solution is a ``dict`` from variable to term id (see :mod:`chronolog.terms`); terms are
decoded when an expression reads them and encoded when BIND stores them.

>>> from chronolog.terms import TermDictionary
>>> from chronolog.sparql.parse import parse_query
>>> d = TermDictionary()
>>> q = parse_query('SELECT * { FILTER(?x + 1 > "a") }')
>>> f = compile_expr(q.pattern.find(A.Filter).expr, Context(d))
>>> f({"x": d.encode_value(1)}) is None   # comparing a number with a string: an error
True
>>> ebv(None) is None
True
"""
from __future__ import annotations

import hashlib
import math
import random
import re
import uuid
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any, Callable, Mapping
from urllib.parse import quote, urljoin

from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog.sparql import algebra as A
from chronolog.timeunits import time_to_datetime
from chronolog.terms import (
    RDF_LANGSTRING, V_BOOLEAN, V_DATETIME, V_LANGSTRING, V_NUMERIC, V_STRING, XSD, XSD_DATETIME, XSD_DECIMAL,
    XSD_DOUBLE, XSD_INTEGER, XSD_STRING, TermDictionary, literal_value,
)
from chronolog.values import (
    CAST_IRIS, DATETIME_RE, FALSE, TRUE, arith, cast, compare, decimal_lexical, ebv,
    equals, float_lexical, make_numeric, negate, numeric, numeric_literal,
)

Term = Any
Fn = Callable[[dict], Term]

XSD_DAYTIMEDURATION = NamedNode(XSD + "dayTimeDuration")


Functions = Mapping[str, Callable[..., Term]]  # extension functions: IRI -> terms -> term (None: error)


class Context:
    """What compiled expressions need at run time: the dictionary, EXISTS, now, base IRI,
    and the extension functions a query language adds (C-SPARQL's ``f:timestamp``)."""

    def __init__(self, dictionary: TermDictionary, base: str | None = None, functions: Functions | None = None) -> None:
        self.dictionary = dictionary
        self.base = base
        self.functions: Functions = functions or {}
        self.exists: Callable[[A.Pattern, dict], bool] | None = None
        self.now = Literal(time_to_datetime(0), datatype=XSD_DATETIME)
        self.bnodes: dict = {}
        self.row: object | None = None  # identifies the solution being extended (BNODE scope)

    def reset(self, time: int) -> None:
        """Per-execution state: NOW() is the evaluation time ``time`` (ms since the epoch)."""
        self.now = Literal(time_to_datetime(time), datatype=XSD_DATETIME)
        self.bnodes = {}


def string_parts(t: Term) -> tuple[str, str | None] | None:
    """(lexical, language) of a string literal (simple, xsd:string or language-tagged)."""
    if not isinstance(t, Literal):
        return None
    if t.language:
        return t.value, t.language
    if t.datatype == XSD_STRING:
        return t.value, None
    return None


def _same_kind(lex: str, like: Term) -> Literal:
    """A string literal with the language (or xsd:string type) of ``like``."""
    if isinstance(like, Literal) and like.language:
        return Literal(lex, language=like.language)
    return Literal(lex)


def _bool(b: bool | None) -> Term:
    return None if b is None else (TRUE if b else FALSE)


# ---- ordering ----------------------------------------------------------------------------
def order_key(t: Term) -> tuple:
    """Total order of ORDER BY: unbound < blank nodes < IRIs < literals (by value where possible)."""
    if t is None:
        return (0,)
    if isinstance(t, BlankNode):
        return (1, t.value)
    if isinstance(t, NamedNode):
        return (2, t.value)
    cls, v = literal_value(t)
    if cls == V_NUMERIC:
        if isinstance(v, float) and math.isnan(v):
            return (3, 0, -math.inf, t.value)
        return (3, 1, float(v) if isinstance(v, Decimal) else v, t.value)
    if cls == V_STRING:
        return (3, 2, v, "")
    if cls == V_BOOLEAN:
        return (3, 3, v, "")
    if cls == V_DATETIME:
        return (3, 4, v, "")
    if cls == V_LANGSTRING:
        return (3, 5, t.value, t.language or "")
    return (3, 6, t.datatype.value, t.value)


class OrderKey:
    """Sort key wrapper robust to mixed Python types."""

    __slots__ = ("key",)

    def __init__(self, t: Term) -> None:
        self.key = order_key(t)

    def __lt__(self, other: "OrderKey") -> bool:
        try:
            return self.key < other.key
        except TypeError:
            return repr(self.key) < repr(other.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OrderKey) and self.key == other.key


# ---- strings -----------------------------------------------------------------------------
def _compatible(a: Term, b: Term) -> tuple[str, str] | None:
    """Argument compatibility of two-string functions (CONTAINS, STRSTARTS, ...)."""
    pa, pb = string_parts(a), string_parts(b)
    if pa is None or pb is None:
        return None
    if pb[1] is not None and pa[1] != pb[1]:
        return None
    return pa[0], pb[0]


def _dt_parts(t: Term) -> re.Match | None:
    if not isinstance(t, Literal) or t.datatype != XSD_DATETIME:
        return None
    return DATETIME_RE.match(t.value.strip())


def _xpath_regex(pattern: str, flags: str) -> re.Pattern | None:
    """An XPath regex as Python's (None if invalid); ``re`` caches compiled patterns itself."""
    pyflags = 0
    for f in flags:
        if f == "i":
            pyflags |= re.IGNORECASE
        elif f == "s":
            pyflags |= re.DOTALL
        elif f == "m":
            pyflags |= re.MULTILINE
        elif f == "x":
            pyflags |= re.VERBOSE
        elif f == "q":
            pattern = re.escape(pattern)
        else:
            return None
    try:
        return re.compile(pattern, pyflags)
    except re.error:
        return None


def _substr(s: str, start: Term, length: Term | None) -> str | None:
    ns = numeric(start)
    if ns is None:
        return None
    st = float(ns[1])
    if math.isnan(st):
        return ""
    if length is None:
        ln = math.inf
    else:
        nl = numeric(length)
        if nl is None:
            return None
        ln = float(nl[1])
        if math.isnan(ln):
            return ""

    def rnd(x: float) -> float:
        return math.floor(x + 0.5) if not math.isinf(x) else x

    first = rnd(st)
    last = first + rnd(ln) if not math.isinf(ln) else math.inf
    chars = list(s)
    return "".join(c for i, c in enumerate(chars, 1) if first <= i < last)


# ---- the function library ----------------------------------------------------------------
def _hash(name: str) -> Callable[[Term], Term]:
    def h(a: Term) -> Term:
        if not isinstance(a, Literal) or a.datatype != XSD_STRING:
            return None
        return Literal(hashlib.new(name, a.value.encode("utf-8")).hexdigest())
    return h


def _strlen(a: Term) -> Term:
    p = string_parts(a)
    return None if p is None else Literal(str(len(p[0])), datatype=XSD_INTEGER)


def _case(fn: Callable[[str], str]) -> Callable[[Term], Term]:
    def f(a: Term) -> Term:
        p = string_parts(a)
        return None if p is None else _same_kind(fn(p[0]), a)
    return f


def _str(a: Term) -> Term:
    if isinstance(a, NamedNode):
        return Literal(a.value)
    if isinstance(a, Literal):
        return Literal(a.value)
    return None


def _lang(a: Term) -> Term:
    return Literal(a.language or "") if isinstance(a, Literal) else None


def _datatype(a: Term) -> Term:
    if not isinstance(a, Literal):
        return None
    return NamedNode(RDF_LANGSTRING) if a.language else a.datatype


def _langmatches(a: Term, b: Term) -> Term:
    pa, pb = string_parts(a), string_parts(b)
    if pa is None or pb is None or pa[1] is not None or pb[1] is not None:
        return None
    tag, rng = pa[0].lower(), pb[0].lower()
    if rng == "*":
        return _bool(tag != "")
    return _bool(tag == rng or tag.startswith(rng + "-"))


def _num1(fn: Callable[[int, Any], tuple[int, Any]]) -> Callable[[Term], Term]:
    def f(a: Term) -> Term:
        n = numeric(a)
        if n is None:
            return None
        rank, v = fn(*n)
        return make_numeric(rank, v)
    return f


def _ceil(rank: int, v: Any) -> tuple[int, Any]:
    if rank >= 2 and (math.isnan(v) or math.isinf(v)):
        return rank, v
    return rank, (math.ceil(v) if rank != 1 else Decimal(math.ceil(v)))


def _floor(rank: int, v: Any) -> tuple[int, Any]:
    if rank >= 2 and (math.isnan(v) or math.isinf(v)):
        return rank, v
    return rank, (math.floor(v) if rank != 1 else Decimal(math.floor(v)))


def _round(rank: int, v: Any) -> tuple[int, Any]:
    if rank == 0:
        return rank, v
    if rank == 1:
        return rank, (v + Decimal("0.5")).quantize(Decimal(1), rounding=ROUND_FLOOR)
    if math.isnan(v) or math.isinf(v):
        return rank, v
    return rank, float(math.floor(v + 0.5))


def _concat(*args: Term) -> Term:
    parts = [string_parts(a) for a in args]
    if any(p is None for p in parts):
        return None
    text = "".join(p[0] for p in parts)
    langs = {p[1] for p in parts}
    if len(langs) == 1 and None not in langs and parts:
        return Literal(text, language=parts[0][1])
    return Literal(text)


def _two(fn: Callable[[str, str], Any]) -> Callable[[Term, Term], Term]:
    def f(a: Term, b: Term) -> Term:
        c = _compatible(a, b)
        return None if c is None else _bool(fn(*c))
    return f


def _strbefore(a: Term, b: Term) -> Term:
    c = _compatible(a, b)
    if c is None:
        return None
    i = c[0].find(c[1])
    if i < 0:
        return Literal("")
    return _same_kind(c[0][:i], a)


def _strafter(a: Term, b: Term) -> Term:
    c = _compatible(a, b)
    if c is None:
        return None
    i = c[0].find(c[1])
    if i < 0:
        return Literal("")
    return _same_kind(c[0][i + len(c[1]):], a)


def _substr_fn(a: Term, start: Term, length: Term | None = None) -> Term:
    p = string_parts(a)
    if p is None:
        return None
    s = _substr(p[0], start, length)
    return None if s is None else _same_kind(s, a)


def _encode_for_uri(a: Term) -> Term:
    p = string_parts(a)
    return None if p is None else Literal(quote(p[0], safe="-_.~"))


def _regex_fn(text: Term, pattern: Term, flags: Term | None = None) -> Term:
    p = string_parts(text)
    pat = string_parts(pattern)
    if p is None or pat is None or pat[1] is not None:
        return None
    fl = ""
    if flags is not None:
        f = string_parts(flags)
        if f is None or f[1] is not None:
            return None
        fl = f[0]
    r = _xpath_regex(pat[0], fl)
    return None if r is None else _bool(r.search(p[0]) is not None)


def _replace(text: Term, pattern: Term, repl: Term, flags: Term | None = None) -> Term:
    p, pat, rp = string_parts(text), string_parts(pattern), string_parts(repl)
    if p is None or pat is None or rp is None or pat[1] is not None or rp[1] is not None:
        return None
    fl = ""
    if flags is not None:
        f = string_parts(flags)
        if f is None:
            return None
        fl = f[0]
    r = _xpath_regex(pat[0], fl)
    if r is None:
        return None
    py_repl = re.sub(r"\\(.)|\$(\d+)", lambda m: m.group(1).replace("\\", "\\\\") if m.group(1) else f"\\g<{m.group(2)}>", rp[0])
    try:
        return _same_kind(r.sub(py_repl, p[0]), text)
    except (re.error, IndexError):
        return None


def _dt_field(idx: int, kind: str) -> Callable[[Term], Term]:
    def f(a: Term) -> Term:
        m = _dt_parts(a)
        if m is None:
            return None
        v = m.group(idx)
        if kind == "int":
            return Literal(str(int(v)), datatype=XSD_INTEGER)
        return Literal(decimal_lexical(Decimal(v)), datatype=XSD_DECIMAL)
    return f


def _timezone(a: Term) -> Term:
    m = _dt_parts(a)
    if m is None or not m.group(7):
        return None
    tz = m.group(7)
    if tz == "Z":
        return Literal("PT0S", datatype=XSD_DAYTIMEDURATION)
    sign = "-" if tz[0] == "-" else ""
    h, mi = int(tz[1:3]), int(tz[4:6])
    out = f"{sign}PT" + (f"{h}H" if h else "") + (f"{mi}M" if mi else "")
    if not h and not mi:
        out = "PT0S"
    return Literal(out, datatype=XSD_DAYTIMEDURATION)


def _tz(a: Term) -> Term:
    m = _dt_parts(a)
    if m is None:
        return None
    return Literal(m.group(7) or "")


def _strlang(a: Term, b: Term) -> Term:
    if not isinstance(a, Literal) or a.datatype != XSD_STRING:
        return None
    pb = string_parts(b)
    if pb is None or pb[1] is not None or not re.match(r"^[a-zA-Z]+(-[a-zA-Z0-9]+)*$", pb[0]):
        return None
    return Literal(a.value, language=pb[0])


def _strdt(a: Term, b: Term) -> Term:
    if not isinstance(a, Literal) or a.datatype != XSD_STRING or not isinstance(b, NamedNode):
        return None
    return Literal(a.value, datatype=b)


def _abs(rank: int, v: Any) -> tuple[int, Any]:
    return rank, abs(v)


# name -> (function, min args, max args); these are strict: an error argument is an error
STRICT: dict[str, tuple[Callable[..., Term], int, int]] = {
    "STR": (_str, 1, 1),
    "LANG": (_lang, 1, 1),
    "LANGMATCHES": (_langmatches, 2, 2),
    "DATATYPE": (_datatype, 1, 1),
    "ABS": (_num1(_abs), 1, 1),
    "CEIL": (_num1(_ceil), 1, 1),
    "FLOOR": (_num1(_floor), 1, 1),
    "ROUND": (_num1(_round), 1, 1),
    "CONCAT": (_concat, 0, 1 << 30),
    "STRLEN": (_strlen, 1, 1),
    "UCASE": (_case(str.upper), 1, 1),
    "LCASE": (_case(str.lower), 1, 1),
    "ENCODE_FOR_URI": (_encode_for_uri, 1, 1),
    "CONTAINS": (_two(lambda a, b: b in a), 2, 2),
    "STRSTARTS": (_two(lambda a, b: a.startswith(b)), 2, 2),
    "STRENDS": (_two(lambda a, b: a.endswith(b)), 2, 2),
    "STRBEFORE": (_strbefore, 2, 2),
    "STRAFTER": (_strafter, 2, 2),
    "YEAR": (_dt_field(1, "int"), 1, 1),
    "MONTH": (_dt_field(2, "int"), 1, 1),
    "DAY": (_dt_field(3, "int"), 1, 1),
    "HOURS": (_dt_field(4, "int"), 1, 1),
    "MINUTES": (_dt_field(5, "int"), 1, 1),
    "SECONDS": (_dt_field(6, "dec"), 1, 1),
    "TIMEZONE": (_timezone, 1, 1),
    "TZ": (_tz, 1, 1),
    "MD5": (_hash("md5"), 1, 1),
    "SHA1": (_hash("sha1"), 1, 1),
    "SHA256": (_hash("sha256"), 1, 1),
    "SHA384": (_hash("sha384"), 1, 1),
    "SHA512": (_hash("sha512"), 1, 1),
    "STRLANG": (_strlang, 2, 2),
    "STRDT": (_strdt, 2, 2),
    "SAMETERM": (lambda a, b: _bool(a == b), 2, 2),
    "ISIRI": (lambda a: _bool(isinstance(a, NamedNode)), 1, 1),
    "ISURI": (lambda a: _bool(isinstance(a, NamedNode)), 1, 1),
    "ISBLANK": (lambda a: _bool(isinstance(a, BlankNode)), 1, 1),
    "ISLITERAL": (lambda a: _bool(isinstance(a, Literal)), 1, 1),
    "ISNUMERIC": (lambda a: _bool(numeric(a) is not None), 1, 1),
    "REGEX": (_regex_fn, 2, 3),
    "SUBSTR": (_substr_fn, 2, 3),
    "REPLACE": (_replace, 3, 4),
    "UMINUS": (lambda a: None if (n := numeric(a)) is None else numeric_literal(negate(n[1])), 1, 1),
    "UPLUS": (lambda a: a if numeric(a) else None, 1, 1),
    "+": (lambda a, b: arith("+", a, b), 2, 2),
    "-": (lambda a, b: arith("-", a, b), 2, 2),
    "*": (lambda a, b: arith("*", a, b), 2, 2),
    "/": (lambda a, b: arith("/", a, b), 2, 2),
    "=": (lambda a, b: _bool(equals(a, b)), 2, 2),
    "!=": (lambda a, b: _bool(None if (e := equals(a, b)) is None else not e), 2, 2),
    "<": (lambda a, b: _bool(None if (c := compare(a, b)) is None else c < 0), 2, 2),
    ">": (lambda a, b: _bool(None if (c := compare(a, b)) is None else c > 0), 2, 2),
    "<=": (lambda a, b: _bool(None if (c := compare(a, b)) is None else c <= 0), 2, 2),
    ">=": (lambda a, b: _bool(None if (c := compare(a, b)) is None else c >= 0), 2, 2),
    "!": (lambda a: _bool(None if (e := ebv(a)) is None else not e), 1, 1),
}

SPECIAL = frozenset({"BOUND", "IF", "COALESCE", "&&", "||", "IN", "NOT IN", "IRI", "URI", "BNODE",
                     "RAND", "NOW", "UUID", "STRUUID"})


def supported(expr: A.Expr, functions: Functions | None = None) -> bool:
    """Whether chronolog's evaluator implements the function ``expr`` calls (arguments
    aside): the SPARQL 1.1 library, casts and the extension ``functions``."""
    if isinstance(expr, A.Call) and expr.name not in SPECIAL:
        entry = STRICT.get(expr.name)
        return entry is not None and entry[1] <= len(expr.args) <= entry[2]
    if isinstance(expr, A.FunctionCall):
        return (expr.iri.value in CAST_IRIS and len(expr.args) == 1) or expr.iri.value in (functions or {})
    return True


class UnsupportedFunction(Exception):
    pass


def _safe(fn: Callable[..., Term]) -> Callable[..., Term]:
    def call(*args: Term) -> Term:
        try:
            return fn(*args)
        except (ValueError, TypeError, ArithmeticError, InvalidOperation, OverflowError, IndexError, re.error):
            return None
    return call


def compile_expr(expr: A.Expr, ctx: Context) -> Fn:
    """``expr`` as a closure from a solution (var -> id) to a term, None meaning error."""
    decode = ctx.dictionary.decode
    if isinstance(expr, A.Const):
        t = expr.term
        return lambda sol: t
    if isinstance(expr, A.VarRef):
        v = expr.var

        def var(sol: dict) -> Term:
            i = sol.get(v)
            return None if i is None else decode(i)
        return var
    if isinstance(expr, A.Exists):
        pattern, negated = expr.pattern, expr.negated

        def exists(sol: dict) -> Term:
            assert ctx.exists is not None
            found = ctx.exists(pattern, sol)
            return TRUE if found != negated else FALSE
        return exists
    if isinstance(expr, A.FunctionCall) and expr.iri.value in ctx.functions:
        extension = _safe(ctx.functions[expr.iri.value])
        operands = [compile_expr(a, ctx) for a in expr.args]

        def call(sol: dict) -> Term:
            values = [a(sol) for a in operands]
            return None if any(v is None for v in values) else extension(*values)
        return call
    if isinstance(expr, A.FunctionCall):
        iri = expr.iri.value
        if iri not in CAST_IRIS or len(expr.args) != 1:
            raise UnsupportedFunction(iri)
        arg = compile_expr(expr.args[0], ctx)
        c = _safe(cast)
        return lambda sol: c(iri, arg(sol))
    if isinstance(expr, A.Aggregate):
        raise UnsupportedFunction("aggregate outside GROUP")
    assert isinstance(expr, A.Call), expr
    name = expr.name
    args = [compile_expr(a, ctx) for a in expr.args]
    if name == "BOUND":
        v = expr.args[0].var if isinstance(expr.args[0], A.VarRef) else None
        return lambda sol: TRUE if sol.get(v) is not None else FALSE
    if name == "&&":
        a, b = args

        def and_(sol: dict) -> Term:
            x, y = ebv(a(sol)), ebv(b(sol))
            if x is False or y is False:
                return FALSE
            if x is None or y is None:
                return None
            return TRUE
        return and_
    if name == "||":
        a, b = args

        def or_(sol: dict) -> Term:
            x, y = ebv(a(sol)), ebv(b(sol))
            if x is True or y is True:
                return TRUE
            if x is None or y is None:
                return None
            return FALSE
        return or_
    if name == "IF":
        c, t, e = args

        def if_(sol: dict) -> Term:
            b = ebv(c(sol))
            if b is None:
                return None
            return t(sol) if b else e(sol)
        return if_
    if name == "COALESCE":
        def coalesce(sol: dict) -> Term:
            for a in args:
                v = a(sol)
                if v is not None:
                    return v
            return None
        return coalesce
    if name in ("IN", "NOT IN"):
        first, rest = args[0], args[1:]
        negate = name == "NOT IN"

        def in_(sol: dict) -> Term:
            x = first(sol)
            if x is None:
                return None
            err = False
            for r in rest:
                e = equals(x, r(sol))
                if e:
                    return FALSE if negate else TRUE
                if e is None:
                    err = True
            if err:
                return None
            return TRUE if negate else FALSE
        return in_
    if name in ("IRI", "URI"):
        a = args[0]

        def iri(sol: dict) -> Term:
            x = a(sol)
            if isinstance(x, NamedNode):
                return x
            p = string_parts(x)
            if p is None or p[1] is not None:
                return None
            try:
                return NamedNode(urljoin(ctx.base, p[0]) if ctx.base else p[0])
            except ValueError:
                return None
        return iri
    if name == "BNODE":
        if not args:
            return lambda sol: BlankNode()
        a = args[0]

        def bnode(sol: dict) -> Term:
            p = string_parts(a(sol))
            if p is None or p[1] is not None:
                return None
            key = (ctx.row if ctx.row is not None else id(sol), p[0])
            b = ctx.bnodes.get(key)
            if b is None:
                b = ctx.bnodes[key] = BlankNode()
            return b
        return bnode
    if name == "RAND":
        return lambda sol: Literal(float_lexical(random.random()), datatype=XSD_DOUBLE)
    if name == "NOW":
        return lambda sol: ctx.now
    if name == "UUID":
        return lambda sol: NamedNode("urn:uuid:" + str(uuid.uuid4()))
    if name == "STRUUID":
        return lambda sol: Literal(str(uuid.uuid4()))
    entry = STRICT.get(name)
    if entry is None:
        raise UnsupportedFunction(name)
    fn, lo, hi = entry
    if not lo <= len(args) <= hi:
        raise UnsupportedFunction(f"{name}/{len(args)}")
    fn = _safe(fn)
    if len(args) == 1:
        a0 = args[0]

        def call1(sol: dict) -> Term:
            x = a0(sol)
            return None if x is None else fn(x)
        return call1
    if len(args) == 2:
        a0, a1 = args

        def call2(sol: dict) -> Term:
            x = a0(sol)
            if x is None:
                return None
            y = a1(sol)
            return None if y is None else fn(x, y)
        return call2

    def calln(sol: dict) -> Term:
        vals = [a(sol) for a in args]
        if any(v is None for v in vals):
            return None
        return fn(*vals)
    return calln


def compile_filter(expr: A.Expr, ctx: Context) -> Callable[[dict], bool]:
    """A FILTER condition: true keeps the solution; an error (None) drops it."""
    f = compile_expr(expr, ctx)
    return lambda sol: ebv(f(sol)) is True
