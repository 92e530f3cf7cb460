"""The closure through a real standalone cluster (a master and two workers on loopback)
equals the in-process closure: the driver is a separate process, like spark-submit's."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chronolog import cli
from standalone import HOST, standalone_cluster
from test_closure import USER_DATA

# One round of derivations, but with what crosses process boundaries: a builtin filter,
# an assignment making literals on executors that the driver then encodes, a negation.
RULES = """PREFIX : <http://example.org/>
:Hot(?s) :- :temp(?s, ?v), ?v > 45.
:doubled(?s, ?w) :- :temp(?s, ?v), ?w = ?v * 2 + 0.5.
:Fine(?s) :- :temp(?s, ?v), not :Broken(?s).
"""

pytestmark = pytest.mark.spark

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_closure_on_a_standalone_cluster(tmp_path: Path) -> None:
    data, rules = tmp_path / "data.ttl", tmp_path / "user.dl"
    data.write_text(USER_DATA)
    rules.write_text(RULES)
    expected, got = tmp_path / "inprocess.nt", tmp_path / "cluster.nt"
    assert cli.main(["materialize", str(data), "--rules", str(rules), "-o", str(expected), "--sort"]) == 0
    with standalone_cluster(tmp_path / "cluster", workers=2, pythonpath=SRC) as cluster:
        command = [sys.executable, "-m", "chronolog.spark.command", str(data), "--rules", str(rules),
                   "-o", str(got), "--sort", "--master", cluster.url,
                   "--conf", f"spark.driver.host={HOST}", "--conf", f"spark.driver.bindAddress={HOST}",
                   "--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=2",
                   "--conf", f"spark.executorEnv.PYTHONPATH={SRC}"]
        run = subprocess.run(command, env=cluster.env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        for work_dir in cluster.worker_dirs:  # an executor ran on each worker
            assert list(work_dir.glob("app-*/*")), f"no executor ran on {work_dir.name}"
    assert got.read_bytes() == expected.read_bytes()
