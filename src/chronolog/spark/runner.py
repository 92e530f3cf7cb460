"""``chronolog run --runner spark``: any program as a Spark Structured Streaming query.

    chronolog source -> prepare (mapInArrow) -> watermark -> groupBy(key)
        .transformWithStateInPandas(keyed processor) -> foreachBatch(sinks)

Input that is all there and small runs as one batch job of the same stages instead
(:mod:`chronolog.spark.bounded`). The driver compiles the program once (its errors come
early), ships the specs each stage
compiles (:class:`~chronolog.spark.pipeline.Stages`), follows the query's progress
reports (input and processing rates, batch duration, state rows) and adds what the sinks
counted (outputs, late and malformed elements). A late element goes to the late-data output (``late=``) or, without one, is
reported on stderr with its place; a malformed one is reported with its place. Neither
stops the stream.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time as _time
from dataclasses import dataclass, field, fields
from decimal import Decimal
from pathlib import Path
from typing import Callable, Iterator, Mapping

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.formats import encode_text
from chronolog.lang.registry import compile_program
from chronolog.program import ATOMS_IN, UNNAMED, Program, ProgramSpec
from chronolog.program.contract import resolve_stream
from chronolog.monitor import RunMonitor
from chronolog.progress import Progress
from chronolog.spark.bounded import bounded_results, is_bounded, read_bounded
from chronolog.spark.buckets import BUCKETS_PER_PARTITION, bucket_ids
from chronolog.spark.pipeline import END, ERROR, LATE, OUTPUT, Stages, keyed_processor, prepare_stage, record_schema, result_ddl
from chronolog.spark.sinks import LateFileSink, MonitoredSink, OutputRecord, QuarantineFileSink, Sink
from chronolog.spark.source import FORMAT_NAME, check_stream_path, register_source
from chronolog.streams import StreamElement, jsonl_element
from chronolog.terms import TermDictionary
from chronolog.timeunits import unit_ms


@dataclass
class RunSummary:
    """What a run did, for the summary line and for tests."""

    batches: int = 0
    outputs: int = 0
    late: int = 0
    errors: list[str] = field(default_factory=list)
    failure: str | None = None  # why a policy stopped the run (--late error, --on-error stop)
    failure_batch: int | None = None  # the batch that found it: the run stops once it is committed
    ended: int | None = None  # the batch that reached the end of every stream: the run ends after it
    stream_time: int | None = None
    input_rows: int = 0
    state_rows: int = 0
    max_state_rows: int = 0
    seconds: float = 0.0
    progress: list[dict] = field(default_factory=list)


CHECKPOINT_STAMP = "chronolog-run.json"


def fingerprint(spec: ProgramSpec, streams: Mapping[str, str], lateness: int) -> dict[str, object]:
    """What shapes a run's state and offsets: the program, the options it was compiled
    with, the streams and the lateness. A checkpoint belongs to one fingerprint."""
    return {"language": spec.language, "program": hashlib.sha256(spec.text.encode("utf-8")).hexdigest(),
            "options": {f.name: getattr(spec.options, f.name) for f in fields(spec.options)},
            "streams": dict(streams), "lateness": lateness}


def resumed_buckets(location: Path, stamp: dict[str, object], fresh: bool) -> list[int] | None:
    """The keyed stage's bucket ids of the checkpoint a run resumes (None for a new one);
    refuse to resume one made by another program or other options (their state and offsets
    would be mixed), or by a chronolog that kept its state in another layout."""
    if fresh:
        return None
    path = location / CHECKPOINT_STAMP
    old = json.loads(path.read_text()) if path.exists() else {}
    if "buckets" not in old:
        raise ChronologError(f"the checkpoint {location} was made by an earlier chronolog, which kept one state "
                             "value per program key; this one keeps program keys in buckets and cannot resume it: "
                             "give a new --checkpoint folder, or --fresh to discard it and start over")
    changed = sorted(k for k in stamp.keys() | (old.keys() - {"buckets"}) if _plain(stamp.get(k)) != _plain(old.get(k)))
    if changed:
        raise ChronologError(f"the checkpoint {location} belongs to a run with another {', '.join(changed)}: "
                             "resuming it would mix two programs' state; give a new --checkpoint folder, or "
                             "--fresh to discard this one and start over")
    return [int(b) for b in old["buckets"]]


def stamp_checkpoint(location: Path, stamp: dict[str, object], buckets: list[int]) -> None:
    """Stamp a new checkpoint with its run's fingerprint and bucket ids."""
    location.mkdir(parents=True, exist_ok=True)
    (location / CHECKPOINT_STAMP).write_text(json.dumps({**stamp, "buckets": buckets}, sort_keys=True, indent=1))


