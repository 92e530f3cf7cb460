"""One value semantics for SPARQL, the Datalog built-ins and the CEP conditions.

XPath's numeric type promotion (integer < decimal < float < double) and arithmetic,
value comparison, the effective boolean value and the XSD casts SPARQL uses live here so
that the three languages cannot disagree on what ``"1.5"^^xsd:float = 1.5`` means or on
the type of ``?x / 2``.

Python numbers carry their XSD type: ``int`` is xsd:integer, ``Decimal`` xsd:decimal,
:class:`~chronolog.terms.Float32` xsd:float and ``float`` xsd:double (see
:func:`chronolog.terms.literal_value`). Functions on terms return ``None`` for SPARQL's
error value; functions on numbers raise ``ArithmeticError``.

>>> from decimal import Decimal
>>> arithmetic("/", 1, 2), arithmetic("+", to_float32(1.5), 1)
(Decimal('0.5'), 2.5)
>>> compare_numbers(Decimal("0.1"), 0.1), compare_numbers(to_float32(0.1), 0.1)
(0, 1)
"""
from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Union

from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog.terms import (
    V_BOOLEAN, V_DATETIME, V_LANGSTRING, V_NUMERIC, V_OTHER, V_STRING, XSD, XSD_BOOLEAN,
    XSD_DATETIME, XSD_DECIMAL, XSD_DOUBLE, XSD_FLOAT, XSD_INTEGER, XSD_STRING, Float32, Term, Value,
    float32_repr, literal_value, to_float32,
)

Number = Union[int, Decimal, float]

# numeric type ranks of XPath's promotion order
INTEGER, DECIMAL, FLOAT, DOUBLE = 0, 1, 2, 3
RANK_TYPES = {INTEGER: XSD_INTEGER, DECIMAL: XSD_DECIMAL, FLOAT: XSD_FLOAT, DOUBLE: XSD_DOUBLE}
INTEGER_TYPES = frozenset(XSD + t for t in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "nonPositiveInteger",
    "positiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"))
_TYPE_RANKS = {XSD + "decimal": DECIMAL, XSD + "float": FLOAT, XSD + "double": DOUBLE}
_PY_RANKS = {int: INTEGER, Decimal: DECIMAL, Float32: FLOAT, float: DOUBLE}

TRUE = Literal("true", datatype=XSD_BOOLEAN)
FALSE = Literal("false", datatype=XSD_BOOLEAN)

COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


# ---- numbers ------------------------------------------------------------------------------
def rank(value: object) -> int | None:
    """The XPath numeric type rank of a Python value; None when it is not a number (a bool is not)."""
    return _PY_RANKS.get(type(value))


def as_rank(target: int, value: Number) -> Number:
    """``value`` promoted (or cast) to the numeric type ``target``."""
    if target == INTEGER:
        return int(value)
    if target == DECIMAL:
        return value if isinstance(value, Decimal) else Decimal(value)
    if target == FLOAT:
        return value if isinstance(value, Float32) else to_float32(float(value))
    return float(value)


def promote(x: Number, y: Number) -> tuple[int, Number, Number]:
    """Both numbers promoted to the greater of their two types, and that type's rank."""
    rx, ry = rank(x), rank(y)
    if rx is None or ry is None:
        raise TypeError(f"not numbers: {x!r}, {y!r}")
    top = max(rx, ry)
    return top, as_rank(top, x), as_rank(top, y)


_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul}


def arithmetic(op: str, x: Number, y: Number) -> Number:
    """``x op y`` (op one of + - * /) as XPath's op:numeric-*: integer / integer is a
    decimal; division by zero is an error (ZeroDivisionError) for integers and decimals
    and an infinity or NaN for floats and doubles."""
    top, a, b = promote(x, y)
    if op == "/":
        if top == INTEGER:
            top, a, b = DECIMAL, Decimal(a), Decimal(b)
        if b == 0:
            if top == DECIMAL:
                raise ZeroDivisionError("division by zero")
            result: Number = math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
        else:
            result = a / b  # type: ignore[operator]
    else:
        result = _ARITHMETIC[op](a, b)
    return to_float32(result) if top == FLOAT else result  # type: ignore[arg-type]


