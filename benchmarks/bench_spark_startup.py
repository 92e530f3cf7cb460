"""Where the Spark runner's start-up goes (issue 18, goal 1): the README's first command,
``chronolog run examples/fire`` on Spark local, beside the floor under it, in one run.

Child processes, each timed from its start to its exit (wall seconds), best of
``--repeats``:

- ``floor``: a bare PySpark program: a ``local[2]`` SparkSession running a trivial
  available-now file-to-file streaming query (text in, text out), then exiting;
- ``chronolog spark``: ``chronolog run examples/fire`` (the Spark runner, the default; the
  input is small and all there, so a bounded run: one batch job, :mod:`chronolog.spark.bounded`);
- ``chronolog spark, streaming query``: the same with ``--checkpoint``, which makes it a
  Structured Streaming query;
- ``chronolog in-process``: the same with ``--runner inprocess``;
- ``phases``: the two Spark runs' steps, each in one process, timed: importing chronolog
  and PySpark, compiling the program on the driver, starting the SparkSession, the run, and
  stopping the session. The bounded run is split by Spark's event log (reading the input
  on the driver, each stage of its job: the first holds the Python workers' start and the
  stateless stage, the second the keyed stage). The streaming query is split by its own
  progress reports of its first micro-batch (``durationMs``: planning, reading offsets,
  ``addBatch`` - the two stages' tasks - and the commits), the later micro-batches, and the
  time outside any micro-batch (starting the query, with the Python data source's
  process; the gaps between batches; its end).

The goal: the whole Spark run within 1.3x the floor.

    chronolog bench spark_startup [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRE = ROOT / "examples" / "fire"

FLOOR = """
import sys
from pyspark.sql import SparkSession
source, out, checkpoint = sys.argv[1:]
spark = SparkSession.builder.master("local[2]").appName("floor").getOrCreate()
query = (spark.readStream.format("text").load(source).writeStream.format("text")
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(out))
query.awaitTermination()
spark.stop()
"""

PHASES = """
import json, sys, time
marks = [("start", time.time())]
import pyspark.sql  # noqa: F401
from chronolog.cli import build_parser, _example_dir, _options
from chronolog.lang.registry import compile_program, load_spec
from chronolog.spark.runner import run_spark
from chronolog.spark.session import spark_session
from chronolog.spark.sinks import CallbackSink
from chronolog.monitor import RunMonitor


class Reports(RunMonitor):
    reports = []

    def batch(self, report):
        self.reports.append(report)
        super().batch(report)


example, mode, scratch = sys.argv[1:]
marks.append(("imports", time.time()))
args = build_parser().parse_args(["run", example])
_example_dir(args)
spec = load_spec(args.program, None, _options(args))
compile_program(spec).plan()
marks.append(("compile on the driver", time.time()))
events = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": scratch, "spark.eventLog.compress": "false",
          "spark.eventLog.rolling.enabled": "false"}
spark = spark_session(None, events if mode == "bounded" else {})
marks.append(("SparkSession", time.time()))
got = []
monitor = Reports("fire", "spark") if mode == "streaming" else None
summary = run_spark(spec, args.stream[0], CallbackSink(lambda batch, records: got.extend(records)), monitor=monitor,
                    checkpoint=scratch + "/checkpoint" if mode == "streaming" else None)
marks.append(("run", time.time()))
spark.stop()
marks.append(("stop", time.time()))
print(json.dumps({"marks": marks, "outputs": len(got), "batches": summary.batches,
                  "first": monitor.reports[0].get("durationMs", {}) if monitor and monitor.reports else {},
                  "later": sum(float(r.get("durationMs", {}).get("triggerExecution", 0))
                               for r in (monitor.reports[1:] if monitor else []))}))