def _plain(value: object) -> object:
    """``value`` as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value, sort_keys=True))


class RunStopped(ChronologError):
    """A late or malformed element stopped the run (``--late error``, ``--on-error stop``),
    after the batch that held it was committed: a restart on the checkpoint resumes past it."""

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message)
        self.summary = summary


class _BatchHandler:
    """The ``foreachBatch`` function: sorts a batch, feeds the sinks, applies the late and
    error policies, counts. A policy that stops the run lets the batch finish (its checkpoint
    moves past the element, so a restart resumes after it, not into it) and records why."""

    def __init__(self, sink: Sink, late: str | LateFileSink, on_error: str, quarantine: QuarantineFileSink | None,
                 input_kind: str, summary: RunSummary, report: Callable[[str], None]) -> None:
        self.sink = sink
        self.late = late
        self.on_error = on_error
        self.quarantine = quarantine
        self.input_kind = input_kind
        self.summary = summary
        self.report = report

    def __call__(self, frame, batch_id: int) -> None:
        self.handle(frame.collect(), batch_id)

    def handle(self, rows: list, batch_id: int) -> None:
        """Handle the collected result rows of a batch."""
        outputs = sorted((r for r in rows if r.row == OUTPUT), key=lambda r: (r.time, r.source, r.order, r.n))
        diagnostics = sorted((r for r in rows if r.row != OUTPUT), key=lambda r: r.place or "")
        self.sink.write(batch_id, [OutputRecord(r.time, r.source, r.body, r.order, r.why) for r in outputs])
        summary = self.summary
        late = [d for d in diagnostics if d.row == LATE]
        if isinstance(self.late, LateFileSink):
            dictionary = TermDictionary()
            payloads = [_text(d.body) for d in late]
            if self.input_kind == ATOMS_IN:
                self.late.write(batch_id, [], dictionary, [_with_source(p, d.place) for d, p in zip(late, payloads)])
            else:
                self.late.write(batch_id, [(_late_element(d.time, p, dictionary), d.place)
                                           for d, p in zip(late, payloads)], dictionary, [])
        elif self.late == "error" and late:
            first = late[0]
            self.fail(batch_id, f"{first.place}: late element at time {first.time}, older than the stream's time "
                                "minus the lateness (--late error; --late drop or --late FILE keep the run going)")
        malformed = [json.loads(_text(d.body)) for d in diagnostics if d.row == ERROR]
        if self.quarantine is not None:
            self.quarantine.write(batch_id, malformed)
        for record in malformed:
            message = _error_message(record)
            summary.errors.append(message)
            if self.on_error == "stop":
                self.fail(batch_id, message)
            else:
                self.report(f"chronolog: skipped {message}")
        if any(d.row == END for d in diagnostics):
            summary.ended = batch_id
        summary.batches += 1
        summary.outputs += len(outputs)
        summary.late += len(late)
        if outputs:
            summary.stream_time = max(summary.stream_time or outputs[-1].time, outputs[-1].time)


    def fail(self, batch_id: int, message: str) -> None:
        """Stop the run once this batch is committed (the first reason wins)."""
        if self.summary.failure is None:
            self.summary.failure, self.summary.failure_batch = message, batch_id


def _error_message(record: dict) -> str:
    """A malformed element's error as ``FILE:LINE:COL: reason`` with its line and a caret."""
    where = str(record.get("source") or "")
    file, line, col = (where.rsplit(":", 2) + ["", ""])[:3] if where.count(":") >= 2 else (where, "", "")
    if line.isdigit():
        return str(ChronologSyntaxError(str(record["reason"]), file, int(line), int(col) if col.isdigit() else None,
                                        record.get("element") or None))
    return f"{where}: {record['reason']}" if where else str(record["reason"])


