"""Where the Spark runner's micro-batches go: stream files, Parquet, the console, a callback.

Each sink receives a batch's outputs once per attempt, with Spark's batch id. After a
crash Spark re-runs the last uncommitted batch with the same id and the same rows, so:

- :class:`StreamFileSink` appends to one stream file and logs ``batch end-offset`` in a
  side file; a batch already logged is skipped, and a batch cut short by the crash is
  truncated away before it is written again (exactly once);
- :class:`ParquetSink` writes one file per batch id, atomically (exactly once);
- :class:`CallbackSink` passes the batch id on, for the callback to be idempotent on;
- :class:`ConsoleSink` writes to standard output (what a crash re-runs appears twice).
"""
from __future__ import annotations

import os
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, NamedTuple, Sequence

from chronolog.spark.encoding import parse_ntriples
from chronolog.streams import StreamElement, open_stream_writer
from chronolog.terms import TermDictionary


class Detection(NamedTuple):
    """An output graph as a sink receives it: its time, rule IRI, N-Triples text and key."""

    time: int
    rule: str
    graph: str
    key: str


@dataclass(frozen=True)
class Diagnostic:
    """A late element (its payload kept) or a malformed one (its error message)."""

    kind: str  # "late" or "error"
    time: int | None
    payload: str
    syntax: str
    place: str


def elements(graphs: Sequence[tuple[int, str]], dictionary: TermDictionary) -> list[StreamElement]:
    """(time, N-Triples text) pairs as stream elements; blank node labels are kept (the
    pipeline made them unique per firing)."""
    return [StreamElement(time, tuple(dict.fromkeys(parse_ntriples(text, dictionary)))) for time, text in graphs]


class Sink(ABC):
    """Receives every micro-batch's detections, in (time, rule, key, firing) order."""

    def reset(self) -> None:
        """Forget earlier runs: the query starts from scratch (a new checkpoint)."""

    @abstractmethod
    def write(self, batch_id: int, detections: list[Detection]) -> None:
        """Deliver one batch."""

    def close(self) -> None:
        """The query has ended."""


class StreamFileSink(Sink):
    """One stream file (TriG or JSON Lines), appended batch by batch, exactly once."""

    def __init__(self, path: str | os.PathLike[str], format: str) -> None:
        self.path = Path(path)
        self.format = format
        self.log = self.path.with_name(f".{self.path.name}.batches")

    def reset(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(b"")
        self.log.write_text("")

    def _logged(self) -> list[tuple[int, int]]:
        if not self.log.exists():
            return []
        return [(int(b), int(e)) for b, e in (line.split() for line in self.log.read_text().splitlines() if line)]

    def write(self, batch_id: int, detections: list[Detection]) -> None:
        dictionary = TermDictionary()
        self.write_elements(batch_id, elements([(d.time, d.graph) for d in detections], dictionary), dictionary)

    def write_elements(self, batch_id: int, items: list[StreamElement], dictionary: TermDictionary) -> None:
        logged = self._logged()
        if any(b == batch_id for b, _ in logged):
            return
        end = logged[-1][1] if logged else 0
        mode = "r+b" if self.path.exists() else "w+b"
        with open(self.path, mode) as out:
            out.truncate(end)
            out.seek(end)
            with open_stream_writer(out, dictionary, format=self.format) as writer:
                for element in items:
                    writer.write(element)
            out.flush()
            os.fsync(out.fileno())
            end = out.tell()
        with open(self.log, "a") as log:
            log.write(f"{batch_id} {end}\n")
            log.flush()
            os.fsync(log.fileno())


class ConsoleSink(Sink):
    """Standard output in a stream format (at least once across a crash)."""

    def __init__(self, format: str, stream: IO[bytes] | None = None) -> None:
        self.format = format
        self.stream = stream

    def write(self, batch_id: int, detections: list[Detection]) -> None:
        if not detections:
            return
        dictionary = TermDictionary()
        out = self.stream or sys.stdout.buffer
        with open_stream_writer(out, dictionary, format=self.format) as writer:
            for element in elements([(d.time, d.graph) for d in detections], dictionary):
                writer.write(element)


class ParquetSink(Sink):
    """A directory of Parquet files, one per batch (``batch-000000012.parquet``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def reset(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        for old in self.path.glob("batch-*.parquet"):
            old.unlink()

    def write(self, batch_id: int, detections: list[Detection]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path.mkdir(parents=True, exist_ok=True)
        table = pa.table({
            "time": pa.array([d.time for d in detections], pa.int64()),
            "rule": pa.array([d.rule for d in detections], pa.string()),
            "graph": pa.array([d.graph for d in detections], pa.string()),
            "key": pa.array([d.key for d in detections], pa.string()),
        })
        final = self.path / f"batch-{batch_id:09d}.parquet"
        partial = self.path / f".batch-{batch_id:09d}.parquet.partial"
        pq.write_table(table, partial)
        os.replace(partial, final)


class CallbackSink(Sink):
    """``callback(batch_id, detections)`` per batch: a re-run batch comes with its old id."""

    def __init__(self, callback: Callable[[int, list[Detection]], None]) -> None:
        self.callback = callback

    def write(self, batch_id: int, detections: list[Detection]) -> None:
        self.callback(batch_id, detections)


def sink_for(output: str | None, format: str) -> Sink:
    """The sink ``-o`` names: ``-``/None for stdout, ``*.parquet`` for Parquet, else a file."""
    if output in (None, "-"):
        return ConsoleSink(format)
    if output.endswith(".parquet"):
        return ParquetSink(output)
    return StreamFileSink(output, format)
