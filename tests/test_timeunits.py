
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from chronolog.timeunits import TIME_LIMIT, TIME_UNITS, TimeFormatError, datetime_to_time, parse_duration, time_to_datetime, unit_ms


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("500 ms", 500), ("5 s", 5_000), ("5 min", 300_000), ("1 h", 3_600_000), ("2 d", 172_800_000),
        ("5s", 5_000), ("0.5 s", 500), ("3 minutes", 180_000), ("42", 42), (" 7 ", 7),
        ("PT5M", 300_000), ("PT0.5S", 500), ("P1D", 86_400_000), ("P1W", 604_800_000),
        ("PT1H30M", 5_400_000), ("P1DT1S", 86_401_000), ("pt2s", 2_000),
    ],
)
def test_durations_in_milliseconds(text: str, ms: int) -> None:
    assert parse_duration(text) == ms


def test_durations_in_coarser_time_units() -> None:
    assert parse_duration("2 min", ms_per_unit=1000) == 120
    assert parse_duration("9", ms_per_unit=1000) == 9  # a bare integer is already in time units
    with pytest.raises(TimeFormatError, match=r"'500 ms' is not a whole number of time units \(1000 ms each\)"):
        parse_duration("500 ms", ms_per_unit=1000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5 parsecs", "unknown time unit 'parsecs' in '5 parsecs'; known: us, ms, s, min, h, d (and m for minutes)"),
        ("-5 s", "invalid duration '-5 s': expected e.g. '500 ms', '5 s', '5 min', '1 h', 'PT5M'"),
        ("", "invalid duration ''"),
        ("P1M", "ISO 8601 duration 'P1M' uses years or months, which have no fixed length"),
        ("P1Y2D", "uses years or months"),
        ("PT", "invalid ISO 8601 duration 'PT': expected e.g. PT5M, PT0.5S, P1D"),
        ("P1DT", "invalid ISO 8601 duration 'P1DT'"),
        ("0.5 ms", "duration '0.5 ms' is not a whole number of time units (1 ms each)"),
    ],
)
def test_bad_durations_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(TimeFormatError) as caught:
        parse_duration(text)
    assert message in str(caught.value)


def test_datetimes_are_epoch_milliseconds() -> None:
    assert datetime_to_time("1970-01-01T00:00:00Z") == 0
    assert datetime_to_time("2014-08-01T07:30:00+02:00") == 1_406_871_000_000
    assert datetime_to_time("2014-08-01T05:30:00") == 1_406_871_000_000  # no timezone: UTC
    assert datetime_to_time("1970-01-01T00:01:00Z", ms_per_unit=60_000) == 1
    with pytest.raises(TimeFormatError, match="invalid xsd:dateTime 'yesterday'"):
        datetime_to_time("yesterday")
    with pytest.raises(TimeFormatError, match=r"is not a whole number of time units \(1 ms each\)"):
        datetime_to_time("1970-01-01T00:00:00.0005Z")
    assert datetime_to_time("1970-01-01T00:00:00.0005Z", ms_per_unit=unit_ms("us")) == 500


@given(st.integers(min_value=-62_000_000_000_000, max_value=253_000_000_000_000), st.sampled_from(TIME_UNITS))
def test_datetime_round_trip_in_every_time_unit(ms: int, name: str) -> None:
    units = int(ms / unit_ms(name))
    assume(abs(units) < TIME_LIMIT)  # the time range both runners serve
    assert datetime_to_time(time_to_datetime(units, ms_per_unit=unit_ms(name)), ms_per_unit=unit_ms(name)) == units


def test_durations_convert_through_the_time_unit() -> None:
    assert parse_duration("PT2M", ms_per_unit=unit_ms("s")) == 120
    assert parse_duration("2 ms", ms_per_unit=unit_ms("us")) == 2000
    assert parse_duration("1 h", ms_per_unit=unit_ms("min")) == 60
    with pytest.raises(TimeFormatError, match="unknown time unit 'week'"):
        unit_ms("week")


@given(st.integers(min_value=-62_000_000_000_000, max_value=253_000_000_000_000))
def test_datetime_round_trip(ms: int) -> None:
    assert datetime_to_time(time_to_datetime(ms)) == ms
