"""The CPU a Spark run's two stages cost for DOTR, without Spark (issue 18, goal 2).

On two cores a Spark run beats the in-process engine only if its stages together cost less
than twice the engine's CPU per element, before anything Spark adds. This runs the
stages' own code (``pipeline.prepared_rows``, then ``pipeline.bucket_results`` per bucket,
as a bounded run does) over DOTR section 5's default scenario in this process, beside
``Engine.push`` over the same elements, and reports microseconds per element, best of
``--repeat``.

    PYTHONPATH=src python benchmarks/bench_spark_stages.py [--elements 20000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dotr_scenario import write_example

from chronolog.engine import Engine
from chronolog.lang.registry import compile_program, load_spec
from chronolog.program.contract import Options
from chronolog.spark.bounded import read_bounded
from chronolog.spark.buckets import bucket_ids
from chronolog.spark.pipeline import Stages, bucket_results, prepared_rows
from chronolog.spark.source import SCHEMA_COLUMNS
from chronolog.streams import read_stream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="chronolog-stages-"))
    write_example(str(folder), 10_000, args.elements, 10)
    program, background, rules = folder / "scenario.dotr", str(folder / "background.ttl"), str(folder / "scenario.dl")
    spec = load_spec(str(program), options=Options(background=(background,), rules=(rules,)))
    stages = Stages(spec, compile_program(spec).plan().keyed_spec(spec), "graphs", tuple(bucket_ids(2)))
    runs, elements = read_bounded({"": str(folder / "stream.trig")}, 0, 1, 2)
    list(prepared_rows(stages, iter([])))  # each stage's worker compiled before the clock starts
    bucket_results(stages, stages.buckets[0], [])

    def stage1() -> list[tuple]:
        rows = (dict(zip(SCHEMA_COLUMNS, row)) for run in runs for row in run)
        return [row for chunk in prepared_rows(stages, rows) for row in chunk]

    def stage2(rows: list[tuple]) -> int:
        by_bucket: dict[int, list[tuple]] = {}
        for row in rows:
            by_bucket.setdefault(row[0], []).append(row)
        return sum(len(bucket_results(stages, bucket, held)) for bucket, held in by_bucket.items())

    def inprocess() -> tuple[int, float]:
        engine = Engine.from_file(program, background=[background], rules=[rules])
        stream = list(read_stream(folder / "stream.trig", engine.dictionary))
        start = time.perf_counter()
        outputs = sum(len(engine.push(e.time, e.triples)) for e in stream)
        return outputs, time.perf_counter() - start

    best = {"stateless stage": float("inf"), "keyed stage": float("inf"), "in-process Engine.push": float("inf")}
    for _ in range(args.repeat):
        start = time.perf_counter()
        rows = stage1()
        middle = time.perf_counter()
        results = stage2(rows)
        end = time.perf_counter()
        outputs, engine_s = inprocess()
        assert results - 1 == outputs, (results, outputs)  # the stages' results hold the end row too
        best["stateless stage"] = min(best["stateless stage"], middle - start)
        best["keyed stage"] = min(best["keyed stage"], end - middle)
        best["in-process Engine.push"] = min(best["in-process Engine.push"], engine_s)
    print(f"DOTR default scenario, {elements:,} elements, {outputs:,} outputs, best of {args.repeat}\n")
    print("| work | s | µs per element | vs in-process |")
    print("|---|---:|---:|---:|")
    stages_s = best["stateless stage"] + best["keyed stage"]
    for name, seconds in [*best.items(), ("both stages", stages_s)]:
        print(f"| {name} | {seconds:.2f} | {seconds / elements * 1e6:.1f} | "
              f"{seconds / best['in-process Engine.push']:.2f}x |")


if __name__ == "__main__":
    main()