def _with_source(line: str, place: str) -> str:
    """A late atom-stream line with the place it was read from."""
    record = json.loads(line)
    record["source"] = place
    return json.dumps(record, ensure_ascii=False)


def _text(body: str | list[str]) -> str:
    """A diagnostic's text (a list-typed body holds it as its one item)."""
    return body if isinstance(body, str) else body[0]


def _late_element(time: int | None, payload: str, dictionary: TermDictionary) -> StreamElement:
    """A late RDF element back as an element, from the payload the source shipped."""
    if payload.lstrip().startswith("{"):
        return jsonl_element(payload, dictionary, None, 1)
    return StreamElement(time or 0, tuple(dict.fromkeys(encode_text(payload, dictionary, format="nt"))))


def build_query(spark, stages: Stages, streams: Mapping[str, str], options: Mapping[str, str]):
    """The streaming DataFrame of result rows (see ``result_ddl``) of the program over ``streams``."""
    from pyspark.sql import functions as F

    register_source(spark)
    reader = spark.readStream.format(FORMAT_NAME).option("streams", json.dumps(dict(streams)))
    for key, value in options.items():
        reader = reader.option(key, value)
    records = reader.load().mapInArrow(prepare_stage(stages), record_schema(stages.kind)[1])
    # The watermark only drives the timers that evict state (the source already hands out
    # whole time points in order, lateness applied): its column is dropped before the keyed
    # stage, so that no row is ever filtered there as late (a time at or before 0 would be).
    records = records.withColumn("ts", F.timestamp_millis("time")).withWatermark("ts", "0 milliseconds").drop("ts")
    return records.groupBy("bucket").transformWithStateInPandas(
        keyed_processor(stages), result_ddl(stages.kind), "Append", "EventTime")


