"""chronolog.values: XPath promotion, comparison, EBV and casts, and the agreement of the
three languages that use them (SPARQL FILTER, Datalog built-ins, CEP conditions)."""
from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog import cep
from chronolog.datalog.builtins import Expressions
from chronolog.lang.dotr.lowering import value_decoder
from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import id_test
from chronolog.sparql.expressions import Context, compile_filter
from chronolog.sparql.parse import parse_query
from chronolog.terms import (
    V_BOOLEAN, V_DATETIME, V_LANGSTRING, V_NODE, V_NUMERIC, V_OTHER, V_STRING, XSD, Float32, TermDictionary,
    literal_of, literal_value, to_float32,
)
from chronolog.values import (
    COMPARISONS, DECIMAL, DOUBLE, FLOAT, INTEGER, arith, arithmetic, cast, compare, compare_numbers, compare_values,
    ebv, equal_values, equals, holds, negate, numeric_avg, numeric_sum, promote, python_value, rank,
)

TYPES = ("integer", "decimal", "float", "double")


def lit(lexical: str, datatype: str) -> Literal:
    return Literal(lexical, datatype=NamedNode(XSD + datatype))


# ---- promotion and arithmetic ----------------------------------------------------------------
def test_rank_follows_the_xpath_type_order() -> None:
    assert [rank(v) for v in (1, Decimal(1), to_float32(1.0), 1.0)] == [INTEGER, DECIMAL, FLOAT, DOUBLE]
    assert rank(True) is None and rank("1") is None


def test_promotion_to_the_greater_type() -> None:
    assert promote(1, Decimal("0.5")) == (DECIMAL, Decimal(1), Decimal("0.5"))
    top, a, b = promote(Decimal("0.5"), to_float32(0.25))
    assert top == FLOAT and type(a) is Float32 and a == 0.5
    top, a, b = promote(to_float32(0.1), 0.1)
    assert top == DOUBLE and type(a) is float and a == 0.10000000149011612 and b == 0.1
    # an integer promoted to float is rounded to single precision
    assert compare_numbers(16777217, to_float32(16777216.0)) == 0
    assert compare_numbers(16777217, 16777216.0) == 1


def test_arithmetic_types() -> None:
    assert arithmetic("/", 1, 2) == Decimal("0.5") and type(arithmetic("/", 4, 2)) is Decimal
    assert type(arithmetic("*", 2, 3)) is int
    f = arithmetic("+", to_float32(0.1), to_float32(0.2))
    assert type(f) is Float32 and f == to_float32(0.3)
    assert type(arithmetic("+", to_float32(1.5), 1)) is Float32
    assert type(arithmetic("+", to_float32(1.5), 1.0)) is float
    assert type(negate(to_float32(1.5))) is Float32 and negate(Decimal("2.5")) == Decimal("-2.5")


def test_division_by_zero() -> None:
    with pytest.raises(ZeroDivisionError):
        arithmetic("/", 1, 0)
    with pytest.raises(ZeroDivisionError):
        arithmetic("/", Decimal("1.5"), 0)
    assert arithmetic("/", 1.0, 0) == math.inf and arithmetic("/", -1, 0.0) == -math.inf
    assert math.isnan(arithmetic("/", 0.0, 0))
    assert arith("/", lit("1", "integer"), lit("0", "integer")) is None
    assert arith("/", lit("1", "float"), lit("0", "integer")) == lit("INF", "float")


def test_arith_on_literals_gives_canonical_typed_literals() -> None:
    assert arith("/", lit("1", "integer"), lit("4", "integer")) == lit("0.25", "decimal")
    assert arith("+", lit("0.1", "float"), lit("0.2", "float")) == lit("3.0E-1", "float")
    assert arith("+", lit("1.5", "float"), lit("1", "double")) == lit("2.5E0", "double")
    assert arith("+", lit("1", "integer"), Literal("1")) is None


def test_sum_and_avg_fold_with_promotion() -> None:
    assert numeric_sum([]) == 0 and numeric_avg([]) is None
    assert numeric_sum([1, Decimal("0.5"), to_float32(0.25)]) == 1.75
    assert type(numeric_sum([1, to_float32(0.5)])) is Float32
    assert numeric_avg([1, 2]) == Decimal("1.5")
    assert numeric_sum([1, "a"]) is None and numeric_avg([False]) is None


