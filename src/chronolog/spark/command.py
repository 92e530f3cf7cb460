"""``chronolog materialize --runner spark``: the background closure as a Spark batch job.

The input files are parsed on the driver (``iter_encoded_triples``: pyoxigraph, streamed,
one TermDictionary), sent to Spark once as an Arrow table of ids, closed there, and written
as N-Triples (streamed back to the driver, serialized by ``write_triples``) and/or as a
Parquet closure folder (written by the executors) that ``run`` loads.
"""
from __future__ import annotations

import argparse
import sys
import time
from array import array

from chronolog.progress import Progress

RUNNERS = ("inprocess", "spark")


def _add_session_arguments(group: argparse._ArgumentGroup) -> None:
    """--master and --conf: how every Spark command gets its session."""
    group.add_argument("--master", metavar="URL",
                       help="Spark master: local[*] (default), local[N], spark://HOST:PORT")
    group.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                       help="a Spark setting, such as spark.sql.shuffle.partitions=16; repeatable")


def add_materialize_spark_arguments(parser: argparse.ArgumentParser) -> None:
    """The Spark options of ``materialize``, added to its parser (which has DATA, --rules, -o)."""
    group = parser.add_argument_group("runner")
    group.add_argument("--runner", choices=RUNNERS, default="inprocess",
                       help="where the closure is computed: in this process (default) or on Spark")
    _add_session_arguments(group)
    group.add_argument("--parquet", metavar="DIR",
                       help="also write the closure as a Parquet folder that `chronolog run` loads "
                            "(with --parquet and no -o, no N-Triples are written)")


def build_parser() -> argparse.ArgumentParser:
    """The command on its own, for ``spark-submit .../chronolog/spark/command.py DATA ...``
    (``chronolog materialize --runner spark`` takes the same arguments)."""
    parser = argparse.ArgumentParser(prog="chronolog-materialize-spark",
                                     description="The closure of RDF data under rules, computed on Spark.")
    parser.add_argument("data", nargs="+", metavar="DATA", help="RDF files (.nt .ttl .n3 .trig .nq .rdf .owl)")
    parser.add_argument("--rules", action="append", default=[], metavar="RULES",
                        help="a built-in rule set (rdfs, owl-rl) or a .dl file; repeatable")
    parser.add_argument("-o", "--output", metavar="OUT", help="N-Triples (or --format) output file; default stdout")
    parser.add_argument("--format", help="output format (nt, ttl, nq, trig); default from -o, else N-Triples")
    parser.add_argument("--sort", action="store_true", help="sort the output (deterministic, slower)")
    add_materialize_spark_arguments(parser)
    parser.set_defaults(runner="spark")
    return parser


def main(argv: list[str] | None = None) -> int:
    from chronolog.errors import ChronologError

    args = build_parser().parse_args(argv)
    try:
        return materialize_spark_command(args)
    except ChronologError as exc:
        print(exc if isinstance(exc, SyntaxError) else f"chronolog: {exc}", file=sys.stderr)
        return 2


def _load(paths: list[str], dictionary, progress: Progress) -> "object":
    """The input's encoded triples as an Arrow table (parsed here, on the driver)."""
    import pyarrow as pa

    from chronolog.formats import iter_encoded_triples

    s, p, o = array("q"), array("q"), array("q")
    start = time.monotonic()
    for path in paths:
        for n, (a, b, c) in enumerate(iter_encoded_triples(path, dictionary), 1):
            s.append(a)
            p.append(b)
            o.append(c)
            if not n & 0x3FFF:
                progress.update(f"parsing {path}: {n:,} triples ({n / max(1e-9, time.monotonic() - start):,.0f}/s)")
    progress.done(f"parsed {len(s):,} triples in {time.monotonic() - start:.1f} s")
    return pa.table({"s": pa.array(s, type=pa.int64()), "p": pa.array(p, type=pa.int64()),
                     "o": pa.array(o, type=pa.int64())})