def run_spark(spec: ProgramSpec, streams: str | Mapping[str, str], sink: Sink, *, master: str | None = None,
              conf: Mapping[str, str] | None = None, checkpoint: str | None = None,
              trigger: str = "available-now", late: str | LateFileSink = "error", lateness: int = 0,
              on_error: str = "stop", quarantine: QuarantineFileSink | None = None,
              max_elements_per_batch: int = 0, partitions: int = 0, rate: float = 0.0,
              progress: Progress | None = None, report: Callable[[str], None] | None = None,
              stop_after: float | None = None, until: Callable[[RunSummary], bool] | None = None,
              monitor: RunMonitor | None = None, program: Program | None = None) -> RunSummary:
    """Run the program of ``spec`` over ``streams`` (one unnamed source, or sources by
    stream name) on Spark until the streams end (available-now), ``stop_after`` seconds
    pass, ``until(summary)`` holds after a batch, or Ctrl-C; outputs go to ``sink``.

    With ``checkpoint``, a run that was stopped or killed resumes where it left off, and
    the file and Parquet sinks hold every detection exactly once. ``monitor`` (the live
    view) hears of every micro-batch's progress, output and skipped element. ``program``:
    ``spec`` compiled, when the caller has it already (compiling costs up to a second).
    """
    from chronolog.spark.session import spark_session

    streams = {UNNAMED: streams} if isinstance(streams, str) else dict(streams)
    for source in streams.values():
        check_stream_path(source)
    program = program or compile_program(spec)  # errors here, on the driver, before Spark starts
    plan = program.plan()
    named = {resolve_stream(program, name): source if source.startswith("tcp://") else os.path.abspath(source)
             for name, source in streams.items()}
    progress = progress or Progress(enabled=False)
    report = report or (lambda line: print(line, file=sys.stderr))
    temporary = checkpoint is None
    location = Path(tempfile.mkdtemp(prefix="chronolog-checkpoint-") if temporary else checkpoint)  # type: ignore[arg-type]
    fresh = not (location / "offsets").exists()
    stamp = fingerprint(spec, named, lateness)
    ids = resumed_buckets(location, stamp, fresh)
    spark = spark_session(master, conf)
    if ids is None:
        with _sql_conf(spark, conf or {}):
            ids = bucket_ids(int(spark.conf.get("spark.sql.shuffle.partitions")))
        stamp_checkpoint(location, stamp, ids)
    stages = Stages(spec, plan.keyed_spec(spec), program.output_kind, tuple(ids))
    if fresh:
        sink.reset()
        for extra in (late, quarantine):
            if isinstance(extra, (LateFileSink, QuarantineFileSink)):
                extra.reset()
    summary = RunSummary()
    if monitor is not None:
        sink = MonitoredSink(sink, monitor)
        monitor.watch("late", lambda: summary.late)
        monitor.watch("skipped", lambda: len(summary.errors))
        shown = report
        report = lambda line: (monitor.problem(line.removeprefix("chronolog: skipped ").splitlines()[0]),  # noqa: E731
                               shown(line))
    handler = _BatchHandler(sink, late, on_error, quarantine, program.input_kind, summary, report)
    partitions = partitions or spark.sparkContext.defaultParallelism
    start = _time.monotonic()
    try:
        if trigger == "available-now" and temporary and monitor is None and not (rate or max_elements_per_batch) \
                and stop_after is None and until is None and is_bounded(named):
            _run_bounded(spark, stages, named, lateness, unit_ms(spec.options.time_unit), partitions, handler, progress)
        else:
            options = {"lateness": str(lateness), "partitions": str(partitions),
                       "msPerUnit": str(unit_ms(spec.options.time_unit))}
            if max_elements_per_batch:
                options["maxElementsPerBatch"] = str(max_elements_per_batch)
            if rate:
                options["rate"] = str(rate)
            writer = build_query(spark, stages, named, options).writeStream.foreachBatch(handler) \
                .option("checkpointLocation", str(location)) \
                .queryName(f"chronolog-{Path(spec.filename or 'program').stem}")
            if trigger == "available-now":
                writer = writer.trigger(availableNow=True)
            else:
                writer = writer.trigger(processingTime=trigger)
            with _sql_conf(spark, conf or {}):
                query = writer.start()
            try:
                _follow(query, summary, progress, start, stop_after, until, trigger == "available-now", monitor)
            except KeyboardInterrupt:
                query.stop()
                raise
    finally:
        summary.seconds = _time.monotonic() - start
        sink.close()
        for extra in (late, quarantine):
            if isinstance(extra, (LateFileSink, QuarantineFileSink)):
                extra.close()
        if temporary:
            shutil.rmtree(location, ignore_errors=True)
    if summary.failure is not None:
        raise RunStopped(summary.failure, summary)
    return summary


