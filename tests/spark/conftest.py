"""One SparkSession for every Spark test: starting Spark costs seconds, so it happens once."""
from __future__ import annotations

import sys
import time
from typing import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from chronolog.spark.session import spark_session

    start = time.monotonic()
    session = spark_session("local[2]", {"spark.sql.shuffle.partitions": "1"})
    print(f"\nSparkSession started in {time.monotonic() - start:.1f} s", file=sys.stderr)
    yield session
    session.stop()
