"""The stages of the streaming pipeline that run on executors (DESIGN.md section 4), for
any program, through the program contract (:mod:`chronolog.program`).

``prepare_stage`` (a ``mapInArrow`` function, stateless and parallel): each partition
holds whole time points in time order (see :mod:`chronolog.spark.source`); per time
point, parse the elements and hand them to the program's plan (``Plan.prepare``), which
returns records for its keyed state and outputs that need no state. Records go on by
the bucket of their key (:mod:`chronolog.spark.buckets`), a bucket's records of a
partition's batch packed in one row; outputs, late and malformed
elements pass through the keyed stage under ``PASSTHROUGH_BUCKET``.

``keyed_processor`` (``transformWithStateInPandas``, one instance per bucket): each
program key's state lives in its bucket's state value between batches as the bytes
``Plan.process`` returns; records are applied in (time, seq) order. When every stream has
ended (a file, or what the available-now trigger found), the keys of ``Plan.end_keys``
get an end row last and ``Plan.finish`` flushes them. An event-time timer drops a key's
state once the watermark is past the time the plan said it expires, so state is bounded
by the program, not by the stream. A bounded run (:mod:`chronolog.spark.bounded`) runs
the same two stages in a batch job instead (``prepared_rows``, ``bucket_results``), each
bucket's rows applied to empty state.

Rows are typed per output kind (``row_ddl``): a graph's body is its N-Triples text, a
solution's and an atom's a list of texts. Terms cross processes as text; every Python
worker compiles the program once per spec (:func:`worker_for`), with a dictionary of its
own: once per worker process, not per batch.
"""
from __future__ import annotations

import json
from collections import namedtuple
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa

from chronolog.atomstreams import shipped_atoms
from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.formats import encode_text
from chronolog.heap import freeze_compiled
from chronolog.lang.registry import compile_program
from chronolog.program import ATOMS_IN, GRAPHS, Plan, Program, ProgramSpec, Record
from chronolog.program.contract import reclaim_terms
from chronolog.program.outputs import Output, explanation, render
from chronolog.program.writers import quarantine_record
from chronolog.spark import buckets
from chronolog.spark.buckets import PASSTHROUGH_BUCKET, bucket_of
from chronolog.streams import LineError, jsonl_element
from chronolog.timeunits import unit_ms

OUTPUT, LATE, ERROR = "output", "late", "error"  # the kinds of row that reach the sinks
END = "end"  # the row that tells a key the streams have ended


def body_types(kind: str) -> tuple[pa.DataType, str]:
    """The Arrow and Spark types of an output body of ``kind``."""
    if kind == GRAPHS:
        return pa.string(), "string"
    return pa.list_(pa.string()), "array<string>"


RECORD_COLUMNS = ["bucket", "key", "time", "seq", "payload", "row", "source", "body", "place", "why"]


def record_schema(kind: str) -> tuple[pa.Schema, str]:
    """The stateless stage's rows: a bucket's records (bucket, payload: ``buckets.pack``) or
    an end row for a key (bucket, key, row END) for the keyed stage, or, under
    ``PASSTHROUGH_BUCKET``, an output or a diagnostic (row, source, body, place, why)."""
    arrow, spark = body_types(kind)
    schema = pa.schema(list(zip(RECORD_COLUMNS, [pa.int32(), pa.string(), pa.int64(), pa.int64(), pa.binary(),
                                                 pa.string(), pa.string(), arrow, pa.string(), pa.string()])))
    ddl = (f"bucket int, key string, time long, seq long, payload binary, row string, source string, "
           f"body {spark}, place string, why string")
    return schema, ddl


def result_ddl(kind: str) -> str:
    """The keyed stage's rows, what the sinks get: ``row`` is OUTPUT, LATE or ERROR;
    ``source`` the rule or query (an output) or the element's place (a diagnostic);
    ``body`` the output, the late element's payload or the malformed element's quarantine
    record (JSON: source, reason, element); ``order`` and
    ``n`` make the order of a batch's outputs deterministic; ``why`` is an output's
    provenance record (JSON), when the program records them."""
    return (f"row string, time long, source string, body {body_types(kind)[1]}, place string, order string, n long, "
            "why string")


@dataclass(frozen=True)
class Stages:
    """What the driver ships to the executors: the spec each stage compiles and the
    bucket ids of the keyed stage."""

    prepare: ProgramSpec
    keyed: ProgramSpec
    kind: str
    buckets: tuple[int, ...]


