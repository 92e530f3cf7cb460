"""EP-SPARQL (issue 15): the paper's Fig. 1 setting, events per second in process, as the duration bound grows.

Run: ``PYTHONPATH=src python benchmarks/bench_epsparql.py [--events N] [--bounds 10,40,160]``
(or ``chronolog bench epsparql ...``). The paper's Fig. 1 workload: a SEQ of three price
events of one company within a duration bound (``getDURATION() < "PT40S"``) and a FILTER on
increasing prices, 10 companies, one price event per time point (one second each:
``--time-unit s``), prices a random walk (seeded). Each run pushes the elements through
``chronolog.Engine.run`` as ``chronolog run --runner inprocess`` does, and reports events per
second of CPU time (best of ``--repeat``), the solutions found, and the program's state at
the end (its snapshot's size: what the partial matches hold). The cost per event must
follow the live partial matches, which the bound limits, not the stream's length: the
``--lengths`` table runs one bound over streams 10x apart. ETALIS does about 3,000
events/s on this machine for this workload (issue 15; SWI-Prolog 9, its best settings).
With ``--spark``, ``chronolog run --runner spark`` (local[2], a child process) runs the
PT40S program over the ``--lengths`` streams: whole-run wall seconds, start-up included, and
the cost per event from their difference (the start-up cancels); its solutions are checked
against in-process.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chronolog.engine import Engine
from chronolog.formats import encode_text
from chronolog.program import Options, ProgramSpec
from chronolog.streams import StreamElement

QUERY = """PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
SELECT ?company ?p1 ?p2 ?p3
WHERE {{ ?company :price ?p1 }} SEQ {{ ?company :price ?p2 }} SEQ {{ ?company :price ?p3 }}
FILTER (?p1 < ?p2 && ?p2 < ?p3 && getDURATION() < "PT{bound}S"^^xsd:duration)
"""
COMPANIES = 10


def prices(count: int, seed: int = 7) -> list[tuple[int, str]]:
    """(time, Turtle) for ``count`` price events: company t % 10, a random walk each."""
    rng = random.Random(seed)
    walk = [100.0] * COMPANIES
    out = []
    for t in range(count):
        c = t % COMPANIES
        walk[c] = round(walk[c] + rng.choice((-1.5, -0.5, 0.5, 1.0, 2.0)), 1)
        out.append((t, f"<http://example.org/c{c}> <http://example.org/price> {walk[c]} ."))
    return out


def run(bound: int, stream: list[tuple[int, str]]) -> tuple[float, int, int]:
    """(CPU seconds, solutions, snapshot bytes) of one run over ``stream``."""
    engine = Engine(ProgramSpec("epsparql", QUERY.format(bound=bound), None, Options(time_unit="s")))
    elements = [StreamElement(t, tuple(encode_text(ttl, engine.dictionary, format="ttl"))) for t, ttl in stream]
    began = time.process_time()
    solutions = sum(len(output.solutions) for output in engine.run(elements))
    return time.process_time() - began, solutions, len(engine.program.snapshot())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="price events per run (default 20,000)")
    parser.add_argument("--bounds", default="10,40,160", help="duration bounds in seconds (default 10,40,160)")
    parser.add_argument("--lengths", default="2000,20000", help="stream lengths for the bound of 40 s")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row, best taken (default 3)")
    parser.add_argument("--spark", action="store_true", help="also run chronolog run --runner spark (bound PT40S)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}\n")
    stream = prices(args.events)
    print(f"## Fig. 1 setting: {args.events:,} price events, 10 companies, one per second\n")
    print("| bound | events/s (CPU) | µs per event | solutions | state bytes at the end | vs ETALIS (3,000/s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for bound in (int(b) for b in args.bounds.split(",")):
        best = min((run(bound, stream) for _ in range(args.repeat)), key=lambda r: r[0])
        rate = len(stream) / best[0]
        print(f"| PT{bound}S | {rate:,.0f} | {1e6 / rate:.1f} | {best[1]:,} | {best[2]:,} | {rate / 3000:.1f}x |",
              flush=True)
    print("\n## The stream grows 10x, bound PT40S\n")
    print("| events | events/s (CPU) | µs per event | state bytes at the end |")
    print("|---:|---:|---:|---:|")
    for length in (int(n) for n in args.lengths.split(",")):
        best = min((run(40, prices(length)) for _ in range(args.repeat)), key=lambda r: r[0])
        print(f"| {length:,} | {length / best[0]:,.0f} | {1e6 * best[0] / length:.1f} | {best[2]:,} |", flush=True)
    if args.spark:
        spark_table([int(n) for n in args.lengths.split(",")])
    return 0


def spark_table(lengths: list[int]) -> None:
    """Whole ``chronolog run --runner spark`` commands over the PT40S program, beside in-process."""
    print("\n## Spark local[2], bound PT40S (whole runs, start-up included)\n")
    print("| events | wall s | solutions (in-process) | µs per event from the difference |")
    print("|---:|---:|---:|---:|")
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "fig1.eps"
        program.write_text(QUERY.format(bound=40), encoding="utf-8")
        for length in lengths:
            data, out = Path(tmp) / f"s{length}.jsonl", Path(tmp) / f"o{length}.jsonl"
            data.write_text("".join(json.dumps({"time": t, "graph": g}) + "\n" for t, g in prices(length)))
            began = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "chronolog", "run", str(program), "--stream", str(data),
                                   "--time-unit", "s", "--runner", "spark", "-o", str(out)], capture_output=True, text=True)
            wall = time.perf_counter() - began
            if done.returncode:
                raise RuntimeError(done.stderr)
            got = sum(len(json.loads(line)["solutions"]) for line in out.read_text().splitlines())
            want = run(40, prices(length))[1]
            walls.append(wall)
            per = "" if len(walls) < 2 else f"{(walls[-1] - walls[0]) / (length - lengths[0]) * 1e6:,.0f}"
            print(f"| {length:,} | {wall:.1f} | {got:,} ({want:,}{'' if got == want else ', differs!'}) | {per} |",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
