"""benchmarks/soak.py on a short stream, in process: killed with -9 mid-way and run again,
nothing lost or duplicated, every late and poison element counted (issue 12)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_soak_loses_nothing() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--elements", "6000",
                           "--late-every", "1000", "--poison-every", "2500", "--at", "3000"],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "killed: exit -9, 3,000 readings written" in done.stdout
    assert "| 6,007 | 6,000 | 3,000 | 5 (5) | 2 (2) | 0 | 0 |" in done.stdout
