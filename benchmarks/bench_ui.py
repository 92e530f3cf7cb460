"""What the live view and provenance cost: the same in-process DOTR run without and with
``--ui``, ``--provenance`` and both, side by side.

Two workloads: DOTR's default synthetic scenario (``dotr_scenario.write_example``: 10
rules, 10k background triples, one-triple elements) at two stream lengths, and CityBench
Q1 (``examples/citybench/q1``: three rules, 539 detections from 1,700 graphs) repeated
back to back (its stream shifted in time) to the same two lengths. ``chronolog run
--runner inprocess`` runs each in a child process, the variants alternately,
``--repeats`` times each (nobody watches the page: the run pays the monitor's
bookkeeping per time point and per output, and the server thread; provenance pays the
explanation of every event and detection). Reported: the best wall and CPU seconds
(user + system of the child) of each, and the cost per element from the difference of
the two lengths (fixed costs cancel: start-up, the server's start, the wait for open
pages after the run), with its ratio to the run without either.

    chronolog bench ui [--points 2000,20000 --repeats 3 --workloads synthetic,citybench-q1]
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dotr_scenario import write_example  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {"plain": [], "--ui": ["--ui", "127.0.0.1:0"], "--provenance": ["--provenance", "why.jsonl"],
            "--ui --provenance": ["--ui", "127.0.0.1:0", "--provenance", "why.jsonl"]}


def timed(folder: Path, flags: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "chronolog", "run", str(folder), "--runner", "inprocess",
               "-o", str(folder.parent / "out.trig"), *(f if f != "why.jsonl" else str(folder.parent / f) for f in flags)]
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(done.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def citybench_q1(folder: Path, points: int) -> None:
    """CityBench Q1's example with its stream repeated, shifted past its end each time,
    until it has ``points`` graphs (the program and background as they are)."""
    from chronolog.streams import StreamElement, read_stream, write_stream
    from chronolog.terms import TermDictionary

    source = ROOT / "examples" / "citybench" / "q1"
    folder.mkdir(parents=True)
    for name in ("q1.dotr", "background.ttl"):
        shutil.copy(source / name, folder / name)
    d = TermDictionary()
    one = list(read_stream(source / "stream.trig", d))
    span = one[-1].time - one[0].time + 10_000
    out = [StreamElement(e.time + span * (n // len(one)), e.triples) for n, e in
           ((n, one[n % len(one)]) for n in range(points))]
    write_stream(out, folder / "stream.trig", d)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="2000,20000",
                        help="two stream lengths (default 2,000 and 20,000): fixed costs cancel in the difference")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", default="synthetic,citybench-q1")
    args = parser.parse_args()
    short, long_ = (int(n) for n in args.points.split(","))
    workloads = args.workloads.split(",")
    best: dict[tuple[str, int, str], tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workload in workloads:
            for points in (short, long_):
                folder = Path(tmp) / f"{workload}{points}" / "example"
                if workload == "synthetic":
                    write_example(str(folder), points=points)
                else:
                    citybench_q1(folder, points)
                for _ in range(args.repeats):
                    for name, flags in VARIANTS.items():
                        wall, cpu = timed(folder, flags)
                        old = best.get((workload, points, name), (float("inf"), float("inf")))
                        best[(workload, points, name)] = (min(old[0], wall), min(old[1], cpu))
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores; best of {args.repeats}\n")
    print("| workload | run | elements | wall s | CPU s |")
    print("|---|---|---|---|---|")
    for (workload, points, name), (wall, cpu) in best.items():
        print(f"| {workload} | {name} | {points:,} | {wall:.2f} | {cpu:.2f} |")
    print("\n| workload | run | wall µs per element | CPU µs per element | CPU vs plain |")
    print("|---|---|---|---|---|")
    for workload in workloads:
        per = {name: tuple((best[(workload, long_, name)][k] - best[(workload, short, name)][k]) / (long_ - short) * 1e6
                           for k in (0, 1)) for name in VARIANTS}
        for name, (wall, cpu) in per.items():
            print(f"| {workload} | {name} | {wall:.1f} | {cpu:.1f} | {cpu / per['plain'][1]:.2f}x |")


if __name__ == "__main__":
    main()
