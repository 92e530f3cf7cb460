"""C-SPARQL's syntax: a SPARQL query with a registration header and stream windows.

    REGISTER QUERY name AS            (or REGISTER STREAM name AS: its CONSTRUCT is a stream;
                                       without a header: a query named after its file;
                                       COMPUTED EVERY d before AS: evaluated every d)
    PREFIX : <http://example.org/>
    SELECT ?s (COUNT(?o) AS ?n)
    FROM STREAM <http://example.org/s> [RANGE 10s STEP 5s]   ([RANGE d TUMBLING], [TRIPLES n])
    FROM <file:static.ttl>
    WHERE { ?s :p ?o } GROUP BY ?s

The C-SPARQL clauses are read here and cut out of the text (positions kept,
:mod:`chronolog.sparql.extension`); the rest is SPARQL, for the SPARQL layer.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from chronolog.errors import SourceMap
from chronolog.sparql.extension import blank, mask_iris, prefixes, read_iri, window_duration
from chronolog.window.scope import Bounds, SlidingWindow, TupleWindow, Window

_REGISTER = re.compile(r"\bREGISTER\s+(QUERY|STREAM)\s+([^\s]+)\s+"
                       r"(?:COMPUTED\s+EVERY\s+(\S+?(?:\s+[A-Za-z]+)?)\s+)?AS\b", re.I)
_FROM_STREAM = re.compile(r"\bFROM\s+STREAM\b", re.I)
_FROM = re.compile(r"\bFROM\b(?!\s+(?:STREAM|NAMED)\b)", re.I)
_SPACE = re.compile(r"\s*")
_WINDOW = re.compile(r"\s*\[\s*(?:RANGE\s+(\S+?)\s+(?:STEP\s+(\S+?)|(TUMBLING))|TRIPLES\s+(\S+?))\s*\]", re.I)


@dataclass(frozen=True)
class StreamWindow:
    stream: str
    window: Window
    pos: int


@dataclass(frozen=True)
class CsparqlQuery:
    """A parsed C-SPARQL query: its name, whether it registers a stream, its windows, its
    static graphs and the SPARQL text left once the C-SPARQL clauses are cut out."""

    name: str
    is_stream: bool
    windows: tuple[StreamWindow, ...]
    static: tuple[str, ...]
    sparql: str
    filename: str | None
    every: int | None = None  # COMPUTED EVERY, in time units (None: at each window close)


def parse(text: str, filename: str | None = None, ms_per_unit: int = 1) -> CsparqlQuery:
    smap = SourceMap(text, filename)
    masked = mask_iris(text)
    known = prefixes(text)
    sparql = text
    head = _REGISTER.search(masked)
    every = None
    if head is None:  # a bare query, as CityBench writes them (it adds the header): named after its file
        name = os.path.splitext(os.path.basename(filename))[0] if filename else "query"
    else:
        name = text[head.start(2):head.end(2)].strip("<>")
        sparql = blank(sparql, head.start(), head.end())
        if head.group(3) is not None:
            every = window_duration(head, 3, smap, ms_per_unit, "COMPUTED EVERY")
    windows = []
    for m in _FROM_STREAM.finditer(masked):
        at = _SPACE.match(text, m.end()).end()  # type: ignore[union-attr]
        iri = read_iri(text, at, known)
        if iri is None:
            raise smap.error("expected the stream's IRI after FROM STREAM", at)
        stream, end = iri
        spec = _WINDOW.match(masked, end)
        if spec is None:
            raise smap.error("expected a window after the stream: [RANGE d STEP d], [RANGE d TUMBLING] or "
                             "[TRIPLES n]", end)
        windows.append(StreamWindow(stream, _window(spec, smap, ms_per_unit), m.start()))
        sparql = blank(sparql, m.start(), spec.end())
    static = []
    for m in _FROM.finditer(masked):
        at = _SPACE.match(text, m.end()).end()  # type: ignore[union-attr]
        iri = read_iri(text, at, known)
        if iri is None:
            raise smap.error("expected an IRI after FROM", at)
        static.append(iri[0])
        sparql = blank(sparql, m.start(), iri[1])
    if not windows:
        raise smap.error("a C-SPARQL query reads at least one stream: FROM STREAM <iri> [RANGE d STEP d]",
                         0 if head is None else head.end())
    return CsparqlQuery(name, head is not None and head.group(1).upper() == "STREAM", tuple(windows), tuple(static),
                        sparql, filename, every)


def _window(spec: re.Match, smap: SourceMap, ms_per_unit: int) -> Window:
    def duration(group: int) -> int:
        return window_duration(spec, group, smap, ms_per_unit)

    if spec.group(4) is not None:
        if not spec.group(4).isdigit() or int(spec.group(4)) <= 0:
            raise smap.error("TRIPLES takes a positive number of triples", spec.start(4))
        return TupleWindow(int(spec.group(4)))
    width = duration(1)
    return SlidingWindow(width, width if spec.group(3) else duration(2), Bounds.CSPARQL)
