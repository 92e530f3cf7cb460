"""Stream readers and writers: TriG and JSON Lines streams of time-annotated RDF graphs.

A stream is a sequence of elements ``(time, graph)`` in non-decreasing time; the elements
with one time form a time point. Readers stream their input (memory holds the element
being read, never the file) and yield :class:`StreamElement` values in file order, their
triples dictionary-encoded. An element older than the stream's current time (the largest
time read so far) is late and goes to the reader's :class:`LatePolicy`: rejected with an
error that names it, or diverted (counted and handed to a sink); never dropped silently.

**TriG** (``.trig``): one named graph per element, its time in the default graph as
``<g> prov:generatedAtTime "..."^^xsd:dateTime`` (epoch time) or an ``xsd:integer``
literal (time units). So that a reader needs only the current element in memory:

- an element's graph is one contiguous block of quads (one ``<g> { ... }``);
- its time triple comes just before the block or just after it, with no other element
  in between (both ``T(g) G(g) T(h) G(h)`` and ``G(g) T(g) G(h) T(h)`` are read);
- a time triple whose graph block does not follow it is an element with an empty graph
  (a time point that carries no data: that is how an empty element is written);
- elements are told apart by position, not by name: a later block reusing a graph name
  is another element with its own time triple;
- the default graph holds nothing but time triples.

Blank node labels are shared by the whole file (TriG's document scope).

**JSON Lines** (``.jsonl``, ``.ndjson``): one element per line,
``{"time": 10, "graph": "<Turtle or N-Triples text>"}``, the time an integer (time units)
or an ``xsd:dateTime`` string. Each ``graph`` is its own Turtle document, so blank node
labels are local to one element. Blank lines are skipped; a ``"source"`` key (the place a
late element was read from, in a late-element file) is ignored; other keys are an error.
"""
from __future__ import annotations

import heapq
import itertools
import json
import os
import re
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import IO, NamedTuple

import pyoxigraph
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, RdfFormat

from .errors import ChronologError, ChronologSyntaxError
from .lateness import ErrorPolicy, LatePolicy
from .formats import (
    EncodedTriple,
    Output,
    Source,
    encode_text,
    graph_text,
    parse_quads,
    quad_encoder,
    source_name,
)
from .terms import XSD, TermDictionary
from .timeunits import TimeFormatError, check_time, datetime_to_time, time_to_datetime

PROV = "http://www.w3.org/ns/prov#"
GENERATED_AT_TIME = NamedNode(PROV + "generatedAtTime")
_XSD_INTEGER = NamedNode(XSD + "integer")
_XSD_DATETIME = NamedNode(XSD + "dateTime")
_DATETIME_TYPES = frozenset((XSD + "dateTime", XSD + "dateTimeStamp"))

STREAM_FORMAT_BY_EXTENSION = {".trig": "trig", ".jsonl": "jsonl", ".ndjson": "jsonl"}
TIME_DATATYPES = ("integer", "dateTime")


class StreamElement(NamedTuple):
    """A timestamped RDF graph: its time point and its distinct encoded triples."""

    time: int
    triples: tuple[EncodedTriple, ...]


class StreamError(ChronologError):
    """A stream element that cannot be read (no time, two times, stray default-graph
    triple); the message names the file and the element."""


@dataclass(frozen=True)
class LateElement:
    """A late element as a late-data sink receives it: what, where, and how late."""

    element: StreamElement
    where: str
    current_time: int


Located = tuple[StreamElement, str]


