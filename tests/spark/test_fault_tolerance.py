"""Exactly-once output across crashes: ``chronolog run --runner spark --checkpoint CK -o OUT``
is killed with SIGKILL (its whole process group: the driver, its JVM, the Python workers;
no polite stop), restarted on the same checkpoint, and in the end OUT equals an
uninterrupted in-process run, with no time-point graph duplicated or lost.

The driver is held at an exact place of a micro-batch (``pausepoint.py``) when the kill
comes, so that each crash window is hit every time, not by luck. Three runs of the same
command on one checkpoint:

1. killed once at least 3 batches are logged, while a batch with output is written to OUT
   and logged in the sink's side file but not committed by Spark: the restart re-runs
   it, and the sink must skip it;
2. killed while a batch's graphs are in OUT (fsynced) but its end offset is not logged
   and Spark has not committed it: the restart re-runs it, and the sink must cut the
   partial batch off before writing it again;
3. ``python -m chronolog run ...`` left to finish.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyoxigraph
import pytest
from pyoxigraph import DefaultGraph, RdfFormat

from chronolog import cli
from golden import canonical

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
SYNTHETIC = ROOT / "examples" / "synthetic"
PAUSEPOINT = Path(__file__).with_name("pausepoint.py")
GENERATED_AT = "http://www.w3.org/ns/prov#generatedAtTime"
TIMEOUT = 600.0  # per run; about 40 s on an idle 2-core machine, several times that under load


def arguments(checkpoint: Path, out: Path) -> list[str]:
    return ["run", str(SYNTHETIC / "scenario.dotr"), "--stream", str(SYNTHETIC / "stream.trig"),
            "--background", str(SYNTHETIC / "background.ttl"), "--rules", str(SYNTHETIC / "scenario.dl"),
            "--runner", "spark", "--checkpoint", str(checkpoint), "-o", str(out),
            "--max-elements-per-batch", "10", "--master", "local[2]"]


def processes() -> dict[int, tuple[str, str, int, str]]:
    """pid -> (command name, state, parent pid, start time) of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            table[int(entry.name)] = (stat[stat.index("(") + 1:stat.rindex(")")], fields[0], int(fields[1]), fields[19])
    return table


class Run:
    """One ``chronolog run`` in a session of its own; every process it starts is noted
    (the JVM, and the Python worker daemons Spark starts, which move to process groups of
    their own), so that a test can check that a kill leaves none of them behind."""

    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        with open(log, "wb") as sink:
            self.process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(SRC)),
                                            stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        self.started = time.monotonic()
        self.seen: dict[tuple[int, str], str] = {}  # (pid, start time) -> command name

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def note_processes(self) -> None:
        table = processes()
        family = {self.process.pid}
        grew = True
        while grew:
            grew = False
            for pid, (_, _, parent, _) in table.items():
                if parent in family and pid not in family:
                    family.add(pid)
                    grew = True
        for pid in family:
            if pid in table:
                self.seen[(pid, table[pid][3])] = table[pid][0]

    def wait_for(self, condition, what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            self.note_processes()
            if self.process.poll() is not None:
                raise AssertionError(f"the run ended before {what}\n{self.output()}")
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"no {what} in {TIMEOUT:.0f} s\n{self.output()}")
            time.sleep(0.2)

    def finish(self) -> int:
        try:
            return self.process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"the run did not end in {TIMEOUT:.0f} s\n{self.output()}") from None

    def kill(self) -> None:
        """SIGKILL to the run's process group; then none of its processes may be left."""
        self.note_processes()
        assert any(name == "java" for name in self.seen.values()), f"no JVM seen: {self.seen}"
        os.killpg(self.process.pid, signal.SIGKILL)
        assert self.process.wait(30) == -signal.SIGKILL
        deadline = time.monotonic() + 30
        while True:
            table = processes()
            alive = [f"{pid} {name}" for (pid, start), name in self.seen.items()
                     if pid in table and table[pid][3] == start and table[pid][1] != "Z"]
            if not alive:
                return
            assert time.monotonic() < deadline, f"processes of the killed run survive: {alive}"
            time.sleep(0.2)


