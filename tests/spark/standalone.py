"""A real Spark standalone cluster on loopback, for tests: a master and N workers started
from the scripts inside the pyspark package, stopped (their whole process groups, executors
included) however the test ends."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

HOST = "127.0.0.1"


@dataclass
class Cluster:
    url: str  # spark://127.0.0.1:PORT
    env: dict[str, str]  # what a driver process should run with
    worker_dirs: list[Path]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _master_state(web_port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{web_port}/json/", timeout=2) as reply:
            return json.load(reply)
    except OSError:
        return None


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # its own group: the JVM and what it launched
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def standalone_cluster(root: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                       pythonpath: str = "", timeout: float = 120.0) -> Iterator[Cluster]:
    """Start ``spark-class ...Master`` and ``workers`` x ``...Worker`` on 127.0.0.1 under ``root``."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent  # this interpreter's pyspark, in a virtualenv too
    spark_class = str(spark_home / "bin" / "spark-class")
    env = dict(os.environ, SPARK_HOME=str(spark_home), SPARK_LOCAL_IP=HOST, PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOG_DIR=str(root / "logs"), PYTHONPATH=pythonpath)
    port, web_port = free_port(), free_port()
    url = f"spark://{HOST}:{port}"
    processes: list[subprocess.Popen] = []

    def start(name: str, *command: str) -> None:
        log = open(root / f"{name}.log", "wb")
        processes.append(subprocess.Popen([spark_class, *command], env=env, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True))
        log.close()

    def wait_for(condition, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            dead = [p for p in processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = "\n".join(f"--- {f.name}\n{f.read_text(errors='replace')[-2000:]}" for f in root.glob("*.log"))
                raise RuntimeError(f"the standalone cluster did not come up ({what})\n{logs}")
            time.sleep(0.5)

    root.mkdir(parents=True, exist_ok=True)
    worker_dirs = [root / f"worker{k}" for k in range(workers)]
    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(port),
              "--webui-port", str(web_port))
        wait_for(lambda: _master_state(web_port) is not None, "master")
        for k, work_dir in enumerate(worker_dirs):
            work_dir.mkdir(parents=True)
            start(f"worker{k}", "org.apache.spark.deploy.worker.Worker", "--host", HOST, "--cores", str(cores),
                  "--memory", memory, "--webui-port", str(free_port()), "--work-dir", str(work_dir), url)
        wait_for(lambda: (_master_state(web_port) or {}).get("aliveworkers", 0) >= workers, "workers")
        yield Cluster(url, env, worker_dirs)
    finally:
        for process in reversed(processes):
            _stop(process)