def negate(x: Number) -> Number:
    """op:numeric-unary-minus, keeping the type."""
    if rank(x) is None:
        raise TypeError(f"not a number: {x!r}")
    return to_float32(-x) if isinstance(x, Float32) else -x


def numeric_sum(values: Sequence[object]) -> Number | None:
    """SPARQL 1.1 SUM: op:numeric-add from 0, left to right; None (an error) when a value
    is not a number.

    >>> numeric_sum([1, 2]), numeric_sum([1, Decimal("0.5")]), numeric_sum([Decimal("0.5"), 0.25])
    (3, Decimal('1.5'), 0.75)
    >>> numeric_sum([1, True]) is None
    True
    """
    total: Number = 0
    for value in values:
        if rank(value) is None:
            return None
        total = arithmetic("+", total, value)  # type: ignore[arg-type]
    return total


def numeric_avg(values: Sequence[object]) -> Number | None:
    """SPARQL 1.1 AVG: SUM / COUNT with op:numeric-divide (the average of integers is a
    decimal); None for no value (TESLA's; SPARQL's is 0) or a value that is not a number.

    >>> numeric_avg([1, 2]), numeric_avg([1, 2, 2.0]), numeric_avg([])
    (Decimal('1.5'), 1.6666666666666667, None)
    """
    total = numeric_sum(values) if values else None
    return None if total is None else arithmetic("/", total, len(values))


def compare_numbers(x: Number, y: Number) -> int | None:
    """-1, 0 or 1 after promotion; None when a NaN makes them unordered."""
    top, a, b = promote(x, y)
    if top >= FLOAT and (math.isnan(a) or math.isnan(b)):  # type: ignore[arg-type]
        return None
    return (a > b) - (a < b)  # type: ignore[operator]


# ---- values (value class, Python value) ---------------------------------------------------
_ORDERED = (V_NUMERIC, V_STRING, V_BOOLEAN, V_DATETIME)
_KNOWN = (V_NUMERIC, V_STRING, V_BOOLEAN, V_DATETIME, V_LANGSTRING)


def compare_values(a: Value, b: Value) -> int | None:
    """-1/0/1 for two values of one ordered class (numbers, strings, booleans, dateTimes);
    None when they are not comparable."""
    ca, va = a
    if ca != b[0] or ca not in _ORDERED:
        return None
    vb = b[1]
    if ca == V_NUMERIC:
        return compare_numbers(va, vb)  # type: ignore[arg-type]
    return (va > vb) - (va < vb)  # type: ignore[operator]


def equal_values(a: Value, b: Value) -> bool | None:
    """Value equality: numbers after promotion, other known classes within their class;
    values of two different known classes differ. None when either value has no known
    class (an IRI, a blank node, an unknown datatype): only term identity can tell."""
    ca, va = a
    cb, vb = b
    if ca not in _KNOWN or cb not in _KNOWN:
        return None
    if ca != cb:
        return False
    if ca == V_NUMERIC:
        return compare_numbers(va, vb) == 0  # type: ignore[arg-type]
    return va == vb


def python_value(value: object) -> Value:
    """The tagged value of a plain Python value (how CEP conditions see their operands):
    bool a boolean, int/Decimal/float a number, str a string, anything else V_OTHER."""
    if isinstance(value, bool):
        return (V_BOOLEAN, value)
    if rank(value) is not None:
        return (V_NUMERIC, value)
    if isinstance(value, str):
        return (V_STRING, value)
    return (V_OTHER, value)


