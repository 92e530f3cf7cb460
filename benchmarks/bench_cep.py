"""Temporal engine benchmarks (issue 4): throughput, per-event latency and peak memory.

Run: ``PYTHONPATH=src python benchmarks/bench_cep.py [--quick]``. Workloads follow DOTR's
synthetic evaluation (seed 000, section 5): one element per second, 20% of them the
terminating ``ReadA`` events, sensors uniform in 1..10, values that always pass the
filters. Each workload also runs on a prefix through the naive reference evaluator
(``tests/reference/tesla.py``), side by side, with the outputs checked equal.
Throughput is the best of three runs, in events per second of this process's CPU time
(the machine's two cores are shared with other work, so wall time mostly measures the
neighbours; the wall-clock rate of the same run is shown too). Latency times each
``push()`` with ``perf_counter_ns`` (timer overhead included, wall clock); peak memory
is tracemalloc's peak over a separate run of up to 100k events, outputs dropped.
"""
from __future__ import annotations

import argparse
import gc
import platform
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable

from chronolog.cep import (
    Event, Predicate, Rule, Selection, TemporalEngine, Terminator, Within, attr, each_, last,
    param, where,
)
from from_tests import load

tesla = load("reference/tesla.py")
SECOND = 1000
MINUTE = 60 * SECOND


def default_rules(count: int) -> list[Rule]:
    """DOTR's default shape: two-event sequences with a parameter and a filter."""
    return [
        Rule(name=f"r{i}", emits=f"Complex{i}", terminator=Terminator("A", "ReadA"),
             predicates=[Predicate("B", "ReadB", last(), Within(MINUTE, of="A"),
                                   where=[param("B.sensor", "A.sensor"), where("B.val", ">", i % 100)])],
             outputs={"sensor": attr("A.sensor"), "a": attr("A.val"), "b": attr("B.val")})
        for i in range(count)
    ]


def default_stream(n: int, seed: int = 1) -> list[Event]:
    rng = random.Random(seed)
    return [
        Event("ReadA" if rng.random() < 0.2 else "ReadB", t * SECOND, t * SECOND,
              {"sensor": rng.randint(1, 10), "val": rng.randint(100, 1000)})
        for t in range(n)
    ]


def sequence_rules(length: int, selection: Selection) -> list[Rule]:
    """Ten rules, each a sequence of ``length`` events E0 -> ... -> E(length-1), each
    within D of the next; D grows with the length so that every scope holds about 1.3
    candidates (so ``each`` yields about 1.3**(length-1) combinations per firing)."""
    scope = (26 * length // 10 + 1) * SECOND
    rules = []
    for i in range(10):
        preds = [
            Predicate(f"P{k}", f"E{k}", selection, Within(scope, of=f"P{k + 1}" if k + 2 < length else "T"),
                      where=[param(f"P{k}.sensor", "T.sensor"), where(f"P{k}.val", ">", i)])
            for k in range(length - 2, -1, -1)
        ]
        rules.append(Rule(name=f"seq{i}", emits=f"Seq{i}", terminator=Terminator("T", f"E{length - 1}"),
                          predicates=preds, outputs={"sensor": attr("T.sensor"), "first": attr("P0.val")}))
    return rules


def sequence_stream(length: int, n: int, seed: int = 2) -> list[Event]:
    rng = random.Random(seed)
    return [Event(f"E{rng.randrange(length)}", t * SECOND, t * SECOND,
                  {"sensor": rng.randint(1, 2), "val": rng.randint(100, 1000)}) for t in range(n)]


def build(rules: list[Rule], types: list[str]) -> TemporalEngine:
    engine = TemporalEngine()
    for name in types:
        engine.declare(name, ["sensor", "val"])
    for rule in rules:
        engine.register(rule)
    return engine


def throughput(make: Callable[[], TemporalEngine], events: list[Event]) -> tuple[float, float, int]:
    """Best events/s over three runs, by CPU time and by wall time, and the output count."""
    best_cpu = best_wall = float("inf")
    outputs = 0
    for _ in range(3):
        engine = make()
        gc.collect()
        cpu, wall = time.process_time(), time.perf_counter()
        outputs = len(engine.push_batch(events))
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return len(events) / best_cpu, len(events) / best_wall, outputs


def latency(make: Callable[[], TemporalEngine], events: list[Event]) -> tuple[float, float]:
    engine = make()
    push = engine.push
    clock = time.perf_counter_ns
    samples = []
    for event in events:
        start = clock()
        push(event)
        samples.append(clock() - start)
    samples.sort()
    return statistics.median(samples) / 1000, samples[int(len(samples) * 0.99)] / 1000


def peak_memory(make: Callable[[], TemporalEngine], events: list[Event]) -> float:
    engine = make()
    gc.collect()
    tracemalloc.start()
    for start in range(0, len(events), 1000):
        engine.push_batch(events[start:start + 1000])  # outputs dropped, as a sink would
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def reference_rate(rules: list[Rule], make: Callable[[], TemporalEngine], events: list[Event]) -> tuple[float, float]:
    """Events/s (CPU time) of the reference and the engine on the same prefix, outputs checked."""
    reference = tesla.ReferenceTesla(rules)
    start = time.process_time()
    expected = [out for event in events for out in reference.push(event)]
    ref_seconds = time.process_time() - start
    engine = make()
    start = time.process_time()
    got = engine.push_batch(events)
    engine_seconds = time.process_time() - start
    assert got == expected, "engine and reference disagree"
    return len(events) / ref_seconds, len(events) / max(engine_seconds, 1e-9)


def row(name: str, rules: list[Rule], types: list[str], events: list[Event], ref_events: int) -> str:
    make = lambda: build(rules, types)  # noqa: E731
    rate, wall_rate, outputs = throughput(make, events)
    median, p99 = latency(make, events[:100_000])
    memory = peak_memory(make, events[:100_000])
    if ref_events:
        ref, eng = reference_rate(rules, make, events[:ref_events])
        side = f"{ref:,.0f} | {eng / ref:,.0f}x ({ref_events:,} ev)"
    else:
        side = "n/a | n/a"
    line = (f"| {name} | {len(events):,} | {outputs:,} | {rate:,.0f} | {wall_rate:,.0f} | {median:.1f} | {p99:.1f} "
            f"| {memory:.1f} | {side} |")
    print(line, flush=True)
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs (a smoke run)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.system()}; "
          f"command: PYTHONPATH=src python benchmarks/bench_cep.py{' --quick' if args.quick else ''}\n")
    print("| workload | events | outputs | events/s (CPU) | events/s (wall) | median us | p99 us "
          "| peak MiB | reference events/s | engine/reference |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    inputs = ["ReadA", "ReadB"]
    row("default: 10 rules, last, 2 events", default_rules(10), inputs, default_stream(300_000 // scale), 3000)
    for selection in (last(), each_()):
        for length in range(2, 9):
            events = sequence_stream(length, 50_000 // scale)
            row(f"sequence of {length}, {selection}, 10 rules", sequence_rules(length, selection),
                [f"E{k}" for k in range(length)], events, 1000 if length in (2, 4, 8) else 0)
    for count, n, ref in ((1, 300_000, 3000), (10, 300_000, 3000), (100, 30_000, 500), (1000, 5_000, 0)):
        row(f"{count} rules, default shape", default_rules(count), inputs, default_stream(n // scale), ref // scale)


if __name__ == "__main__":
    main()
