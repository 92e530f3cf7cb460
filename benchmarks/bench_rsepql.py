"""RSEP-QL event patterns (issue 14): SEQ over a 1,000-element window, per selection and consumption, beside DOTR.

The workload: one-triple elements, one per time unit; odd times ``:a<i> :p :k<j>``, even
times ``:k<j> :q :c<i>``, with ``j = (i // 2) mod 100`` (the join key). The query:

    SELECT * FROM NAMED WINDOW :w ON :s [RANGE 1000 STEP 1000] CONSUME <policy>
    WHERE { MATCH ( EVENT :w { ?x :p ?y } <selection> EVENT :w { ?y :q ?z } ) }

a SEQ of two EVENT patterns joined on ``?y`` over a 1,000-element window, evaluated at every
STEP. With STEP = RANGE each element is matched in one evaluation; every RSTREAM answer is
all the matches in the window, so a smaller STEP re-reports them (the last table shows that
cost). Programs are driven through the program contract (``compile_program``, ``push``,
``flush``), as ``chronolog run --runner inprocess`` drives them; events/s = elements / CPU
seconds of this process over the pushes and the flush (the machine is shared: CPU time is
what the program cost; wall time is shown beside it), best of ``--repeat`` runs.

Beside it, on the same elements, the same pattern as a DOTR rule (docs/languages/dotr.md):
``FROM B AND EACH|FIRST|LAST A WITHIN 1000 FROM B WHERE A.y = B.y`` (``CONSUMING A`` for the
consuming policies). DOTR looks back 1,000 time units from each ``B`` (a window per event,
reported at once) where RSEP-QL reads the window at its evaluation instants, so the counts
of matches differ; the work per element is what compares.

State: the cost per event as the stream grows 10x (``--events`` and 10x that), and the
size of the program's snapshot at the end of each (the window's items and the policy's
state: it follows the window, not the stream).

``--spark``: the unrestricted SEQ on ``chronolog run --runner spark`` (local[2]) over
``--spark-events`` elements and 3x that, wall time of each whole command (Spark start-up
included) beside ``--runner inprocess`` on the same file, outputs compared; the difference
of the two sizes gives the rate once started.

    chronolog bench rsepql [--events 20000] [--repeat 3] [--spark] [--spark-events 4000]
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec
from chronolog.program.contract import UNNAMED, Options, Program
from chronolog.terms import TermDictionary

ROOT = Path(__file__).resolve().parents[1]
E = "http://example.org/"
WINDOW = 1000
KEYS = 100
SELECTIONS = ("SEQ", "SEQ_CHRONOLOGICAL", "SEQ_RECENT", "SEQ_NAIVE")
POLICIES = ("UNRESTRICTED", "CHRONOLOGICAL", "RECENT")
DOTR = {"EACH": "", "FIRST": " CONSUMING A", "LAST": " CONSUMING A"}  # the SEQ, SEQ^c + P^c, SEQ^r + P^r analogues


def rspql(selection: str, policy: str, step: int = WINDOW) -> str:
    return (f"PREFIX : <{E}>\nREGISTER RSTREAM :q AS\nSELECT *\n"
            f"FROM NAMED WINDOW :w ON :s [RANGE {WINDOW} STEP {step}]\nCONSUME {policy}\n"
            f"WHERE {{ MATCH ( EVENT :w {{ ?x :p ?y }} {selection} EVENT :w {{ ?y :q ?z }} ) }}\n")


def dotr(selection: str) -> str:
    return (f"PREFIX : <{E}>\nEVENT A AS SELECT ?x ?y WHERE {{ ?x :p ?y }}\n"
            "EVENT B AS SELECT ?y ?z WHERE { ?y :q ?z }\n"
            f"RULE :seq DEFINE {{ ?x :then ?z . }} FROM B AND {selection} A WITHIN {WINDOW} FROM B\n"
            f"  WHERE A.y = B.y WITH ?x = A.x, ?z = B.z{DOTR[selection]}\n")


def triples(n: int) -> list[tuple[int, tuple[str, str, str]]]:
    """The workload's elements as IRIs: (time, triple), times 1..n."""
    out = []
    for i in range(1, n + 1):
        key = f"{E}k{(i // 2) % KEYS}"
        out.append((i, (f"{E}a{i}", E + "p", key) if i % 2 else (key, E + "q", f"{E}c{i}")))
    return out


def encoded(n: int, dictionary: TermDictionary) -> list[tuple[int, tuple[tuple[int, int, int], ...]]]:
    return [(t, (tuple(dictionary.iri(x) for x in tr),)) for t, tr in triples(n)]  # type: ignore[misc]


def drive(make: Callable[[], Program], n: int, stream: str, repeat: int) -> tuple[float, float, int, int]:
    """Best events/s of ``repeat`` runs over ``n`` elements by CPU time and by wall time, the
    outputs counted (solutions, or graphs), and the snapshot's size at the end."""
    cpu = wall = 0.0
    count = size = 0
    for _ in range(repeat):
        program = make()
        elements = encoded(n, program.dictionary)
        count = 0
        start = time.process_time(), time.perf_counter()
        for t, element in elements:
            for o in program.push(t, {stream: [element]}):
                count += len(getattr(o, "solutions", (o,)))
        pushed = time.process_time() - start[0], time.perf_counter() - start[1]
        size = len(program.snapshot())
        start = time.process_time(), time.perf_counter()
        for o in program.flush():
            count += len(getattr(o, "solutions", (o,)))
        cpu = max(cpu, n / (pushed[0] + time.process_time() - start[0]))
        wall = max(wall, n / (pushed[1] + time.perf_counter() - start[1]))
    return cpu, wall, count, size


