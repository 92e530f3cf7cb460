"""What a running program is doing, sampled for the live view (``chronolog run --ui``).

The run loop reports each time point it processed (how many elements, how long the push
took) and each output; on Spark, the driver reports each micro-batch's progress (Spark's
own report) and each output its sink receives. The live view's server reads
:meth:`RunMonitor.snapshot` from another thread. Reporting is cheap and bounded whatever the stream: counters, one bucket
per second of run time (the last hour kept), and the last outputs as text; an output is
rendered to text only while fewer than ``render_per_second`` were this second (the rest
are counted), so a fast stream does not pay for a table nobody can read at that speed.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Callable

SECONDS_KEPT = 3600
RECENT = 500
BATCHES = 100


def _rss_bytes() -> int | None:
    """This process's resident memory now (Linux), None elsewhere."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class RunMonitor:
    """Counters, per-second series and recent outputs of one run (thread-safe)."""

    def __init__(self, program: str, runner: str, render_per_second: int = 200,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.program, self.runner = program, runner
        self.render_per_second = render_per_second
        self._clock = clock
        self._start = clock()
        self._lock = threading.Lock()
        self.counters = {"elements": 0, "time_points": 0, "outputs": 0}
        self.stream_time: int | None = None
        self.finished: str | None = None  # the closing line, once the run ended
        self._seconds: deque[dict] = deque(maxlen=SECONDS_KEPT)
        self._latencies: list[float] = []  # the current second's, in ms
        self._phases: dict[str, list[float]] = {}  # the current second's, by phase, in ms
        self.held: dict[str, int] = {}  # the state the program holds, sampled once a second
        self._held_at = -1  # the second of the last sample
        self._recent: deque[dict] = deque(maxlen=RECENT)
        self._sequence = 0
        self._rendered_this_second = 0
        self._watched: dict[str, Callable[[], int]] = {}
        self.problems: deque[str] = deque(maxlen=RECENT)  # the last skipped elements' errors
        self.late: deque[str] = deque(maxlen=RECENT)  # the last late elements, where each was read
        self._batches: deque[dict] = deque(maxlen=BATCHES)  # on Spark: the last micro-batches' progress
        self._last_point: tuple[int, float] | None = None  # (time, seconds) of the last time point processed

    def _bucket(self) -> dict:
        """The current second's bucket (closing the previous one's latency figures)."""
        second = int(self._clock() - self._start)
        seconds = self._seconds
        if not seconds or seconds[-1]["second"] != second:
            self._close_bucket()
            seconds.append({"second": second, "elements": 0, "outputs": 0, "p50_ms": None, "p99_ms": None,
                            "phases": {}, "held": {}})
            self._rendered_this_second = 0
        return seconds[-1]

    def _close_bucket(self) -> None:
        if self._seconds:
            self._seconds[-1].update(self._figures())
        self._latencies = []
        self._phases = {}

    def _figures(self) -> dict:
        """The current second's latency figures: p50 and p99, overall and by phase."""
        figures: dict = {"phases": {name: {"p50_ms": _percentile(values, 0.5), "p99_ms": _percentile(values, 0.99)}
                                    for name, values in self._phases.items()}}
        if self._latencies:
            figures["p50_ms"], figures["p99_ms"] = _percentile(self._latencies, 0.5), _percentile(self._latencies, 0.99)
        return figures

    def _sample(self, bucket: dict, held: Callable[[], dict[str, int]] | None) -> None:
        """Ask the program what state it holds, at most once a second."""
        if held is not None and bucket["second"] != self._held_at:
            self._held_at = bucket["second"]
            self.held = bucket["held"] = held()

    def time_point(self, time_: int, elements: int, seconds: float, phases: dict[str, float] | None = None,
                   held: Callable[[], dict[str, int]] | None = None) -> None:
        """A time point was processed: ``elements`` read, the push took ``seconds``, of
        which ``phases`` (seconds by phase); ``held`` says what state the program holds
        (asked at most once a second, from the caller's thread)."""
        with self._lock:
            bucket = self._bucket()
            bucket["elements"] += elements
            self.counters["elements"] += elements
            self.counters["time_points"] += 1
            self.stream_time = time_
            self._latencies.append(seconds * 1000)
            for name, spent in (phases or {}).items():
                self._phases.setdefault(name, []).append(spent * 1000)
            self._last_point = (time_, seconds)
            self._sample(bucket, held)

    def output(self, time_: int, render: Callable[[], tuple[str, str]], latency: float | None = None,
               explanation: dict | None = None) -> None:
        """An output of stream time ``time_`` was written; ``render`` gives (its rule or
        query, its text), called only when the output is shown. Its processing time is
        ``latency`` or else that of the time point just processed, when it is the output's;
        ``explanation`` is its provenance record (``run --provenance``), shown on demand."""
        with self._lock:
            if latency is None and self._last_point is not None and self._last_point[0] == time_:
                latency = self._last_point[1]
            bucket = self._bucket()
            bucket["outputs"] += 1
            self.counters["outputs"] += 1
            if self._rendered_this_second >= self.render_per_second:
                return
            self._rendered_this_second += 1
            self._sequence += 1
            name, text = render()
            shown = {"seq": self._sequence, "time": time_, "name": name, "text": text,
                     "latency_ms": None if latency is None else round(latency * 1000, 3)}
            if explanation is not None:
                shown["why"] = explanation
            self._recent.append(shown)

    def phase(self, name: str, seconds: float) -> None:
        """Time spent in phase ``name`` outside a time point's push (writing an output)."""
        with self._lock:
            self._bucket()
            self._phases.setdefault(name, []).append(seconds * 1000)

    def batch(self, report: dict) -> None:
        """A Spark micro-batch's progress report (``StreamingQuery.recentProgress``): its
        input counts as elements, its duration as the processing time of its time points,
        the durations Spark breaks it into as its phases, its state operators' rows and
        memory as the state held."""
        rows = int(report.get("numInputRows", 0))
        durations = report.get("durationMs") or {}
        duration = float(durations.get("triggerExecution", 0))
        states = report.get("stateOperators") or []
        with self._lock:
            bucket = self._bucket()
            bucket["elements"] += rows
            self.counters["elements"] += rows
            self.counters["batches"] = self.counters.get("batches", 0) + 1
            self._latencies.append(duration)
            for name, ms in durations.items():
                if name != "triggerExecution":
                    self._phases.setdefault(name, []).append(float(ms))
            self.held = bucket["held"] = {
                "state rows": sum(int(s.get("numRowsTotal", 0)) for s in states),
                "state memory (bytes)": sum(int(s.get("memoryUsedBytes", 0)) for s in states)}
            self._batches.append({"batch": report.get("batchId"), "duration_ms": duration, "input_rows": rows,
                                  "input_rate": report.get("inputRowsPerSecond"),
                                  "processed_rate": report.get("processedRowsPerSecond"),
                                  "state_rows": sum(int(s.get("numRowsTotal", 0)) for s in states)})

    def watch(self, name: str, counter: Callable[[], int]) -> None:
        """Show counter ``name`` as ``counter()`` reads it (the late and error policies' counts)."""
        self._watched[name] = counter

    def problem(self, message: str) -> None:
        """A skipped element's positioned error, listed on the page."""
        with self._lock:
            self.problems.append(message)

    def late_element(self, message: str) -> None:
        """A late element (where it was read, its time), listed on the page."""
        with self._lock:
            self.late.append(message)

    def finish(self, summary: str) -> None:
        with self._lock:
            self._close_bucket()
            self.finished = summary

    def snapshot(self, after: int = 0) -> dict:
        """Everything the page shows, with the outputs after sequence number ``after``."""
        with self._lock:
            elapsed = self._clock() - self._start
            seconds = [dict(b) for b in self._seconds]
            if seconds:  # the second under way, so far
                seconds[-1].update(self._figures())
            return {
                "program": self.program, "runner": self.runner, "elapsed_s": round(elapsed, 3),
                "counters": {**self.counters, **{name: read() for name, read in self._watched.items()}},
                "stream_time": self.stream_time, "problems": list(self.problems), "late": list(self.late),
                "held": dict(self.held),
                "rates": {k: self.counters[k] / elapsed if elapsed > 0 else 0.0 for k in ("elements", "outputs")},
                "rss_bytes": _rss_bytes(), "finished": self.finished,
                "seconds": seconds, "batches": list(self._batches),
                "outputs": [o for o in self._recent if o["seq"] > after],
            }
