"""Fuzzing the atom stream reader: any JSON Lines bytes give elements or a positioned
ChronologError, and any atom line gives an element or a LineError, never another exception."""
from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chronolog.atomstreams import atom_element, read_atom_stream
from chronolog.errors import ChronologError
from chronolog.lateness import ErrorPolicy, LatePolicy
from chronolog.streams import LineError

from fuzz.texts import assert_positioned, corpus, fuzz_texts

ATOM_TOKENS = ["p", "q(a)", "temp(", ")", "(", ",", "'", "\\'", "\\\\", "'http://e/p#a'", "7", "-3", "2.50", " ", "X",
               "\ud800", "not", "007", "1e5", "''"]
LINE_TOKENS = ['{"time": ', "0", "-7", "18446744073709551616", '"2014-08-01T07:30:00Z"', ', "atoms": [', "]}\n", '"p(a)"',
               '"q"', ", ", '"', "null", '"graph": "<urn:a> <urn:p> 1 ."', "}\n"]
ATOMS = st.lists(fuzz_texts(ATOM_TOKENS, ["p(a,b)", "temp(105)", "'http://e/p'('x', 3)"], max_tokens=6) | st.integers(),
                 max_size=3)
RECORDS = st.fixed_dictionaries({"time": st.integers(-1000, 1000) | st.integers(), "atoms": ATOMS}) | st.fixed_dictionaries(
    {}, optional={"time": st.integers() | st.text(max_size=4) | st.none(), "atoms": ATOMS | st.text(max_size=4),
                  "source": st.text(max_size=3), "other": st.none()})
LINES = st.lists(RECORDS.map(json.dumps), max_size=4).map("\n".join)
VALID = corpus("tests/fixtures/lars/**/*.jsonl", "examples/lars/*.jsonl")


def _read(text: str, skip: bool) -> None:
    source = io.BytesIO(text.encode("utf-8", "surrogatepass"))
    source.name = "f.jsonl"
    errors = ErrorPolicy(lambda error: assert_positioned(error, "f.jsonl", text)) if skip else None
    try:
        for _ in read_atom_stream(source, format="atoms", late=LatePolicy.drop(), on_error=errors):
            pass
    except ChronologError as error:
        assert_positioned(error, "f.jsonl", text)


@settings(max_examples=300, deadline=None)
@given(fuzz_texts(LINE_TOKENS, VALID) | LINES)
def test_any_atom_stream_gives_elements_or_a_positioned_error(text: str) -> None:
    _read(text, skip=False)
    _read(text, skip=True)


@settings(max_examples=300, deadline=None)
@given(LINES)
def test_any_atom_line_gives_an_element_or_a_line_error(line: str) -> None:
    """The Spark source reads atom lines one by one through atom_element."""
    try:
        atom_element(line)
    except LineError as error:
        assert error.col >= 1