def materialize_spark_command(args: argparse.Namespace) -> int:
    """Run ``materialize`` on Spark; ``args`` as parsed by the materialize parser."""
    from pyspark.sql import SparkSession

    from chronolog.datalog import load_rules
    from chronolog.formats import rdf_only, write_triples
    from chronolog.spark.closure import RoundReport, spark_closure
    from chronolog.spark.parquet import write_closure
    from chronolog.spark.session import parse_conf, spark_session
    from chronolog.terms import TermDictionary

    progress = Progress()
    conf = parse_conf(args.conf)
    dictionary = TermDictionary()
    program = load_rules(args.rules, dictionary)
    table = _load(args.data, dictionary, progress)
    owned = SparkSession.getActiveSession() is None  # stop only a session started here
    start = time.monotonic()
    progress.update("starting Spark ...", force=True)
    spark = spark_session(args.master, conf)
    progress.done(f"Spark {spark.version} on {spark.sparkContext.master} in {time.monotonic() - start:.1f} s")

    def report(r: RoundReport) -> None:
        strata = f"stratum {r.strata[0]}" if r.strata[0] == r.strata[1] else f"strata {r.strata[0]}-{r.strata[1]}"
        progress.done(f"round {r.total_rounds} (group {r.group}/{r.groups}, {strata}, round {r.round}): "
                      f"{r.rules_run} rule plans, {r.new:,} new facts in {r.seconds:.1f} s")

    try:
        start = time.monotonic()
        closure = spark_closure(spark, program, dictionary, spark.createDataFrame(table), report)
        progress.done(f"closure: {closure.sizes.get('triple', 0):,} triples in {closure.rounds} rounds, "
                      f"{time.monotonic() - start:.1f} s")
        for label, fact in closure.diagnostics():
            terms = " ".join(str(dictionary.decode(t)) for t in fact)
            print(f"chronolog: inconsistency [{label}]: {terms}", file=sys.stderr)
        if args.parquet:
            write_closure(closure, args.parquet)
        if args.output is not None or not args.parquet:
            generalized: list[tuple[int, int, int]] = []
            triples = rdf_only(closure.facts("triple"), dictionary, generalized)  # type: ignore[arg-type]
            fmt, sort = getattr(args, "format", None), getattr(args, "sort", False)
            if args.output in (None, "-"):
                write_triples(triples, dictionary, sys.stdout.buffer, format=fmt or "nt", sort=sort)
                sys.stdout.flush()
            else:
                write_triples(triples, dictionary, args.output, format=fmt, sort=sort)
            if generalized:
                print(f"chronolog: {len(generalized):,} derived generalized triples (literal subjects) "
                      "are not RDF and were not written", file=sys.stderr)
    finally:
        if owned:
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())


def add_run_spark_arguments(parser: argparse.ArgumentParser) -> None:
    """The Spark options of ``run`` (which has PROGRAM, --stream, --runner, -o, --format)."""
    group = parser.add_argument_group("spark runner")
    _add_session_arguments(group)
    group.add_argument("--checkpoint", metavar="DIR",
                       help="checkpoint folder: a stopped or killed run restarts where it left off, and file "
                            "outputs hold each detection exactly once (default: a temporary folder, removed at "
                            "the end); it belongs to one program and its options")
    group.add_argument("--fresh", action="store_true",
                       help="discard what --checkpoint holds and start the run over")
    group.add_argument("--trigger", default=None, metavar="WHEN",
                       help="available-now (process what is there, then stop; the default for a stream file) "
                            "or an interval such as '2 seconds' (the default for a directory: 1 second)")
    group.add_argument("--max-elements-per-batch", type=int, default=0, metavar="N",
                       help="at most N stream elements per micro-batch (default: what is available, up to 50,000 "
                            "past the last batch: the driver holds a bounded part of a stream file)")
    group.add_argument("--partitions", type=int, default=0, metavar="N",
                       help="enrichment tasks per micro-batch (default: Spark's default parallelism)")
    group.add_argument("--rate", type=float, default=0.0, metavar="N",
                       help="replay the stream at N elements per second (default: as fast as possible)")


def _trigger(given: str | None) -> str | None:
    """``--trigger``: available-now, or an interval ("2 seconds", "500 ms", "PT1S") as Spark
    takes it; a clear error otherwise."""
    from chronolog.errors import ChronologError
    from chronolog.timeunits import TimeFormatError, parse_duration

    if given is None or given == "available-now":
        return given
    try:
        ms = parse_duration(given.replace("seconds", "s").replace("second", "s").replace("minutes", "min")
                            .replace("minute", "min").replace("milliseconds", "ms").replace("millisecond", "ms"))
    except TimeFormatError:
        ms = None
    if not ms or given.strip().isdigit():
        raise ChronologError(f"--trigger {given!r}: expected available-now or an interval such as '2 seconds', "
                             "'500 ms' or 'PT1S'")
    return f"{ms} milliseconds"


