"""The stream source of the Spark runner: stream files as whole, ordered time points.

A Python Data Source (format ``chronolog``) over a stream file, a directory that stream
files land in (``.trig``, ``.jsonl``, ``.ndjson``; each file complete when it appears, as
with an atomic move; files are taken in name order), or a TCP socket sending JSON Lines
(``tcp://HOST:PORT``). A stream file can be replayed at a chosen rate (``rate``, elements
per second). The driver reads each element's time, and hands every micro-batch only
*complete* time points in time order:

- a time point is complete once the stream has reached a time more than ``lateness``
  past it (elements that arrive up to ``lateness`` out of order are put back in place);
  at the end of a finished stream (a single file, or a directory under the available-now
  trigger) every time point is complete;
- an element older than a time point already handed out is *late*: it travels as a
  ``late`` row, to be counted and written to the late-data output, never dropped;
- a malformed element travels as an ``error`` row naming its place; the stream goes on
  (a TriG file cannot be read past a syntax error: the rest of that file is lost, and
  the error says so).

Offsets are ``{"n": elements seen, "t": largest time handed out}``. Which elements a
batch holds is a function of its start and end offsets alone, so a batch replayed after a
crash holds exactly what it held before. A batch's time points are split into contiguous
runs, one per partition, so the enrichment stage needs no shuffle to see whole time points.
"""
from __future__ import annotations

import json
import os
import queue
import socket
import threading
import time as _time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from pyoxigraph import BlankNode

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.streams import STREAM_FORMAT_BY_EXTENSION, jsonl_time, LineError, scan_stream
from chronolog.terms import TermDictionary

SCHEMA = "kind string, time long, seq long, payload string, syntax string, place string"
FORMAT_NAME = "chronolog"


@dataclass
class Record:
    """One element as the driver knows it: enough to ship it, nothing parsed twice."""

    seq: int
    time: int | None  # None for an error
    payload: str  # a JSON line, N-Triples text, or an error message
    syntax: str  # "jsonl", "nt" or "error"
    place: str
    late: bool = False


def _jsonl_record(raw: bytes, name: str, lineno: int, seq: int) -> Record | None:
    """The record of one JSON Lines line (None for a blank line): the time is read here,
    the graph on an executor."""
    place = f"{name}:{lineno}"
    line = raw.decode("utf-8", "replace")
    if not line.strip():
        return None
    try:
        raw.decode("utf-8")
        record = json.loads(line)
        if not isinstance(record, dict) or "time" not in record:
            raise LineError('a stream element must be a JSON object {"time": ..., "graph": "..."}')
        time = jsonl_time(record["time"], 1, line.find('"time"') + 1)
    except UnicodeDecodeError:
        error = ChronologSyntaxError("invalid UTF-8", name, lineno, 1, None)
    except json.JSONDecodeError as exc:
        error = ChronologSyntaxError(f"invalid JSON: {exc.msg}", name, lineno, exc.colno, line)
    except LineError as exc:
        error = ChronologSyntaxError(exc.message, name, lineno, exc.col, line)
    else:
        return Record(seq, time, line.rstrip("\r\n"), "jsonl", place)
    return Record(seq, None, str(error), "error", place)


def _jsonl_records(path: Path, first_seq: int) -> Iterator[Record]:
    """Records of a JSON Lines file."""
    with open(path, "rb") as lines:
        for lineno, raw in enumerate(lines, 1):
            record = _jsonl_record(raw, str(path), lineno, first_seq)
            if record is not None:
                yield record
                first_seq += 1


def _trig_records(path: Path, first_seq: int, label: str) -> Iterator[Record]:
    """Records of a TriG file, parsed here (the time of an element may follow its graph),
    shipped as N-Triples; blank nodes keep one label per file, as TriG scopes them."""
    dictionary = TermDictionary()
    decode = dictionary.decode

    def text(tid: int) -> str:
        term = decode(tid)
        return f"_:{label}{term.value}" if isinstance(term, BlankNode) else str(term)

    for item in scan_stream(path, dictionary, format="trig"):
        if isinstance(item, ChronologError):
            message = f"{item}; the rest of {path} is not read (a TriG file cannot be resynchronised)"
            yield Record(first_seq, None, message, "error", str(path))
            return
        element, place = item
        nt = "".join(f"{text(s)} {text(p)} {text(o)} .\n" for s, p, o in element.triples)
        yield Record(first_seq, element.time, nt, "nt", place)
        first_seq += 1


def stream_files(path: Path) -> list[Path]:
    """The stream files of a directory, in name order (hidden and partial files skipped)."""
    return sorted(p for p in path.iterdir()
                  if p.suffix in STREAM_FORMAT_BY_EXTENSION and not p.name.startswith((".", "_")))


