"""A bounded run: input that is all there and small, run as one Spark batch job.

When the streams are files (or directories) read under the available-now trigger, with no
checkpoint to resume, no micro-batch limit, no replay rate and no live view, and they hold
at most :data:`BOUNDED_BYTES`, a streaming query buys nothing: it would read them in one
micro-batch and drop its state at the end. It costs start-up, though (benchmarks/RESULTS.md,
issue 18 goal 1): the Python data source is registered and asked for its schema (a Python
process each), each DataFrame step is analysed and planned, the stateful operator opens its
state store and its state server, and a closing micro-batch runs the timers.

So such a run is a job of Spark's core API with the streaming query's two stages and
nothing else:

    the driver reads the streams with the source's scanners (:mod:`chronolog.spark.source`:
    the same order, lateness, late and malformed rows, end row), one run of whole time
    points per partition
      -> the stateless stage per partition (``prepared_rows``)
      -> shuffled by bucket, to the partition Spark's SQL shuffle would give it
      -> the keyed stage per bucket, from empty state (``bucket_results``)
      -> collected for the sinks, as one micro-batch

Its results are those of the streaming query reading the input in one micro-batch.
"""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Iterator, Mapping

from chronolog.spark.buckets import spark_partition
from chronolog.spark.pipeline import Result, Stages, bucket_results, prepared_rows
from chronolog.spark.source import SCHEMA_COLUMNS, StreamScanner, batch_rows, release_bound, stream_files

BOUNDED_BYTES = 16 << 20  # the input a bounded run holds at once: a micro-batch's worth


def is_bounded(streams: Mapping[str, str]) -> bool:
    """Whether ``streams`` are files (or directories of them) of at most BOUNDED_BYTES in all."""
    if any(source.startswith("tcp://") for source in streams.values()):
        return False
    paths = [Path(source) for source in streams.values()]
    return sum(f.stat().st_size for p in paths for f in (stream_files(p) if p.is_dir() else [p])) <= BOUNDED_BYTES


def read_bounded(streams: Mapping[str, str], lateness: int, ms_per_unit: int | Decimal,
                 partitions: int) -> tuple[list[list[tuple]], int]:
    """The streams' rows in runs of whole time points, one run per partition (as the
    streaming source would hand them out in one micro-batch that reaches their end), and
    how many elements they hold."""
    scanners = {name: StreamScanner(path, lateness, ms_per_unit) for name, path in streams.items()}
    for scanner in scanners.values():
        scanner.scan(1 << 62)  # to the end of the files present
    ns = {name: scanner.count for name, scanner in scanners.items()}
    end = {"n": ns, "t": release_bound(scanners, ns, None, {name: True for name in scanners}), "end": True}
    return batch_rows(scanners, {"n": {name: 0 for name in scanners}, "t": None}, end, partitions), sum(ns.values())


def bounded_results(spark, stages: Stages, runs: list[list[tuple]], keyed_partitions: int) -> list[Result]:
    """The result rows of the program over ``runs`` (never empty: the last holds the end row)."""

    def prepared(partition: Iterator[list[tuple]]) -> Iterator[tuple[int, tuple]]:
        rows = (dict(zip(SCHEMA_COLUMNS, row)) for run in partition for row in run)
        return ((row[0], row) for chunk in prepared_rows(stages, rows) for row in chunk)

    def applied(partition: Iterator[tuple[int, tuple]]) -> Iterator[Result]:
        by_bucket: dict[int, list[tuple]] = {}
        for bucket, row in partition:
            by_bucket.setdefault(bucket, []).append(row)
        return (result for bucket, rows in by_bucket.items() for result in bucket_results(stages, bucket, rows))

    return (spark.sparkContext.parallelize(runs, len(runs)).mapPartitions(prepared)
            .partitionBy(keyed_partitions, lambda bucket: spark_partition(bucket, keyed_partitions))
            .mapPartitions(applied).collect())