def apply_late_policy(located: Iterable[Located], policy: LatePolicy, lateness: int = 0) -> Iterator[StreamElement]:
    """The elements that are not late, in time order; late ones go to ``policy``.

    The one place where lateness is decided, for every reader (the Spark source decides
    the same way, per element, whatever the micro-batches): an element is late when it is
    older than the largest time before it minus ``lateness``; elements up to ``lateness``
    out of order are put back in place, each released once the stream has passed its time
    by more than ``lateness`` (at the end of the stream, all of them).

    >>> els = [(StreamElement(t, ()), f"s:{n}") for n, t in enumerate([1, 3, 2, 6, 4, 9, 5], 1)]
    >>> late = []
    >>> [e.time for e in apply_late_policy(els, LatePolicy.divert(late), lateness=2)], [x.where for x in late]
    ([1, 2, 3, 4, 6, 9], ['s:7'])
    """
    newest: int | None = None
    held: list[tuple[int, int, StreamElement]] = []
    items = iter(located)
    for n in itertools.count():
        try:
            element, where = next(items)
        except StopIteration:
            break
        except ChronologError:  # reading stops here: what was accepted before is handed out first
            while held:
                yield heapq.heappop(held)[2]
            raise
        if newest is not None and element.time < newest - lateness:
            policy.late(LateElement(element, where, newest), lambda: (
                f"{where}: late element at time {element.time}, older than the stream's current time {newest}"
                + (f" minus the lateness {lateness}" if lateness else "")))
            continue
        if newest is None or element.time > newest:
            newest = element.time
        if not lateness:
            yield element
            continue
        heapq.heappush(held, (element.time, n, element))
        while held and held[0][0] < newest - lateness:
            yield heapq.heappop(held)[2]
    while held:
        yield heapq.heappop(held)[2]


def group_time_points(elements: Iterable[StreamElement]) -> Iterator[tuple[int, list[StreamElement]]]:
    """``(time, elements)`` for each run of consecutive elements with equal time.

    >>> elements = [StreamElement(1, ()), StreamElement(1, ()), StreamElement(2, ())]
    >>> [(time, len(group)) for time, group in group_time_points(elements)]
    [(1, 2), (2, 1)]
    """
    for time, group in itertools.groupby(elements, key=lambda element: element.time):
        yield time, list(group)


def _is_pipe(path: str | os.PathLike[str]) -> bool:
    """A named pipe: a stream written by another process as it is read (``mkfifo``)."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def check_stream_file(source: str | os.PathLike[str]) -> None:
    """A clear error unless ``source`` is a readable stream file."""
    if os.path.isdir(source):
        raise ChronologError(f"{source}: is a directory, not a stream file (a directory that files land in "
                             "needs --runner spark)")
    if not (os.path.isfile(source) or _is_pipe(source)):
        raise ChronologError(f"{source}: no such stream file")
    if not os.access(source, os.R_OK):
        raise ChronologError(f"{source}: cannot read the stream file (permission denied)")


def detect_stream_format(path: str | os.PathLike[str]) -> str:
    """'trig' or 'jsonl', from the file extension."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    try:
        return STREAM_FORMAT_BY_EXTENSION[ext]
    except KeyError:
        raise ValueError(
            f"cannot tell the stream format of {os.fspath(path)!r} from its extension "
            "(.trig, .jsonl or .ndjson); give the format explicitly"
        ) from None


def _stream_format(format: str | None, source: Source | Output) -> str:
    if format is None:
        if not isinstance(source, (str, os.PathLike)):
            raise ValueError("the stream format of a file object must be given explicitly")
        return detect_stream_format(source)
    if format.lower() not in ("trig", "jsonl"):
        raise ValueError(f"unknown stream format {format!r}: expected 'trig' or 'jsonl'")
    return format.lower()


def read_stream(
    source: Source,
    dictionary: TermDictionary,
    *,
    format: str | None = None,
    late: LatePolicy | None = None,
    lateness: int = 0,
    on_error: ErrorPolicy | None = None,
    base_iri: str | None = None,
    ms_per_unit: int = 1,
) -> Iterator[StreamElement]:
    """The elements of a stream file (path or binary file object), streamed.

    The format is 'trig' or 'jsonl' (default: from the extension); ``late`` defaults to
    rejecting late elements; ``lateness`` is how far out of order an element may come
    (:func:`apply_late_policy`); ``on_error`` decides about malformed elements (default:
    stop with the error).
    """
    if on_error is not None and not on_error.stops:
        scanned = scan_stream(source, dictionary, format=format, base_iri=base_iri, ms_per_unit=ms_per_unit)
        return apply_late_policy(handle_errors(scanned, on_error), late or LatePolicy.reject(), lateness)
    reader = read_trig if _stream_format(format, source) == "trig" else read_jsonl
    return reader(source, dictionary, late=late, lateness=lateness, base_iri=base_iri, ms_per_unit=ms_per_unit)


def handle_errors(items: Iterable[Located | ChronologError], on_error: ErrorPolicy) -> Iterator[Located]:
    """The elements of a scan; each malformed one goes to ``on_error`` (which may raise)."""
    for item in items:
        if isinstance(item, ChronologError):
            on_error.error(item)
        else:
            yield item


