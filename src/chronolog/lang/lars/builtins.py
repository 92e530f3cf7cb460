"""LARS's built-ins: ``COMP(op, A, B)`` and ``MATH(op, R, A, B)`` over constants.

Numbers compare and compute by value (ints, and decimals where a value has a fraction);
``=`` and ``!=`` compare any two constants; ``<``, ``<=``, ``>``, ``>=`` hold only between
two numbers. ``/`` is exact (``7 / 2`` is 3.5), and a division by zero or arithmetic on a
name has no result, so the literal does not hold.
"""
from __future__ import annotations

import operator
from decimal import Decimal
from typing import Callable

from chronolog.atomstreams import Value

_ORDER: dict[str, Callable[[object, object], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _is_number(value: Value) -> bool:
    return isinstance(value, (int, Decimal))


def compare(op: str, left: Value, right: Value) -> bool:
    """Whether ``left op right`` holds.

    >>> compare(">=", 100, 99), compare("=", "a", "a"), compare("<", "a", "b")
    (True, True, False)
    """
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    return _is_number(left) and _is_number(right) and _ORDER[op](left, right)


def arithmetic(op: str, left: Value, right: Value) -> Value | None:
    """``left op right``, or None when it has no value.

    >>> arithmetic("+", 2, 3), arithmetic("/", 7, 2), arithmetic("/", 1, 0), arithmetic("*", "a", 2)
    (5, Decimal('3.5'), None, None)
    """
    if not (_is_number(left) and _is_number(right)):
        return None
    if op == "+":
        result = left + right  # type: ignore[operator]
    elif op == "-":
        result = left - right  # type: ignore[operator]
    elif op == "*":
        result = left * right  # type: ignore[operator]
    elif right == 0:
        return None
    elif isinstance(left, int) and isinstance(right, int) and left % right == 0:
        return left // right
    else:
        result = Decimal(left) / Decimal(right)
    if isinstance(result, Decimal):
        result = result.normalize()
        return int(result) if result == result.to_integral_value() else result
    return result
