"""Temporal engine state stays bounded over a long stream: stored events and rate, 10 million events.

Run: ``PYTHONPATH=src python benchmarks/bench_cep_state.py [--events N] [--chunk N]``. The
workload is the bounded-state test's (tests/cep/test_state.py: two rules with 1-minute
horizons, consumption, a negation, a parameter index; one event per millisecond). After
each chunk the stored events are counted; they must stay under the bound the horizons
allow (about 60k events per type), however long the stream. Exits 1 if they do not.
"""
from __future__ import annotations

import argparse
import platform
import time

from from_tests import load

state = load("cep/test_state.py")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000, help="stream length (default 10,000,000)")
    parser.add_argument("--chunk", type=int, default=100_000, help="events per push_batch (default 100,000)")
    args = parser.parse_args()
    engine = state.sensor_engine()
    peak = 0
    start = time.process_time()
    for first in range(0, args.events, args.chunk):
        engine.push_batch(state.stream(args.chunk, first))
        peak = max(peak, engine.stored_event_count())
    seconds = time.process_time() - start
    print(f"# machine: {platform.machine()}, Python {platform.python_version()}")
    print(f"# command: PYTHONPATH=src python benchmarks/bench_cep_state.py --events {args.events} --chunk {args.chunk}")
    print("| events | peak stored | bound | CPU s | events/s |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {args.events:,} | {peak:,} | {state.BOUND:,} | {seconds:.1f} | {args.events / seconds:,.0f} |")
    return 0 if peak < state.BOUND else 1


if __name__ == "__main__":
    raise SystemExit(main())