def scan_stream(
    source: Source,
    dictionary: TermDictionary,
    *,
    format: str | None = None,
    base_iri: str | None = None,
    ms_per_unit: int = 1,
) -> Iterator[Located | ChronologError]:
    """Every element of a stream file with its place, in file order, late ones included;
    a malformed element comes as its error instead, and reading goes on after it.

    For a long-running pipeline that must report bad input and keep going. A JSON Lines
    stream resumes at the next line; a TriG file cannot be resynchronised after a syntax
    error, so its error is the last item. Lateness is for the caller to decide.

    >>> import io
    >>> data = io.BytesIO(b'{"time": 1, "graph": ""}\\nnot json\\n{"time": 2, "graph": ""}\\n')
    >>> [item[0].time if isinstance(item, tuple) else type(item).__name__
    ...  for item in scan_stream(data, TermDictionary(), format="jsonl")]
    [1, 'ChronologSyntaxError', 2]
    """
    if _stream_format(format, source) == "trig":
        try:
            yield from _TrigElements(source, dictionary, base_iri, ms_per_unit)
        except ChronologError as error:
            yield error
        return
    name = source_name(source) or "<stream>"
    lines = open(source, "rb") if isinstance(source, (str, os.PathLike)) else source
    try:
        for lineno, raw in enumerate(lines, 1):
            try:
                yield from _jsonl_lines([raw], name, dictionary, base_iri, ms_per_unit, lineno)
            except ChronologError as error:
                yield error
    finally:
        if lines is not source:
            lines.close()


def read_trig(
    source: Source,
    dictionary: TermDictionary,
    *,
    late: LatePolicy | None = None,
    lateness: int = 0,
    base_iri: str | None = None,
    ms_per_unit: int = 1,
) -> Iterator[StreamElement]:
    """The elements of a TriG stream (layout in the module docstring)."""
    located = _TrigElements(source, dictionary, base_iri, ms_per_unit)
    return apply_late_policy(located, late or LatePolicy.reject(), lateness)


class _TrigElements:
    """Assembles TriG quads into located elements, holding one element at a time."""

    def __init__(self, source: Source, dictionary: TermDictionary, base_iri: str | None, ms_per_unit: int) -> None:
        self._quads = parse_quads(source, format=RdfFormat.TRIG, base_iri=base_iri)
        self._name = source_name(source) or "<stream>"
        self._encode = quad_encoder(dictionary)  # one blank node scope: the whole file
        self._ms_per_unit = ms_per_unit
        self._count = 0  # elements assembled so far
        self._graph: object = None  # graph name of the open element (its block, or just after)
        self._time: int | None = None  # the open element's time, once known
        self._triples: list[EncodedTriple] = []
        self._given: tuple[object, int] | None = None  # a time read before its graph's block

    def __iter__(self) -> Iterator[Located]:
        encode = self._encode
        triples = self._triples
        for quad in self._quads:
            graph = quad.graph_name
            if graph == self._graph:
                triples.append(encode(quad))
            elif type(graph) is DefaultGraph:
                yield from self._time_triple(quad)
            else:
                yield from self._start(graph)
                self._triples.append(encode(quad))
            triples = self._triples
        yield from self._close()
        yield from self._flush_given()

    def _where(self, graph: object, number: int | None = None) -> str:
        return f"{self._name}: element {number or self._count + 1} (graph {graph})"

    def _located(self, graph: object, time: int, triples: list[EncodedTriple]) -> Located:
        self._count += 1
        return StreamElement(time, tuple(dict.fromkeys(triples))), self._where(graph, self._count)

    def _close(self) -> list[Located]:
        """Emit the open element: its block has ended."""
        if self._graph is None:
            return []
        if self._time is None:
            raise StreamError(
                f"{self._where(self._graph)}: no prov:generatedAtTime for this graph; give its "
                f"time in the default graph just before or just after the graph"
            )
        out = [self._located(self._graph, self._time, self._triples)]
        self._graph, self._time, self._triples = None, None, []
        return out

    def _flush_given(self) -> list[Located]:
        """Emit a time whose graph block never came as an element with an empty graph."""
        if self._given is None:
            return []
        graph, time = self._given
        self._given = None
        return [self._located(graph, time, [])]

    def _start(self, graph: object) -> list[Located]:
        out = self._close()
        if self._given is not None and self._given[0] == graph:
            self._time = self._given[1]
            self._given = None
        else:
            out += self._flush_given()
        self._graph = graph
        return out

    def _time_triple(self, quad: Quad) -> list[Located]:
        subject = quad.subject
        if quad.predicate != GENERATED_AT_TIME:
            raise StreamError(
                f"{self._name}: after element {self._count}: default-graph triple {quad.triple} "
                f"is not an element time; outside the elements' graphs only "
                f"<g> <{PROV}generatedAtTime> t triples may appear"
            )
        time = self._time_of(quad)
        if subject == self._graph:  # the time just after the block, or a repeat of it
            self._check_same(subject, self._time, time)
            self._time = time
            return self._close()
        out = self._close()
        if self._given is not None and self._given[0] == subject:
            self._check_same(subject, self._given[1], time)
            return out
        out += self._flush_given()
        self._given = (subject, time)
        return out

    def _check_same(self, graph: object, known: int | None, time: int) -> None:
        if known is not None and known != time:
            raise StreamError(f"{self._where(graph)}: two different times, {known} and {time}")

    def _time_of(self, quad: Quad) -> int:
        value = quad.object
        if isinstance(value, Literal):
            datatype = value.datatype.value
            try:
                if datatype == XSD + "integer":
                    return check_time(int(value.value))
                if datatype in _DATETIME_TYPES:
                    return datetime_to_time(value.value, ms_per_unit=self._ms_per_unit)
            except ValueError as error:  # TimeFormatError is one
                raise StreamError(f"{self._where(quad.subject)}: invalid time {value}: {error}") from None
        raise StreamError(
            f"{self._where(quad.subject)}: the time {value} is neither an xsd:dateTime "
            "nor an xsd:integer literal"
        )


