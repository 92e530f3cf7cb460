"""Spark's keyed stage when a micro-batch touches many program keys (issue 18, goals 2-3).

``examples/fire`` over ``--rooms`` rooms: readings 100 ms apart, the room cycling, a
temperature reading in one pass over the rooms and a smoke reading in the next, so each
room's key holds state and fires. With ``--per-batch`` equal to ``--rooms`` every batch
touches every key. The stream runs twice in one SparkSession (the first run also starts
Python workers); per micro-batch, from batch 2 on: Spark's ``triggerExecution`` and
``addBatch``, and the stateful operator's ``allUpdatesTimeMs`` (the Python side of the
keyed stage, all partitions) and ``commitTimeMs``.

    PYTHONPATH=src python benchmarks/bench_spark_keys.py [--rooms 400] [--elements 4000] [--per-batch 400]

Run it on two commits (``git worktree``) for a before and after.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRE = ROOT / "examples" / "fire"


def reading(time_ms: int, n: int, room: str, kind: str) -> str:
    """One JSON Lines element: a reading of a sensor placed in ``room``."""
    body = f":r{n} a :{kind} ; :sensor :x{n} ; :value 70 . :x{n} :is_in_room :{room} ."
    return json.dumps({"time": time_ms, "graph": f"@prefix : <http://example.org/> . {body}"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=400)
    parser.add_argument("--elements", type=int, default=4000)
    parser.add_argument("--per-batch", type=int, default=400)
    args = parser.parse_args()

    from chronolog.program import Options, ProgramSpec
    from chronolog.spark.runner import run_spark
    from chronolog.spark.session import spark_session
    from chronolog.spark.sinks import CallbackSink

    spec = ProgramSpec("dotr", (FIRE / "fire.dotr").read_text(), str(FIRE / "fire.dotr"),
                       Options((str(FIRE / "background.ttl"),), (str(FIRE / "rooms.dl"),)))
    kinds = ("TempReading", "SmokeReading")
    lines = [reading(100 * i + 1, i, f"room{i % args.rooms}", kinds[(i // args.rooms) % 2])
             for i in range(args.elements)]
    spark_session("local[2]")
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp) / "stream.jsonl"
        stream.write_text("\n".join(lines) + "\n")
        print(f"fire over {args.rooms} rooms, {args.elements:,} elements, {args.per_batch} per batch, local[2]")
        for run in ("first (workers start)", "second"):
            outputs = [0]
            start = time.monotonic()
            summary = run_spark(spec, str(stream), CallbackSink(lambda b, d: outputs.__setitem__(0, outputs[0] + len(d))),
                                max_elements_per_batch=args.per_batch)
            wall = time.monotonic() - start
            steady = [p for p in summary.progress[2:] if p["numInputRows"]]
            mean = lambda f: statistics.mean(f(p) for p in steady)  # noqa: E731
            print(f"{run}: {wall:.1f} s, {summary.batches} batches, {outputs[0]:,} outputs; per batch from batch 2: "
                  f"trigger {mean(lambda p: p['durationMs']['triggerExecution']):.0f} ms, "
                  f"addBatch {mean(lambda p: p['durationMs']['addBatch']):.0f} ms, "
                  f"keyed updates {mean(lambda p: p['stateOperators'][0]['allUpdatesTimeMs']):.0f} ms, "
                  f"state commit {mean(lambda p: p['stateOperators'][0]['commitTimeMs']):.0f} ms")


if __name__ == "__main__":
    main()
