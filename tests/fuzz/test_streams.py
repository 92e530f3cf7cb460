"""Fuzzing the RDF stream readers: any TriG or JSON Lines bytes give elements or a
ChronologError (FILE:LINE:COL for a syntax error), never another exception."""
from __future__ import annotations

import io
import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chronolog.errors import ChronologError
from chronolog.lateness import ErrorPolicy, LatePolicy
from chronolog.streams import LineError, jsonl_element, read_stream, scan_stream
from chronolog.terms import TermDictionary

from fuzz.texts import assert_positioned, corpus, fuzz_texts

TRIG_TOKENS = [
    "@prefix ex: <http://example.org/> .\n", "@prefix prov: <http://www.w3.org/ns/prov#> .\n",
    "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n", "ex:g1", "ex:g2", " prov:generatedAtTime ",
    '"10"^^xsd:integer', '"2014-08-01T07:30:00Z"^^xsd:dateTime', '"-5"^^xsd:integer', '"x"^^xsd:dateTime',
    " { ", " } ", "ex:a ex:p ex:b", ' "lit"@fr', " 61.5", " .\n", " ; ", "_:b", "GRAPH", "<urn:g>",
    '"\\ud800"', '"99999999999999999999999999"^^xsd:integer',
]
JSONL_TOKENS = [
    '{"time": ', "10", "-3", "1e3", '"2014-08-01T07:30:00Z"', "18446744073709551616", ', "graph": "', '"}\n', "}\n",
    "<http://e/a> <http://e/p> 1 .", '\\"x\\"', "\\ud800", "\\n", '"source": "s"', "null", "[]", "true", ", ",
]
TURTLE_TOKENS = ["<http://e/a>", " <http://e/p> ", "1", '"x"', "@en", "^^<http://www.w3.org/2001/XMLSchema#integer>", " .",
                 "_:b", " ; ", "\ud800", "\udfff", "\\U00110000", "\\u0041", "@prefix e: <http://e/> .", "e:a"]
TIMES = st.integers(-1000, 1000) | st.integers() | st.integers(-(1 << 70), 1 << 70) | st.sampled_from(
    ["2014-08-01T07:30:00Z", "9999-12-31T23:59:59Z", "-9999-01-01T00:00:00Z", "x", 1e400, -1e400, 2.5, None, True])
GRAPHS = st.sampled_from(TURTLE_TOKENS).map(lambda token: f"<http://e/a> <http://e/p> \"{token}\" .") | fuzz_texts(
    TURTLE_TOKENS, ["<http://e/a> <http://e/p> 1 ."], max_tokens=8)
RECORDS = st.fixed_dictionaries({"time": TIMES, "graph": GRAPHS}) | st.fixed_dictionaries(
    {}, optional={"time": TIMES, "graph": GRAPHS | st.integers(), "source": st.text(max_size=5), "other": st.none()})
JSON_LINES = st.lists(RECORDS.map(json.dumps), max_size=4).map("\n".join)
TRIG = corpus("examples/**/*.trig", "tests/fixtures/**/*.trig")
JSONL = corpus("tests/fixtures/streams/*.jsonl", "tests/fixtures/dotr/**/*.jsonl", "tests/fixtures/csparql/**/*.jsonl")


def _read(text: str, format: str, skip: bool) -> None:
    source = io.BytesIO(text.encode("utf-8", "surrogatepass"))
    source.name = f"f.{format}"
    errors = ErrorPolicy(lambda error: assert_positioned(error, source.name, text)) if skip else None
    try:
        for _ in read_stream(source, TermDictionary(), format=format, late=LatePolicy.drop(), on_error=errors):
            pass
    except ChronologError as error:
        assert_positioned(error, source.name, text)


@settings(max_examples=300, deadline=None)
@given(fuzz_texts(TRIG_TOKENS, TRIG))
def test_any_trig_gives_elements_or_a_positioned_error(text: str) -> None:
    _read(text, "trig", skip=False)


@settings(max_examples=300, deadline=None)
@given(fuzz_texts(JSONL_TOKENS, JSONL) | JSON_LINES)
@example(json.dumps({"time": 7, "graph": '<urn:a> <urn:p> "\ud800" .'}))  # was an AttributeError in pyoxigraph
def test_any_json_lines_give_elements_or_a_positioned_error(text: str) -> None:
    _read(text, "jsonl", skip=False)
    _read(text, "jsonl", skip=True)


@settings(max_examples=300, deadline=None)
@given(fuzz_texts(JSONL_TOKENS, [line for text in JSONL for line in text.splitlines() if line]) | JSON_LINES)
def test_any_json_line_gives_an_element_or_a_line_error(line: str) -> None:
    """The Spark source reads lines one by one through jsonl_element."""
    try:
        jsonl_element(line, TermDictionary(), None, 1)
    except LineError as error:
        assert error.col >= 1


def test_scan_goes_on_after_a_bad_line() -> None:
    data = io.BytesIO(b'{"time": 1, "graph": ""}\n{"time": 1e400}\n{"time": 2, "graph": ""}\n')
    items = list(scan_stream(data, TermDictionary(), format="jsonl"))
    assert [type(item).__name__ for item in items] == ["tuple", "ChronologSyntaxError", "tuple"]
