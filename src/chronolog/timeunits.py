"""The time model: integer time points on one timeline, in application time units.

A time unit is a whole number of milliseconds (``ms_per_unit``, 1 by default, so time
points are milliseconds). ``xsd:dateTime`` values map to epoch time in those units;
durations are written ``500 ms``, ``5 s``, ``5 min``, ``1 h``, ``2 d`` (C-SPARQL's ``10s``,
``500ms``, ``1m``, ``1h``, ``1d`` too), ISO 8601
(``PT5M``, ``PT0.5S``, ``P1D``) or as a bare integer (already in time units).
Everything is integer arithmetic, so conversions are exact or fail loudly.

**The time range.** Times and durations are integers of absolute value below
``TIME_LIMIT`` = 2^53 time units, on both runners: the Spark runner turns a time into a
timestamp (``F.timestamp_millis``: microseconds in a signed 64-bit integer, so at most
about 2^63 / 1000 = 2^53.03 units), and 2^53 also keeps a time exact as a JSON or Spark
double, and the sum of a time and a duration inside 64 bits. Negative times are valid.
"""
from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal

from .errors import ChronologError
from .terms import parse_datetime_us

MS_PER_UNIT: dict[str, int | Decimal] = {
    "us": Decimal("0.001"), "µs": Decimal("0.001"), "microsecond": Decimal("0.001"), "microseconds": Decimal("0.001"),
    "ms": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1_000, "sec": 1_000, "second": 1_000, "seconds": 1_000,
    "m": 60_000, "min": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}
_AMOUNT_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)", re.IGNORECASE)
_ISO = re.compile(
    r"P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?"
)
_ISO_MS = {"w": 7 * 86_400_000, "d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1_000}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
TIME_UNITS = ("us", "ms", "s", "min", "h")  # what --time-unit offers
TIME_LIMIT = 1 << 53  # |time| and durations stay below it (module docstring)


def unit_ms(name: str) -> int | Decimal:
    """The milliseconds of one time unit named by ``--time-unit`` (``us`` is 0.001).

    >>> unit_ms("s"), unit_ms("us")
    (1000, Decimal('0.001'))
    """
    if name not in TIME_UNITS:
        raise TimeFormatError(f"unknown time unit {name!r}: expected one of {', '.join(TIME_UNITS)}")
    return MS_PER_UNIT[name]


class TimeFormatError(ChronologError, ValueError):
    """A duration or date-time that cannot be read; language front ends re-raise it at
    the source position of the offending text."""


def check_time(value: int, what: str = "time") -> int:
    """``value`` when it is inside the time range, else a TimeFormatError saying so.

    >>> check_time(-5)
    -5
    >>> check_time(1 << 60, "time")
    Traceback (most recent call last):
    chronolog.timeunits.TimeFormatError: time 1152921504606846976 is outside the time range: \
times and durations must be below 2^53 = 9007199254740992 time units in absolute value
    """
    if -TIME_LIMIT < value < TIME_LIMIT:
        return value
    raise TimeFormatError(f"{what} {value} is outside the time range: times and durations must be below "
                          f"2^53 = {TIME_LIMIT} time units in absolute value")


def parse_duration(text: str, *, ms_per_unit: int | Decimal = 1) -> int:
    """A duration in time units.

    >>> parse_duration("5 min"), parse_duration("PT0.5S"), parse_duration("250")
    (300000, 500, 250)
    >>> parse_duration("2 s", ms_per_unit=1000)
    2
    """
    body = text.strip()
    if re.fullmatch(r"\d+", body):
        return check_time(int(body), f"duration {text!r} =")
    if body[:1] in ("P", "p"):
        ms = _iso_duration_ms(body.upper(), text)
    else:
        match = _AMOUNT_UNIT.fullmatch(body)
        if match is None:
            raise TimeFormatError(
                f"invalid duration {text!r}: expected e.g. '500 ms', '5 s', '5 min', '1 h', "
                "'PT5M' or an integer number of time units"
            )
        unit = MS_PER_UNIT.get(match.group(2).lower())
        if unit is None:
            raise TimeFormatError(
                f"unknown time unit {match.group(2)!r} in {text!r}; known: us, ms, s, min, h, d (and m for minutes)"
            )
        ms = Decimal(match.group(1)) * unit
    return _to_units(ms, ms_per_unit, f"duration {text!r}")


def _iso_duration_ms(body: str, text: str) -> Decimal:
    if re.search(r"[YM]", body.split("T", 1)[0]):
        raise TimeFormatError(
            f"ISO 8601 duration {text!r} uses years or months, which have no fixed length; "
            "use weeks, days, hours, minutes or seconds"
        )
    match = _ISO.fullmatch(body)
    if match is None or not any(match.groupdict().values()) or body.endswith("T"):
        raise TimeFormatError(f"invalid ISO 8601 duration {text!r}: expected e.g. PT5M, PT0.5S, P1D")
    return sum(
        (Decimal(amount) * _ISO_MS[part] for part, amount in match.groupdict().items() if amount),
        Decimal(0),
    )


def _to_units(ms: Decimal | int, ms_per_unit: int | Decimal, what: str) -> int:
    units, rest = divmod(Decimal(ms), ms_per_unit)
    if rest:
        raise TimeFormatError(f"{what} is not a whole number of time units ({ms_per_unit} ms each)")
    return check_time(int(units), f"{what} =")


def datetime_to_time(lexical: str, *, ms_per_unit: int | Decimal = 1) -> int:
    """The time point of an xsd:dateTime lexical form (no timezone is read as UTC).

    >>> datetime_to_time("1970-01-01T00:00:01.5Z")
    1500
    """
    try:
        us = parse_datetime_us(lexical)
    except ValueError:
        raise TimeFormatError(f"invalid xsd:dateTime {lexical!r}") from None
    return _to_units(Decimal(us) / 1000, ms_per_unit, f"xsd:dateTime {lexical!r}")


def time_to_datetime(time: int, *, ms_per_unit: int | Decimal = 1) -> str:
    """The xsd:dateTime lexical form (UTC, ``Z``) of a time point; exact inverse of
    :func:`datetime_to_time`.

    >>> time_to_datetime(1500)
    '1970-01-01T00:00:01.500Z'
    """
    try:
        moment = _EPOCH + _dt.timedelta(microseconds=int(time * Decimal(ms_per_unit) * 1000))
    except OverflowError:
        raise TimeFormatError(f"time {time} is outside the xsd:dateTime range Python supports") from None
    spec = "seconds" if not moment.microsecond else "milliseconds" if not moment.microsecond % 1000 else "microseconds"
    return moment.replace(tzinfo=None).isoformat(timespec=spec) + "Z"