def holds(op: str, left: object, right: object) -> bool:
    """``left op right`` on Python values as a FILTER reads it: numbers, strings and
    booleans by this module's rules, an error false. Other values (None, term references,
    a plain engine's own objects) compare by Python's operators, a TypeError false."""
    kind = type(left)
    if kind is type(right) and (kind is int or kind is str):  # the common case: those rules are Python's
        return COMPARISONS[op](left, right)
    a, b = python_value(left), python_value(right)
    if a[0] == V_OTHER or b[0] == V_OTHER:
        try:
            return bool(COMPARISONS[op](left, right))
        except TypeError:
            return False
    if op in ("==", "=", "!="):
        return equal_values(a, b) is (op != "!=")
    c = compare_values(a, b)
    return c is not None and COMPARISONS[op](c, 0)


# ---- numeric literals ---------------------------------------------------------------------
def numeric(t: Term | None) -> tuple[int, Number] | None:
    """(type rank, Python number) of a well-typed numeric literal, else None."""
    if not isinstance(t, Literal):
        return None
    dt = t.datatype.value
    r = INTEGER if dt in INTEGER_TYPES else _TYPE_RANKS.get(dt)
    if r is None:
        return None
    cls, v = literal_value(t)
    return None if cls != V_NUMERIC else (r, v)  # type: ignore[return-value]


def make_numeric(r: int, v: Number) -> Literal:
    """The canonical literal of ``v`` as the numeric type of rank ``r``."""
    if r == INTEGER:
        return Literal(str(int(v)), datatype=XSD_INTEGER)
    if r == DECIMAL:
        return Literal(decimal_lexical(Decimal(v)), datatype=XSD_DECIMAL)
    return Literal(float_lexical(as_rank(r, v)), datatype=RANK_TYPES[r])  # type: ignore[arg-type]


def numeric_literal(v: Number) -> Literal:
    """The canonical literal of a Python number, typed by its Python type."""
    r = rank(v)
    if r is None:
        raise TypeError(f"not a number: {v!r}")
    return make_numeric(r, v)


def decimal_lexical(d: Decimal) -> str:
    """Canonical xsd:decimal lexical form (no exponent, at least one fraction digit)."""
    if d == d.to_integral_value():
        return str(d.quantize(Decimal(1))) + ".0"
    return format(d.normalize(), "f")


def shortest_repr(f: float) -> str:
    """The shortest decimal text of a double, or of a Float32 in single precision."""
    return float32_repr(f) if isinstance(f, Float32) else repr(f)


