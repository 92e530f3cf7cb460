"""Fuzz inputs shared by every reader's fuzz test: text built from a grammar's tokens mixed
with random characters, and mutations of valid files (one strategy, so every reader gets
the same kinds of damage)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from hypothesis import strategies as st

from chronolog.errors import ChronologError, ChronologSyntaxError

ROOT = Path(__file__).resolve().parents[2]
NASTY = ["\ud800", "\x00", "\ufeff", "\u2028", "\r", "\t", "\\", '"', "'", "99999999999999999999999", "-1", "1e999",
         "\n", " ", "{", "}", "[", "]", "(", ")", "<", ">", ".", ",", ";", ":", "#"]


def corpus(*patterns: str) -> list[str]:
    """The texts of the example and fixture files matching ``patterns`` (globs under the repo)."""
    paths = sorted({p for pattern in patterns for p in ROOT.glob(pattern)})
    texts = [p.read_text(encoding="utf-8") for p in paths]
    assert texts, f"no file matches {patterns}"
    return texts


def _mutate(text: str, edits: list[tuple[int, int, int, str]]) -> str:
    for kind, at, length, piece in edits:
        at %= len(text) + 1
        if kind == 0:  # insert
            text = text[:at] + piece + text[at:]
        elif kind == 1:  # delete
            text = text[:at] + text[at + length:]
        elif kind == 2:  # replace
            text = text[:at] + piece + text[at + length:]
        else:  # duplicate a slice
            text = text[:at] + text[at:at + length] + text[at:]
    return text


def fuzz_texts(tokens: Sequence[str], valid: Sequence[str], max_tokens: int = 30) -> st.SearchStrategy[str]:
    """Token soup, random text, and valid texts with a few random edits."""
    pieces = st.sampled_from([*tokens, *NASTY]) | st.text(max_size=3)
    soup = st.lists(pieces, max_size=max_tokens).map("".join)
    edit = st.tuples(st.integers(0, 3), st.integers(0, 1 << 16), st.integers(0, 40), pieces)
    mutated = st.builds(_mutate, st.sampled_from(list(valid)), st.lists(edit, min_size=1, max_size=4))
    return soup | st.text(max_size=60) | mutated


def assert_positioned(error: ChronologError, filename: str, text: str | None = None) -> None:
    """A syntax error names the file and a line and column inside ``text`` (when given)."""
    if isinstance(error, ChronologSyntaxError):
        assert error.filename == filename, str(error)
        assert error.lineno and error.lineno >= 1 and error.offset and error.offset >= 1, str(error)
        if text is not None:
            breaks = sum(text.count(c) for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
            assert error.lineno <= breaks + 1, str(error)
    str(error)  # the message itself must not fail
