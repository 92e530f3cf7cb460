"""Windowed C-SPARQL per element: a SELECT with a BGP and a FILTER at 1,000 elements per window.

The query has CSRBench's first shape (a basic graph pattern over each observation and a
FILTER on its value, no aggregate, RSTREAM), over a stream of sensor observations (one
element: three triples), one element every ``--period`` ms, so that a window of RANGE
holds ``--per-window`` elements. Two windows: tumbling (STEP = RANGE: each element is
evaluated once) and sliding (STEP = RANGE / 10: each element is in ten windows), each
answered two ways side by side: from what entered and left the window (the default,
``chronolog.sparql.maintained``) and by evaluating the query in full at every close. The time
is wall-clock (and CPU) around ``Engine.push`` and ``flush`` for the whole stream (elements encoded
beforehand), divided by the number of elements. With ``--spark``, ``chronolog run
--runner spark`` runs the same program and stream in a child process (local[2]): its
figure is the whole run's wall time per element, start-up included, beside a run over two
windows' worth of elements (mostly start-up); its output is checked against in-process.

    chronolog bench windows [--per-window 1000 --windows 20] [--spark]
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chronolog.engine import Engine
from chronolog.program.windowed import WindowedProgram

E = "http://example.org/"
STREAM = E + "observations"
QUERY = """REGISTER QUERY hot AS
PREFIX : <http://example.org/>
SELECT ?sensor ?value
FROM STREAM <http://example.org/observations> [RANGE {range}ms STEP {step}ms]
WHERE {{ ?obs :procedure ?sensor ; :observedProperty :AirTemperature ; :value ?value . FILTER(?value > 30) }}
"""
RSPQL = """PREFIX : <http://example.org/>
REGISTER RSTREAM :hot AS
SELECT ?sensor ?value
FROM NAMED WINDOW :w ON :observations [RANGE PT{range_s}S STEP PT{step_s}S]
WHERE {{ WINDOW :w {{ ?obs :procedure ?sensor ; :observedProperty :AirTemperature ; :value ?value . FILTER(?value > 30) }} }}
"""


def stream(elements: int, period: int, sensors: int = 50, seed: int = 1) -> list[tuple[int, str]]:
    """(time ms, N-Triples of one observation): a sensor, the property (one in five is not
    air temperature) and a value (about a third above 30)."""
    rng = random.Random(seed)
    out = []
    for i in range(elements):
        prop = "AirTemperature" if rng.random() < 0.8 else "WindSpeed"
        text = (f"<{E}obs{i}> <{E}procedure> <{E}sensor{rng.randrange(sensors)}> .\n"
                f"<{E}obs{i}> <{E}observedProperty> <{E}{prop}> .\n"
                f"<{E}obs{i}> <{E}value> \"{rng.uniform(0, 45):.2f}\"^^<http://www.w3.org/2001/XMLSchema#double> .")
        out.append(((i + 1) * period, text))
    return out


def write(folder: Path, name: str, elements: list[tuple[int, str]], range_ms: int, step_ms: int,
          lang: str = "csparql") -> tuple[Path, Path]:
    program = folder / f"{name}.{lang}"
    text = (QUERY.format(range=range_ms, step=step_ms) if lang == "csparql"
            else RSPQL.format(range_s=range_ms / 1000, step_s=step_ms / 1000))
    program.write_text(text, encoding="utf-8")
    data = folder / f"{name}.jsonl"
    data.write_text("".join(json.dumps({"time": t, "graph": g}) + "\n" for t, g in elements), encoding="utf-8")
    return program, data


def in_process(program: Path, data: Path, repeats: int, maintain: bool) -> tuple[float, float, list]:
    """(wall µs per element, CPU µs per element, best of ``repeats``; the outputs). On a
    shared machine the CPU time is the steadier of the two."""
    best, cpu, rows = float("inf"), float("inf"), []
    for _ in range(repeats):
        WindowedProgram.maintain_answers = maintain
        try:
            engine = Engine.from_file(program)
        finally:
            WindowedProgram.maintain_answers = True
        elements = list(engine.read(data))
        key = engine.program.streams[0]
        start, start_cpu = time.perf_counter(), time.process_time()
        outputs = [o for e in elements for o in engine.push(e.time, {key: [e.triples]})]
        outputs.extend(engine.flush())
        best = min(best, (time.perf_counter() - start) / len(elements) * 1e6)
        cpu = min(cpu, (time.process_time() - start_cpu) / len(elements) * 1e6)
        decode = engine.dictionary.decode
        rows = [(o.time, sorted(str({k: decode(v) for k, v in s.bindings.items()}) for s in o.solutions))  # type: ignore[attr-defined]
                for o in outputs]
    return best, cpu, rows


def spark(program: Path, data: Path, out: Path) -> float:
    """Seconds of ``chronolog run --runner spark`` (a child process, start-up included)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "chronolog", "run", str(program), "--stream", str(data),
                           "--runner", "spark", "-o", str(out)], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-window", type=int, default=1_000, help="elements per window")
    parser.add_argument("--windows", type=int, default=20, help="stream length, in windows")
    parser.add_argument("--period", type=int, default=10, help="ms between elements")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="also run chronolog run --runner spark")
    args = parser.parse_args()
    n = args.per_window * args.windows
    range_ms = args.per_window * args.period
    elements = stream(n, args.period)
    print(f"Python {platform.python_version()}; {n:,} elements of 3 triples, {args.per_window:,} per window "
          f"(RANGE {range_ms} ms, one element every {args.period} ms)\n")
    print("## Windowed C-SPARQL SELECT (BGP + FILTER), µs per element\n")
    print("| window | runner | answers | elements | µs per element (wall) | CPU µs per element | solutions |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for lang, label, step in (("csparql", "tumbling", range_ms), ("csparql", "sliding, STEP = RANGE/10", range_ms // 10),
                                  ("rspql", "RSP-QL named window, sliding", range_ms // 10)):
            program, data = write(folder, f"q{step}", elements, range_ms, step, lang)
            full_us, full_cpu, full_rows = in_process(program, data, args.repeats, maintain=False)
            us, cpu, rows = in_process(program, data, args.repeats, maintain=True)
            if rows != full_rows:
                raise RuntimeError(f"{label}: the maintained answers differ from full evaluation")
            solutions = sum(len(r) for _, r in rows)
            for how, wall, used in (("evaluated in full", full_us, full_cpu), ("maintained", us, cpu)):
                print(f"| [RANGE {range_ms}ms STEP {step}ms] {label} | in-process | {how} | {n:,} | {wall:.1f} | "
                      f"{used:.1f} | {solutions:,} |", flush=True)
            print(f"| | | full / maintained (CPU) | | | {full_cpu / cpu:.2f}x | |", flush=True)
            if not args.spark or lang != "csparql":
                continue
            short = elements[: 2 * args.per_window]
            short_program, short_data = write(folder, f"s{step}", short, range_ms, step)
            small = spark(short_program, short_data, folder / f"s{step}.out.jsonl")
            big = spark(program, data, folder / f"q{step}.out.jsonl")
            got = [json.loads(line) for line in (folder / f"q{step}.out.jsonl").read_text().splitlines()]
            same = sum(len(g["solutions"]) for g in got) == solutions and len(got) == len(rows)
            print(f"| [RANGE {range_ms}ms STEP {step}ms] {label} | spark local[2] | maintained | {n:,} | {big / n * 1e6:.0f} "
                  f"(start-up included: {big:.1f} s in all; {small:.1f} s for {len(short):,} elements) | | {solutions:,}"
                  f"{'' if same else ' (differs from in-process!)'} |", flush=True)


if __name__ == "__main__":
    main()
