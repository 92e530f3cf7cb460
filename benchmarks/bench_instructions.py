"""Instructions per graph of the in-process DOTR engine (callgrind; independent of load).

Runs the synthetic example's stream through ``chronolog.Engine`` under valgrind's callgrind
twice, without and with the stream, and prints the difference per graph: a figure that
does not move with the machine's load, for comparing two versions of chronolog (run it in
a checkout of each; ``PYTHONHASHSEED`` is fixed so the set iteration order, and so the
work, is the same from run to run).

    PYTHONPATH=src python benchmarks/bench_instructions.py
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import sys
from pathlib import Path
from chronolog.engine import Engine
from chronolog.streams import read_stream
folder = Path(sys.argv[1])
engine = Engine.from_file(next(folder.glob("*.dotr")), background=[str(p) for p in folder.glob("background.*")],
                          rules=[str(p) for p in folder.glob("*.dl")])
elements = list(read_stream(next(folder.glob("stream.*")), engine.dictionary))
for element in elements[:int(sys.argv[2])]:
    engine.push(element.time, element.triples)
print(len(elements[:int(sys.argv[2])]))
"""


def instructions(count: int, folder: Path) -> tuple[int, int]:
    """(instructions, graphs pushed) of one run under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONHASHSEED="0")
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                               os.path.realpath(sys.executable), "-c", CHILD, str(folder), str(count)],
                              capture_output=True, text=True, env=env, check=True)
    total = int(re.search(r"Collected : (\d+)", done.stderr).group(1))
    return total, int(done.stdout.strip())


def main() -> None:
    folder = ROOT / "examples" / "synthetic"
    base, _ = instructions(0, folder)
    full, graphs = instructions(1_000_000, folder)
    print(f"{graphs} graphs of {folder.name}: {(full - base) / graphs:,.0f} instructions per graph")


if __name__ == "__main__":
    main()
