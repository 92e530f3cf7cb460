"""chronolog through a real standalone cluster (a master and two workers on loopback), the
driver a separate process like spark-submit's: the closure and a streaming run equal their
in-process results."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Iterator

import pytest

from chronolog import cli
from standalone import HOST, Cluster, standalone_cluster
from test_closure import USER_DATA
from golden import canonical

# One round of derivations, but with what crosses process boundaries: a builtin filter,
# an assignment making literals on executors that the driver then encodes, a negation.
RULES = """PREFIX : <http://example.org/>
:Hot(?s) :- :temp(?s, ?v), ?v > 45.
:doubled(?s, ?w) :- :temp(?s, ?v), ?w = ?v * 2 + 0.5.
:Fine(?s) :- :temp(?s, ?v), not :Broken(?s).
"""

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SRC = str(ROOT / "src")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with standalone_cluster(tmp_path_factory.mktemp("cluster"), workers=2, pythonpath=SRC) as running:
        yield running


def cluster_conf(cluster: Cluster, pythonpath: str = SRC) -> list[str]:
    """The driver on loopback; one 1-core executor on each worker, both registered before the
    first job is scheduled; executors import this chronolog."""
    conf = [f"spark.driver.host={HOST}", f"spark.driver.bindAddress={HOST}", "spark.executor.memory=512m",
            "spark.cores.max=2", "spark.scheduler.minRegisteredResourcesRatio=1.0",
            f"spark.executorEnv.PYTHONPATH={pythonpath}"]
    return [arg for pair in conf for arg in ("--conf", pair)]


def applications(cluster: Cluster) -> set[Path]:
    return {app for work_dir in cluster.worker_dirs for app in work_dir.glob("app-*")}


def test_closure_on_a_standalone_cluster(cluster: Cluster, tmp_path: Path) -> None:
    data, rules = tmp_path / "data.ttl", tmp_path / "user.dl"
    data.write_text(USER_DATA)
    rules.write_text(RULES)
    expected, got = tmp_path / "inprocess.nt", tmp_path / "cluster.nt"
    assert cli.main(["materialize", str(data), "--rules", str(rules), "-o", str(expected), "--sort"]) == 0
    before = applications(cluster)
    command = [sys.executable, "-m", "chronolog.spark.command", str(data), "--rules", str(rules),
               "-o", str(got), "--sort", "--master", cluster.url, *cluster_conf(cluster)]
    run = subprocess.run(command, env=cluster.env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    for work_dir in cluster.worker_dirs:  # an executor of this application ran on each worker
        assert [app for app in work_dir.glob("app-*/*") if app.parent not in before], \
            f"no executor ran on {work_dir.name}"
    assert got.read_bytes() == expected.read_bytes()


def test_run_on_a_standalone_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """``chronolog run --master spark://...``: the synthetic example (many keys, background
    rules applied on the executors) in one micro-batch of two enrichment tasks (a micro-batch
    limit makes it a streaming query, not a bounded run's batch job), on one executor per worker; Spark's event log shows that both executors ran tasks of both
    stages (enrichment, and the keyed temporal state)."""
    example = ROOT / "examples" / "synthetic"
    expected, got, events = tmp_path / "inprocess.trig", tmp_path / "cluster.trig", tmp_path / "events"
    events.mkdir()
    assert cli.main(["run", str(example), "--runner", "inprocess", "-o", str(expected)]) == 0
    command = [sys.executable, "-m", "chronolog", "run", str(example), "-o", str(got), "--runner", "spark",
               "--partitions", "2", "--max-elements-per-batch", "100000", "--master", cluster.url, *cluster_conf(cluster),
               "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={events.as_uri()}",
               "--conf", "spark.eventLog.compress=false", "--conf", "spark.eventLog.rolling.enabled=false"]
    run = subprocess.run(command, cwd=tmp_path, env=cluster.env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    want = canonical(expected.read_bytes())
    assert len(want) > 50
    assert canonical(got.read_bytes()) == want
    logs = [f for f in events.iterdir() if f.is_file()]
    assert len(logs) == 1, logs
    application = logs[0].name  # the event log is named by the application id
    for work_dir in cluster.worker_dirs:
        assert list((work_dir / application).glob("*")), f"no executor of {application} on {work_dir.name}"
    stages: dict[int, str] = {}
    executors: dict[str, set[str]] = {"enrich": set(), "state": set()}
    for line in logs[0].read_text().splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerStageSubmitted":
            rdds = {rdd["Name"] for rdd in event["Stage Info"]["RDD Info"]}
            stages[event["Stage Info"]["Stage ID"]] = \
                "enrich" if "DataSourceRDD" in rdds else "state" if "StateStoreRDD" in rdds else "other"
        elif event["Event"] == "SparkListenerTaskEnd" and event["Task End Reason"]["Reason"] == "Success":
            executors.setdefault(stages[event["Stage ID"]], set()).add(event["Task Info"]["Executor ID"])
    assert len(executors["enrich"]) == len(executors["state"]) == 2, executors


SUBMIT = """import sys
from chronolog.cli import main
sys.exit(main())
"""


def test_spark_submit_with_an_archived_environment(cluster: Cluster, tmp_path: Path) -> None:
    """The route to a cluster of docs/spark.md: chronolog in a virtual environment shipped as an
    archive (``spark-submit --archives env.tar.gz#env``, ``PYSPARK_PYTHON=./env/bin/python``),
    run by spark-submit in client mode from the folder that holds ``env``, no PYTHONPATH.

    To stay cheap the environment reuses this interpreter's packages and gets chronolog as a
    copy of ``src/chronolog``, where docs/spark.md has ``pip install`` download pyspark, pyarrow,
    pandas and pyoxigraph into it. ``--system-site-packages`` reaches the base installation's
    packages only, so when pytest runs from a virtualenv a .pth file adds that one's."""
    import site

    import pyspark

    fire = ROOT / "examples" / "fire"
    expected, got = tmp_path / "inprocess.trig", tmp_path / "cluster.trig"
    assert cli.main(["run", str(fire), "--runner", "inprocess", "-o", str(expected)]) == 0
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    packages = next(venv.glob("lib/python*/site-packages"))
    (packages / "outer.pth").write_text("".join(f"{path}\n" for path in site.getsitepackages()))
    shutil.copytree(ROOT / "src" / "chronolog", packages / "chronolog", ignore=shutil.ignore_patterns("__pycache__"))
    with tarfile.open(tmp_path / "env.tar.gz", "w:gz") as tar:
        tar.add(venv, arcname=".")
    (tmp_path / "submit.py").write_text(SUBMIT)
    env = {k: v for k, v in cluster.env.items() if k not in ("PYTHONPATH", "PYSPARK_DRIVER_PYTHON")}
    env["PYSPARK_PYTHON"] = "./env/bin/python"
    before = applications(cluster)
    spark_submit = str(Path(pyspark.__file__).parent / "bin" / "spark-submit")
    command = [spark_submit, "--master", cluster.url, "--archives", "env.tar.gz#env",
               *cluster_conf(cluster, pythonpath=""), "submit.py",
               "run", str(fire), "-o", str(got), "--runner", "spark"]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert canonical(got.read_bytes()) == canonical(expected.read_bytes())
    apps = applications(cluster) - before
    assert len(apps) == 2, f"not one application with an executor on each worker: {apps}"
    for app in apps:  # each executor ran in a folder where the archive was unpacked as env/
        assert [os.fspath(p) for p in app.glob("*/env/bin/python")], f"no env/ unpacked in {app}"
