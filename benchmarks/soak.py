"""Soak: a long stream with late, poison and fresh-IRI elements, killed with -9 mid-way and restarted.

Run: ``PYTHONPATH=src python benchmarks/soak.py --runner inprocess|spark --elements N
[--kill-at N] [--at N,N,...]``. The stream is bench_memory's (sensor readings, each with a
fresh observation IRI, one every 10 ms; the DOTR program detects a hot reading after a warm
one of the same sensor within 1 s, each detection a graph with a fresh IRI), with, among
them, a late reading every 10,007 readings (5 s behind the stream) and a poison element
every 50,021 (a literal with a lone surrogate, or a time beyond 64 bits, in turn). The run
is ``chronolog run`` with ``--late FILE --on-error skip --quarantine FILE -o OUT.jsonl``:

- in-process, the stream comes through a named pipe as it is written; the process is
  killed with SIGKILL once ``--kill-at`` elements are written, and started again from the
  start of the stream (the in-process runner keeps no checkpoint; its output file is
  written aside and renamed at the end, so the killed run leaves nothing half-written);
- on Spark, the stream is a directory of files written before the run, read with the
  available-now trigger and a checkpoint; the process group is killed once a micro-batch
  past ``--kill-at`` elements is committed, and the same command restarts from the
  checkpoint.

It reports elements in, outputs out, late and quarantined counts, and lost and duplicated
detections against the detections computed here from the rule's definition (both must be
0), and the peak RSS (the run's process tree) as the stream passes each ``--at`` mark.
Exit 1 when anything is lost or duplicated, a count is off, or the peak at a mark exceeds
1.5x the peak at the first.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memory import PROGRAM, SENSORS, STEP_MS  # noqa: E402  (the same program and stream shape)

EX = "http://example.org/"
CHUNK = 20_000  # elements per file of the Spark inbox
DETECTION = re.compile(rf"<{EX}to> <{EX}obs/(\d+)>")


def elements(count: int, late_every: int = 10_007, poison_every: int = 50_021) -> Iterator[tuple[str, str]]:
    """(kind, JSON line) for ``count`` readings and the late and poison elements among them;
    kind is "reading", "late" or "poison"."""
    poisons = 0
    for n in range(count):
        temp = 30 if (n // SENSORS) % 2 == 0 else 50
        graph = f"<{EX}obs/{n}> <{EX}sensor> <{EX}s{n % SENSORS}> ; <{EX}temp> {temp} ."
        yield "reading", json.dumps({"time": n * STEP_MS, "graph": graph})
        if n and n % late_every == 0:
            late = f"<{EX}late/{n}> <{EX}sensor> <{EX}s{n % SENSORS}> ; <{EX}temp> 50 ."
            yield "late", json.dumps({"time": n * STEP_MS - 5000, "graph": late})
        if n and n % poison_every == 0:
            poisons += 1
            if poisons % 2:  # the JSON escape of a lone surrogate, in a literal
                yield "poison", f'{{"time": {n * STEP_MS}, "graph": "<{EX}p{n}> <{EX}name> \\"\\ud800\\" ."}}'
            else:
                yield "poison", json.dumps({"time": 2 ** 64 + n, "graph": ""})


def expected_detections(count: int) -> set[int]:
    """The hot readings the rule detects, from its definition: a hot reading at t of sensor
    s whose sensor's last warm reading before it is at or after t - 1 s (late and poison
    elements take no part)."""
    last_warm: dict[int, int] = {}
    found = set()
    for n in range(count):
        t, sensor = n * STEP_MS, n % SENSORS
        if (n // SENSORS) % 2 == 0:
            last_warm[sensor] = t
        elif sensor in last_warm and t - 1000 <= last_warm[sensor] < t:
            found.add(n)
    return found


def tree_rss_mb(pid: int) -> float:
    """The resident memory of a process and its descendants, now."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
            with open(f"/proc/{p}/task/{p}/children") as children:
                todo.extend(int(c) for c in children.read().split())
        except (OSError, StopIteration):
            continue
    return total / 1024


class Sampler:
    """Samples a process tree's RSS every 0.2 s; ``peak`` is the largest sample so far."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, tree_rss_mb(self.pid))

    def stop(self) -> None:
        self._stop.set()


def command(runner: str, program: Path, stream: Path, folder: Path) -> list[str]:
    cmd = [sys.executable, "-m", "chronolog", "run", str(program), "--stream", str(stream), "--runner", runner,
           "--late", str(folder / "late.jsonl"), "--on-error", "skip", "--quarantine", str(folder / "quarantine.jsonl"),
           "-o", str(folder / "out.jsonl")]
    if runner == "spark":
        cmd += ["--checkpoint", str(folder / "checkpoint"), "--trigger", "available-now",
                "--max-elements-per-batch", str(CHUNK)]
    return cmd


def run_inprocess(args: argparse.Namespace, folder: Path, cmd: list[str], marks: list[int]) -> dict[int, float]:
    """Write the stream into the pipe, kill at ``--kill-at``, write it again to a new run."""
    peaks: dict[int, float] = {}
    for attempt in ("killed", "restarted"):
        process = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
        sampler = Sampler(process.pid)
        written = 0
        with open(folder / "stream.jsonl", "w", encoding="utf-8") as pipe:
            for kind, line in elements(args.elements, args.late_every, args.poison_every):
                pipe.write(line + "\n")
                written += kind == "reading"
                if attempt == "killed" and written == args.kill_at:
                    pipe.flush()
                    os.killpg(process.pid, signal.SIGKILL)
                    break
                if attempt == "restarted" and written in marks and written not in peaks:
                    pipe.flush()
                    peaks[written] = max(sampler.peak, tree_rss_mb(process.pid))
        stderr = process.communicate()[1]
        sampler.stop()
        if attempt == "restarted" and process.returncode != 0:
            raise SystemExit(f"the restarted run failed ({process.returncode}):\n{stderr}")
        print(f"{attempt}: exit {process.returncode}, {written:,} readings written", flush=True)
    return peaks


def committed(checkpoint: Path) -> int:
    """Elements of the newest committed micro-batch's end offset (0 before the first)."""
    commits = [int(p.name) for p in (checkpoint / "commits").glob("[0-9]*")] if (checkpoint / "commits").exists() else []
    if not commits:
        return 0
    offsets = (checkpoint / "offsets" / str(max(commits))).read_text().splitlines()
    return sum(json.loads(offsets[-1])["n"].values())