class StreamScanner:
    """The driver's view of the input: every element seen so far, numbered in arrival order.

    An element is late when it is older than the largest time before it minus the
    allowed lateness: decided per element, whatever the batches, so that results do not
    depend on how the stream is cut into micro-batches.
    """

    def __init__(self, path: str, lateness: int = 0) -> None:
        self.path = Path(path)
        self.lateness = lateness
        if not self.path.exists():
            raise ChronologError(f"{path}: no such stream file or directory")
        self.is_dir = self.path.is_dir()
        self.records: dict[int, Record] = {}
        self.running_max: dict[int, int | None] = {}  # seq -> max element time up to seq
        self.count = 0
        self._files: set[str] = set()
        self._max: int | None = None

    def scan(self) -> None:
        """Read the files that appeared since the last scan."""
        files = stream_files(self.path) if self.is_dir else [self.path]
        for file in files:
            if file.name in self._files:
                continue
            self._files.add(file.name)
            kind = STREAM_FORMAT_BY_EXTENSION.get(file.suffix)
            if kind == "trig":
                records = _trig_records(file, self.count, f"f{len(self._files)}")
            else:
                records = _jsonl_records(file, self.count)
            for record in records:
                self._add(record)

    def _add(self, record: Record) -> None:
        self.records[record.seq] = record
        if record.time is not None and self._max is not None and record.time < self._max - self.lateness:
            record.late = True
        if record.time is not None and (self._max is None or record.time > self._max):
            self._max = record.time
        self.running_max[record.seq] = self._max
        self.count = record.seq + 1

    def forget(self, n: int, released: int | None) -> None:
        """Drop what a committed batch settled: elements before ``n`` at or before ``released``."""
        for seq in [s for s in self.records if s < n]:
            record = self.records[seq]
            if record.time is None or (released is not None and record.time <= released):
                del self.records[seq]
                self.running_max.pop(seq, None)


class SocketScanner(StreamScanner):
    """JSON Lines from a TCP socket (``tcp://HOST:PORT``), read by a thread as they come.

    A socket cannot replay: after a crash, what it sent before is gone (as with Spark's
    own socket source); the stream is finished when the peer closes the connection. The
    connection opens at the first scan: Spark pickles readers before it runs them.
    """

    def __init__(self, address: str, lateness: int = 0) -> None:
        self.address = address
        self.lateness = lateness
        self.is_dir = True  # never finished by itself
        self.records = {}
        self.running_max = {}
        self.count = 0
        self._max = None
        self._lineno = 0
        self._receiver: tuple[queue.SimpleQueue, threading.Event] | None = None

    def _connect(self) -> tuple[queue.SimpleQueue, threading.Event]:
        if self._receiver is None:
            host, _, port = self.address.removeprefix("tcp://").rpartition(":")
            try:
                connection = socket.create_connection((host, int(port)), timeout=30)
            except (OSError, ValueError) as error:
                raise ChronologError(f"{self.address}: cannot connect: {error}") from None
            connection.settimeout(None)
            self._receiver = (queue.SimpleQueue(), threading.Event())
            threading.Thread(target=self._receive, args=(connection, *self._receiver), daemon=True).start()
        return self._receiver

    @staticmethod
    def _receive(connection: socket.socket, lines: queue.SimpleQueue, closed: threading.Event) -> None:
        with connection, connection.makefile("rb") as received:
            for line in received:
                lines.put(line)
        closed.set()

    def wait_until_closed(self) -> None:
        self._connect()[1].wait()

    def scan(self) -> None:
        lines, _ = self._connect()
        while True:
            try:
                raw = lines.get_nowait()
            except queue.Empty:
                return
            self._lineno += 1
            record = _jsonl_record(raw, self.address, self._lineno, self.count)
            if record is not None:
                self._add(record)


def release_bound(scanner: StreamScanner, n: int, start_t: int | None, final: bool) -> int | None:
    """The largest time point complete once the first ``n`` elements are seen: no element
    that is not late can still arrive for it."""
    seen = scanner.running_max.get(n - 1) if n else None
    if seen is None:
        return start_t
    candidates = [r.time for s, r in scanner.records.items()
                  if s < n and r.time is not None and not r.late and (start_t is None or r.time > start_t)
                  and (final or r.time < seen - scanner.lateness)]
    if not candidates:
        return start_t
    return max(candidates)


