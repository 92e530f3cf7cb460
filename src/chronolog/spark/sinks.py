"""Where the Spark runner's micro-batches go: stream files, Parquet, the console, a callback.

Each sink receives a batch's outputs once per attempt, with Spark's batch id, as
:class:`OutputRecord` values in (time, rule or query, key, n) order. After a crash Spark
re-runs the last uncommitted batch with the same id and the same rows, so:

- :class:`StreamFileSink` appends to one file and logs ``batch end-offset`` in a side
  file; a batch already logged is skipped, and a batch cut short by the crash is
  truncated away before it is written again (exactly once); :class:`LateFileSink` keeps
  late elements the same way;
- :class:`ParquetSink` writes one file per batch id, atomically (exactly once);
- :class:`CallbackSink` passes the batch id on, for the callback to be idempotent on;
- :class:`ConsoleSink` writes to standard output (what a crash re-runs appears twice).

Files are written by the writers of every runner (:mod:`chronolog.program.writers`).
"""
from __future__ import annotations

import fcntl
import io
import json
import os
import sys
from abc import ABC, abstractmethod
from pathlib import Path
from typing import IO, Callable, NamedTuple, Sequence

from chronolog.errors import ChronologError
from chronolog.monitor import RunMonitor
from chronolog.program.outputs import GRAPHS
from chronolog.program.writers import open_output_writer
from chronolog.provenance.records import ProvenanceWriter
from chronolog.streams import StreamElement, open_stream_writer
from chronolog.terms import TermDictionary


class OutputRecord(NamedTuple):
    """An output as a sink receives it: its time, rule or query, body (a graph's N-Triples
    text; the JSON records of solutions; atom texts), the key that produced it, and its
    provenance record as JSON (``--provenance``)."""

    time: int
    source: str
    body: str | list[str]
    key: str
    why: str | None = None


class Sink(ABC):
    """Receives every micro-batch's outputs, in order."""

    def reset(self) -> None:
        """Forget earlier runs: the query starts from scratch (a new checkpoint)."""

    @abstractmethod
    def write(self, batch_id: int, records: list[OutputRecord]) -> None:
        """Deliver one batch."""

    def close(self) -> None:
        """The query has ended."""


class _OnceFile:
    """A file appended batch by batch, exactly once: a side log holds each batch's end
    offset. A run holds a lock on it from its first write to its close, so that a second
    run writing the same file is refused instead of interleaving with the first."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.log = self.path.with_name(f".{self.path.name}.batches")
        self._lock: IO[bytes] | None = None

    def lock(self) -> None:
        if self._lock is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path.with_name(f".{self.path.name}.lock"), "ab")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise ChronologError(f"{self.path}: another chronolog run is writing this file") from None
        self._lock = handle

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()  # closing releases the lock
            self._lock = None

    def reset(self) -> None:
        self.lock()
        self.path.write_bytes(b"")
        self.log.write_text("")

    def _logged(self) -> list[tuple[int, int]]:
        if not self.log.exists():
            return []
        return [(int(b), int(e)) for b, e in (line.split() for line in self.log.read_text().splitlines() if line)]

    def append(self, batch_id: int, write: Callable[[IO[bytes]], None]) -> None:
        """``write(file)`` once for this batch, after cutting off a partial earlier attempt."""
        self.lock()
        logged = self._logged()
        if any(b == batch_id for b, _ in logged):
            return
        end = logged[-1][1] if logged else 0
        mode = "r+b" if self.path.exists() else "w+b"
        with open(self.path, mode) as out:
            out.truncate(end)
            out.seek(end)
            write(out)
            out.flush()
            os.fsync(out.fileno())
            end = out.tell()
        with open(self.log, "a") as log:
            log.write(f"{batch_id} {end}\n")
            log.flush()
            os.fsync(log.fileno())


def _write_records(out: IO[bytes], records: Sequence[OutputRecord], kind: str, format: str) -> None:
    """Records through the writer of their kind (blank node labels kept: the pipeline made
    them unique per firing)."""
    batch = io.BytesIO()  # written at once: a writer flushes each output, a system call on a file
    with open_output_writer(batch, kind, TermDictionary(), format=format) as writer:
        for r in records:
            writer.write_rendered(r.time, r.body)
    out.write(batch.getbuffer())
    out.flush()


class StreamFileSink(Sink):
    """One output file (a TriG or JSON Lines stream), appended batch by batch, exactly once."""

    def __init__(self, path: str | os.PathLike[str], kind: str, format: str) -> None:
        self.file = _OnceFile(path)
        self.kind, self.format = kind, format

    def reset(self) -> None:
        self.file.reset()

    def write(self, batch_id: int, records: list[OutputRecord]) -> None:
        self.file.append(batch_id, lambda out: _write_records(out, records, self.kind, self.format))

    def close(self) -> None:
        self.file.unlock()


class LateFileSink:
    """Late elements, exactly once, each with the place it was read from: RDF elements as
    a stream in the file's format, atom elements as their JSON lines."""

    def __init__(self, path: str | os.PathLike[str], format: str) -> None:
        self.file = _OnceFile(path)
        self.format = format

    def reset(self) -> None:
        self.file.reset()

    def write(self, batch_id: int, elements: list[tuple[StreamElement, str]], dictionary: TermDictionary,
              lines: list[str]) -> None:
        def write(out: IO[bytes]) -> None:
            with open_stream_writer(out, dictionary, format=self.format) as writer:
                for element, place in elements:
                    writer.write(element, place)
            out.write("".join(line + "\n" for line in lines).encode("utf-8"))

        self.file.append(batch_id, write)

    def close(self) -> None:
        self.file.unlock()


