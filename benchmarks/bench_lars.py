"""LARS (issue 16): Laser's section 5 workloads, time per input atom, Laser side by side.

The workloads of Laser's ``eval.py`` (diamond, box, join, multi = the join rule ten times,
cooling), each rule with window n (``time_win(n, 0, 1, ...)``), on the streams Laser's
generators make (seeded here, so both engines read the same atoms):

- diamond: ``p(s_k, o_k)``, fresh IRIs, m atoms per time point (``RDFStream1``);
- join, multi: the chain ``p(c_k, c_k+1)``, m + 1 atoms per time point, one shared with the
  next time point (``RDFStream2``, without its duplicate rows);
- box: ``p(r)``, r random in [0, m/3 + 1] (``EvalStream``); cooling: ``temp(r)``, r in [0, 200].

Time per input atom is CPU time (``process_time``; Laser's own ``time.clock``) over the time
points after a warm-up that fills the window, divided by the points and by m, Laser's
divisor: the cost of the first ``warm-up`` points (start-up, window filling) cancels out as
the difference of two stream lengths. chronolog is driven through the program contract,
``Engine.push`` with the atom texts of each time point (what ``chronolog run`` does in
process: atom parsing included). With ``--laser DIR``
(a Laser checkout) and python2.7 found, Laser runs the same atoms in the same run, and the
ratio column is Laser's time over chronolog's.

    chronolog bench lars [--workloads diamond,join] [--sizes 10x200,80x800] [--points 40]
                         [--laser /tmp/laser] [--python2 python2.7]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from chronolog.atomstreams import atom_text
from chronolog.engine import Engine

P = "http://example.org/stream/predicate#p"
P1 = "http://example.org/stream/predicate#p1"
JOIN = (f"'{P1}'(X,Z) :- time_win({{n}}, 0, 1, diamond('{P}'(X,Y))) "
        f"and time_win({{n}}, 0, 1, diamond('{P}'(Y,Z)))")
COOLING = (
    "@(T, steam(V)) :- time_win({n}, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)",
    "@(T, liquid(V)) :- time_win({n}, 0, 1, @(T, temp(V))) and COMP(<, V, 100) and COMP(>=, V, 1)",
    "@(T, isSteam) :- time_win({n}, 0, 1, @(T, steam(V)))",
    "@(T, isLiquid) :- time_win({n}, 0, 1, @(T, liquid(V)))",
    "alarm :- time_win({n}, 0, 1, box(isSteam))",
    "normal :- time_win({n}, 0, 1, box(isLiquid))",
    "veryHot(T) :- time_win({n}, 0, 1, @(T, steam(V))) and COMP(>=, V, 150)",
    "veryCold(T) :- time_win({n}, 0, 1, @(T, liquid(V))) and COMP(=, V, 1)",
    "freeze :- not(alarm) and not(normal)",
)
Atoms = list[tuple[str, tuple]]  # (predicate, arguments) of one time point


def _diamond(t: int, m: int, rng: random.Random) -> Atoms:
    return [(P, (f"http://example.org/stream/subject#s{k}", f"http://example.org/stream/object#o{k}"))
            for k in range(t * m, t * m + m)]


def _chain(t: int, m: int, rng: random.Random) -> Atoms:
    return [(P, (f"http://example.org/stream/class#c{k}", f"http://example.org/stream/class#c{k + 1}"))
            for k in range(t * m, t * m + m + 1)]


def _box(t: int, m: int, rng: random.Random) -> Atoms:
    return [("p", (rng.randint(0, m // 3 + 1),)) for _ in range(m)]


def _temp(t: int, m: int, rng: random.Random) -> Atoms:
    return [("temp", (rng.randint(0, 200),)) for _ in range(m)]


@dataclass(frozen=True)
class Workload:
    rules: tuple[str, ...]
    atoms: Callable[[int, int, random.Random], Atoms]


WORKLOADS = {
    "diamond": Workload((f"'{P1}'(X,Y) :- time_win({{n}}, 0, 1, diamond('{P}'(X,Y)))",), _diamond),
    "box": Workload(("z(X) :- time_win({n}, 0, 1, box(p(X)))",), _box),
    "join": Workload((JOIN,), _chain),
    "multi": Workload((JOIN,) * 10, _chain),
    "cooling": Workload(COOLING, _temp),
}
LASER_DRIVER = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from stream.stream import Stream
from evalunit.program import Program

class Given(Stream):
    """The benchmark's atoms, as rows of Laser's generators."""
    def __init__(self, points):
        self.points, self.cache, self.counter = points, {}, 0
        self.timeLine = {"startTime": 0, "endTime": 999999999}
    def getNumberOfTuplesAt(self, t):
        return len(self.points[t])
    def getTimeLine(self):
        return self.timeLine
    def hasTimePoint(self, t):
        return True
    def get(self, t):
        if t not in self.cache:
            self.cache.clear()
            rows = {}
            for pred, args in self.points[t]:
                rows.setdefault(pred, set()).add(tuple([t, 999999999, self.counter, None] + args))
                self.counter += 1
            self.cache[t] = rows
        return self.cache[t]

data = json.load(open(sys.argv[2]))
points = [[(str(p), [str(a) if isinstance(a, unicode) else a for a in args]) for p, args in point]
          for point in data["points"]]
program = Program([str(r) for r in data["rules"]], Given(points))
for t in range(data["warmup"]):
    program.evaluate(t)
start = time.clock()
for t in range(data["warmup"], len(points)):
    program.evaluate(t)
print("LASER-SECONDS %r" % (time.clock() - start))
'''


def stream(workload: Workload, m: int, points: int, seed: int = 16) -> list[Atoms]:
    rng = random.Random(seed)
    return [workload.atoms(t, m, rng) for t in range(points)]


def run_chronolog(rules: list[str], points: list[Atoms], warmup: int) -> tuple[float, int]:
    """CPU seconds for the points after ``warmup``, and the size of the last output."""
    engine = Engine("\n".join(rules), lang="lars")
    texts = [tuple(atom_text(a) for a in atoms) for atoms in points]
    for t in range(warmup):
        engine.push(t, texts[t])
    clock = time.process_time
    start = clock()
    for t in range(warmup, len(texts)):
        outputs = engine.push(t, texts[t])
    return clock() - start, len(outputs[-1].atoms)


def run_laser(laser: Path, python2: str, rules: list[str], points: list[Atoms], warmup: int) -> float:
    """CPU seconds Laser (python2) takes for the points after ``warmup``."""
    with tempfile.TemporaryDirectory() as folder:
        driver, data = Path(folder, "driver.py"), Path(folder, "data.json")
        driver.write_text(LASER_DRIVER, encoding="utf-8")
        data.write_text(json.dumps({"rules": rules, "points": points, "warmup": warmup}), encoding="utf-8")
        done = subprocess.run([python2, str(driver), str(laser), str(data)], capture_output=True, text=True)
    found = [line for line in done.stdout.splitlines() if line.startswith("LASER-SECONDS ")]
    if done.returncode or not found:
        raise RuntimeError(f"Laser failed: {done.stderr[-2000:]}")
    return float(found[-1].split()[1])


def python2_path(given: str | None) -> str | None:
    """The python2.7 to run Laser with: ``given``, else pyenv's, else one on PATH that runs."""
    candidates = [given] if given else [str(Path.home() / ".pyenv/versions/2.7.18/bin/python"), "python2.7", "python2"]
    for candidate in candidates:
        found = shutil.which(candidate)
        if found and subprocess.run([found, "-c", "import sys; assert sys.version_info[0] == 2"],
                                    capture_output=True).returncode == 0:
            return found
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, of: " + ", ".join(WORKLOADS))
    parser.add_argument("--sizes", default="10x200,80x800", help="WINDOWxATOMS per time point, comma-separated")
    parser.add_argument("--points", type=int, default=0,
                        help="time points measured after the warm-up (default: 60 at 200 atoms, 15 at 800)")
    parser.add_argument("--laser", type=Path, help="a Laser checkout (github karmaresearch/Laser) to run side by side")
    parser.add_argument("--python2", help="the python2.7 to run Laser with (default: found on PATH or in pyenv)")
    parser.add_argument("--skip", default="multi@80x800",
                        help="WORKLOAD@SIZE pairs not run (Laser's multi at 80x800 takes minutes)")
    args = parser.parse_args(argv)
    names = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}: choose among {list(WORKLOADS)}")
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",") if s]
    skip = set(args.skip.split(",")) if args.skip else set()
    python2 = python2_path(args.python2) if args.laser else None
    if args.laser and not python2:
        print("no python2.7 found: Laser is not run", file=sys.stderr)
    load = os.getloadavg()
    print("## LARS: Laser's section 5 workloads, µs of CPU per input atom\n")
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"at the start; Laser {'on ' + python2 if python2 else 'not run'}.\n")
    print("| workload | window | atoms/point | points | chronolog µs | Laser µs | Laser / chronolog | output atoms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for window, m in sizes:
        for name in names:
            if f"{name}@{window}x{m}" in skip:
                continue
            measured = args.points or (60 if m <= 200 else 15)
            warmup = window + 2
            points = stream(WORKLOADS[name], m, warmup + measured)
            rules = [r.format(n=window) for r in WORKLOADS[name].rules]
            seconds, size = run_chronolog(rules, points, warmup)
            ours = 1e6 * seconds / (measured * m)
            laser_cell = ratio_cell = "–"
            if python2:
                theirs = 1e6 * run_laser(args.laser, python2, rules, points, warmup) / (measured * m)
                laser_cell, ratio_cell = f"{theirs:.1f}", f"{theirs / ours:.2f}x"
            print(f"| {name} | {window} | {m} | {measured} | {ours:.1f} | {laser_cell} | {ratio_cell} | {size} |",
                  flush=True)
    load = os.getloadavg()
    print(f"\nLoad at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
