"""Comparisons and arithmetic in rule bodies, compiled to closures over term ids.

Values follow SPARQL's operator mapping: numbers compare and compute across integer,
decimal and double; strings, booleans and dateTimes compare within their own kind;
``=`` and ``!=`` on anything else compare the terms themselves. A type error makes a
comparison false and an assignment drop the solution (SPARQL's error semantics).
"""
from __future__ import annotations

import operator
from decimal import Decimal
from typing import Callable

from chronolog.terms import V_BOOLEAN, V_DATETIME, V_NUMERIC, V_STRING, TermDictionary

_ORDERED = (V_NUMERIC, V_STRING, V_BOOLEAN, V_DATETIME)


class _Error(Exception):
    """A SPARQL-style evaluation error inside one solution."""


# An evaluator maps the tuple of the expression's variable values (ids) to either
# ("id", term id) for plain terms or ("v", (value class, value)) for computed values.
Evaluator = Callable[[tuple[int, ...]], tuple[str, object]]

_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_CMP = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _numeric(value: tuple[int, object]) -> object:
    vclass, v = value
    if vclass != V_NUMERIC:
        raise _Error("not a number")
    return v


def _promote(a: object, b: object) -> tuple[object, object]:
    if isinstance(a, float) or isinstance(b, float):
        return float(a), float(b)  # type: ignore[arg-type]
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return Decimal(a), Decimal(b)  # type: ignore[arg-type]
    return a, b


def arithmetic(op: str, left: object, right: object | None) -> object:
    """``left op right`` on Python numbers with xsd type promotion; raises _Error on errors."""
    if op == "neg":
        return -left  # type: ignore[operator]
    a, b = _promote(left, right)
    if op == "/":
        if isinstance(a, float):
            if b == 0:
                raise _Error("division by zero")
            return a / b  # type: ignore[operator]
        if b == 0:
            raise _Error("division by zero")
        return Decimal(a) / Decimal(b)  # type: ignore[arg-type]
    return _ARITH[op](a, b)


class Expressions:
    """Compiles expression trees (from the lowering step) against one term dictionary."""

    def __init__(self, dictionary: TermDictionary) -> None:
        self.dictionary = dictionary

    def value_of(self, result: tuple[str, object]) -> tuple[int, object]:
        kind, payload = result
        if kind == "id":
            return self.dictionary.value(payload)  # type: ignore[arg-type]
        return payload  # type: ignore[return-value]

    def compare(self, op: str, left: tuple[str, object], right: tuple[str, object]) -> bool:
        if op in ("=", "!="):
            equal = self._equal(left, right)
            return equal if op == "=" else not equal
        a = self.value_of(left)
        b = self.value_of(right)
        if a[0] != b[0] or a[0] not in _ORDERED:
            return False
        try:
            return bool(_CMP[op](a[1], b[1]))
        except TypeError:
            return False

    def _equal(self, left: tuple[str, object], right: tuple[str, object]) -> bool:
        if left[0] == "id" and right[0] == "id" and left[1] == right[1]:
            return True
        a = self.value_of(left)
        b = self.value_of(right)
        if a[0] == b[0] and a[0] in _ORDERED:
            return a[1] == b[1]
        return False

    def to_id(self, result: tuple[str, object]) -> int:
        kind, payload = result
        if kind == "id":
            return payload  # type: ignore[return-value]
        return self.dictionary.encode_value(payload[1])  # type: ignore[index]

    def test(self, op: str, left: Evaluator, right: Evaluator) -> Callable[..., bool]:
        """A filter ``test(*values)`` for ``left op right``."""
        compare = self.compare

        def run(*values: int) -> bool:
            try:
                return compare(op, left(values), right(values))
            except _Error:
                return False

        return run

    def assign(self, expr: Evaluator) -> Callable[..., int | None]:
        """An assignment ``compute(*values)`` giving the id of the expression's value."""
        to_id = self.to_id

        def run(*values: int) -> int | None:
            try:
                return to_id(expr(values))
            except _Error:
                return None

        return run

    def variable(self, index: int) -> Evaluator:
        return lambda values: ("id", values[index])

    def constant(self, tid: int) -> Evaluator:
        result = ("id", tid)
        return lambda values: result

    def binary(self, op: str, left: Evaluator, right: Evaluator | None) -> Evaluator:
        value_of = self.value_of

        def run(values: tuple[int, ...]) -> tuple[str, object]:
            a = _numeric(value_of(left(values)))
            b = None if right is None else _numeric(value_of(right(values)))
            try:
                return ("v", (V_NUMERIC, arithmetic(op, a, b)))
            except (ArithmeticError, TypeError, ValueError) as exc:
                raise _Error(str(exc)) from exc

        return run