def read_jsonl(
    source: Source,
    dictionary: TermDictionary,
    *,
    late: LatePolicy | None = None,
    lateness: int = 0,
    base_iri: str | None = None,
    ms_per_unit: int = 1,
) -> Iterator[StreamElement]:
    """The elements of a JSON Lines stream (layout in the module docstring).

    >>> import io
    >>> data = io.BytesIO(b'{"time": 5, "graph": "<http://e/a> <http://e/p> 1 ."}\\n')
    >>> [(element.time, len(element.triples)) for element in read_jsonl(data, TermDictionary())]
    [(5, 1)]
    """
    located = _jsonl_elements(source, dictionary, base_iri, ms_per_unit)
    return apply_late_policy(located, late or LatePolicy.reject(), lateness)


_GRAPH_VALUE = re.compile(r'"graph"\s*:\s*"')


def _jsonl_elements(
    source: Source, dictionary: TermDictionary, base_iri: str | None, ms_per_unit: int
) -> Iterator[Located]:
    name = source_name(source) or "<stream>"
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as lines:
            yield from _jsonl_lines(lines, name, dictionary, base_iri, ms_per_unit)
    else:
        yield from _jsonl_lines(source, name, dictionary, base_iri, ms_per_unit)


def _jsonl_lines(
    lines: Iterable[bytes], name: str, dictionary: TermDictionary, base_iri: str | None, ms_per_unit: int,
    first_line: int = 1,
) -> Iterator[Located]:
    for lineno, raw in enumerate(lines, first_line):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            col = len(raw[: error.start].decode("utf-8", "replace")) + 1
            raise ChronologSyntaxError("invalid UTF-8", name, lineno, col, None) from None
        if line.isspace() or not line:
            continue
        try:
            element = jsonl_element(line, dictionary, base_iri, ms_per_unit)
        except LineError as error:
            raise ChronologSyntaxError(error.message, name, lineno, error.col, line) from None
        yield element, f"{name}:{lineno}"