# ---- comparison --------------------------------------------------------------------------------
def test_float_and_double_compare_after_promotion() -> None:
    assert equals(lit("1.5", "float"), lit("1.5", "double")) is True
    assert equals(lit("0.1", "float"), lit("0.1", "double")) is False
    assert compare(lit("0.1", "float"), lit("0.1", "double")) == 1  # 0.1f is 0.10000000149...
    assert equals(lit("0.1", "decimal"), lit("0.1", "double")) is True
    assert equals(lit("0.1", "decimal"), lit("0.1", "float")) is True
    assert compare(lit("1", "integer"), lit("1.0", "decimal")) == 0
    assert compare(lit("NaN", "double"), lit("1", "integer")) is None
    assert equals(lit("NaN", "float"), lit("NaN", "double")) is False


def test_value_comparison_within_and_across_classes() -> None:
    assert compare_values((V_STRING, "a"), (V_STRING, "b")) == -1
    assert compare_values((V_BOOLEAN, False), (V_BOOLEAN, True)) == -1
    assert compare_values((V_DATETIME, 5), (V_DATETIME, 5)) == 0
    assert compare_values((V_BOOLEAN, True), (V_NUMERIC, 1)) is None
    assert compare_values((V_LANGSTRING, ("a", "en")), (V_LANGSTRING, ("a", "en"))) is None
    assert equal_values((V_BOOLEAN, True), (V_NUMERIC, 1)) is False
    assert equal_values((V_LANGSTRING, ("a", "en")), (V_LANGSTRING, ("a", "en"))) is True
    assert equal_values((V_OTHER, None), (V_NUMERIC, 1)) is None
    assert equal_values((V_NODE, None), (V_NODE, None)) is None


def test_term_equality_errors_and_identity() -> None:
    odd = Literal("x", datatype=NamedNode("http://e/t"))
    assert equals(odd, odd) is True and equals(odd, Literal("y", datatype=NamedNode("http://e/t"))) is None
    assert equals(NamedNode("http://e/a"), NamedNode("http://e/a")) is True
    assert equals(Literal("a", language="en"), Literal("a")) is False
    assert compare(Literal("a"), lit("1", "integer")) is None
    assert equals(None, Literal("a")) is None
    # a dateTime without timezone is indeterminate against one with, within 14 hours
    assert compare(lit("2024-01-01T00:00:00", "dateTime"), lit("2024-01-01T01:00:00Z", "dateTime")) is None
    assert compare(lit("2024-01-01T00:00:00Z", "dateTime"), lit("2024-01-01T01:00:00+02:00", "dateTime")) == 1


def test_holds_on_python_values() -> None:
    assert holds("==", True, 1) is False and holds("<", True, 2) is False  # a boolean is no number
    assert holds("==", Decimal("0.1"), 0.1) and not holds("==", to_float32(0.1), 0.1)
    assert holds("!=", "a", 1) and not holds("<", "a", 1)
    assert not holds("<", None, 1) and holds("!=", None, 1)
    assert not holds("<", math.nan, 1) and holds("!=", math.nan, math.nan)


# ---- effective boolean value ---------------------------------------------------------------------
@pytest.mark.parametrize("term, expected", [
    (Literal(""), False), (Literal("a"), True), (Literal("a", language="en"), True),
    (lit("true", "boolean"), True), (lit("0", "boolean"), False), (lit("maybe", "boolean"), False),
    (lit("0", "integer"), False), (lit("0.0", "decimal"), False), (lit("-0.0", "float"), False),
    (lit("NaN", "double"), False), (lit("0.5", "float"), True), (lit("abc", "integer"), False),
    (NamedNode("http://e/a"), None), (BlankNode("b"), None), (None, None),
    (lit("2024-01-01T00:00:00Z", "dateTime"), None), (Literal("x", datatype=NamedNode("http://e/t")), None),
])
def test_effective_boolean_value(term, expected) -> None:
    assert ebv(term) is expected


# ---- casts -------------------------------------------------------------------------------------
@pytest.mark.parametrize("iri, term, expected", [
    ("float", Literal("0.1"), lit("1.0E-1", "float")),
    ("double", lit("0.1", "float"), lit("1.0000000149011612E-1", "double")),
    ("double", lit("true", "boolean"), lit("1.0E0", "double")),
    ("decimal", lit("1e3", "double"), lit("1000.0", "decimal")),
    ("decimal", lit("0.1", "float"), lit("0.1", "decimal")),
    ("decimal", lit("INF", "double"), None),
    ("integer", lit("1.9", "double"), lit("1", "integer")),
    ("integer", lit("-2.5", "decimal"), lit("-2", "integer")),
    ("integer", Literal("abc"), None),
    ("int", Literal(" 7 "), lit("7", "integer")),
    ("boolean", Literal("0"), lit("false", "boolean")),
    ("boolean", lit("NaN", "double"), lit("false", "boolean")),
    ("boolean", lit("2", "integer"), lit("true", "boolean")),
    ("string", lit("0.1", "float"), Literal("0.1")),
    ("string", lit("1.0", "decimal"), Literal("1")),
    ("string", lit("1e7", "double"), Literal("1.0E7")),
    ("string", NamedNode("http://e/a"), Literal("http://e/a")),
    ("dateTime", Literal("2024-01-01T00:00:00Z"), lit("2024-01-01T00:00:00Z", "dateTime")),
    ("dateTime", lit("1", "integer"), None),
    ("integer", BlankNode("b"), None),
    ("integer", Literal("1", language="en"), None),
])
def test_casts(iri: str, term, expected) -> None:
    assert cast(XSD + iri, term) == expected