def batch_rows(scanner: StreamScanner, start: dict, end: dict, partitions: int) -> list[list[tuple]]:
    """The rows of the batch between two offsets, split into runs of whole time points."""
    n0, t0, n1, t1 = start["n"], start["t"], end["n"], end["t"]
    released: list[Record] = []
    diagnostics: list[tuple] = []
    for seq in sorted(scanner.records):
        if seq >= n1:
            break
        record = scanner.records[seq]
        if record.time is None:
            if seq >= n0:
                diagnostics.append(("error", None, seq, record.payload, record.syntax, record.place))
        elif record.late:
            if seq >= n0:
                diagnostics.append(("late", record.time, seq, record.payload, record.syntax, record.place))
        elif t1 is not None and (t0 is None or record.time > t0) and record.time <= t1:
            released.append(record)
    released.sort(key=lambda r: (r.time, r.seq))
    groups: list[list[tuple]] = []
    for record in released:
        row = ("element", record.time, record.seq, record.payload, record.syntax, record.place)
        if groups and groups[-1][-1][1] == record.time:
            groups[-1].append(row)
        else:
            groups.append([row])
    parts: list[list[tuple]] = []
    size = -(-sum(map(len, groups)) // max(1, partitions))
    for group in groups:
        if parts and len(parts[-1]) < size:
            parts[-1].extend(group)
        else:
            parts.append(list(group))
    if diagnostics:
        parts[:1] = [diagnostics + (parts[0] if parts else [])]
    return parts


def _source_classes():  # -> the DataSource class, built on first use (pyspark imports are heavy)
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, SupportsTriggerAvailableNow

    class RowsPartition(InputPartition):
        def __init__(self, rows: list[tuple]) -> None:
            super().__init__(None)
            self.rows = rows

    class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
        def __init__(self, options: dict) -> None:
            path, lateness = options["path"], int(options.get("lateness", 0))
            socket_stream = path.startswith("tcp://")
            self.scanner = SocketScanner(path, lateness) if socket_stream else StreamScanner(path, lateness)
            self.rate = float(options.get("rate", 0))  # elements per second, 0 = as fast as possible
            self.max_per_batch = int(options.get("maxElementsPerBatch", 0))
            self.partitions_wanted = int(options.get("partitions", 2))
            self.final = not self.scanner.is_dir or options.get("final", "false") == "true"
            self._clock: tuple[float, int] | None = None

        def initialOffset(self) -> dict:
            return {"n": 0, "t": None}

        def prepareForTriggerAvailableNow(self) -> None:
            self.final = True  # what is there now is the whole stream
            if isinstance(self.scanner, SocketScanner):
                self.scanner.wait_until_closed()  # for a socket: all it sends until the peer closes

        def getDefaultReadLimit(self):
            return ReadMaxRows(self.max_per_batch) if self.max_per_batch else ReadAllAvailable()

        def latestOffset(self, start: dict, limit) -> dict:
            scanner = self.scanner
            scanner.scan()
            n = scanner.count
            if self.rate:
                if self._clock is None:
                    self._clock = (_time.monotonic(), start["n"])
                began, first = self._clock
                n = min(n, first + int(self.rate * (_time.monotonic() - began)) + 1)
            if isinstance(limit, ReadMaxRows):
                n = min(n, start["n"] + limit.max_rows)
            n = max(n, start["n"])
            final = self.final and n == scanner.count
            return {"n": n, "t": release_bound(scanner, n, start["t"], final)}

        def partitions(self, start: dict, end: dict) -> list:
            if self.scanner.count < end["n"]:
                # A batch replayed from the offset log after a restart: Spark plans it
                # without calling latestOffset first, so this reader has not read the
                # stream yet (an empty batch here would lose its elements, and the state).
                self.scanner.scan()
            return [RowsPartition(rows) for rows in batch_rows(self.scanner, start, end, self.partitions_wanted)]

        def read(self, partition) -> Iterator[tuple]:
            return iter(partition.rows)

        def commit(self, end: dict) -> None:
            self.scanner.forget(end["n"], end["t"])

    class StreamSource(DataSource):
        """``spark.readStream.format("chronolog").option("path", ...)``: see the module doc."""

        @classmethod
        def name(cls) -> str:
            return FORMAT_NAME

        def schema(self) -> str:
            return SCHEMA

        def streamReader(self, schema):
            return StreamReader(self.options)

    return StreamSource


def register_source(spark) -> None:
    """Make ``format("chronolog")`` known to this session."""
    spark.dataSource.register(_source_classes())


def check_stream_path(path: str) -> None:
    """Fail early, on the driver, with a clear message."""
    if path.startswith("tcp://"):
        host, _, port = path.removeprefix("tcp://").rpartition(":")
        if not host or not port.isdigit():
            raise ChronologError(f"{path}: expected tcp://HOST:PORT")
        return
    if not os.path.exists(path):
        raise ChronologError(f"{path}: no such stream file or directory")
    if os.path.isfile(path) and Path(path).suffix not in STREAM_FORMAT_BY_EXTENSION:
        raise ChronologError(f"{path}: unknown stream format (expected .trig, .jsonl or .ndjson)")