class LineError(Exception):
    """A problem at column ``col`` of the JSON line being read (the caller adds where)."""

    def __init__(self, message: str, col: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


_JSONL_KEYS = frozenset(("time", "graph", "source"))  # "source": where a late element came from


def jsonl_element(line: str, dictionary: TermDictionary, base_iri: str | None, ms_per_unit: int) -> StreamElement:
    """One JSON Lines element (raises LineError): shared with the Spark runner's executors."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise LineError(f"invalid JSON: {error.msg}", error.colno) from None
    if not isinstance(record, dict):
        raise LineError('a stream element must be a JSON object {"time": ..., "graph": "..."}')
    if not _JSONL_KEYS.issuperset(record):
        unknown = sorted(record.keys() - _JSONL_KEYS)[0]
        raise LineError(f'unknown key {unknown!r} in a stream element (expected "time" and "graph")')
    if "time" not in record:
        raise LineError('stream element has no "time"')
    time = jsonl_time(record["time"], ms_per_unit, line.find('"time"') + 1)
    graph = record.get("graph")
    if not isinstance(graph, str):
        what = "no" if graph is None else f"a {type(graph).__name__} as"
        raise LineError(f'stream element at time {time} has {what} "graph"; expected Turtle or N-Triples text')
    try:
        triples = encode_text(graph, dictionary, format=RdfFormat.TURTLE, base_iri=base_iri)
        return StreamElement(time, tuple(dict.fromkeys(triples)))
    except ChronologSyntaxError as error:
        match = _GRAPH_VALUE.search(line)
        col = _raw_index(line, match.end(), error.lineno or 1, error.offset or 1) + 1 if match else 1
        raise LineError(
            f'invalid Turtle in the "graph" of the element at time {time} '
            f"(graph line {error.lineno}, column {error.offset}): {error.message}",
            col,
        ) from None


def jsonl_time(value: object, ms_per_unit: int, col: int) -> int:
    """An element's "time" value in time units (raises LineError at ``col``)."""
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            return check_time(value)
        if isinstance(value, str):
            return datetime_to_time(value, ms_per_unit=ms_per_unit)
    except TimeFormatError as error:
        raise LineError(f'invalid "time": {error}', col) from None
    raise LineError(f'"time" must be an integer or an xsd:dateTime string, not {json.dumps(value)}', col)


def _raw_index(line: str, start: int, lineno: int, offset: int) -> int:
    """Index in the raw JSON ``line`` of the character at (lineno, offset) of the string
    literal whose content starts at ``start``: undoes JSON escapes while counting."""
    i, at_line, at_col = start, 1, 1
    while i < len(line) and (at_line, at_col) < (lineno, offset) and line[i] != '"':
        if line[i] != "\\":
            char, width = line[i], 1
        elif line[i + 1] == "u":
            code = int(line[i + 2 : i + 6], 16)
            surrogate_pair = 0xD800 <= code < 0xDC00 and line[i + 6 : i + 8] == "\\u"
            char, width = "u", 12 if surrogate_pair else 6
        else:
            char, width = "\n" if line[i + 1] == "n" else line[i + 1], 2
        i += width
        if char == "\n":
            at_line, at_col = at_line + 1, 1
        else:
            at_col += 1
    return i


def element_iri(time: int, n: int) -> str:
    """The default graph name of the ``n``-th (from 0) output element at ``time``."""
    return f"urn:chronolog:element:{time}:{n}"


class StreamWriter(ABC):
    """Writes elements one at a time to a path or binary file, flushing after each one,
    so a reader (or another chronolog) sees every element as soon as it is written.

    ``time_datatype`` is "integer" (time units) or "dateTime" (times are epoch time).
    A writer given a path opens and closes it; a file object is only flushed.
    """

    def __init__(
        self,
        output: Output,
        dictionary: TermDictionary,
        *,
        time_datatype: str = "integer",
        ms_per_unit: int = 1,
    ) -> None:
        if time_datatype not in TIME_DATATYPES:
            raise ValueError(f"time_datatype must be 'integer' or 'dateTime', not {time_datatype!r}")
        self._owned = isinstance(output, (str, os.PathLike))
        self._out: IO[bytes] = open(output, "wb") if self._owned else output  # type: ignore[arg-type]
        self._dictionary = dictionary
        self._as_datetime = time_datatype == "dateTime"
        self._ms_per_unit = ms_per_unit
        self.count = 0

    @abstractmethod
    def write(self, element: StreamElement, source: str | None = None) -> None:
        """Write one element; ``source`` (where a late element was read) goes with it."""

    @abstractmethod
    def write_text(self, time: int, ntriples: str) -> None:
        """Write one element given as N-Triples text that chronolog wrote (a Spark sink's
        outputs), with no dictionary between: the bytes ``write`` makes of its triples,
        each triple once."""

    def _emit(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()
        self.count += 1

    def close(self) -> None:
        if self._owned:
            self._out.close()
        else:
            self._out.flush()

    def __enter__(self) -> "StreamWriter":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class TrigWriter(StreamWriter):
    """Writes ``<g> prov:generatedAtTime t`` then ``<g> { ... }`` per element.

    Graph names come from ``graph_iri(time, n)``, n counting elements within a time point
    (default :func:`element_iri`).
    """

    def __init__(
        self,
        output: Output,
        dictionary: TermDictionary,
        *,
        time_datatype: str = "integer",
        ms_per_unit: int = 1,
        graph_iri: Callable[[int, int], str] = element_iri,
    ) -> None:
        super().__init__(output, dictionary, time_datatype=time_datatype, ms_per_unit=ms_per_unit)
        self._graph_iri = graph_iri
        self._last_time: int | None = None
        self._n = 0

    def write(self, element: StreamElement, source: str | None = None) -> None:
        graph = self._graph(element.time)
        decode = self._dictionary.decode  # the quads made straight from ids: no triple objects between
        self._emit(self._element(element.time, graph, [Quad(decode(s), decode(p), decode(o), graph)
                                                       for s, p, o in element.triples], source))

    def write_text(self, time: int, ntriples: str) -> None:
        # N-Triples is TriG's triple syntax: parsed inside the element's graph, the quads
        # come out whole (a third less work than a quad made of each triple)
        graph = self._graph(time)
        self._emit(self._element(time, graph, dict.fromkeys(pyoxigraph.parse(f"{graph} {{\n{ntriples}}}",
                                                                             RdfFormat.TRIG)), None))

    def _graph(self, time: int) -> NamedNode:
        """The next element's graph name."""
        self._n = self._n + 1 if time == self._last_time else 0
        self._last_time = time
        return NamedNode(self._graph_iri(time, self._n))

    def _element(self, time: int, graph: NamedNode, quads: Iterable[Quad], source: str | None) -> bytes:
        if self._as_datetime:
            stamp = Literal(time_to_datetime(time, ms_per_unit=self._ms_per_unit), datatype=_XSD_DATETIME)
        else:
            stamp = Literal(str(time), datatype=_XSD_INTEGER)
        note = f"# source: {source}\n".encode("utf-8") if source else b""  # a comment: readers skip it
        return note + pyoxigraph.serialize([Quad(graph, GENERATED_AT_TIME, stamp, DefaultGraph()), *quads],
                                           format=RdfFormat.TRIG)


class JsonlWriter(StreamWriter):
    """Writes ``{"time": t, "graph": "<N-Triples>"}`` per element, one per line."""

    def write(self, element: StreamElement, source: str | None = None) -> None:
        self._emit(self._encode(element.time, graph_text(element.triples, self._dictionary), source))

    def write_text(self, time: int, ntriples: str) -> None:
        # one triple per line (a line break inside a literal is escaped): each line once
        self._emit(self._encode(time, "".join(f"{line}\n" for line in dict.fromkeys(ntriples.split("\n")) if line),
                                None))

    def _encode(self, time: int, graph: str, source: str | None) -> bytes:
        stamp: int | str = time_to_datetime(time, ms_per_unit=self._ms_per_unit) if self._as_datetime else time
        record: dict[str, object] = {"time": stamp, "graph": graph}
        if source:
            record["source"] = source
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def open_stream_writer(
    output: Output,
    dictionary: TermDictionary,
    *,
    format: str | None = None,
    time_datatype: str = "integer",
    ms_per_unit: int = 1,
) -> StreamWriter:
    """A TrigWriter or JsonlWriter for ``output`` (format from the extension by default)."""
    writer = TrigWriter if _stream_format(format, output) == "trig" else JsonlWriter
    return writer(output, dictionary, time_datatype=time_datatype, ms_per_unit=ms_per_unit)


def write_stream(
    elements: Iterable[StreamElement],
    output: Output,
    dictionary: TermDictionary,
    *,
    format: str | None = None,
    time_datatype: str = "integer",
    ms_per_unit: int = 1,
) -> int:
    """Write all ``elements`` to ``output``; returns how many were written."""
    with open_stream_writer(
        output, dictionary, format=format, time_datatype=time_datatype, ms_per_unit=ms_per_unit
    ) as writer:
        for element in elements:
            writer.write(element)
        return writer.count