"""


def timed(command: list[str], env: dict | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{command}: {done.stderr[-2000:]}")
    return wall, done.stdout


def floor(tmp: Path) -> float:
    source = tmp / "in"
    source.mkdir(exist_ok=True)
    (source / "a.txt").write_text("one line\n")
    out, checkpoint = tmp / f"out{time.monotonic_ns()}", tmp / f"cp{time.monotonic_ns()}"
    return timed([sys.executable, "-c", FLOOR, str(source), str(out), str(checkpoint)])[0]


def phases(mode: str) -> tuple[float, dict]:
    """One ``mode`` ("bounded" or "streaming") run's wall time and steps (seconds)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    with tempfile.TemporaryDirectory() as scratch:
        wall, out = timed([sys.executable, "-c", PHASES, str(FIRE), mode, scratch], env)
        record = json.loads(out.strip().splitlines()[-1])
        marks = record["marks"]
        steps = {name: b - a for (_, a), (name, b) in zip(marks, marks[1:])}
        run = steps.pop("run")
        stop = steps.pop("stop")
        if mode == "bounded":
            logs = [f for f in Path(scratch).iterdir() if f.is_file()]
            steps.update(_job_steps(logs[0], dict(marks)["SparkSession"], run))
        else:
            steps.update(_query_steps(record, run))
    steps["stopping the session"] = stop
    return wall, steps


def _job_steps(log: Path, began: float, run: float) -> dict[str, float]:
    """A bounded run's steps from Spark's event log: before its job (reading the input on
    the driver, submitting the job), each stage, and after it (the sinks)."""
    job: dict[str, float] = {}
    stages: list[tuple[float, float]] = []
    for line in log.read_text().splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerJobStart":
            job["start"] = event["Submission Time"] / 1000
        elif event["Event"] == "SparkListenerJobEnd":
            job["end"] = event["Completion Time"] / 1000
        elif event["Event"] == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            stages.append((info["Submission Time"] / 1000, info["Completion Time"] / 1000))
    steps = {"run: reading the input on the driver, submitting the job": job["start"] - began}
    names = ["run: job stage 1 (Python workers start, stateless stage, shuffle write)", "run: job stage 2 (keyed stage)"]
    for name, (start, end) in zip(names, sorted(stages)):
        steps[name] = end - start
    steps["run: job, outside its stages"] = job["end"] - job["start"] - sum(e - s for s, e in stages)
    steps["run: after the job (outputs to the sinks)"] = run - sum(steps.values())
    return steps


def _query_steps(record: dict, run: float) -> dict[str, float]:
    """A streaming query's steps from its progress reports."""
    first = record["first"]
    steps: dict[str, float] = {}
    parts = 0.0
    for name in ("queryPlanning", "latestOffset", "getBatch", "addBatch", "walCommit", "commitOffsets"):
        if name in first:
            steps[f"query, first micro-batch: {name}"] = first[name] / 1000
            parts += first[name] / 1000
    steps["query, first micro-batch: the rest of it"] = first.get("triggerExecution", 0) / 1000 - parts
    steps[f"query, {record['batches'] - 1} later micro-batches"] = record["later"] / 1000
    steps["query, outside micro-batches (starting it, between batches, its end)"] = run - sum(steps.values())
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    chronolog = [sys.executable, "-m", "chronolog", "run", str(FIRE)]
    floor_name = "floor (bare SparkSession, trivial available-now query)"
    best: dict[str, float] = {}
    steps: dict[str, tuple[float, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            runs = {
                floor_name: lambda: floor(Path(tmp)),
                "chronolog run examples/fire (Spark: a bounded run)": lambda: timed(chronolog, env)[0],
                "chronolog run examples/fire --checkpoint DIR (Spark: a streaming query)":
                    lambda: timed([*chronolog, "--checkpoint", f"{tmp}/checkpoint{repeat}"], env)[0],
                "chronolog run examples/fire --runner inprocess": lambda: timed([*chronolog, "--runner", "inprocess"],
                                                                                 env)[0],
            }
            for name, run in runs.items():
                best[name] = min(best.get(name, float("inf")), run())
            for mode in ("bounded", "streaming"):
                wall, split = phases(mode)
                if wall < steps.get(mode, (float("inf"), {}))[0]:
                    steps[mode] = (wall, split)
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores; best of {args.repeats}; "
          f"load {os.getloadavg()[0]:.1f}\n")
    print("| run | wall s | vs floor |")
    print("|---|---|---|")
    for name, wall in best.items():
        print(f"| {name} | {wall:.1f} | {wall / best[floor_name]:.2f}x |")
    for mode, (wall, split) in steps.items():
        print(f"\nThe {mode} run's steps, in one process (best run):\n")
        print("| step | s |")
        print("|---|---|")
        for name, seconds in split.items():
            print(f"| {name} | {seconds:.2f} |")
        print(f"| process start and exit (the rest of {wall:.1f} s) | {wall - sum(split.values()):.2f} |")


if __name__ == "__main__":
    main()
