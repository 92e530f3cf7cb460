"""Bounded runs against in-process throughput (issue 18, goal 2): input that is all there and
small (:mod:`chronolog.spark.bounded`) runs as one Spark batch job, with no micro-batches.

Workloads: DOTR section 5's default scenario (``dotr_scenario.py``), CityBench Q1 and Q2
(``examples/citybench``; longer streams converted from ``../shared/data/citybench`` when it
is there, as ``bench_spark_stream.py`` does) and one golden program of each other language
(its stream repeated, as ``bench_spark_languages.py`` does). Both runners run the same
command line (``chronolog run ... --runner inprocess|spark``, Spark on ``local[2]``), one
after the other in this process (one SparkSession for every Spark run, a warm-up Spark run of
each program first); throughput per element is the difference of two lengths' wall times,
which cancels start-up. Every Spark
run is checked to be a bounded run (no streaming progress reports) and to write what the
in-process run wrote. The per-phase split of the longer Spark run: reading the input on the
driver, the job's two stages from Spark's status store (wall time, and the time its tasks
ran, summed over both cores), the driver writing the outputs to the sink (parsing each
output's text back and writing it in the output format), and the rest (compiling the program
on the driver, scheduling, results back to the driver).

    PYTHONPATH=src python benchmarks/bench_spark_bounded.py [--workloads ...]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import from_tests
from bench_spark_languages import repeat_streams
from bench_spark_stream import DATA, make_workloads, status_stages

LENGTHS = {"synthetic": (5_000, 20_000), "citybench-q1": (500, 2_500), "citybench-q2": (500, 2_500)}
CASES = ["csparql/select_window", "epsparql/stock_drop", "lars/cooling", "rspql/dstream_every_step"]


def commands(name: str, folder: Path) -> dict[int, list[str]]:
    """``chronolog run`` arguments (without runner and output) per length of workload ``name``."""
    if name in LENGTHS:
        built = make_workloads(folder, [name], {name: list(LENGTHS[name])}, DATA)[name]
        extra = [a for b in built.background for a in ("--background", b)] + [a for r in built.rules
                                                                             for a in ("--rules", r)]
        return {n: ["run", built.program, *extra, "--stream", path] for n, path in built.streams.items()}
    case = {c.id: c for c in from_tests.load("golden.py").cases()}[name]
    out = {}
    for n in (10_000, 40_000):
        streams = repeat_streams(case.streams, n, folder)
        argv = case.arguments(folder / "unused")[:-2]  # without -o
        for stream, path in case.streams.items():
            old = f"{stream}={path}" if stream else str(path)
            argv[argv.index(old)] = f"{stream}={streams[stream]}" if stream else str(streams[stream])
        out[n] = argv
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join([*LENGTHS, *CASES]))
    args = parser.parse_args()

    import chronolog.spark.runner as spark_runner
    from chronolog import cli
    from chronolog.spark.session import spark_session

    summaries: list = []
    reads: list[float] = []
    sinks: list[float] = []
    run_spark, read_bounded, handle = spark_runner.run_spark, spark_runner.read_bounded, spark_runner._BatchHandler.handle

    def recording(*a, **k):
        summaries.append(run_spark(*a, **k))
        return summaries[-1]

    spark_runner.run_spark, spark_runner.read_bounded = recording, _timed(read_bounded, reads)
    spark_runner._BatchHandler.handle = _timed(handle, sinks)
    start = time.monotonic()
    spark = spark_session("local[2]")
    print(f"SparkSession local[2] in {time.monotonic() - start:.1f} s\n", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.workloads.split(","):
            folder = Path(tmp) / name.replace("/", "-")
            folder.mkdir()
            argvs = commands(name, folder)
            walls: dict[tuple[str, int], float] = {}
            suffix = ".trig" if name in LENGTHS else ".jsonl"
            warm = [*argvs[min(argvs)], "-o", str(folder / f"warm{suffix}"), "--runner", "spark", "--master", "local[2]"]
            if cli.main(warm) != 0:  # Python workers start and compile this program: start-up, not throughput
                raise SystemExit(f"{name}: the warm-up run failed")
            for n, argv in argvs.items():
                outputs = {}
                for runner in ("inprocess", "spark"):
                    outputs[runner] = folder / f"{runner}-{n}{suffix}"
                    t0 = time.monotonic()
                    code = cli.main([*argv, "-o", str(outputs[runner]), "--runner", runner,
                                     *(["--master", "local[2]"] if runner == "spark" else [])])
                    walls[runner, n] = time.monotonic() - t0
                    if code != 0:
                        raise SystemExit(f"{name} {runner} {n}: exit {code}")
                    print(f"  {name} {runner} {n:,}: {walls[runner, n]:.2f} s", file=sys.stderr, flush=True)
                if summaries[-1].progress:
                    raise SystemExit(f"{name} {n}: not a bounded run (over its size?)")
                if sorted(outputs["spark"].read_text().splitlines()) != sorted(
                        outputs["inprocess"].read_text().splitlines()):
                    raise SystemExit(f"{name} {n}: Spark's output differs from the in-process one")
            stages = sorted(_job_stages(spark), key=lambda s: s["id"])[-2:]
            short, long = sorted(argvs)
            rate = {r: (long - short) / (walls[r, long] - walls[r, short]) for r in ("inprocess", "spark")}
            rows.append((name, short, long, rate, reads[-1], stages, sinks[-1], walls["spark", long]))
    print("| program | elements | in-process el/s | Spark el/s | Spark / in-process | longer Spark run s | "
          "driver reads s | stage 1 (stateless) wall s, task s | stage 2 (keyed) wall s, task s | "
          "driver writes the outputs s | the rest s |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|")
    for name, short, long, rate, read, stages, sink, wall in rows:
        split = [f"{s['wall_ms'] / 1000:.2f}, {s['task_ms'] / 1000:.2f}" for s in stages]
        rest = wall - read - sink - sum(s["wall_ms"] / 1000 for s in stages)
        print(f"| {name} | {short:,} / {long:,} | {rate['inprocess']:,.0f} | {rate['spark']:,.0f} | "
              f"{rate['spark'] / rate['inprocess']:.2f} | {wall:.1f} | {read:.2f} | {' | '.join(split)} | {sink:.2f} | "
              f"{rest:.2f} |")


def _timed(function, seconds: list[float]):
    """``function``, appending the seconds each call takes to ``seconds``."""
    def timed(*a, **k):
        start = time.monotonic()
        try:
            return function(*a, **k)
        finally:
            seconds.append(time.monotonic() - start)

    return timed


def _job_stages(spark) -> list[dict]:
    """The session's stages so far: id, wall and task time."""
    out = []
    for st in status_stages(spark):
        sub, done = st.submissionTime(), st.completionTime()
        if sub.isDefined() and done.isDefined():
            out.append({"id": st.stageId(), "wall_ms": done.get().getTime() - sub.get().getTime(),
                        "task_ms": st.executorRunTime()})
    return out


if __name__ == "__main__":
    main()
