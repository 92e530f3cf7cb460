"""chronolog's Spark defaults: one keyed partition per local core, changelog checkpointing
of the RocksDB state store, --conf pairs parsed or refused clearly; a running session is
returned with its own settings."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from chronolog.errors import ChronologError
from chronolog.spark.session import default_conf, local_cores, parse_conf


@pytest.mark.parametrize("master, cores", [("local", 1), ("local[2]", 2), ("local[3,2]", 3),
                                           ("local[*]", os.cpu_count()), ("spark://127.0.0.1:7077", None),
                                           ("yarn", None)])
def test_local_cores(master: str, cores: int | None) -> None:
    assert local_cores(master) == cores


def test_shuffle_partitions_follow_the_local_cores(tmp_path: Path) -> None:
    assert default_conf(tmp_path, "local[2]")["spark.sql.shuffle.partitions"] == "2"
    assert default_conf(tmp_path, "local[1]")["spark.sql.shuffle.partitions"] == "1"
    assert default_conf(tmp_path, "spark://host:7077")["spark.sql.shuffle.partitions"] == "4"
    conf = default_conf(tmp_path)
    assert conf["spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"] == "true"
    assert conf["spark.sql.streaming.stateStore.providerClass"].endswith("RocksDBStateStoreProvider")


def test_parse_conf() -> None:
    assert parse_conf(["a.b=1", "c = x=y"]) == {"a.b": "1", "c": " x=y"}
    with pytest.raises(ChronologError, match="expected key=value"):
        parse_conf(["spark.master"])


@pytest.mark.spark
def test_a_running_session_is_returned_with_its_own_settings(spark) -> None:
    """The tests' session keeps its one keyed partition: asking again (as every run does)
    must not put chronolog's defaults (one per local core) over it."""
    from chronolog.spark.session import spark_session

    assert spark_session(None, None) is spark
    assert spark.conf.get("spark.sql.shuffle.partitions") == "1"
