"""The Spark source's driver memory as the stream file grows: peak RSS reading it whole vs in steps.

Run: ``PYTHONPATH=src python benchmarks/bench_source_memory.py [--elements N,N,...]`` (or
``chronolog bench source-memory ...``). Writes a JSON Lines stream of sensor readings with
fresh observation IRIs (bench_memory's stream), then, in a fresh process per row, drives the
source's reader (``format("chronolog")``) through its available-now micro-batches as Spark
does (latestOffset, partitions, read, commit), without a session: what the driver holds of
the stream, and its peak RSS. ``readAhead`` = the file's length reads it whole, as the
source did before issue 12 item 9; the default reads at most 50,000 elements past the last
committed batch. Peak memory must not grow with the file size.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memory import lines, peak_rss_mb  # noqa: E402  (the same stream as the in-process benchmark)


def drive(path: str, read_ahead: int) -> dict:
    """Every available-now batch of the stream file; rows handed out, batches, peak RSS."""
    from chronolog.spark.source import _source_classes

    options = {"streams": json.dumps({"": path}), "readAhead": str(read_ahead)}
    reader = _source_classes()(options).streamReader(None)
    reader.prepareForTriggerAvailableNow()
    offset, rows, batches, held = reader.initialOffset(), 0, 0, 0
    began = time.perf_counter()
    while True:
        end = reader.latestOffset(offset, reader.getDefaultReadLimit())
        if end == offset:
            break
        held = max(held, sum(len(s.records) for s in reader.scanners.values()))
        rows += sum(1 for part in reader.partitions(offset, end) for _ in reader.read(part))
        reader.commit(end)
        offset, batches = end, batches + 1
    return {"rows": rows, "batches": batches, "held": held, "rss": peak_rss_mb(),
            "s": time.perf_counter() - began}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", default="200000,1000000", help="stream lengths, comma-separated")
    parser.add_argument("--drive", nargs=2, metavar=("FILE", "READ_AHEAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        print(json.dumps(drive(args.drive[0], int(args.drive[1]))))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}\n")
    print("| elements | file MB | reading | batches | most elements held | driver peak RSS MB | s |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for count in (int(n) for n in args.elements.split(",")):
            path = Path(folder) / f"s{count}.jsonl"
            with open(path, "wb") as out:
                out.writelines(lines(count))
            size = path.stat().st_size / 2**20
            for label, ahead in (("whole", count + 1), ("in steps", 50_000)):
                done = subprocess.run([sys.executable, __file__, "--drive", str(path), str(ahead)],
                                      capture_output=True, text=True, check=True)
                r = json.loads(done.stdout)
                assert r["rows"] == count + 1, r  # every element, and the end row
                print(f"| {count:,} | {size:.0f} | {label} | {r['batches']} | {r['held']:,} | {r['rss']:.0f} "
                      f"| {r['s']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
