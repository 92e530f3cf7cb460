"""Query languages that extend SPARQL (C-SPARQL, RSP-QL) write their own clauses around
a SPARQL query. Their parsers find those clauses, read them, and cut them out of the text
(:func:`blank`: replaced by spaces, line breaks kept), so that what is left is a SPARQL
query with every position unchanged: the one SPARQL parser reads it
(:func:`prepare_extended`), and its errors point at the right line and column of the
original file, and show its line as written.

>>> text = "PREFIX : <http://e/>\\nSELECT * FROM STREAM :s [RANGE 1s STEP 1s] WHERE { ?x :p ?y }"
>>> prefixes(text)
{'': 'http://e/'}
>>> blank(text, 30, 63)[21:]
'SELECT *                                   WHERE { ?x :p ?y }'
>>> read_iri(text, 42, prefixes(text))
('http://e/s', 44)
"""
from __future__ import annotations

import re

from chronolog.errors import ChronologSyntaxError, SourceMap
from chronolog.sparql import PreparedQuery, prepare
from chronolog.sparql.expressions import Functions
from chronolog.sparql.parse import mask_iris
from chronolog.terms import TermDictionary
from chronolog.timeunits import TimeFormatError, parse_duration

_PREFIX = re.compile(r"\bPREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>", re.I)
_IRI = re.compile(r"<([^<>\"{}|^`\\\s]*)>|([A-Za-z][\w.-]*)?:((?:[\w.-]|%[0-9A-Fa-f]{2})*)")

__all__ = ["blank", "mask_iris", "prefixes", "prepare_extended", "read_iri", "window_duration"]


def window_duration(spec: re.Match, group: int, smap: SourceMap, ms_per_unit,
                    what: str = "a window's range and step") -> int:
    """A window's RANGE or STEP (group ``group`` of its ``[...]`` match; or ``what`` else)
    in time units: a positive duration, or an error at its place."""
    try:
        value = parse_duration(spec.group(group), ms_per_unit=ms_per_unit)
    except TimeFormatError as exc:
        raise smap.error(str(exc), spec.start(group)) from None
    if value <= 0:
        raise smap.error(f"{what} must be positive", spec.start(group))
    return value


def prefixes(text: str) -> dict[str, str]:
    """The PREFIX declarations of a query."""
    return {m.group(1) or "": m.group(2) for m in _PREFIX.finditer(text)}


def blank(text: str, start: int, end: int) -> str:
    """``text`` with ``text[start:end]`` replaced by spaces (line breaks kept)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def read_iri(text: str, pos: int, known: dict[str, str]) -> tuple[str, int] | None:
    """The IRI (``<...>`` or a prefixed name) at ``pos``, and where it ends; None if there
    is none or its prefix is not declared."""
    m = _IRI.match(text, pos)
    if m is None:
        return None
    if m.group(1) is not None:
        return m.group(1), m.end()
    prefix = m.group(2) or ""
    if prefix not in known:
        return None
    return known[prefix] + m.group(3), m.end()


def prepare_extended(sparql: str, original: str, dictionary: TermDictionary, filename: str | None,
                     functions: Functions | None = None) -> PreparedQuery:
    """The SPARQL query left in ``sparql`` once the language's clauses were cut out of
    ``original``, prepared (with the language's extension ``functions``); a syntax error
    shows the line of ``original``."""
    try:
        return prepare(sparql, dictionary, filename=filename, functions=functions)
    except ChronologSyntaxError as exc:
        lines = original.splitlines()
        if exc.lineno and exc.lineno <= len(lines):
            exc.text = lines[exc.lineno - 1]
        raise
