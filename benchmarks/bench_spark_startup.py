"""Where the Spark runner's start-up goes (issue 18, goal 1): the README's first command,
``chronolog run examples/fire`` on Spark local, beside the floor under it, in one run.

Four child processes, each timed from its start to its exit (wall seconds), best of
``--repeats``:

- ``floor``: a bare PySpark program: a ``local[2]`` SparkSession running a trivial
  available-now file-to-file streaming query (text in, text out), then exiting;
- ``chronolog spark``: ``chronolog run examples/fire`` (the Spark runner, the default);
- ``chronolog in-process``: the same with ``--runner inprocess``;
- ``phases``: the Spark run's steps in one process, each timed: importing chronolog and
  PySpark, compiling the program on the driver, starting the SparkSession, the query
  (``run_spark``, until its last micro-batch is committed), split by Spark's own progress
  reports of its first micro-batch (``durationMs``: planning, reading offsets, ``addBatch``
  - the two stages' tasks, where the Python workers start and compile the program - and
  the commits), the later micro-batches, the time outside any micro-batch (starting the
  query, with the Python data source's process; the gaps between batches; its end), and
  stopping the session.

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
marks = [("start", time.monotonic())]
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


marks.append(("imports", time.monotonic()))
args = build_parser().parse_args(["run", sys.argv[1]])
_example_dir(args)
spec = load_spec(args.program, None, _options(args))
compile_program(spec).plan()
marks.append(("compile on the driver", time.monotonic()))
spark = spark_session(None, {})
marks.append(("SparkSession", time.monotonic()))
got = []
monitor = Reports("fire", "spark")
summary = run_spark(spec, args.stream[0], CallbackSink(lambda batch, records: got.extend(records)), monitor=monitor)
marks.append(("query", time.monotonic()))
spark.stop()
marks.append(("stop", time.monotonic()))
print(json.dumps({"marks": marks, "outputs": len(got), "batches": summary.batches,
                  "first": monitor.reports[0].get("durationMs", {}) if monitor.reports else {},
                  "later": sum(float(r.get("durationMs", {}).get("triggerExecution", 0)) for r in monitor.reports[1:])}))
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


def phases() -> tuple[float, dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    wall, out = timed([sys.executable, "-c", PHASES, str(FIRE)], env)
    record = json.loads(out.strip().splitlines()[-1])
    marks = record["marks"]
    steps = {name: b - a for (_, a), (name, b) in zip(marks, marks[1:])}
    first = record["first"]
    query = steps.pop("query")
    stop = steps.pop("stop")
    parts = 0.0
    for name in ("queryPlanning", "latestOffset", "getBatch", "addBatch", "walCommit", "commitOffsets"):
        if name in first:
            steps[f"query, first micro-batch: {name}"] = first[name] / 1000
            parts += first[name] / 1000
    steps["query, first micro-batch: the rest of it"] = first.get("triggerExecution", 0) / 1000 - parts
    steps[f"query, {record['batches'] - 1} later micro-batches"] = record["later"] / 1000
    steps["query, outside micro-batches (starting it, between batches, its end)"] = query - sum(
        v for k, v in steps.items() if k.startswith("query,"))
    steps["stopping the session"] = stop
    return wall, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    chronolog = [sys.executable, "-m", "chronolog", "run", str(FIRE)]
    best: dict[str, float] = {}
    steps: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            runs = {
                "floor (bare SparkSession, trivial available-now query)": lambda: floor(Path(tmp)),
                "chronolog run examples/fire (Spark)": lambda: timed(chronolog, env)[0],
                "chronolog run examples/fire --runner inprocess": lambda: timed([*chronolog, "--runner", "inprocess"],
                                                                                 env)[0],
            }
            for name, run in runs.items():
                best[name] = min(best.get(name, float("inf")), run())
            wall, split = phases()
            if wall < best.get("phases", float("inf")):
                best["phases"], steps = wall, split
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores; best of {args.repeats}; "
          f"load {os.getloadavg()[0]:.1f}\n")
    print("| run | wall s | vs floor |")
    print("|---|---|---|")
    base = best["floor (bare SparkSession, trivial available-now query)"]
    for name, wall in best.items():
        if name != "phases":
            print(f"| {name} | {wall:.1f} | {wall / base:.2f}x |")
    print("\nThe Spark run's steps, in one process (best run):\n")
    print("| step | s |")
    print("|---|---|")
    for name, seconds in steps.items():
        print(f"| {name} | {seconds:.2f} |")
    print(f"| process start and exit (the rest of {best['phases']:.1f} s) | "
          f"{best['phases'] - sum(steps.values()):.2f} |")


if __name__ == "__main__":
    main()
