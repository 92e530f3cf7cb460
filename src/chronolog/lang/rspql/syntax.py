"""RSP-QL's syntax (the W3C RSP community group's draft): a SPARQL query with a registration
header, named windows over named streams, and window graph patterns.

    PREFIX : <http://example.org/>
    REGISTER RSTREAM :out AS                       (or ISTREAM, DSTREAM)
    SELECT ?x ?y
    FROM NAMED WINDOW :w ON :s [RANGE PT5S STEP PT1S]   ([FROM t0], [FROM t1 TO t2])
    FROM NAMED <file:places.ttl>
    FROM <file:static.ttl>
    EVALUATE AT 10, 20                             (optional: the evaluation instants)
    CONSUME CHRONOLOGICAL                          (optional: RSEP-QL's consumption policy)
    WHERE { WINDOW :w { ?x :p ?y } GRAPH <file:places.ttl> { ?y :in ?z } }

or, with RSEP-QL's event patterns (:mod:`.matchsyntax`), ``WHERE { MATCH ( E ) }``: a
MATCH alone in its WHERE, under ``SELECT *`` or a list of its variables, is evaluated by
itself (:class:`chronolog.lang.rspql.matching.MatchProgram`); beside other patterns, it is
a graph pattern of the SPARQL query: its text is replaced by ``VALUES (?v ...) {( UNDEF
...)}`` over its variables (one row: an empty VALUES would lose them), whose rows become the
event mappings at each instant
(:mod:`chronolog.lang.rspql.mixed`). One MATCH per query.

The RSP-QL clauses are read here and cut out of the text (positions kept,
:mod:`chronolog.sparql.extension`); ``WINDOW w { P }`` is SPARQL's ``GRAPH w { P }`` over
the window's content, so the keyword is rewritten in place (the two have the same width).
The rest is SPARQL, for the SPARQL layer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from chronolog.errors import SourceMap
from chronolog.lang.rspql.events import Consumption, Pattern, variables_of
from chronolog.lang.rspql.matchsyntax import parse_match
from chronolog.sparql.extension import blank, mask_iris, prefixes, read_iri, window_duration
from chronolog.window.r2s import R2S
from chronolog.window.scope import Bounds, IntervalWindow, LandmarkWindow, SlidingWindow, Window

_KEYWORD = r"(?<![?$:\w-])"  # a keyword, not part of a variable or a name (?from, :window)
_REGISTER = re.compile(_KEYWORD + r"REGISTER\s+(RSTREAM|ISTREAM|DSTREAM)\b", re.I)
_AS = re.compile(r"\s+AS\b", re.I)
_FROM_WINDOW = re.compile(_KEYWORD + r"FROM\s+NAMED\s+WINDOW\b", re.I)
_ON = re.compile(r"\s+ON\b", re.I)
_SPEC = re.compile(r"\s*\[\s*(?:RANGE\s+(\S+?)\s+STEP\s+(\S+?)|FROM\s+(\S+?)(?:\s+TO\s+(\S+?))?)\s*\]", re.I)
_FROM_NAMED = re.compile(_KEYWORD + r"FROM\s+NAMED\b", re.I)
_FROM = re.compile(_KEYWORD + r"FROM\b", re.I)
_EVALUATE = re.compile(_KEYWORD + r"EVALUATE\s+AT\s+(\d+(?:\s*,\s*\d+)*)", re.I)
_CONSUME = re.compile(_KEYWORD + r"CONSUME\s+(\w+)", re.I)
_MATCH = re.compile(_KEYWORD + r"MATCH\b", re.I)
_SELECT = re.compile(r"\s*SELECT\s+(\*|(?:[?$]\w+\s*)+)\s*(?=WHERE\b|\{)", re.I)
_EMPTY_WHERE = re.compile(r"\s*(?:WHERE\s*)?\{\s*\}\s*$", re.I)
_WINDOW_PATTERN = re.compile(_KEYWORD + r"WINDOW\b", re.I)
_SPACE = re.compile(r"\s*")
_WHERE = re.compile(_KEYWORD + r"WHERE\b|\{", re.I)


@dataclass(frozen=True)
class NamedWindow:
    """``FROM NAMED WINDOW name ON stream [spec]`` (``pos``: where the clause starts)."""

    name: str
    stream: str
    window: Window
    pos: int


@dataclass(frozen=True)
class RspqlQuery:
    """A parsed RSP-QL query: its name and R2S operator, its windows, static graphs (default
    and named), its fixed evaluation instants (None: every STEP), and the SPARQL text left
    once the RSP-QL clauses are cut out."""

    name: str
    r2s: R2S
    windows: tuple[NamedWindow, ...]
    static: tuple[str, ...]
    named: tuple[str, ...]
    instants: tuple[int, ...] | None
    sparql: str
    filename: str | None
    consume: Consumption | None = None  # CONSUME's policy, if given
    match: Pattern | None = None  # the MATCH ( E ) of the WHERE
    alone: bool = False  # the MATCH is all the WHERE holds (the SPARQL text is then unused)
    select: tuple[str, ...] = ()  # a lone MATCH's SELECT variables (without ?)


def parse(text: str, filename: str | None = None, ms_per_unit: int = 1) -> RspqlQuery:
    smap = SourceMap(text, filename)
    known = prefixes(text)
    masked = mask_iris(text)  # searched for clauses; blanked as they are read, like the output
    sparql = text

    def cut(start: int, end: int) -> None:
        nonlocal masked, sparql
        masked, sparql = blank(masked, start, end), blank(sparql, start, end)

    def after(pos: int) -> int:
        """Past the spaces at ``pos`` (read in the text: the masked text has its IRIs blanked)."""
        return _SPACE.match(text, pos).end()  # type: ignore[union-attr]

    def iri_at(pos: int, what: str) -> tuple[str, int]:
        """The IRI after the keyword ending at ``pos``."""
        pos = after(pos)
        found = read_iri(text, pos, known)
        if found is None:
            raise smap.error(f"expected {what} (an IRI or a prefixed name with a declared prefix)", pos)
        return found

    head = _REGISTER.search(masked)
    if head is None:
        raise smap.error("expected REGISTER RSTREAM|ISTREAM|DSTREAM name AS before the query", 0)
    name, end = iri_at(head.end(), "the query's name after REGISTER " + head.group(1).upper())
    tail = _AS.match(masked, end)
    if tail is None:
        raise smap.error("expected AS after the query's name", end)
    cut(head.start(), tail.end())

    windows: list[NamedWindow] = []
    for m in list(_FROM_WINDOW.finditer(masked)):
        window_name, end = iri_at(m.end(), "the window's name after FROM NAMED WINDOW")
        on = _ON.match(masked, end)
        if on is None:
            raise smap.error("expected ON and the stream's IRI after the window's name", end)
        stream, end = iri_at(on.end(), "the stream's IRI after ON")
        spec = _SPEC.match(masked, end)
        if spec is None:
            raise smap.error("expected the window after the stream: [RANGE a STEP b], [FROM t0] or [FROM t1 TO t2]",
                             end)
        if any(w.name == window_name for w in windows):
            raise smap.error(f"window <{window_name}> is declared twice", after(m.end()))
        windows.append(NamedWindow(window_name, stream, _window(spec, smap, ms_per_unit), m.start()))
        cut(m.start(), spec.end())
    if not windows:
        raise smap.error("an RSP-QL query reads at least one window: FROM NAMED WINDOW :w ON :s [RANGE a STEP b]",
                         tail.end())

    named: list[str] = []
    static: list[str] = []
    for pattern, found in ((_FROM_NAMED, named), (_FROM, static)):
        for m in list(pattern.finditer(masked)):
            iri, end = iri_at(m.end(), "a graph's IRI after FROM" + (" NAMED" if found is named else ""))
            if iri in {w.name for w in windows}:
                raise smap.error(f"<{iri}> names a window; a static graph needs another name", after(m.end()))
            found.append(iri)
            cut(m.start(), end)
    dataset_end = max([w.pos for w in windows] + [m.start() for m in _FROM.finditer(mask_iris(text))])

    instants = None
    evaluate = _EVALUATE.search(masked)
    if evaluate is not None:
        where = _WHERE.search(masked, 0)
        if evaluate.start() < dataset_end or (where is not None and where.start() < evaluate.start()):
            raise smap.error("EVALUATE AT goes after the dataset clause (the FROM clauses) and before WHERE",
                             evaluate.start())
        instants = tuple(sorted({int(t) for t in re.split(r"\s*,\s*", evaluate.group(1))}))
        cut(evaluate.start(), evaluate.end())

    consume = None
    found = consume_at = _CONSUME.search(masked)
    if found is not None:
        policies = {c.name: c for c in Consumption}
        if found.group(1).upper() not in policies:
            raise smap.error("expected UNRESTRICTED, CHRONOLOGICAL or RECENT after CONSUME", found.start(1))
        consume = policies[found.group(1).upper()]
        cut(found.start(), found.end())

    declared = {w.name for w in windows}
    match: Pattern | None = None
    values: tuple[int, int, str] | None = None  # where the MATCH was, and the VALUES in its place
    found = _MATCH.search(masked)
    if found is not None:
        match, end = parse_match(text, found.end(), smap, known, declared)
        cut(found.start(), end)
        if (again := _MATCH.search(masked)) is not None:
            raise smap.error("a query has one MATCH ( E ); join several event patterns inside it with SEQ",
                             again.start())
        variables = variables_of(match)
        select = _SELECT.search(masked)
        if select is not None and _EMPTY_WHERE.match(masked, select.end()):
            names = tuple(v[1:] for v in select.group(1).split()) if select.group(1) != "*" else ()
            for var in names:
                if var not in variables:
                    raise smap.error(f"?{var} is not a variable of the MATCH pattern", select.start(1))
            return RspqlQuery(name, R2S[head.group(1).upper()], tuple(windows), tuple(static), tuple(named),
                              instants, sparql, filename, consume, match, True, names or tuple(variables))
        values = (found.start(), end, f"VALUES ({' '.join('?' + v for v in variables)}) {{({' UNDEF' * len(variables)} )}}")
    elif consume is not None:
        raise smap.error("CONSUME applies to a MATCH ( E ) pattern; this query has none", consume_at.start())  # type: ignore[union-attr]
    for m in list(_WINDOW_PATTERN.finditer(masked)):
        iri, _ = iri_at(m.end(), "the window's name after WINDOW")
        if iri not in declared:
            raise smap.error(f"no window <{iri}> is declared (FROM NAMED WINDOW <{iri}> ON ...)", after(m.end()))
        sparql = sparql[:m.start()] + "GRAPH " + sparql[m.start() + 6:]
    if values is not None:  # last: the text may grow
        sparql = _overwrite(sparql, *values)
    return RspqlQuery(name, R2S[head.group(1).upper()], tuple(windows), tuple(static), tuple(named), instants,
                      sparql, filename, consume, match)


def _overwrite(text: str, start: int, end: int, words: str) -> str:
    """``text`` with ``text[start:end]`` replaced by ``words`` and spaces, its line breaks
    kept: the words go on the region's first line, which grows if they do not fit, so every
    later line stays where it was (and, when the region spans lines, every column)."""
    region = blank(text, start, end)[start:end]
    line = region.find("\n")
    return text[:start] + words + region[min(len(words), len(region) if line < 0 else line):] + text[end:]


def _window(spec: re.Match, smap: SourceMap, ms_per_unit: int) -> Window:
    """The window of a ``[...]`` spec: RANGE/STEP durations (ISO 8601 or time units),
    FROM/TO instants (time units)."""
    def duration(group: int) -> int:
        return window_duration(spec, group, smap, ms_per_unit)

    def instant(group: int) -> int:
        if not spec.group(group).isdigit():
            raise smap.error(f"expected a time instant (an integer in time units), not {spec.group(group)!r}",
                             spec.start(group))
        return int(spec.group(group))

    if spec.group(1) is not None:
        return SlidingWindow(duration(1), duration(2), Bounds.RSEPQL)
    if spec.group(4) is None:
        return LandmarkWindow(instant(3))
    start, end = instant(3), instant(4)
    if end < start:
        raise smap.error("an interval window [FROM t1 TO t2] needs t1 <= t2", spec.start(4))
    return IntervalWindow(start, end)
