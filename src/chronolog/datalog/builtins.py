"""Comparisons and arithmetic in rule bodies, compiled to closures over term ids.

The values are :mod:`chronolog.values`' (SPARQL's operator mapping, XPath's numeric
promotion): numbers compare and compute across integer, decimal, float and double;
strings, booleans and dateTimes compare within their own kind; ``=`` and ``!=`` on
anything else compare the terms themselves. A type error makes a comparison false and an
assignment drop the solution (SPARQL's error semantics).
"""
from __future__ import annotations

from typing import Callable

from chronolog.terms import V_NUMERIC, TermDictionary
from chronolog.values import COMPARISONS, arithmetic, compare_values, equal_values, negate


class _Error(Exception):
    """A SPARQL-style evaluation error inside one solution."""


# An evaluator maps the tuple of the expression's variable values (ids) to either
# ("id", term id) for plain terms or ("v", (value class, value)) for computed values.
Evaluator = Callable[[tuple[int, ...]], tuple[str, object]]


def _numeric(value: tuple[int, object]) -> object:
    vclass, v = value
    if vclass != V_NUMERIC:
        raise _Error("not a number")
    return v


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
        order = compare_values(self.value_of(left), self.value_of(right))
        return order is not None and COMPARISONS[op](order, 0)

    def _equal(self, left: tuple[str, object], right: tuple[str, object]) -> bool:
        """Value equality (so NaN is not equal to itself); terms with no known value (IRIs,
        unknown datatypes) by identity."""
        equal = equal_values(self.value_of(left), self.value_of(right))
        if equal is None:
            return left[0] == "id" and right[0] == "id" and left[1] == right[1]
        return equal

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
            try:
                if right is None:
                    return ("v", (V_NUMERIC, negate(a)))  # type: ignore[arg-type]
                return ("v", (V_NUMERIC, arithmetic(op, a, _numeric(value_of(right(values))))))  # type: ignore[arg-type]
            except (ArithmeticError, TypeError, ValueError) as exc:
                raise _Error(str(exc)) from exc

        return run
