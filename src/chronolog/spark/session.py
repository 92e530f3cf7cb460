"""The one way chronolog gets a SparkSession, configured as DESIGN.md section 4 says.

Every Spark entry point (the ``materialize`` batch job now, the streaming runner later,
the tests) goes through :func:`spark_session`, so the interpreter pinning, the small
shuffle, the RocksDB state store and the quiet console are set in one place.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from chronolog.errors import ChronologError

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
DEFAULT_MASTER = "local[*]"

# Spark logs through log4j2; at its default level (WARN) the console fills with start-up
# warnings before ``setLogLevel`` can run, so the driver JVM is started with this file.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
# Spark's own loggers configured explicitly, or its shell mode resets the level to warn
logger.spark.name = org.apache.spark
logger.spark.level = error
"""


def parse_conf(pairs: Sequence[str]) -> dict[str, str]:
    """``key=value`` strings (``--conf`` arguments) as a dict; a clear error otherwise.

    >>> parse_conf(["spark.sql.shuffle.partitions=8", "spark.executor.memory=2g"])
    {'spark.sql.shuffle.partitions': '8', 'spark.executor.memory': '2g'}
    """
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ChronologError(f"--conf {pair!r}: expected key=value, such as spark.sql.shuffle.partitions=8")
        out[key.strip()] = value
    return out


def local_dir() -> Path:
    """A per-user scratch folder for Spark's warehouse, shuffle files and log config."""
    path = Path(tempfile.gettempdir()) / f"chronolog-spark-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def local_cores(master: str) -> int | None:
    """The cores a ``local``, ``local[N]`` or ``local[*]`` master runs on; None for a cluster.

    >>> local_cores("local[2]"), local_cores("local"), local_cores("spark://host:7077")
    (2, 1, None)
    """
    if master == "local":
        return 1
    if master.startswith("local[") and master.endswith("]"):
        count = master[6:-1].split(",")[0]  # local[N, maxFailures]
        if count == "*":
            return os.cpu_count() or 1
        return int(count) if count.isdigit() else None
    return None


def default_conf(scratch: Path, master: str = DEFAULT_MASTER) -> dict[str, str]:
    """chronolog's Spark settings; ``--conf`` overrides any of them."""
    log4j = scratch / "log4j2.properties"
    if not log4j.exists() or log4j.read_text() != _LOG4J2:
        log4j.write_text(_LOG4J2)
    java_log = f"-Dlog4j2.configurationFile=file:{log4j}"
    return {
        # Small data per batch: Spark's default of 200 shuffle partitions is pure overhead.
        # Each keyed partition of the temporal stage costs a Python runner and a state store
        # commit per micro-batch, so in local mode one per core (benchmarks/RESULTS.md: on
        # local[2], 1 to 4 partitions within noise of each other, 8 the slowest every run).
        "spark.sql.shuffle.partitions": str(local_cores(master) or 4),
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
        # A commit writes the batch's changes, not a RocksDB checkpoint of the whole store
        # (state commit 0.9-1.1 s to 0.4-0.5 s per batch over 4 partitions, measured)
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        # Adaptive execution runs every shuffle stage as a job of its own: on the closure's
        # many small joins that latency dominates (2x slower measured); streaming queries
        # never use it. Broadcasts are chosen by the closure from its own fact counts.
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
        # Constraint propagation over the closure's unions of many rule plans is slow and, on
        # Spark 4.3, fails on some of them ("key not found" in Union.rewriteConstraints).
        "spark.sql.constraintPropagation.enabled": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.warehouse.dir": str(scratch / "warehouse"),
        "spark.local.dir": str(scratch / "local"),
        "spark.driver.extraJavaOptions": java_log,
        "spark.executor.extraJavaOptions": java_log,
    }


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None,
                  app_name: str = "chronolog"):  # -> pyspark.sql.SparkSession
    """Get or build the SparkSession: ``master`` (default ``local[*]``) and ``conf`` overrides.

    Python workers run this interpreter (``PYSPARK_PYTHON``) unless the environment already
    names one, as a cluster shipping an archived environment does. An existing session is
    returned as is: Spark's static settings cannot change once the JVM runs.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    existing = SparkSession.getActiveSession()
    if existing is not None:  # a builder would set chronolog's defaults over the session's own settings
        return existing
    submitted: set[str] = set()
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        # Under spark-submit (its JVM is already running): its --master and --conf settings
        # win over chronolog's defaults, as a builder setting would override them.
        from pyspark import SparkConf, SparkContext

        SparkContext._ensure_initialized()  # connect to that JVM, whose properties SparkConf reads
        submitted = {key for key, _ in SparkConf().getAll()}
    settings = {key: value for key, value in default_conf(local_dir(), master or DEFAULT_MASTER).items() if key not in submitted}
    settings.update(conf or {})
    builder = SparkSession.builder.appName(app_name)
    if master or "spark.master" not in submitted:
        builder = builder.master(master or DEFAULT_MASTER)
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _jvm_output_to(local_dir() / "spark.log"):
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


@contextlib.contextmanager
def _jvm_output_to(log: Path) -> Iterator[None]:
    """Start the JVM with its stderr on ``log``: the JVM and the Python workers it forks
    print start-up banners and per-worker notes there that log4j settings do not reach.
    Failures still reach the user, as the exceptions py4j raises in this process."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(log, "ab") as target:
            os.dup2(target.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
