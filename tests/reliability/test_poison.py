"""Poison elements (issue 12, point 4): a lone surrogate, a time beyond the time range, a
window or WITHIN larger than it. Each is a positioned error naming the source, the line
and the element's time, in process and in the Spark source's error rows, never a
traceback; what comes after a bad JSON line is still read."""
from __future__ import annotations

import io
import re
import json
from decimal import Decimal
from pathlib import Path

import pytest

from chronolog.atomstreams import read_atom_stream
from chronolog.errors import ChronologSyntaxError
from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec
from chronolog.spark.source import _jsonl_record, _trig_records
from chronolog.streams import StreamError, read_stream, scan_stream
from chronolog.terms import TermDictionary
from chronolog.timeunits import TIME_LIMIT

SURROGATE = json.dumps({"time": 7, "graph": '<http://e/a> <http://e/p> "\ud800" .'})
BEYOND = 1 << 64
RANGE = f"outside the time range: times and durations must be below 2^53 = {TIME_LIMIT} time units"
TRIG = """@prefix prov: <http://www.w3.org/ns/prov#> .
<urn:g1> prov:generatedAtTime "{time}"^^<http://www.w3.org/2001/XMLSchema#integer> .
<urn:g1> {{ <urn:a> <urn:p> 1 . }}
"""


def _write(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_lone_surrogate_is_an_error_at_its_line_column_and_time(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.jsonl", SURROGATE, '{"time": 8, "graph": ""}')
    error, after = list(scan_stream(path, TermDictionary()))
    assert isinstance(error, ChronologSyntaxError)
    assert (error.filename, error.lineno, error.offset) == (str(path), 1, SURROGATE.index("\\ud800") + 1)
    assert "element at time 7" in error.message and "lone surrogate \\ud800" in error.message
    assert after[0].time == 8  # reading went on


@pytest.mark.parametrize("time, ms_per_unit", [
    (BEYOND, 1), (-BEYOND, 1), (TIME_LIMIT, 1), (-TIME_LIMIT, 1),
    ("9999-12-31T00:00:00Z", Decimal("0.001")),  # the year 9999 fits in milliseconds, not in microseconds
])
def test_a_time_outside_the_range_is_the_same_error_on_both_runners(
        tmp_path: Path, time: object, ms_per_unit: int | Decimal) -> None:
    line = json.dumps({"time": time, "graph": ""})
    path = _write(tmp_path, "s.jsonl", line)
    with pytest.raises(ChronologSyntaxError) as caught:
        list(read_stream(path, TermDictionary(), ms_per_unit=ms_per_unit))
    error = caught.value
    assert (error.lineno, error.offset) == (1, 2) and RANGE in error.message
    row = _jsonl_record(line.encode("utf-8"), str(path), 1, 0, ms_per_unit)  # the Spark source's error row
    assert (row.syntax, row.time) == ("error", None)
    assert json.loads(row.payload) == {"source": f"{path}:1:2", "reason": error.message, "element": line}


def test_the_edges_of_the_range_are_valid(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.jsonl", *(json.dumps({"time": t, "graph": ""}) for t in (1 - TIME_LIMIT, 0, TIME_LIMIT - 1)))
    assert [e.time for e in read_stream(path, TermDictionary())] == [1 - TIME_LIMIT, 0, TIME_LIMIT - 1]


def test_a_trig_time_outside_the_range_names_its_element_on_both_runners(tmp_path: Path) -> None:
    path = tmp_path / "s.trig"
    path.write_text(TRIG.format(time=BEYOND), encoding="utf-8")
    with pytest.raises(StreamError, match=f"element 1 \\(graph <urn:g1>\\): invalid time .*{re.escape(RANGE)}"):
        list(read_stream(path, TermDictionary()))
    (row,) = _trig_records(path, 0, "b", 1)
    assert row.syntax == "error" and RANGE in json.loads(row.payload)["reason"]


def test_an_atom_stream_time_outside_the_range_is_positioned() -> None:
    data = io.BytesIO(json.dumps({"time": BEYOND, "atoms": ["p"]}).encode() + b"\n")
    with pytest.raises(ChronologSyntaxError, match=re.escape(RANGE)) as caught:
        list(read_atom_stream(data))
    assert (caught.value.lineno, caught.value.offset) == (1, 2)


DOTR = """PREFIX : <http://e/>
EVENT A AS SELECT ?s WHERE { ?s :p 1 }
EVENT B AS SELECT ?s WHERE { ?s :p 2 }
RULE :r DEFINE { ?s a :X } FROM B AND LAST A WITHIN %s FROM B WITH ?s = B.s
"""


@pytest.mark.parametrize("language, text, line, col", [
    ("dotr", DOTR % "99999999999 d", 4, 46),
    ("dotr", DOTR % "9007199254740992", 4, 46),
    ("csparql", "REGISTER QUERY q AS SELECT * FROM STREAM <s> [RANGE 9007199254740992 STEP 1] WHERE { ?s ?p ?o }", 1, 53),
    ("csparql", "REGISTER QUERY q AS SELECT * FROM STREAM <s> [RANGE 1s STEP 99999999999d] WHERE { ?s ?p ?o }", 1, 61),
    ("lars", "q :- time_win(9007199254740992, 0, 1, diamond(b))", 1, 6),
    ("lars", "q :- time_win(3, 0, 3002399751580331, diamond(b))", 1, 6),
    ("lars", "q :- tuple_win(99999999999999999999, diamond(b))", 1, 6),
])
def test_a_window_larger_than_the_time_range_is_a_positioned_error(
        language: str, text: str, line: int, col: int) -> None:
    with pytest.raises(ChronologSyntaxError) as caught:
        compile_program(ProgramSpec(language, text, f"p.{language}"))
    error = caught.value
    assert (error.filename, error.lineno, error.offset) == (f"p.{language}", line, col)
    assert "2^53 = 9007199254740992" in error.message


def test_the_largest_window_in_the_range_compiles() -> None:
    compile_program(ProgramSpec("dotr", DOTR % "9007199254740991", "p.dotr"))
    compile_program(ProgramSpec("lars", "q :- time_win(9007199254740991, 0, 1, diamond(b))", "p.lars"))