def float_lexical(f: float) -> str:
    """Canonical xsd:double / xsd:float lexical form (shortest mantissa, e.g. 1.25E2)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "INF" if f > 0 else "-INF"
    if f == 0:
        return "0.0E0" if math.copysign(1, f) > 0 else "-0.0E0"
    sign, digits, exp = Decimal(shortest_repr(f)).normalize().as_tuple()
    ds = "".join(map(str, digits))
    e = len(ds) - 1 + exp  # type: ignore[operator]
    mant = ds[0] + "." + (ds[1:] or "0")
    return ("-" if sign else "") + f"{mant}E{e}"


# ---- effective boolean value --------------------------------------------------------------
def ebv(t: Term | None) -> bool | None:
    """Effective boolean value (SPARQL 17.2.2); None for an error."""
    if t is None or not isinstance(t, Literal):
        return None
    if t.language:
        return len(t.value) > 0
    dt = t.datatype.value
    if dt == XSD + "string":
        return len(t.value) > 0
    if dt == XSD + "boolean":
        cls, v = literal_value(t)
        return bool(v) if cls == V_BOOLEAN else False
    if dt in INTEGER_TYPES or dt in _TYPE_RANKS:
        cls, v = literal_value(t)
        if cls != V_NUMERIC:
            return False
        return not (v == 0 or (isinstance(v, float) and math.isnan(v)))
    return None


# ---- comparison of terms ------------------------------------------------------------------
_XSD_DATE = XSD + "date"
_TEMPORAL_RE = re.compile(
    r"^(-?\d{4,})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}(?:\.\d+)?))?(Z|[+-]\d{2}:\d{2})?$")
DATETIME_RE = re.compile(
    r"^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?$")
_FOURTEEN_HOURS = 14 * 3600


def _temporal(t: Term) -> tuple[str, float, bool] | None | bool:
    """(kind, seconds since epoch, has timezone) of an xsd:dateTime / xsd:date literal;
    False for an ill-typed one; None when ``t`` is not one."""
    if not isinstance(t, Literal):
        return None
    dt = t.datatype.value
    if dt not in (XSD + "dateTime", _XSD_DATE):
        return None
    m = _TEMPORAL_RE.match(t.value.strip())
    if m is None or (dt == _XSD_DATE) != (m.group(4) is None):
        return False
    try:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        day = datetime(y, mo, d, tzinfo=timezone.utc).timestamp() if 1 <= y <= 9999 else None
    except ValueError:
        return False
    if day is None:
        return False
    secs = day
    if m.group(4) is not None:
        secs += int(m.group(4)) * 3600 + int(m.group(5)) * 60 + float(m.group(6))
    tz = m.group(7)
    if tz and tz != "Z":
        sign = -1 if tz[0] == "-" else 1
        secs -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return ("date" if dt == _XSD_DATE else "dateTime", secs, tz is not None)


def _temporal_cmp(a: tuple, b: tuple) -> int | None:
    """XPath order of two instants; None when a timezone-less one makes it indeterminate."""
    diff = a[1] - b[1]
    if a[2] != b[2] and abs(diff) <= _FOURTEEN_HOURS:
        return None
    return (diff > 0) - (diff < 0)


def equals(a: Term | None, b: Term | None) -> bool | None:
    """SPARQL ``=``: value equality for known literals, term equality else; None for an error."""
    if a is None or b is None:
        return None
    if not (isinstance(a, Literal) and isinstance(b, Literal)):
        return a == b
    ta, tb = _temporal(a), _temporal(b)
    if ta or tb:
        if ta and tb:
            if ta[0] != tb[0]:  # type: ignore[index]
                return False
            c = _temporal_cmp(ta, tb)  # type: ignore[arg-type]
            return None if c is None else c == 0
        if a == b:
            return True
        if (tb if ta else ta) is False:  # an ill-typed date
            return None
        return None if literal_value(b if ta else a)[0] == V_OTHER else False
    va, vb = literal_value(a), literal_value(b)
    if va[0] == vb[0] and va[0] != V_OTHER:
        return equal_values(va, vb)
    if a == b:
        return True
    # different value spaces: a language-tagged string equals no other kind of literal;
    # a literal of an unknown datatype (or ill-typed) cannot be compared: an error
    if va[0] == V_LANGSTRING or vb[0] == V_LANGSTRING:
        return False
    if va[0] == V_OTHER or vb[0] == V_OTHER:
        return None
    return False


def compare(a: Term | None, b: Term | None) -> int | None:
    """-1/0/1 for ``<`` between comparable literals, None for a type error."""
    if not (isinstance(a, Literal) and isinstance(b, Literal)):
        return None
    ta, tb = _temporal(a), _temporal(b)
    if ta or tb:
        if ta and tb and ta[0] == tb[0]:  # type: ignore[index]
            return _temporal_cmp(ta, tb)  # type: ignore[arg-type]
        return None
    return compare_values(literal_value(a), literal_value(b))


def arith(op: str, a: Term | None, b: Term | None) -> Literal | None:
    """``a op b`` on numeric literals; None for an error (a non-number, division by zero)."""
    na, nb = numeric(a), numeric(b)
    if na is None or nb is None:
        return None
    try:
        return numeric_literal(arithmetic(op, na[1], nb[1]))
    except (ArithmeticError, ValueError):
        return None


# ---- casts --------------------------------------------------------------------------------
CAST_IRIS = frozenset(
    XSD + t for t in ("string", "boolean", "double", "float", "decimal", "integer", "dateTime")) | INTEGER_TYPES
_INT_LEX = re.compile(r"^[+-]?\d+$")
_DEC_LEX = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_DBL_LEX = re.compile(r"^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN)$")


def _cast_to_string(t: Term) -> Literal:
    if isinstance(t, NamedNode) or t.language:
        return Literal(t.value)
    if t.datatype == XSD_BOOLEAN:
        cls, v = literal_value(t)
        return Literal(("true" if v else "false") if cls == V_BOOLEAN else t.value)
    n = numeric(t)
    if n is None:
        return Literal(t.value)
    r, v = n
    if r >= FLOAT:
        f = float(v)
        if math.isnan(f) or math.isinf(f) or not (f == 0 or 1e-6 <= abs(f) < 1e6):
            return Literal(float_lexical(v))  # type: ignore[arg-type]
        text = shortest_repr(v)  # type: ignore[arg-type]
        return Literal(text[:-2] if text.endswith(".0") else text)
    if r == DECIMAL:
        d = Decimal(v)
        return Literal(str(int(d)) if d == d.to_integral_value() else format(d.normalize(), "f"))
    return Literal(str(v))


def cast(iri: str, t: Term | None) -> Term | None:
    """XSD constructor function ``iri`` (one of CAST_IRIS) applied to ``t``; None for an error."""
    if t is None or isinstance(t, BlankNode):
        return None
    if iri == XSD + "string":
        return _cast_to_string(t)
    if isinstance(t, NamedNode) or t.language:
        return None
    lex = t.value.strip()
    is_str = t.datatype == XSD_STRING
    n = numeric(t)
    if t.datatype.value.startswith(XSD) and n is None and not is_str and t.datatype not in (XSD_BOOLEAN, XSD_DATETIME):
        return None
    cls, v = literal_value(t)
    if cls == V_OTHER and not is_str:
        return None
    if iri == XSD + "boolean":
        if is_str:
            return TRUE if lex in ("true", "1") else FALSE if lex in ("false", "0") else None
        if t.datatype == XSD_BOOLEAN:
            return TRUE if v else FALSE
        if n is not None:
            return FALSE if v == 0 or (isinstance(v, float) and math.isnan(v)) else TRUE
        return None
    if iri in (XSD + "double", XSD + "float"):
        if is_str:
            if not _DBL_LEX.match(lex):
                return None
            f = float(lex.replace("INF", "inf").replace("NaN", "nan"))
        elif t.datatype == XSD_BOOLEAN:
            f = 1.0 if v else 0.0
        elif n is not None:
            f = float(v)  # type: ignore[arg-type]
        else:
            return None
        return make_numeric(DOUBLE if iri == XSD + "double" else FLOAT, f)
    if iri == XSD + "decimal":
        if is_str:
            if not _DEC_LEX.match(lex):
                return None
            d = Decimal(lex)
        elif t.datatype == XSD_BOOLEAN:
            d = Decimal(1 if v else 0)
        elif n is not None:
            if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
                return None
            d = Decimal(shortest_repr(v)) if isinstance(v, float) else Decimal(v)  # type: ignore[arg-type]
        else:
            return None
        return make_numeric(DECIMAL, d)
    if iri in INTEGER_TYPES:
        if is_str:
            if not _INT_LEX.match(lex):
                return None
            i = int(lex)
        elif t.datatype == XSD_BOOLEAN:
            i = 1 if v else 0
        elif n is not None:
            if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
                return None
            i = int(v)  # type: ignore[call-overload]
        else:
            return None
        return make_numeric(INTEGER, i)
    if iri == XSD + "dateTime":
        if (is_str or t.datatype == XSD_DATETIME) and DATETIME_RE.match(lex):
            return Literal(lex, datatype=XSD_DATETIME)
        return None
    return None