def logged(out: Path) -> list[tuple[int, int]]:
    """The sink's side file: (batch id, end offset of the output after the batch)."""
    log = out.with_name(f".{out.name}.batches")
    if not log.exists():
        return []
    return [(int(b), int(e)) for b, e in (line.split() for line in log.read_text().splitlines() if line)]


def batch_ids(checkpoint: Path, kind: str) -> set[int]:
    """Batch ids in the checkpoint's ``offsets`` (planned) or ``commits`` (done) log."""
    folder = checkpoint / kind
    return {int(p.name) for p in folder.iterdir() if p.name.isdigit()} if folder.exists() else set()


def uncommitted(checkpoint: Path) -> set[int]:
    return batch_ids(checkpoint, "offsets") - batch_ids(checkpoint, "commits")


def test_killed_runs_resume_from_the_checkpoint_exactly_once(tmp_path: Path) -> None:
    reference, out, checkpoint = tmp_path / "inprocess.trig", tmp_path / "out.trig", tmp_path / "checkpoint"
    assert cli.main([*arguments(checkpoint, reference)[:8], "--runner", "inprocess", "-o", str(reference)]) == 0
    expected = canonical(reference.read_bytes())
    assert len(expected) > 50
    marker = tmp_path / "paused"
    timings = []

    # 1. killed after a batch with output is logged, before Spark commits it
    run = Run([sys.executable, str(PAUSEPOINT), "after-log:3", str(marker), *arguments(checkpoint, out)],
              tmp_path / "run1.log")
    run.wait_for(marker.exists, "pause after a logged batch")
    run.kill()
    timings.append(time.monotonic() - run.started)
    done = logged(out)
    assert len(done) >= 3 and done[-1][1] > done[-2][1], done
    assert uncommitted(checkpoint) == {done[-1][0]}, (uncommitted(checkpoint), done)
    assert out.stat().st_size == done[-1][1]
    marker.unlink()

    # 2. killed after a batch's graphs are written, before its end offset is logged
    run = Run([sys.executable, str(PAUSEPOINT), "before-log", str(marker), *arguments(checkpoint, out)],
              tmp_path / "run2.log")
    run.wait_for(marker.exists, "pause before logging a batch")
    run.kill()
    timings.append(time.monotonic() - run.started)
    before = done
    done = logged(out)
    assert done[:len(before)] == before, "the re-run of the logged batch was logged again"
    partial = uncommitted(checkpoint)
    assert len(partial) == 1 and max(partial) > done[-1][0], (partial, done)
    assert out.stat().st_size > done[-1][1], "no partial batch in the output: nothing is tested"

    # 3. the plain command, to the end
    run = Run([sys.executable, "-m", "chronolog", *arguments(checkpoint, out)], tmp_path / "run3.log")
    assert run.finish() == 0, run.output()
    timings.append(time.monotonic() - run.started)
    print("\nruns took " + ", ".join(f"{t:.0f} s" for t in timings), file=sys.stderr)

    assert not uncommitted(checkpoint)
    final = logged(out)
    ids = [b for b, _ in final]
    assert final[:len(done)] == done and max(partial) in ids
    assert ids == sorted(batch_ids(checkpoint, "commits")), "each committed batch logged once, in order"
    assert [e for _, e in final] == sorted(e for _, e in final)
    assert final[-1][1] == out.stat().st_size, "output past the last logged batch"
    data = out.read_bytes()
    graphs = [q.subject.value for q in pyoxigraph.parse(data, RdfFormat.TRIG)
              if q.graph_name == DefaultGraph() and q.predicate.value == GENERATED_AT]
    assert len(graphs) == len(set(graphs)), "a time-point graph written twice"
    assert len(graphs) == len(expected), "a time-point graph lost"
    assert canonical(data) == expected