class Worker:
    """One Python worker's compiled program and its plan."""

    def __init__(self, spec: ProgramSpec) -> None:
        self.program: Program = compile_program(spec)
        self.plan: Plan = self.program.plan()
        self.ms_per_unit = unit_ms(spec.options.time_unit)

    def element(self, payload: str, syntax: str, place: str) -> tuple:
        """The content of one shipped element (raises ChronologError when malformed)."""
        dictionary = self.program.dictionary
        try:
            if self.program.input_kind == ATOMS_IN:
                return shipped_atoms(payload, syntax, self.ms_per_unit)
            if syntax == "jsonl":
                return jsonl_element(payload, dictionary, None, self.ms_per_unit).triples
        except LineError as error:
            file, _, line = place.rpartition(":")
            raise ChronologSyntaxError(error.message, file, int(line), error.col, payload) from None
        return tuple(dict.fromkeys(encode_text(payload, dictionary, format="nt")))

    def rendered(self, outputs: list[Output], order: str) -> list[tuple]:
        """(row, time, source, body, place, order, n, why) rows of outputs."""
        dictionary = self.program.dictionary
        return [(OUTPUT, o.time, *render(o, dictionary), None, order, n, _why(o)) for n, o in enumerate(outputs)]


def _why(output: Output) -> str | None:
    """An output's provenance record as JSON, when it has one."""
    record = explanation(output)
    return None if record is None else json.dumps(record, ensure_ascii=False)


_WORKERS: dict[ProgramSpec, Worker] = {}


def worker_for(spec: ProgramSpec) -> Worker:
    """This process's compiled program (built once per Python worker and spec)."""
    worker = _WORKERS.get(spec)
    if worker is None:
        worker = _WORKERS[spec] = Worker(spec)
        freeze_compiled()  # kept for the worker's life anyway
    return worker


def _time_points(rows: Iterator[dict]) -> Iterator[list[dict]]:
    """The partition's rows, a time point (or a diagnostic row) at a time."""
    current: list[dict] = []
    for row in rows:
        if row["kind"] != "element":
            yield [row]
            continue
        if current and current[0]["time"] != row["time"]:
            yield current
            current = []
        current.append(row)
    if current:
        yield current


def prepared_rows(stages: Stages, rows: Iterator[dict]) -> Iterator[list[tuple]]:
    """The stateless stage over a partition's source rows (see ``SCHEMA`` of
    :mod:`chronolog.spark.source`): its rows of ``record_schema``, some thousands at a time."""
    worker = worker_for(stages.prepare)
    ids = stages.buckets
    out: list[tuple] = []
    packed: dict[int, list[Record]] = {}  # a bucket's records, shipped as one row
    bucket: dict[str, int] = {}  # program key -> its bucket (a key recurs at every time point)
    held = 0
    for group in _time_points(rows):
        if len(out) + held >= 4096:  # batches of some size, not one per time point
            yield out + _packed_rows(packed)
            out, packed, held = [], {}, 0
        first = group[0]
        if first["kind"] == END:  # the streams have ended: tell the keys that must hear it, and the driver
            out.extend((bucket_of(key, ids), key, first["time"], first["seq"], None, END, None, None, None,
                        None) for key in worker.plan.end_keys())
            out.append((PASSTHROUGH_BUCKET, None, first["time"], first["seq"], None, END, None, None, None, None))
            continue
        if first["kind"] != "element":  # late or malformed: the element's payload or the error
            out.append((PASSTHROUGH_BUCKET, None, first["time"], first["seq"], None, first["kind"], first["place"],
                        _diagnostic_body(first["payload"], stages.kind), first["place"], None))
            continue
        inputs: dict[str, list[tuple]] = {}
        for row in group:
            try:
                inputs.setdefault(row["stream"], []).append(worker.element(row["payload"], row["syntax"],
                                                                           row["place"]))
            except (ChronologError, SyntaxError) as error:
                record = quarantine_record(error)
                if record["source"] is None:
                    record.update(source=row["place"], element=row["payload"])
                out.append((PASSTHROUGH_BUCKET, None, row["time"], row["seq"], None, ERROR, row["place"],
                            _diagnostic_body(json.dumps(record), stages.kind), row["place"], None))
        prepared = worker.plan.prepare(first["time"], inputs)
        for r in prepared.records:
            b = bucket.get(r.key)
            if b is None:
                b = bucket[r.key] = bucket_of(r.key, ids)
            packed.setdefault(b, []).append(r)
        held += len(prepared.records)
        for row, time, source, body, _, _, n, why in worker.rendered(prepared.outputs, ""):
            out.append((PASSTHROUGH_BUCKET, None, time, n, None, row, source, body, None, why))
        reclaim_terms(worker.program)  # the time point left as text: its terms may go
    if out or packed:
        yield out + _packed_rows(packed)


