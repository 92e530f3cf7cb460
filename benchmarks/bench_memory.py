"""Memory over a long stream of fresh IRIs: peak RSS and dictionary size at 1M, 2M, 5M... elements, in process.

Run: ``PYTHONPATH=src python benchmarks/bench_memory.py [--elements N] [--at N,N,...]``
(or ``chronolog bench memory ...``). Sensor readings, each with a fresh observation IRI
(``<http://example.org/obs/N>``), one element per 10 ms, stream through a DOTR program as
JSON Lines text, parsed by the stream reader as a file would be; the program detects a hot
reading after a warm one of the same sensor within 1 s, half of the readings, each
detection a graph with a fresh IRI, written as TriG to /dev/null. At each checkpoint the
peak RSS so far, the terms in the dictionary and the detections are printed. DESIGN.md
section 5 wants memory bounded by the program, not by the stream: the peak at N must stay
within 1.5x of the peak after the first million (exit 1 otherwise).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from typing import Callable, Iterator

from chronolog.engine import Engine
from chronolog.program.writers import open_output_writer
from chronolog.streams import read_jsonl

PROGRAM = """
PREFIX : <http://example.org/>
EVENT Warm AS SELECT ?o ?s WHERE { ?o :sensor ?s ; :temp ?v FILTER(?v > 20 && ?v <= 40) }
EVENT Hot AS SELECT ?o ?s ?v WHERE { ?o :sensor ?s ; :temp ?v FILTER(?v > 40) }
RULE :rising
  DEFINE { ?d a :Rising ; :sensor ?s ; :from ?w ; :to ?h ; :temp ?v . }
  FROM Hot AND LAST Warm WITHIN 1 s FROM Hot
  WHERE Warm.s = Hot.s
  WITH ?s = Hot.s, ?w = Warm.o, ?h = Hot.o, ?v = Hot.v
"""
SENSORS = 100
STEP_MS = 10


def lines(count: int) -> Iterator[bytes]:
    """``count`` JSON Lines elements: reading n of sensor n % 100, warm and hot in turn."""
    for n in range(count):
        temp = 30 if (n // SENSORS) % 2 == 0 else 50
        graph = (f"<http://example.org/obs/{n}> <http://example.org/sensor> <http://example.org/s{n % SENSORS}> ; "
                 f"<http://example.org/temp> {temp} .")
        yield (json.dumps({"time": n * STEP_MS, "graph": graph}) + "\n").encode()


def peak_rss_mb() -> float:
    """The process's peak resident set so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=2_000_000, help="stream length (default 2,000,000)")
    parser.add_argument("--at", default="1000000,2000000,5000000,10000000",
                        help="checkpoints, comma-separated (default 1M,2M,5M,10M; those past --elements are skipped)")
    args = parser.parse_args()
    checkpoints = sorted({int(c) for c in args.at.split(",") if 0 < int(c) <= args.elements} | {args.elements})
    engine = Engine(PROGRAM, lang="dotr")
    print(f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"# command: PYTHONPATH=src python benchmarks/bench_memory.py --elements {args.elements} --at {args.at}")
    print("| elements | detections | terms in dictionary | peak RSS MB | vs 1st checkpoint | s |")
    print("|---:|---:|---:|---:|---:|---:|")
    start = time.perf_counter()
    first: float | None = None
    worst = 1.0
    elements = read_jsonl(lines(args.elements), engine.dictionary)
    with open(os.devnull, "wb") as sink, open_output_writer(sink, "graphs", engine.dictionary, format="trig") as out:

        def report(n: int) -> None:
            nonlocal first, worst
            peak = peak_rss_mb()
            first = first or peak
            worst = max(worst, peak / first)
            print(f"| {n:,} | {out.count:,} | {len(engine.dictionary):,} | {peak:,.0f} | {peak / first:.2f}x | "
                  f"{time.perf_counter() - start:,.0f} |", flush=True)

        for output in engine.run(_counted(elements, checkpoints, report)):
            out.write(output)
    return 0 if worst <= 1.5 else 1


def _counted(elements: Iterator, checkpoints: list[int], report: Callable[[int], None]) -> Iterator:
    """``elements``, calling ``report(n)`` when the n-th of a checkpoint has been read."""
    marks = iter(checkpoints)
    mark = next(marks, None)
    for n, element in enumerate(elements, 1):
        yield element
        if n == mark:
            report(n)
            mark = next(marks, None)


if __name__ == "__main__":
    raise SystemExit(main())