def _run_bounded(spark, stages: Stages, streams: Mapping[str, str], lateness: int, ms_per_unit: int | Decimal,
                 partitions: int, handler: _BatchHandler, progress: Progress) -> None:
    """Run the program over input small and all there as one batch job (see
    :mod:`chronolog.spark.bounded`), its results handled as one micro-batch's; the progress
    line follows the job's tasks, and Ctrl-C cancels it."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException

    runs, elements = read_bounded(streams, lateness, ms_per_unit, partitions)
    keyed = len(stages.buckets) // BUCKETS_PER_PARTITION  # the keyed partitions a streaming query would have
    result: list = []

    def collect() -> None:
        try:
            result.append(bounded_results(spark, stages, runs, keyed))
        except Exception as error:  # raised in the caller's thread
            result.append(error)

    job = threading.Thread(target=collect, name="chronolog-bounded-run", daemon=True)
    job.start()
    tracker = spark.sparkContext.statusTracker()
    try:
        while job.is_alive():
            job.join(0.5)
            stages_now = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
            done = sum(info.numCompletedTasks for info in stages_now if info)
            total = sum(info.numTasks for info in stages_now if info)
            progress.update(f"{elements:,} elements, in one batch job: {done}/{total} tasks of its running stages")
    except KeyboardInterrupt:
        spark.sparkContext.cancelAllJobs()
        raise
    outcome = result[0]
    if isinstance(outcome, (CapturedException, Py4JJavaError)):  # a task failed
        raise ChronologError(f"the Spark job failed: {_cause(outcome)}") from None
    if isinstance(outcome, Exception):
        raise outcome
    handler.summary.input_rows = elements
    handler.handle(outcome, 0)


@contextlib.contextmanager
def _sql_conf(spark, conf: Mapping[str, str]) -> Iterator[None]:
    """Apply the SQL settings of ``conf`` (such as the number of keyed partitions) to the
    query about to start, even when the session already ran with other values; a query
    keeps them (a restarted one takes them from its checkpoint)."""
    saved = {}
    for key, value in conf.items():
        if key.startswith("spark.sql.") and spark.conf.isModifiable(key):
            saved[key] = spark.conf.get(key, None)
            spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _follow(query, summary: RunSummary, progress: Progress, start: float, stop_after: float | None,
            until: Callable[[RunSummary], bool] | None, available_now: bool, monitor: RunMonitor | None) -> None:
    """Wait for the query, updating the progress line from its progress reports."""
    from pyspark.errors import StreamingQueryException

    seen = None
    while True:
        try:
            finished = query.awaitTermination(0.5)
        except StreamingQueryException as error:
            raise ChronologError(f"the Spark query failed: {_cause(error)}") from None
        for report in query.recentProgress:
            if seen is not None and report["batchId"] <= seen:
                continue
            seen = report["batchId"]
            summary.progress.append(report)
            summary.input_rows += report.get("numInputRows", 0)
            states = report.get("stateOperators") or []
            summary.state_rows = sum(s.get("numRowsTotal", 0) for s in states)
            summary.max_state_rows = max(summary.max_state_rows, summary.state_rows)
            if monitor is not None:
                monitor.batch(report)
        last = summary.progress[-1] if summary.progress else {}
        progress.update(
            f"batch {summary.batches:,}: {summary.input_rows:,} elements in "
            f"({last.get('processedRowsPerSecond', 0):,.0f}/s), stream time {summary.stream_time}, "
            f"{summary.outputs:,} outputs, {summary.state_rows:,} state rows")
        if finished:
            return
        # available-now ends by itself, no-data batches (timers) included; a processing-time
        # trigger is told to stop once the streams have ended
        ended = summary.ended if not available_now else None
        done = next((b for b in (summary.failure_batch, ended) if b is not None), None)
        if (done is not None and seen is not None and seen >= done) \
                or (stop_after is not None and _time.monotonic() - start > stop_after) or (until and until(summary)):
            query.stop()
            return


def _cause(error: Exception) -> str:
    """The useful line of a Spark failure: a chronolog error raised on an executor or in a
    sink if there is one, else the last Python exception line, else Spark's first line."""
    lines = str(error).splitlines()
    raised = [line.strip() for line in lines if re.match(r"\s*[\w.]*(Error|Exception): ", line)]
    ours = [line for line in raised if "chronolog" in line.split(":", 1)[0].lower()]
    if ours:
        return ours[-1].split(": ", 1)[1]
    if raised:
        return raised[-1]
    return lines[0] if lines else type(error).__name__