def program_of(lang: str, text: str) -> Callable[[], Program]:
    return lambda: compile_program(ProgramSpec(lang, text, f"bench.{lang}", Options()))


def matrix(n: int, repeat: int) -> None:
    print(f"## SEQ over a {WINDOW:,}-element window: {n:,} elements, in-process (best of {repeat})\n")
    print("| program | selection | consumption | events/s (CPU) | µs per event (CPU) | events/s (wall) | answers |")
    print("|---|---|---|---:|---:|---:|---:|")
    for selection in SELECTIONS:
        for policy in POLICIES:
            rate, wall, count, _ = drive(program_of("rspql", rspql(selection, policy)), n, E + "s", repeat)
            print(f"| RSEP-QL | {selection} | {policy} | {rate:,.0f} | {1e6 / rate:.1f} | {wall:,.0f} | {count:,} |",
                  flush=True)
    for selection in DOTR:
        rate, wall, count, _ = drive(program_of("dotr", dotr(selection)), n, UNNAMED, repeat)
        print(f"| DOTR | {selection} A WITHIN {WINDOW} | {DOTR[selection].strip() or '-'} | {rate:,.0f} | "
              f"{1e6 / rate:.1f} | {wall:,.0f} | {count:,} |", flush=True)


def growth(n: int, repeat: int) -> None:
    print(f"\n## State: the stream grows 10x (unrestricted SEQ, window {WINDOW:,})\n")
    print("| program | elements | events/s (CPU) | µs per event (CPU) | snapshot bytes at the end |")
    print("|---|---:|---:|---:|---:|")
    for label, make, stream in (("RSEP-QL SEQ", program_of("rspql", rspql("SEQ", "UNRESTRICTED")), E + "s"),
                                ("RSEP-QL SEQ_RECENT, CONSUME RECENT", program_of("rspql", rspql("SEQ_RECENT", "RECENT")),
                                 E + "s"),
                                ("DOTR EACH", program_of("dotr", dotr("EACH")), UNNAMED)):
        for size in (n, 10 * n):
            rate, _, _, state = drive(make, size, stream, repeat if size == n else 1)
            print(f"| {label} | {size:,} | {rate:,.0f} | {1e6 / rate:.1f} | {state:,} |", flush=True)


def steps(n: int, repeat: int) -> None:
    print(f"\n## Re-evaluation: the unrestricted SEQ evaluated every STEP (window {WINDOW:,}, {n:,} elements)\n")
    print("| STEP | evaluations per element | events/s (CPU) | µs per event (CPU) | answers |")
    print("|---:|---:|---:|---:|---:|")
    for step in (WINDOW, WINDOW // 10):
        rate, _, count, _ = drive(program_of("rspql", rspql("SEQ", "UNRESTRICTED", step)), n, E + "s", repeat)
        print(f"| {step:,} | {WINDOW // step} | {rate:,.0f} | {1e6 / rate:.1f} | {count:,} |", flush=True)


def spark(n: int) -> None:
    print("\n## Spark: the unrestricted SEQ, whole `chronolog run` commands (start-up included)\n")
    print("| runner | elements | wall s | events/s | output lines | equal to in-process |")
    print("|---|---:|---:|---:|---:|---|")
    walls: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "q.rspql").write_text(rspql("SEQ", "UNRESTRICTED"), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        for size in (n, 3 * n):
            stream = folder / f"s{size}.jsonl"
            with open(stream, "w", encoding="utf-8") as f:
                for t, (s, p, o) in triples(size):
                    f.write(f'{{"time": {t}, "graph": "<{s}> <{p}> <{o}> ."}}\n')
            outputs = {}
            for runner in ("inprocess", "spark"):
                out = folder / f"{runner}{size}.jsonl"
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "chronolog", "run", str(folder / "q.rspql"), "--stream",
                                       str(stream), "--runner", runner, "-o", str(out)],
                                      capture_output=True, text=True, env=env)
                wall = walls[(runner, size)] = time.perf_counter() - start
                if done.returncode != 0:
                    print(f"| {runner} | {size:,} | failed: {done.stderr.strip().splitlines()[-1:]} | | | |")
                    continue
                outputs[runner] = sorted(out.read_text(encoding="utf-8").splitlines())
                same = "" if runner == "inprocess" else "yes" if outputs[runner] == outputs.get("inprocess") else "NO"
                print(f"| {runner} | {size:,} | {wall:.1f} | {size / wall:,.0f} | {len(outputs[runner]):,} | {same} |",
                      flush=True)
    for runner in ("inprocess", "spark"):
        extra = walls.get((runner, 3 * n), 0.0) - walls.get((runner, n), 0.0)
        if extra > 0:
            print(f"\n{runner}: the {2 * n:,} extra elements took {extra:.1f} s more: {2 * n / extra:,.0f} events/s "
                  "once started.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="elements per run (default 20,000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, the best kept (default 3)")
    parser.add_argument("--spark", action="store_true", help="also run the unrestricted SEQ on Spark")
    parser.add_argument("--spark-events", type=int, default=4_000, help="elements of the smaller Spark run (default 4,000)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {os.getloadavg()[0]:.2f}\n")
    matrix(args.events, args.repeat)
    growth(args.events, args.repeat)
    steps(args.events, args.repeat)
    if args.spark:
        spark(args.spark_events)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