def run_spark(args: argparse.Namespace, folder: Path, cmd: list[str], marks: list[int]) -> dict[int, float]:
    """Kill the run once a batch past ``--kill-at`` elements is committed; restart it."""
    peaks: dict[int, float] = {}
    for attempt in ("killed", "restarted"):
        process = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
        sampler = Sampler(process.pid)
        while process.poll() is None:
            done = committed(folder / "checkpoint")
            for mark in marks:
                if done >= mark and mark not in peaks:
                    peaks[mark] = sampler.peak
            if attempt == "killed" and done >= args.kill_at:
                os.killpg(process.pid, signal.SIGKILL)
            time.sleep(0.2)
        stderr = process.communicate()[1]
        sampler.stop()
        if attempt == "restarted" and process.returncode != 0:
            raise SystemExit(f"the restarted run failed ({process.returncode}):\n{stderr}")
        print(f"{attempt}: exit {process.returncode}, {committed(folder / 'checkpoint'):,} elements committed",
              flush=True)
    return peaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runner", choices=["inprocess", "spark"], default="inprocess")
    parser.add_argument("--elements", type=int, default=1_000_000, help="readings in the stream (default 1,000,000)")
    parser.add_argument("--kill-at", type=int, help="kill the run after this many readings (default: half)")
    parser.add_argument("--late-every", type=int, default=10_007, help="a late element after every N readings")
    parser.add_argument("--poison-every", type=int, default=50_021, help="a poison element after every N readings")
    parser.add_argument("--at", default="1000000,5000000,10000000",
                        help="RSS marks, comma-separated (those past --elements are skipped)")
    args = parser.parse_args()
    args.kill_at = args.kill_at or args.elements // 2
    marks = sorted({int(m) for m in args.at.split(",") if 0 < int(m) <= args.elements} | {args.elements})
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}; runner {args.runner}, {args.elements:,} readings, "
          f"killed after {args.kill_at:,}\n", flush=True)
    kinds = collections.Counter(kind for kind, _ in elements(args.elements, args.late_every, args.poison_every))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        program = folder / "rising.dotr"
        program.write_text(PROGRAM)
        began = time.monotonic()
        if args.runner == "inprocess":
            os.mkfifo(folder / "stream.jsonl")
            peaks = run_inprocess(args, folder, command("inprocess", program, folder / "stream.jsonl", folder), marks)
        else:
            inbox = folder / "inbox"
            inbox.mkdir()
            lines = [line for _, line in elements(args.elements, args.late_every, args.poison_every)]
            for i in range(0, len(lines), CHUNK):
                (inbox / f"{i // CHUNK:06d}.jsonl").write_text("\n".join(lines[i:i + CHUNK]) + "\n")
            peaks = run_spark(args, folder, command("spark", program, inbox, folder), marks)
        seconds = time.monotonic() - began
        got = collections.Counter(int(m.group(1)) for line in open(folder / "out.jsonl", encoding="utf-8")
                                  for m in [DETECTION.search(json.loads(line)["graph"])] if m)
        late = sum(1 for _ in open(folder / "late.jsonl", encoding="utf-8"))
        quarantined = sum(1 for _ in open(folder / "quarantine.jsonl", encoding="utf-8"))
    want = expected_detections(args.elements)
    lost = len(want - set(got))
    duplicated = sum(n - 1 for n in got.values() if n > 1) + len(set(got) - want)
    print("| elements in | readings | outputs out | late (injected) | quarantined (injected) | lost | duplicated | s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {sum(kinds.values()):,} | {kinds['reading']:,} | {sum(got.values()):,} | {late:,} ({kinds['late']:,}) "
          f"| {quarantined:,} ({kinds['poison']:,}) | {lost:,} | {duplicated:,} | {seconds:.0f} |\n")
    print("| readings | peak RSS MB (process tree) | vs first mark |")
    print("|---:|---:|---:|")
    first = peaks.get(marks[0])
    for mark in marks:
        if mark in peaks:
            print(f"| {mark:,} | {peaks[mark]:.0f} | {peaks[mark] / first:.2f}x |" if first else f"| {mark:,} | "
                  f"{peaks[mark]:.0f} | |")
    flat = all(peaks[m] <= 1.5 * first for m in peaks) if first else True
    ok = not lost and not duplicated and late == kinds["late"] and quarantined == kinds["poison"] and flat
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
