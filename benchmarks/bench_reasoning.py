"""Reasoning at t (issue 2): time per time point in DOTR's default scenario.

Runs, in one process: (1) the default scenario as the background grows from 1k to 1M
triples, (2) DOTR Fig. 5: the number of Datalog rules from 1 to 100k, both as the paper's
background-only rules and as rules the stream triggers, and (3) a naive baseline that
recomputes the closure of background + element from scratch (what the overlay saves).

    PYTHONPATH=src python benchmarks/bench_reasoning.py [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import time

from dotr_scenario import background, elements, rules

from chronolog.datalog import Reasoner, load_program
from chronolog.terms import TermDictionary


def per_time_point(filler: int, extra: int, triggered: int, points: int) -> dict[str, float]:
    d = TermDictionary()
    t0 = time.perf_counter()
    program = load_program([(rules(extra, triggered), "scenario.dl")], d)
    r = Reasoner(program, d)
    r.add_background(background(d, filler, extra))
    r.close()
    setup = time.perf_counter() - t0
    stream = elements(d, points, triggered)
    for _, triple in stream:  # warm-up pass: plans compile on first use
        r.at([triple])
    samples = []
    clock = time.perf_counter_ns
    derived = 0
    for _, triple in stream:
        start = clock()
        r.at([triple])
        samples.append(clock() - start)
        derived += len(r.overlay.triples) - 1
    samples.sort()
    return {
        "setup_s": setup,
        "median_us": samples[len(samples) // 2] / 1000,
        "p99_us": samples[int(len(samples) * 0.99)] / 1000,
        "mean_us": statistics.fmean(samples) / 1000,
        "derived_per_point": derived / len(stream),
    }


def naive_per_time_point(filler: int, points: int) -> float:
    """Mean µs per time point when the closure of background + element is recomputed."""
    d = TermDictionary()
    program = load_program([(rules(10, 0), "scenario.dl")], d)
    bg = background(d, filler, 10)
    stream = elements(d, points)
    start = time.perf_counter()
    for _, triple in stream:
        r = Reasoner(program, d)
        r.add_background(bg)
        r.add_background([triple])
        r.close()
    return (time.perf_counter() - start) / points * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    points = 5_000 if args.quick else 30_000
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    print("## Reasoning at t: default scenario (10 extra rules, one-triple elements)")
    print("| background triples | setup s | median µs | p99 µs | mean µs |")
    print("|---|---|---|---|---|")
    for size in sizes:
        m = per_time_point(size, 10, 0, points)
        print(f"| {size:,} | {m['setup_s']:.2f} | {m['median_us']:.2f} | {m['p99_us']:.2f} | {m['mean_us']:.2f} |", flush=True)
    naive = naive_per_time_point(10_000, 200 if args.quick else 1_000)
    fast = per_time_point(10_000, 10, 0, points)["mean_us"]
    print(f"\nNaive baseline (recompute the closure of background + element, 10k background): "
          f"{naive:.0f} µs per time point; overlay: {fast:.2f} µs; ratio {naive / fast:.0f}x\n")
    print("## DOTR Fig. 5: number of Datalog rules (10k background)")
    print("| rules | kind | setup s | median µs | p99 µs | derived per point |")
    print("|---|---|---|---|---|---|")
    counts = [1, 10, 100, 1_000, 10_000] if args.quick else [1, 10, 100, 1_000, 10_000, 100_000]
    for n in counts:
        for kind in ("background-only", "stream-triggered"):
            extra, triggered = (max(0, n - 1), 0) if kind == "background-only" else (0, n)
            m = per_time_point(10_000, extra, triggered, points // 3)
            print(f"| {n:,} | {kind} | {m['setup_s']:.2f} | {m['median_us']:.2f} | {m['p99_us']:.2f} | "
                  f"{m['derived_per_point']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
