"""Shared test set-up: the ``shared`` fixture (the shared data folder or a skip naming it)
and the ``spark`` fixture (one SparkSession for every Spark test: starting Spark costs
seconds, so it happens once).

Hypothesis needs no profile here: with ``CI`` set it loads its built-in ``ci`` profile
(derandomize=True, database=None) on import, before any test module builds its
``@settings``, which inherit it; so CI runs the same examples every time and local runs
keep exploring."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from shared_data import shared_path


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_path()


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from chronolog.spark.session import spark_session

    start = time.monotonic()
    session = spark_session("local[2]", {"spark.sql.shuffle.partitions": "1"})
    print(f"\nSparkSession started in {time.monotonic() - start:.1f} s", file=sys.stderr)
    yield session
    session.stop()