def test_float_literals_keep_their_type_and_precision() -> None:
    cls, value = literal_value(lit("0.1", "float"))
    assert cls == V_NUMERIC and type(value) is Float32 and value == 0.10000000149011612
    assert literal_value(lit("1e39", "float"))[1] == math.inf
    assert literal_of(value) == lit("0.1", "float")
    assert literal_of(0.1) == lit("0.1", "double")


# ---- the three languages agree -------------------------------------------------------------------
_SHARED = ["0", "-0", "1", "2", "0.1", "0.5", "1.5", "0.2", "0.3", "16777217", "16777216", "-1.5"]


@st.composite
def numeric_literals(draw) -> Literal:
    dtype = draw(st.sampled_from(TYPES))
    if dtype == "integer":
        text = draw(st.one_of(st.sampled_from([s for s in _SHARED if "." not in s]),
                              st.integers(-10**20, 10**20).map(str)))
    elif dtype == "decimal":
        text = draw(st.one_of(st.sampled_from(_SHARED), st.decimals(-10**6, 10**6, places=3).map(str)))
    else:
        width = 32 if dtype == "float" else 64
        text = draw(st.one_of(st.sampled_from(_SHARED + ["1e-7", "1e39", "INF", "-INF", "NaN"]),
                              st.floats(width=width).map(lambda f: repr(f).replace("inf", "INF").replace("nan", "NaN"))))
    return lit(text, dtype)


_QUERIES = {op: parse_query(f"SELECT * {{ FILTER(?a {op} ?b) }}") for op in ("=", "!=", "<", "<=", ">", ">=")}


def _cep_holds(d: TermDictionary, op: str, a: int, b: int) -> bool:
    """Whether a TESLA rule with condition ``A.v op <b>`` fires on an event with ``v = a``
    (values decoded as the DOTR engine decodes them)."""
    decode = value_decoder(d)
    engine = cep.TemporalEngine(decode=decode)
    engine.declare("A", ["v"])
    engine.register(cep.Rule(name="r", emits="Hit", terminator=cep.Terminator("X", "A", where=[
        cep.Compare(cep.Attr("X", "v"), "==" if op == "=" else op, cep.Const(decode(b)))])))
    return bool(engine.push(cep.event("A", 1, v=a)))


@settings(max_examples=300, deadline=None)
@given(numeric_literals(), numeric_literals(), st.sampled_from(sorted(_QUERIES)))
def test_sparql_datalog_and_cep_comparisons_agree(x: Literal, y: Literal, op: str) -> None:
    d = TermDictionary()
    a, b = d.encode(x), d.encode(y)
    ctx = Context(d)
    expr = _QUERIES[op].pattern.find(A.Filter).expr
    sparql = compile_filter(expr, ctx)({"a": a, "b": b})
    constant = A.Call(name=op, args=[A.VarRef(var=expr.args[0].var), A.Const(term=y)])  # ?v op constant: fast path
    sparql_fast = id_test(constant, (expr.args[0].var,), d, ctx)(a)
    builtins = Expressions(d)
    datalog = builtins.test(op, builtins.variable(0), builtins.variable(1))(a, b)
    assert sparql == sparql_fast == datalog == _cep_holds(d, op, a, b), (x, op, y)


@given(st.sampled_from(["=", "==", "!=", "<", "<=", ">", ">="]),
       st.one_of(st.tuples(st.integers(), st.integers()), st.tuples(st.text(max_size=3), st.text(max_size=3))))
def test_holds_on_two_ints_or_two_strings_is_the_value_comparison(op: str, pair: tuple) -> None:
    """``holds`` takes a shortcut for these; it must agree with the value comparison."""
    a, b = (python_value(x) for x in pair)
    if op in ("=", "==", "!="):
        expected = equal_values(a, b) is (op != "!=")
    else:
        expected = COMPARISONS[op](compare_values(a, b), 0)
    assert holds(op, *pair) is expected
