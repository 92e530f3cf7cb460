"""The stream source of the Spark runner: stream files as whole, ordered time points.

A Python Data Source (format ``chronolog``) over one or more named streams (option
``streams``: a JSON object, stream name -> source; ``""`` names the unnamed stream), each
a stream file, a directory that stream files land in (``.trig``, ``.jsonl``, ``.ndjson``;
each file complete when it appears, as with an atomic move; files are taken in name
order), or a TCP socket sending JSON Lines (``tcp://HOST:PORT``). A stream file can be
replayed at a chosen rate (``rate``, elements per second, per stream). The driver reads
each element's time, and hands every micro-batch only *complete* time points of all the
streams, merged in time order:

- a time point is complete once every stream has reached a time more than ``lateness``
  past it, or has ended (elements that arrive up to ``lateness`` out of order are put
  back in place); at the end of a finished stream (a single file, or a directory under
  the available-now trigger) every time point of it is complete;
- an element older than a time point already handed out is *late*: it travels as a
  ``late`` row, to be counted and written to the late-data output, never dropped;
- a malformed element travels as an ``error`` row naming its place; the stream goes on
  (a TriG file cannot be read past a syntax error: the rest of that file is lost, and
  the error says so).

Offsets are ``{"n": {stream: elements seen}, "t": largest time handed out, "end": every
stream has ended}``; the batch that reaches the end carries an ``end`` row last, so that
the program can flush what it still holds (windows to close). Which elements a batch holds is a function of its start and end offsets alone, so a batch replayed after a
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
from decimal import Decimal
from pathlib import Path
from typing import Iterator

from pyoxigraph import BlankNode

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.program.writers import quarantine_record
from chronolog.streams import STREAM_FORMAT_BY_EXTENSION, jsonl_time, LineError, scan_stream
from chronolog.terms import TermDictionary

END_SEQ = 1 << 62  # the end-of-stream row comes after every element of its time
READ_AHEAD = 50_000  # elements a batch may read past the last committed one (option readAhead)
SCHEMA = "kind string, stream string, time long, seq long, payload string, syntax string, place string"
SCHEMA_COLUMNS = tuple(column.split()[0] for column in SCHEMA.split(", "))
FORMAT_NAME = "chronolog"


@dataclass
class Record:
    """One element as the driver knows it: enough to ship it, nothing parsed twice."""

    seq: int
    time: int | None  # None for an error
    payload: str  # a JSON line, N-Triples text, or an error message
    syntax: str  # "jsonl", "nt" or "error" (the payload is then the error's quarantine record, as JSON)
    place: str
    late: bool = False


def _jsonl_record(raw: bytes, name: str, lineno: int, seq: int, ms_per_unit: int | Decimal = 1) -> Record | None:
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
        time = jsonl_time(record["time"], ms_per_unit, line.find('"time"') + 1)
    except UnicodeDecodeError:
        error = ChronologSyntaxError("invalid UTF-8", name, lineno, 1, None)
    except json.JSONDecodeError as exc:
        error = ChronologSyntaxError(f"invalid JSON: {exc.msg}", name, lineno, exc.colno, line)
    except LineError as exc:
        error = ChronologSyntaxError(exc.message, name, lineno, exc.col, line)
    else:
        return Record(seq, time, line.rstrip("\r\n"), "jsonl", place)
    return Record(seq, None, json.dumps(quarantine_record(error)), "error", place)


def _jsonl_records(path: Path, first_seq: int, ms_per_unit: int | Decimal) -> Iterator[Record]:
    """Records of a JSON Lines file."""
    with open(path, "rb") as lines:
        for lineno, raw in enumerate(lines, 1):
            record = _jsonl_record(raw, str(path), lineno, first_seq, ms_per_unit)
            if record is not None:
                yield record
                first_seq += 1


def _trig_records(path: Path, first_seq: int, label: str, ms_per_unit: int | Decimal) -> Iterator[Record]:
    """Records of a TriG file, parsed here (the time of an element may follow its graph),
    shipped as N-Triples; blank nodes keep one label per file, as TriG scopes them."""
    dictionary = TermDictionary()
    decode = dictionary.decode

    def text(tid: int) -> str:
        term = decode(tid)
        return f"_:{label}{term.value}" if isinstance(term, BlankNode) else str(term)

    for item in scan_stream(path, dictionary, format="trig", ms_per_unit=ms_per_unit):
        if isinstance(item, ChronologError):
            record = quarantine_record(item)
            record["reason"] = f"{record['reason']}; the rest of {path} is not read (a TriG file cannot be resynchronised)"
            yield Record(first_seq, None, json.dumps(record), "error", str(path))
            return
        element, place = item
        nt = "".join(f"{text(s)} {text(p)} {text(o)} .\n" for s, p, o in element.triples)
        if dictionary.reclaim_due:
            dictionary.reclaim(())  # the element is text now: no id is used again
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

    def __init__(self, path: str, lateness: int = 0, ms_per_unit: int | Decimal = 1) -> None:
        self.path = Path(path)
        self.lateness = lateness
        self.ms_per_unit = ms_per_unit
        if not self.path.exists():
            raise ChronologError(f"{path}: no such stream file or directory")
        self.is_dir = self.path.is_dir()
        self.records: dict[int, Record] = {}
        self.running_max: dict[int, int | None] = {}  # seq -> max element time up to seq
        self.count = 0
        self.drained = False  # the last scan reached the end of every file present
        self._files: set[str] = set()
        self._reading: Iterator[Record] | None = None  # the file being read, where the last scan stopped
        self._max: int | None = None
        self._settled: tuple[int, int | None] = (0, None)  # what committed batches settled (see forget)

    def scan(self, limit: int) -> None:
        """Read on, from where the last scan stopped, until ``limit`` elements are seen or
        the files present are read to their end (a directory's new files included).

        Reading stops at the limit so that the driver holds a bounded part of the stream
        whatever the size of its files: the elements not yet settled by a committed batch."""
        while self.count < limit:
            if self._reading is None:
                self._reading = self._next_file()
                if self._reading is None:
                    self.drained = True
                    return
            for record in self._reading:
                self._add(record)
                if self.count >= limit:
                    self.drained = False
                    return
            self._reading = None

    def _next_file(self) -> Iterator[Record] | None:
        """The records of the next file not read yet, in name order."""
        files = stream_files(self.path) if self.is_dir else [self.path]
        file = next((f for f in files if f.name not in self._files), None)
        if file is None:
            return None
        self._files.add(file.name)
        if STREAM_FORMAT_BY_EXTENSION.get(file.suffix) == "trig":
            return _trig_records(file, self.count, f"f{len(self._files)}", self.ms_per_unit)
        return _jsonl_records(file, self.count, self.ms_per_unit)

    def _add(self, record: Record) -> None:
        if record.time is not None and self._max is not None and record.time < self._max - self.lateness:
            record.late = True
        if record.time is not None and (self._max is None or record.time > self._max):
            self._max = record.time
        self.count = record.seq + 1
        if not self._is_settled(record):  # read again after a restart, before what was committed: not kept
            self.records[record.seq] = record
            self.running_max[record.seq] = self._max

    def _is_settled(self, record: Record) -> bool:
        n, released = self._settled
        return record.seq < n and (record.time is None or (released is not None and record.time <= released))

    def forget(self, n: int, released: int | None) -> None:
        """Drop what a committed batch settled: elements before ``n`` at or before ``released``
        (late and malformed ones included: they travelled in that batch), and remember the
        bound, so that reading the stream again after a restart does not hold them either."""
        if n > self._settled[0]:
            self._settled = (n, released)
        for seq in [s for s in self.records if s < n]:
            if self._is_settled(self.records[seq]):
                del self.records[seq]
                self.running_max.pop(seq, None)


class SocketScanner(StreamScanner):
    """JSON Lines from a TCP socket (``tcp://HOST:PORT``), read by a thread as they come.

    A socket cannot replay: after a crash, what it sent before is gone (as with Spark's
    own socket source); the stream is finished when the peer closes the connection. The
    connection opens at the first scan: Spark pickles readers before it runs them.
    """

    def __init__(self, address: str, lateness: int = 0, ms_per_unit: int | Decimal = 1) -> None:
        self.address = address
        self.lateness = lateness
        self.ms_per_unit = ms_per_unit
        self.is_dir = True  # never finished by itself
        self.records = {}
        self.running_max = {}
        self.count = 0
        self.drained = False
        self._max = None
        self._settled = (0, None)
        self._lineno = 0
        self._receiver: tuple[queue.SimpleQueue, threading.Event] | None = None
        self.closed = False  # the peer has closed the connection: the stream has ended

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

    def scan(self, limit: int) -> None:
        lines, closed = self._connect()
        self.closed = closed.is_set()  # checked before draining: every line sent before the close is queued
        while self.count < limit:
            try:
                raw = lines.get_nowait()
            except queue.Empty:
                break
            self._lineno += 1
            record = _jsonl_record(raw, self.address, self._lineno, self.count, self.ms_per_unit)
            if record is not None:
                self._add(record)
        self.drained = lines.empty()


def complete_until(scanner: StreamScanner, n: int, final: bool) -> float | None:
    """The largest time up to which one stream is complete once its first ``n`` elements
    are seen (infinite when it has ended; None when nothing of it is complete yet)."""
    if final:
        return float("inf")
    seen = scanner.running_max.get(n - 1) if n else None
    return None if seen is None else seen - scanner.lateness - 1


def release_bound(scanners: dict[str, StreamScanner], ns: dict[str, int], start_t: int | None,
                  finals: dict[str, bool]) -> int | None:
    """The largest time point complete in every stream: no element that is not late can
    still arrive for it."""
    limits = [complete_until(scanner, ns[name], finals[name]) for name, scanner in scanners.items()]
    if any(limit is None for limit in limits):
        return start_t
    limit = min(limits)  # type: ignore[type-var]
    candidates = [r.time for name, scanner in scanners.items() for s, r in scanner.records.items()
                  if s < ns[name] and r.time is not None and not r.late and (start_t is None or r.time > start_t)
                  and r.time <= limit]
    return max(candidates, default=start_t)


def batch_rows(scanners: dict[str, StreamScanner], start: dict, end: dict, partitions: int) -> list[list[tuple]]:
    """The rows of the batch between two offsets, split into runs of whole time points."""
    t0, t1 = start["t"], end["t"]
    released: list[tuple[int, int, int, str, Record]] = []
    diagnostics: list[tuple] = []
    for order, (name, scanner) in enumerate(scanners.items()):
        n0, n1 = start["n"].get(name, 0), end["n"].get(name, 0)
        for seq in sorted(scanner.records):
            if seq >= n1:
                break
            record = scanner.records[seq]
            if record.time is None:
                if seq >= n0:
                    diagnostics.append(("error", name, None, seq, record.payload, record.syntax, record.place))
            elif record.late:
                if seq >= n0:
                    diagnostics.append(("late", name, record.time, seq, record.payload, record.syntax, record.place))
            elif t1 is not None and (t0 is None or record.time > t0) and record.time <= t1:
                released.append((record.time, order, seq, name, record))
    released.sort(key=lambda item: item[:3])
    groups: list[list[tuple]] = []
    for time, _, _, name, record in released:
        row = ("element", name, time, record.seq, record.payload, record.syntax, record.place)
        if groups and groups[-1][-1][2] == time:
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
    if end.get("end") and not start.get("end"):  # every stream has ended: the program is told, after the rest
        parts[-1:] = [(parts[-1] if parts else []) + [("end", "", t1, END_SEQ, "", "end", "")]]
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
            lateness, unit = int(options.get("lateness", 0)), Decimal(options.get("msPerUnit", "1"))
            self.scanners: dict[str, StreamScanner] = {
                name: (SocketScanner if path.startswith("tcp://") else StreamScanner)(path, lateness, unit)
                for name, path in json.loads(options["streams"]).items()}
            self.rate = float(options.get("rate", 0))  # elements per second, 0 = as fast as possible
            self.max_per_batch = int(options.get("maxElementsPerBatch", 0))
            self.read_ahead = int(options.get("readAhead", READ_AHEAD))
            self.partitions_wanted = int(options.get("partitions", 2))
            self.final = {name: not scanner.is_dir for name, scanner in self.scanners.items()}
            self._clock: tuple[float, dict[str, int]] | None = None

        def initialOffset(self) -> dict:
            return {"n": {name: 0 for name in self.scanners}, "t": None}

        def prepareForTriggerAvailableNow(self) -> None:
            for name, scanner in self.scanners.items():
                self.final[name] = True  # what is there now is the whole stream
                if isinstance(scanner, SocketScanner):
                    scanner.wait_until_closed()  # for a socket: all it sends until the peer closes

        def getDefaultReadLimit(self):
            return ReadMaxRows(self.max_per_batch) if self.max_per_batch else ReadAllAvailable()

        def latestOffset(self, start: dict, limit) -> dict:
            started = start["n"]
            ns: dict[str, int] = {}
            finals: dict[str, bool] = {}
            for name, scanner in self.scanners.items():
                first = started.get(name, 0)
                scanner.forget(first, start["t"])  # committed: after a restart, read past it without holding it
                scanner.scan(first + (limit.max_rows if isinstance(limit, ReadMaxRows) else self.read_ahead))
                if isinstance(scanner, SocketScanner) and scanner.closed:
                    self.final[name] = True  # under any trigger: a closed connection sends nothing more
                n = scanner.count
                if self.rate:
                    if self._clock is None:
                        self._clock = (_time.monotonic(), dict(started))
                    began, firsts = self._clock
                    n = min(n, firsts.get(name, 0) + int(self.rate * (_time.monotonic() - began)) + 1)
                if isinstance(limit, ReadMaxRows):
                    n = min(n, first + limit.max_rows)
                ns[name] = max(n, first)
                finals[name] = self.final[name] and ns[name] == scanner.count and scanner.drained
            return {"n": ns, "t": release_bound(self.scanners, ns, start["t"], finals), "end": all(finals.values())}

        def partitions(self, start: dict, end: dict) -> list:
            for name, scanner in self.scanners.items():
                if scanner.count < end["n"].get(name, 0):
                    # A batch replayed from the offset log after a restart: Spark plans it
                    # without calling latestOffset first, so this reader has not read the
                    # stream yet (an empty batch here would lose its elements, and the state).
                    scanner.forget(start["n"].get(name, 0), start["t"])
                    scanner.scan(end["n"][name])
            return [RowsPartition(rows) for rows in batch_rows(self.scanners, start, end, self.partitions_wanted)]

        def read(self, partition) -> Iterator[tuple]:
            return iter(partition.rows)

        def commit(self, end: dict) -> None:
            for name, scanner in self.scanners.items():
                scanner.forget(end["n"].get(name, 0), end["t"])

    class StreamSource(DataSource):
        """``spark.readStream.format("chronolog").option("streams", ...)``: see the module doc."""

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