def _summary(summary, late) -> str:
    """The closing line of a Spark run."""
    kept = "dropped" if late == "drop" else "refused" if late == "error" else f"written to {late.file.path}"
    return (f"{summary.outputs:,} outputs in {summary.batches:,} batches, {summary.late:,} late elements {kept}, "
            f"{len(summary.errors):,} malformed, {summary.seconds:.1f} s")


def run_spark_command(args: argparse.Namespace, spec, sources: dict[str, str], monitor=None) -> int:  # type: ignore[no-untyped-def]
    """``chronolog run --runner spark`` of the program ``spec`` over ``sources`` (by stream
    name); ``monitor``: the live view's (``--ui``)."""
    import os
    import shutil

    from chronolog.lang.registry import compile_program
    from chronolog.program.writers import output_format
    from chronolog.errors import ChronologError
    from chronolog.run_io import LATE_MODES
    from chronolog.spark.runner import RunStopped, run_spark
    from chronolog.spark.session import parse_conf
    from chronolog.spark.sinks import LateFileSink, ProvenanceSink, QuarantineFileSink, sink_for
    from chronolog.spark.source import check_stream_path
    from chronolog.streams import detect_stream_format
    from chronolog.timeunits import parse_duration, unit_ms

    for source in sources.values():
        check_stream_path(source)
    if args.fresh:
        if args.checkpoint is None:
            raise ChronologError("--fresh discards a --checkpoint folder: give one")
        shutil.rmtree(args.checkpoint, ignore_errors=True)
    program = compile_program(spec)  # errors, early
    program.plan()  # a program that cannot run on Spark says so before Spark starts
    for warning in program.warnings:
        print(warning, file=sys.stderr)
    files = [s for s in sources.values() if os.path.isfile(s)]
    parquet = args.output not in (None, "-") and args.output.endswith(".parquet")
    fmt = output_format(program.output_kind, None if parquet else args.output, args.format,
                        detect_stream_format(files[0]) if files else None)
    trigger = _trigger(args.trigger) or ("available-now" if len(files) == len(sources) else "1 second")
    late = args.late if args.late in LATE_MODES else LateFileSink(args.late, detect_stream_format(args.late))
    if args.on_error == "skip" and args.quarantine is None:
        raise ChronologError("--on-error skip needs --quarantine FILE (where the skipped elements are kept)")
    quarantine = QuarantineFileSink(args.quarantine) if args.quarantine else None
    progress = Progress()
    sink = sink_for(args.output, program.output_kind, fmt)
    if args.provenance:
        sink = ProvenanceSink(sink, args.provenance)
    try:
        summary = run_spark(
            spec, sources, sink, master=args.master,
            conf=parse_conf(args.conf), checkpoint=args.checkpoint, trigger=trigger, late=late,
            lateness=parse_duration(args.lateness, ms_per_unit=unit_ms(spec.options.time_unit)),
            on_error=args.on_error, quarantine=quarantine,
            max_elements_per_batch=args.max_elements_per_batch, partitions=args.partitions, rate=args.rate,
            progress=progress, monitor=monitor, program=program)
    except RunStopped as stopped:
        progress.done(_summary(stopped.summary, late))
        if monitor is not None:
            monitor.finish(f"stopped: {stopped}")
        raise
    progress.done(_summary(summary, late))
    if monitor is not None:
        monitor.finish(_summary(summary, late))
    if summary.late and late != "error":
        where = "dropped" if late == "drop" else f"written to {late.file.path}"
        print(f"chronolog: {summary.late:,} late element{'s' if summary.late != 1 else ''} {where}", file=sys.stderr)
    if args.on_error == "skip" and summary.errors:
        print(f"chronolog: {len(summary.errors):,} malformed element{'s' if len(summary.errors) != 1 else ''} "
              f"skipped, kept in {args.quarantine}", file=sys.stderr)
    if args.stats:
        print(f"{summary.batches:,} batches, {summary.input_rows:,} elements, {summary.outputs:,} outputs, "
              f"{summary.late:,} late, {len(summary.errors):,} malformed; at most {summary.max_state_rows:,} "
              f"state rows; {summary.seconds:.1f} s", file=sys.stderr)
    return 0