class QuarantineFileSink:
    """Malformed elements (``--on-error skip``), exactly once: their quarantine records
    (:func:`~chronolog.program.writers.quarantine_record`) as JSON lines."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.file = _OnceFile(path)

    def reset(self) -> None:
        self.file.reset()

    def write(self, batch_id: int, records: list[dict]) -> None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        self.file.append(batch_id, lambda out: out.write(text))

    def close(self) -> None:
        self.file.unlock()


class ConsoleSink(Sink):
    """Standard output (at least once across a crash)."""

    def __init__(self, kind: str, format: str, stream: IO[bytes] | None = None) -> None:
        self.kind, self.format = kind, format
        self.stream = stream

    def write(self, batch_id: int, records: list[OutputRecord]) -> None:
        if records:
            _write_records(self.stream or sys.stdout.buffer, records, self.kind, self.format)


class ParquetSink(Sink):
    """A directory of Parquet files, one per batch (``batch-000000012.parquet``)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        self.path = Path(path)
        self.kind = kind

    def reset(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        for old in self.path.glob("batch-*.parquet"):
            old.unlink()

    def write(self, batch_id: int, records: list[OutputRecord]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path.mkdir(parents=True, exist_ok=True)
        body = pa.string() if self.kind == GRAPHS else pa.list_(pa.string())
        table = pa.table({
            "time": pa.array([r.time for r in records], pa.int64()),
            "source": pa.array([r.source for r in records], pa.string()),
            "body": pa.array([r.body for r in records], body),
            "key": pa.array([r.key for r in records], pa.string()),
        })
        final = self.path / f"batch-{batch_id:09d}.parquet"
        partial = self.path / f".batch-{batch_id:09d}.parquet.partial"
        pq.write_table(table, partial)
        os.replace(partial, final)


class CallbackSink(Sink):
    """``callback(batch_id, records)`` per batch: a re-run batch comes with its old id."""

    def __init__(self, callback: Callable[[int, list[OutputRecord]], None]) -> None:
        self.callback = callback

    def write(self, batch_id: int, records: list[OutputRecord]) -> None:
        self.callback(batch_id, records)


class MonitoredSink(Sink):
    """A sink whose outputs the live view also sees (``chronolog run --ui`` on Spark)."""

    def __init__(self, sink: Sink, monitor: RunMonitor) -> None:
        self.sink, self.monitor = sink, monitor

    def reset(self) -> None:
        self.sink.reset()

    def write(self, batch_id: int, records: list[OutputRecord]) -> None:
        self.sink.write(batch_id, records)
        for record in records:
            self.monitor.output(record.time, lambda r=record: (r.source, r.body if isinstance(r.body, str)
                                                                 else "\n".join(r.body)),
                                explanation=None if record.why is None else json.loads(record.why))

    def close(self) -> None:
        self.sink.close()


class ProvenanceSink(Sink):
    """A sink whose outputs' provenance records also go to a file (``--provenance``),
    exactly once, named like the elements the output file holds."""

    def __init__(self, sink: Sink, path: str | os.PathLike[str]) -> None:
        self.sink = sink
        self.file = _OnceFile(path)

    def reset(self) -> None:
        self.sink.reset()
        self.file.reset()

    def write(self, batch_id: int, records: list[OutputRecord]) -> None:
        self.sink.write(batch_id, records)

        def write(out: IO[bytes]) -> None:
            writer = ProvenanceWriter(out)  # counts a batch's elements per time, as _write_records does
            for r in records:
                writer.write(r.time, None if r.why is None else json.loads(r.why))

        self.file.append(batch_id, write)

    def close(self) -> None:
        self.sink.close()
        self.file.unlock()


def sink_for(output: str | None, kind: str, format: str) -> Sink:
    """The sink ``-o`` names: ``-``/None for stdout, ``*.parquet`` for Parquet, else a file."""
    if output in (None, "-"):
        return ConsoleSink(kind, format)
    if output.endswith(".parquet"):
        return ParquetSink(output, kind)
    return StreamFileSink(output, kind, format)
