"""The live view's cost: the same in-process DOTR run with and without --ui, side by side.

DOTR's default synthetic scenario (``dotr_scenario.write_example``: 10 rules, 10k
background triples, one-triple elements) is written once, then ``chronolog run
--runner inprocess`` runs it in a child process, alternately without and with ``--ui``
(nobody watching the page: what the run pays is the monitor's bookkeeping per time point
and per output, and the server thread), ``--repeats`` times each, at two stream lengths.
Reported: the best wall and CPU seconds (the child's user + system time) of each, and the
cost per element from the difference of the two lengths (fixed costs cancel: start-up, the
server's start, the wait for open pages after the run), with and without, and their ratio.

    chronolog bench ui [--points 2000,20000 --repeats 3]
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dotr_scenario import write_example  # noqa: E402


def timed(folder: Path, ui: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "chronolog", "run", str(folder), "--runner", "inprocess",
               "-o", str(folder.parent / "out.trig"), *(["--ui", "127.0.0.1:0"] if ui else [])]
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(done.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="2000,20000",
                        help="two stream lengths (default 2,000 and 20,000): fixed costs cancel in the difference")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    short, long_ = (int(n) for n in args.points.split(","))
    best: dict[tuple[int, bool], tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for points in (short, long_):
            folder = Path(tmp) / f"synthetic{points}"
            write_example(str(folder), points=points)
            for _ in range(args.repeats):
                for ui in (False, True):
                    wall, cpu = timed(folder, ui)
                    old = best.get((points, ui), (float("inf"), float("inf")))
                    best[(points, ui)] = (min(old[0], wall), min(old[1], cpu))
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores; DOTR default scenario; best of {args.repeats}\n")
    print("| run | elements | wall s | CPU s |")
    print("|---|---|---|---|")
    for (points, ui), (wall, cpu) in sorted(best.items()):
        print(f"| {'--ui' if ui else 'without --ui'} | {points:,} | {wall:.2f} | {cpu:.2f} |")
    print("\n| run | wall µs per element (the difference of the two lengths) | CPU µs per element |")
    print("|---|---|---|")
    per = {}
    for ui in (False, True):
        per[ui] = tuple((best[(long_, ui)][k] - best[(short, ui)][k]) / (long_ - short) * 1e6 for k in (0, 1))
        print(f"| {'--ui' if ui else 'without --ui'} | {per[ui][0]:.1f} | {per[ui][1]:.1f} |")
    print(f"\nwith / without, per element: wall {per[True][0] / per[False][0]:.3f}x, CPU {per[True][1] / per[False][1]:.3f}x "
          f"(fixed: the server's start and the one-second wait for open pages after the run)")


if __name__ == "__main__":
    main()
