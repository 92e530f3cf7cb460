"""``chronolog bench NAME [...]`` (DESIGN.md section 3): runs benchmarks/bench_NAME.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chronolog import cli

ROOT = Path(__file__).resolve().parents[1]


def chronolog(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "CHRONOLOG_BENCHMARKS"}
    environ.update(PYTHONPATH=str(ROOT / "src"), **env)
    return subprocess.run([sys.executable, "-m", "chronolog", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=environ)


def test_bench_runs_a_benchmark_with_its_arguments() -> None:
    done = chronolog("bench", "dotr", "--only", "fig6", "--lengths", "2", "--points", "200")
    assert done.returncode == 0, done.stderr
    assert "## Fig. 6: pattern length" in done.stdout
    assert "| 2 | last |" in done.stdout and "| 2 | each |" in done.stdout


def test_bench_passes_options_through() -> None:
    done = chronolog("bench", "dotr", "--help")
    assert done.returncode == 0 and "--only" in done.stdout and "bench_dotr.py" in done.stdout


def test_bench_lists_the_benchmarks() -> None:
    done = chronolog("bench")
    assert done.returncode == 0, done.stderr
    names = {line.split()[0] for line in done.stdout.splitlines()[1:]}
    assert names == {p.stem[len("bench_"):] for p in (ROOT / "benchmarks").glob("bench_*.py")}
    assert "DOTR end to end" in done.stdout


def test_unknown_benchmark_lists_them() -> None:
    done = chronolog("bench", "nope")
    assert done.returncode == 2
    assert "no benchmark 'nope'" in done.stderr and "  dotr " in done.stderr


def test_no_benchmarks_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    done = chronolog("bench", "dotr", CHRONOLOG_BENCHMARKS=str(tmp_path))
    assert done.returncode == 2 and f"no benchmarks in {tmp_path}" in done.stderr
    # installed without the source tree: no benchmarks/ next to the package nor here
    monkeypatch.delenv("CHRONOLOG_BENCHMARKS", raising=False)
    monkeypatch.setattr(cli, "__file__", str(tmp_path / "lib" / "site-packages" / "chronolog" / "cli.py"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["bench", "dotr"]) == 2
    assert "no benchmarks in this installation" in capsys.readouterr().err


def test_bench_names_may_use_hyphens() -> None:
    done = chronolog("bench", "spark-stream", "--help")
    assert done.returncode == 0 and "bench_spark_stream.py" in done.stdout, done.stderr


def test_bench_rsepql_runs_with_minimal_sizes() -> None:
    done = chronolog("bench", "rsepql", "--events", "300", "--repeat", "1")
    assert done.returncode == 0, done.stderr
    assert "| RSEP-QL | SEQ | UNRESTRICTED |" in done.stdout and "| DOTR | EACH A WITHIN 1000 |" in done.stdout


def test_barbieri_fig7_runs_small(tmp_path: Path) -> None:
    """The Fig. 7 benchmark at its smallest: the three strategies' table, the crossovers
    and the flat-window table (the plot with or without matplotlib)."""
    png = tmp_path / "fig7.png"
    done = chronolog("bench", "barbieri-fig7", "--trees", "1", "--depth", "4", "--streamed", "0.5", "--window", "20",
                     "--rates", "1,20", "--flat-rate", "1", "--plot", str(png))
    assert done.returncode == 0, done.stderr
    assert "| expiration faster than naive up to | 13% |" in done.stdout
    assert "## Slide cost as the window grows" in done.stdout
    assert png.exists() or "Plot skipped" in done.stdout


def test_windows_runs_small() -> None:
    done = chronolog("bench", "windows", "--per-window", "20", "--windows", "3", "--repeats", "1")
    assert done.returncode == 0, done.stderr
    assert "| [RANGE 200ms STEP 200ms] tumbling | in-process | maintained | 60 |" in done.stdout
    assert "| [RANGE 200ms STEP 20ms] sliding, STEP = RANGE/10 | in-process | evaluated in full | 60 |" in done.stdout


def test_bench_epsparql_runs_small() -> None:
    done = chronolog("bench", "epsparql", "--events", "300", "--bounds", "40", "--lengths", "100", "--repeat", "1")
    assert done.returncode == 0, done.stderr
    assert "| PT40S |" in done.stdout and "## The stream grows 10x, bound PT40S" in done.stdout


def test_ui_runs_small() -> None:
    done = chronolog("bench", "ui", "--points", "20,40", "--repeats", "1", "--workloads", "synthetic")
    assert done.returncode == 0, done.stderr
    assert "| synthetic | --ui --provenance | 40 |" in done.stdout and "| synthetic | plain |" in done.stdout
    assert "CPU vs plain" in done.stdout
