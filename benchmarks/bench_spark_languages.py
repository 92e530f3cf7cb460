"""Spark against in-process throughput for one program of each language besides DOTR
(issue 18, goal 2), with Spark's per-phase split.

Each program is a golden case of ``tests/fixtures/<lang>/``; its stream is repeated, each copy
shifted past the previous one in time, to two lengths. Both runners run the same command line
(``chronolog run ... --runner inprocess|spark``, Spark on ``local[2]`` with
``--max-elements-per-batch``), one after the other in this process (one SparkSession for every
Spark run); throughput per element is the difference of the two lengths' wall times, which
cancels start-up. The per-phase split is Spark's progress reports of the longer run (mean per
micro-batch from batch 1: ``durationMs`` and the stateful operator's Python side and commit).

    PYTHONPATH=src python benchmarks/bench_spark_languages.py [--lengths 10000,50000] [--per-batch 10000]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import from_tests

CASES = ["csparql/select_window", "epsparql/stock_drop", "lars/cooling", "rspql/dstream_every_step"]
PHASES = ("addBatch", "walCommit", "commitOffsets", "queryPlanning", "latestOffset", "triggerExecution")


def _time(value: object) -> float:
    """A stream time as a number (ISO 8601 strings in seconds)."""
    if isinstance(value, str):
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return float(value)  # type: ignore[arg-type]


def _shifted(value: object, by: float) -> object:
    if isinstance(value, str):
        moved = datetime.fromisoformat(value.replace("Z", "+00:00")) + timedelta(seconds=by)
        return moved.isoformat().replace("+00:00", "Z")
    return int(value + by) if isinstance(value, int) else value + by  # type: ignore[operator]


def repeat_streams(streams: dict[str, Path], elements: int, folder: Path) -> dict[str, Path]:
    """Copies of the case's JSON Lines streams, each repeated until the streams hold
    ``elements`` elements in all, every copy shifted past the last time of the previous one."""
    lines = {name: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
             for name, path in streams.items()}
    times = [_time(e["time"]) for es in lines.values() for e in es]
    gaps = sorted({b - a for a, b in zip(sorted(times), sorted(times)[1:]) if b > a}) or [1.0]
    span = max(times) - min(times) + gaps[0]
    per_copy = sum(len(es) for es in lines.values())
    copies = max(1, round(elements / per_copy))
    out = {}
    for name, es in lines.items():
        path = folder / f"{name or 'stream'}-{elements}.jsonl"
        with path.open("w") as f:
            for copy in range(copies):
                for e in es:
                    f.write(json.dumps({**e, "time": _shifted(e["time"], copy * span)}) + "\n")
        out[name] = path
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="10000,50000", help="two stream lengths, elements")
    parser.add_argument("--per-batch", type=int, default=10000, help="Spark: elements per micro-batch")
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    short, long = (int(n) for n in args.lengths.split(","))

    import chronolog.spark.runner as spark_runner
    from chronolog import cli
    from chronolog.spark.session import spark_session

    summaries: list = []
    run_spark = spark_runner.run_spark

    def recording(*a, **k):  # the Spark run's summary (its progress reports) for the split
        summaries.append(run_spark(*a, **k))
        return summaries[-1]

    spark_runner.run_spark = recording  # the command imports it when it runs
    golden = {c.id: c for c in from_tests.load("golden.py").cases()}
    start = time.monotonic()
    spark_session("local[2]")
    print(f"SparkSession local[2] in {time.monotonic() - start:.1f} s; lengths {short:,} and {long:,} elements, "
          f"{args.per_batch:,} per Spark batch\n", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        warm = golden[CASES[0]]  # Python workers start and import chronolog: not any program's cost
        if cli.main([*warm.arguments(Path(tmp) / "warm.jsonl"), "--runner", "spark", "--master", "local[2]"]) != 0:
            raise SystemExit("the warm-up run failed")
        for case_id in args.cases.split(","):
            case = golden[case_id]
            folder = Path(tmp) / case_id.replace("/", "-")
            folder.mkdir()
            walls: dict[tuple[str, int], float] = {}
            for n in (short, long):
                streams = repeat_streams(case.streams, n, folder)
                argv = case.arguments(folder / "out.jsonl")
                for name, path in case.streams.items():  # the case's stream paths -> the repeated ones
                    old = f"{name}={path}" if name else str(path)
                    argv[argv.index(old)] = f"{name}={streams[name]}" if name else str(streams[name])
                for runner, extra in (("inprocess", []), ("spark", ["--master", "local[2]", "--max-elements-per-batch",
                                                                   str(args.per_batch)])):
                    t0 = time.monotonic()
                    code = cli.main([*argv, "--runner", runner, *extra])
                    walls[runner, n] = time.monotonic() - t0
                    if code != 0:
                        raise SystemExit(f"{case_id} {runner} {n}: exit {code}")
                    print(f"  {case_id} {runner} {n:,}: {walls[runner, n]:.2f} s", file=sys.stderr, flush=True)
            progress = [p for p in summaries[-1].progress[1:] if p.get("numInputRows")]
            phase = {k: statistics.mean(p["durationMs"].get(k, 0) for p in progress) for k in PHASES}
            states = [p["stateOperators"][0] for p in progress if p.get("stateOperators")]
            keyed = statistics.mean(s["allUpdatesTimeMs"] for s in states) if states else 0.0
            commit = statistics.mean(s["commitTimeMs"] for s in states) if states else 0.0
            rate = {r: (long - short) / (walls[r, long] - walls[r, short]) if walls[r, long] > walls[r, short]
                    else float("nan") for r in ("inprocess", "spark")}
            rows.append((case_id, rate, phase, keyed, commit, len(progress)))
    print("| program | in-process el/s | Spark el/s | Spark / in-process | batches | batch ms | addBatch | "
          "keyed Python side | state commit | walCommit | commitOffsets | queryPlanning |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case_id, rate, phase, keyed, commit, batches in rows:
        print(f"| {case_id} | {rate['inprocess']:,.0f} | {rate['spark']:,.0f} | {rate['spark'] / rate['inprocess']:.3f} | "
              f"{batches} | {phase['triggerExecution']:.0f} | {phase['addBatch']:.0f} | {keyed:.0f} | {commit:.0f} | "
              f"{phase['walCommit']:.0f} | {phase['commitOffsets']:.0f} | {phase['queryPlanning']:.0f} |")


if __name__ == "__main__":
    main()