def prepare_stage(stages: Stages):
    """The ``mapInArrow`` function of the stateless stage."""
    schema, _ = record_schema(stages.kind)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for rows in prepared_rows(stages, (row for batch in batches for row in batch.to_pylist())):
            yield _record_batch(rows, schema)

    return run


def _packed_rows(packed: dict[int, list[Record]]) -> list[tuple]:
    """One row per bucket holding its records (its time the latest of theirs, for the
    watermark): a row costs the same in the Arrow, shuffle and pandas steps whatever it holds."""
    return [(bucket, None, max(r.time for r in records), 0, buckets.pack(records), None, None, None, None, None)
            for bucket, records in packed.items()]


def _diagnostic_body(text: str, kind: str) -> str | list[str]:
    """A diagnostic's text in the body column of ``kind``."""
    return text if kind == GRAPHS else [text]


def _record_batch(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
    columns = list(zip(*rows))
    return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema)], schema=schema)


RESULT_COLUMNS = ["row", "time", "source", "body", "place", "order", "n", "why"]
Result = namedtuple("Result", RESULT_COLUMNS)  # a result row (``result_ddl``) outside a DataFrame


def _passed_through(columns) -> dict:
    """The passthrough bucket's rows (outputs of the stateless stage, diagnostics): their
    record columns (a frame, or a mapping of lists) as result columns."""
    return {"row": columns["row"], "time": columns["time"], "source": columns["source"], "body": columns["body"],
            "place": columns["place"], "order": [""] * len(columns["row"]), "n": columns["seq"], "why": columns["why"]}


def _applied(stages: Stages, frames: list, entries: buckets.Entries) -> list[tuple]:
    """Apply a bucket's rows of a batch (packed records, end rows; frames, or any mapping of
    columns) to its ``entries``: the result rows of the outputs."""
    worker = worker_for(stages.keyed)
    records: dict[str, list[Record]] = {}
    ended = set()
    for frame in frames:
        for k, p, r in zip(frame["key"], frame["payload"], frame["row"]):
            if r == END:
                ended.add(k)
                continue
            for record in buckets.unpack(p):
                records.setdefault(record.key, []).append(record)
    rendered = [row for k, outputs in buckets.apply(worker.plan, entries, records, ended)
                for row in worker.rendered(outputs, k)]
    reclaim_terms(worker.program)  # the state left as bytes, the outputs as text: their terms may go
    return rendered


def bucket_results(stages: Stages, bucket: int, rows: list[tuple]) -> list[Result]:
    """A bucket's rows (``record_schema``) of the whole input, applied to empty state, as
    result rows: the keyed stage of a bounded run (:mod:`chronolog.spark.bounded`)."""
    columns = {name: [r[i] for r in rows] for i, name in enumerate(RECORD_COLUMNS)}
    if bucket == PASSTHROUGH_BUCKET:
        passed = _passed_through(columns)
        return [Result(*r) for r in zip(*(passed[c] for c in RESULT_COLUMNS))]
    return [Result(*r) for r in _applied(stages, [columns], {})]


def keyed_processor(stages: Stages):  # -> a StatefulProcessor (pyspark imported on first use)
    import pandas as pd
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class KeyedProcessor(StatefulProcessor):
        """One bucket's state (see the module docstring)."""

        def init(self, handle) -> None:
            self.handle = handle
            # the bucket's entries and the pending timer: each state call is a round trip to
            # the JVM, so a bucket costs one read and one write per batch
            self.state = handle.getValueState("bucket", "entries binary, timer long")

        def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
            frames = list(rows)
            if key[0] == PASSTHROUGH_BUCKET:
                frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
                yield pd.DataFrame(_passed_through(frame), columns=RESULT_COLUMNS)
                return
            stored = self.state.get()
            entries = buckets.decode(stored[0] if stored else None)
            rendered = _applied(stages, frames, entries)
            self.keep(entries, stored[1] if stored else None, stored is not None)
            if rendered:
                yield pd.DataFrame(rendered, columns=RESULT_COLUMNS)

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
            stored = self.state.get()
            if stored is not None:
                entries = buckets.decode(stored[0])
                buckets.evict(entries, timerValues.getCurrentWatermarkInMs())
                self.keep(entries, None, True)
            return iter([])

        def keep(self, entries: buckets.Entries, timer: int | None, stored: bool) -> None:
            """Write the bucket back (or clear it once empty), with a timer armed for its
            earliest expiry unless one is pending: a timer re-arms itself while in reach."""
            if not entries:
                if stored:
                    self.state.clear()  # a timer still pending finds nothing to do
                return
            due = buckets.due(entries)
            if due is not None and timer is None:
                timer = due + 1
                self.handle.registerTimer(timer)
            self.state.update((buckets.encode(entries), timer))

        def close(self) -> None:
            pass

    return KeyedProcessor()
