"""The ``chronolog`` command."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import traceback
from functools import partial
from pathlib import Path
from typing import Sequence

from chronolog import __version__
from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.spark.command import add_materialize_spark_arguments, add_run_spark_arguments
from chronolog.sparql.command import add_query_arguments, query_command


def _materialize(args: argparse.Namespace) -> int:
    if args.runner == "spark":
        from chronolog.spark.command import materialize_spark_command

        return materialize_spark_command(args)
    from chronolog.datalog import reasoner_for
    from chronolog.formats import rdf_only, write_triples
    from chronolog.progress import Progress
    from chronolog.terms import TermDictionary

    dictionary = TermDictionary()
    reasoner = reasoner_for(args.data, args.rules, dictionary, Progress())
    view = reasoner.background_view
    for label, fact in reasoner.diagnostics(view):
        terms = " ".join(str(dictionary.decode(t)) for t in fact)
        print(f"chronolog: inconsistency [{label}]: {terms}", file=sys.stderr)
    generalized: list[tuple[int, int, int]] = []
    triples = rdf_only(view.scan("triple"), dictionary, generalized)
    if args.output in (None, "-"):
        write_triples(triples, dictionary, sys.stdout.buffer, format=args.format or "nt", sort=args.sort)
        sys.stdout.flush()
    else:
        write_triples(triples, dictionary, args.output, format=args.format, sort=args.sort)
    if generalized:
        print(f"chronolog: {len(generalized):,} derived generalized triples (literal subjects) "
              "are not RDF and were not written", file=sys.stderr)
    return 0


def _example_dir(args: argparse.Namespace) -> None:
    """``chronolog run DIR``: an example directory holds one program (of any language),
    one stream file (.trig or .jsonl), and optionally background files (background.*)
    and rules (*.dl)."""
    from chronolog.lang.registry import languages

    folder = Path(args.program)
    if not folder.is_dir():
        return
    extensions = {e for language in languages().values() for e in language.extensions}
    programs = sorted(p for p in folder.iterdir() if p.suffix in extensions)
    if len(programs) != 1:
        raise ChronologError(f"{folder}: an example directory holds exactly one program "
                             f"({', '.join(sorted(extensions))}), found {len(programs)}")
    args.program = str(programs[0])
    if not args.stream:
        streams = sorted(p for p in folder.iterdir() if p.suffix in (".trig", ".jsonl"))
        if len(streams) != 1:
            raise ChronologError(f"{folder}: expected one stream file (.trig or .jsonl), found {len(streams)}")
        args.stream = [str(streams[0])]
    if not args.background:
        args.background = [str(p) for p in sorted(folder.glob("background.*"))]
    if not args.rules:
        args.rules = [str(p) for p in sorted(folder.glob("*.dl"))]


def stream_sources(given: Sequence[str]) -> dict[str, str]:
    """``--stream [NAME=]SOURCE`` options by name (``""``: unnamed). A name is an IRI or a
    prefixed-looking word before the first ``=``; a source path may itself hold ``=``
    only when it is named."""
    sources: dict[str, str] = {}
    for item in given:
        name, sep, source = item.partition("=")
        if not sep or not name or "/" in name and not name.startswith(("http:", "https:", "urn:", "<")):
            name, source = "", item
        name = name.strip("<>")
        if name in sources:
            raise ChronologError(f"--stream {name or '(unnamed)'} is given twice")
        sources[name] = source
    return sources


def _options(args: argparse.Namespace) -> object:
    from chronolog.program import Options

    return Options(tuple(args.background), tuple(args.rules), args.time_unit, args.policy, args.maintenance,
                   args.max_derived, getattr(args, "provenance", None) is not None)


def _run(args: argparse.Namespace) -> int:
    from chronolog.engine import Engine
    from chronolog.heap import freeze_compiled
    from chronolog.program import explanation
    from chronolog.lang.registry import load_spec
    from chronolog.program.writers import open_output_writer, output_format
    from chronolog.progress import Progress
    from chronolog.run_io import (
        LATE_MODES, atomic_file, check_inputs, check_output, close_policies, error_policy, late_policy,
    )
    from chronolog.streams import check_stream_file, detect_stream_format
    from chronolog.timeunits import parse_duration

    _example_dir(args)
    if not args.stream:
        raise ChronologError("run needs --stream [NAME=]SOURCE (or an example directory)")
    sources = stream_sources(args.stream)
    spec = load_spec(args.program, args.lang, _options(args))
    inputs = [*sources.values(), args.program, *args.background, *args.rules]
    check_inputs(args.background, "--background")
    check_output(args.output, inputs)
    for flag, path in (("--late", args.late), ("--quarantine", args.quarantine), ("--provenance", args.provenance)):
        if path not in (None, "", *LATE_MODES):
            check_output(path, [*inputs, args.output or ""], flag)
    if args.runner == "spark":
        from chronolog.spark.command import run_spark_command

        with contextlib.ExitStack() as live:
            monitor = _monitor(args, live)
            code = run_spark_command(args, spec, sources, monitor)
            if args.ui is not None:
                _linger()
            return code
    for source in sources.values():
        if source.startswith("tcp://"):
            raise ChronologError(f"{source}: a socket stream needs --runner spark")
        check_stream_file(source)
    engine = Engine(spec)
    if args.own_process:  # the program lives as long as the process: out of the collector's walks
        freeze_compiled()
    program = engine.program
    for warning in engine.warnings:
        print(warning, file=sys.stderr)
    first = next(iter(sources.values()))
    fmt = output_format(program.output_kind, args.output, args.format,
                        detect_stream_format(first) if first.endswith((".trig", ".jsonl")) else None)
    lateness = parse_duration(args.lateness, ms_per_unit=engine.ms_per_unit)
    late = late_policy(args.late, program.input_kind, engine.dictionary, engine.ms_per_unit)
    errors = error_policy(args.on_error, args.quarantine)
    progress = Progress()
    start = time.monotonic()
    outputs = 0
    live = contextlib.ExitStack()
    monitor = _monitor(args, live)
    if monitor is not None:
        _watch_policies(monitor, late, errors)
    with live, contextlib.ExitStack() as files:
        out = sys.stdout.buffer if args.output in (None, "-") else files.enter_context(atomic_file(args.output))
        writer = files.enter_context(open_output_writer(out, program.output_kind, engine.dictionary, format=fmt,
                                                        ms_per_unit=engine.ms_per_unit))
        why = None
        if args.provenance:
            from chronolog.provenance.records import ProvenanceWriter

            why = ProvenanceWriter(files.enter_context(atomic_file(args.provenance)))
            files.callback(why.close)
        try:
            for output in engine.run_files(sources, late=late, lateness=lateness, on_error=errors, observer=monitor):
                began = time.perf_counter()
                writer.write(output)
                if why is not None:
                    why.write(output.time, explanation(output))
                if monitor is not None:
                    monitor.phase("write", time.perf_counter() - began)
                    monitor.output(output.time, partial(_shown, output, engine.dictionary), explanation=explanation(output))
                outputs += 1
                if outputs & 0xFF == 1:
                    rate = outputs / max(1e-9, time.monotonic() - start)
                    progress.update(f"{outputs:,} outputs ({rate:,.0f}/s), stream time {output.time}")
        finally:
            kept = close_policies(late, errors)
        files.close()  # the output is complete before anyone is told so
        report = program.report()
        summary = _summary(report, outputs, time.monotonic() - start)
        progress.done(summary)
        for line in kept:
            print(f"chronolog: {line}", file=sys.stderr)
        if args.stats and report:
            print(report, file=sys.stderr)
        if monitor is not None:
            monitor.finish(summary)
        if args.ui is not None:
            _linger()
    return 0


def _monitor(args: argparse.Namespace, live: contextlib.ExitStack):  # type: ignore[no-untyped-def]
    """The run's monitor when ``--ui`` or ``--record`` asks for one (else None): ``--ui``'s
    server started, stopped when ``live`` closes, and the record written then."""
    if args.ui is None and args.record is None:
        return None
    from chronolog.monitor import RunMonitor

    monitor = RunMonitor(args.program, args.runner)
    if args.record is not None:
        from chronolog.ui.report import write_record

        def record() -> None:
            if monitor.finished is None:
                monitor.finish("the run stopped before the end of its streams")
            print(f"chronolog: run recorded in {write_record(monitor, args.record)}", file=sys.stderr)
        live.callback(record)
    if args.ui is not None:
        from chronolog.ui.server import LiveView, parse_address

        view = LiveView(monitor, *parse_address(args.ui))
        print(f"chronolog: live view at {view.start()}", file=sys.stderr, flush=True)
        live.callback(view.stop)
    return monitor


def _watch_policies(monitor, late, errors) -> None:  # type: ignore[no-untyped-def]
    """The in-process late and error policies' counts, late and skipped elements, on the live view."""
    from chronolog.lateness import DivertLate

    monitor.watch("late", lambda: getattr(late, "count", 0))
    monitor.watch("skipped", lambda: errors.count)
    if errors.sink is not None:
        keep = errors.sink
        errors.sink = lambda error: (monitor.problem(str(error).splitlines()[0]), keep(error))
    if isinstance(late, DivertLate):
        kept = late.sink
        late.sink = lambda item: (monitor.late_element(_late_text(item)), kept(item))  # type: ignore[operator]


def _late_text(item) -> str:  # type: ignore[no-untyped-def]
    """A late element as the live view lists it: where it was read, its time, how late."""
    from chronolog.streams import LateElement

    if isinstance(item, LateElement):
        return f"{item.where}: time {item.element.time}, after time {item.current_time} was read"
    return repr(item)


def _shown(output, dictionary) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """An output as the live view's table shows it: (its rule or query, its text)."""
    from chronolog.program.outputs import render

    name, body = render(output, dictionary)
    return name, body if isinstance(body, str) else "\n".join(body)


def _explain(args: argparse.Namespace) -> int:
    from chronolog.provenance.records import explain_text, read_records, selected

    found = 0
    for record in selected(read_records(args.provenance), args.which):
        if found and not args.json:
            print()
        print(json.dumps(record, ensure_ascii=False) if args.json else explain_text(record))
        found += 1
    if not found:
        what = ", ".join(args.which) if args.which else "any output"
        raise ChronologError(f"{args.provenance}: no provenance record for {what}")
    return 0


def _linger() -> None:
    """After the run, an interactive user may still be looking: serve until Ctrl-C (else
    the server stops once open pages have had the final state: ``LiveView.stop``)."""
    if not sys.stdin.isatty():
        return
    print("chronolog: the run has ended; the live view stays up until Ctrl-C", file=sys.stderr, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        while True:
            time.sleep(3600)


def _summary(report: str | None, outputs: int, seconds: float) -> str:
    """The closing line: the program's own first report line when it keeps counters."""
    if report:
        return report.splitlines()[0].split(";")[0] + f" in {seconds:.1f} s"
    return f"{outputs:,} outputs in {seconds:.1f} s"


def _report(args: argparse.Namespace) -> int:
    from chronolog.ui.report import write_report

    print(f"chronolog: report written to {write_report(args.run_dir, args.output)}", file=sys.stderr)
    return 0


def _check(args: argparse.Namespace) -> int:
    from chronolog.engine import Engine
    from chronolog.lang.registry import load_spec
    from chronolog.run_io import check_inputs

    check_inputs(args.background, "--background")
    engine = Engine(load_spec(args.program, args.lang, _options(args)))
    for warning in engine.warnings:
        print(warning, file=sys.stderr)
    first, *rest = engine.program.describe() or ["compiled"]
    print(f"{args.program}: ok: {first}" + (f", {len(engine.warnings)} warning(s)" if engine.warnings else ""))
    for line in rest:
        print(line)
    return 0


def _benchmarks_folder() -> Path | None:
    """The benchmarks: ``$CHRONOLOG_BENCHMARKS`` when set, else the benchmarks/ folder of
    the source tree this chronolog runs from (next to ``src/``), else ``./benchmarks``;
    None when none of them holds a bench_*.py (an installed chronolog has no benchmarks)."""
    if os.environ.get("CHRONOLOG_BENCHMARKS"):
        candidates = [Path(os.environ["CHRONOLOG_BENCHMARKS"])]
    else:
        candidates = [Path(__file__).resolve().parents[2] / "benchmarks", Path.cwd() / "benchmarks"]
    return next((folder for folder in candidates if any(folder.glob("bench_*.py"))), None)


def _bench(args: argparse.Namespace) -> int:
    """``chronolog bench NAME [ARGS...]``: run benchmarks/bench_NAME.py with ARGS."""
    import ast
    import subprocess

    folder = _benchmarks_folder()
    if folder is None:
        where = os.environ.get("CHRONOLOG_BENCHMARKS") or "this installation"
        raise ChronologError(f"no benchmarks in {where}: they live in the benchmarks/ folder of chronolog's "
                             "source tree (run chronolog from a checkout, or set CHRONOLOG_BENCHMARKS=DIR)")
    scripts = {p.stem[len("bench_"):]: p for p in sorted(folder.glob("bench_*.py"))}
    name = args.name.replace("-", "_") if args.name else None  # bench barbieri-fig7 runs bench_barbieri_fig7.py
    if name not in scripts:
        lines = []
        for script, path in scripts.items():
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            lines.append(f"  {script:<16} {doc.splitlines()[0] if doc else ''}")
        listing = "\n".join(lines)
        if name is None:
            print(f"benchmarks in {folder} (chronolog bench NAME --help for a benchmark's options):\n{listing}")
            return 0
        raise ChronologError(f"no benchmark {args.name!r} in {folder}; the benchmarks are:\n{listing}")
    src = str(Path(__file__).resolve().parents[1])  # the chronolog the benchmark imports is this one
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, str(scripts[name]), *args.args], env=env).returncode


def _add_program_arguments(parser: argparse.ArgumentParser) -> None:
    """What compiles a program: its language and the options that shape it."""
    from chronolog.program import Options

    from chronolog.timeunits import TIME_UNITS

    from chronolog.lang.registry import PLANNED, languages

    names = sorted(set(languages()) | set(PLANNED))
    extensions = sorted({e for lang in languages().values() for e in lang.extensions} | {e for _, e in PLANNED.values()})
    parser.add_argument("--lang", metavar="LANG",
                        help=f"the program's language ({', '.join(names)}); default: from its extension "
                             f"({', '.join(extensions)})")
    parser.add_argument("--background", action="append", default=[], metavar="DATA",
                        help="background RDF; repeatable")
    parser.add_argument("--rules", action="append", default=[], metavar="RULES",
                        help="rdfs, owl-rl or a .dl file; repeatable")
    parser.add_argument("--time-unit", choices=TIME_UNITS, default="ms",
                        help="what one integer time unit is (default ms): durations in programs and "
                             "xsd:dateTime times convert through it")
    parser.add_argument("--policy", choices=["unrestricted", "chronological", "recent"],
                        help="the consumption policy of EP-SPARQL and RSEP-QL programs")
    parser.add_argument("--maintenance", choices=["naive", "dred", "expiration"],
                        help="how reasoning over windows is kept up to date")
    parser.add_argument("--max-derived", type=int, default=Options().max_derived, metavar="N",
                        help="stop with an error naming the rule when rules that compute new terms derive more "
                             "than N facts in one saturation (default %(default)s; check warns of such rules)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chronolog",
        description="A stream reasoner: ontological reasoning per time point, temporal patterns across them.",
    )
    parser.add_argument("--version", action="version", version=f"chronolog {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of a failure")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    mat = commands.add_parser(
        "materialize", help="the closure of RDF data under rules",
        description="Load RDF files, compute their closure under the rules, write it as RDF.")
    mat.add_argument("data", nargs="+", metavar="DATA", help="RDF files (.nt .ttl .n3 .trig .nq .rdf .owl)")
    mat.add_argument("--rules", action="append", default=[], metavar="RULES",
                     help="a built-in rule set (rdfs, owl-rl) or a .dl file; repeatable")
    mat.add_argument("-o", "--output", metavar="OUT", help="output file (format from its extension); default stdout")
    mat.add_argument("--format", help="output format (nt, ttl, nq, trig); default from -o, else N-Triples")
    mat.add_argument("--sort", action="store_true", help="sort the output (deterministic, slower)")
    add_materialize_spark_arguments(mat)
    mat.set_defaults(handler=_materialize)

    run = commands.add_parser(
        "run", help="run a program over streams",
        description="Run a program (DOTR, or any language chronolog knows) over streams of time-annotated "
                    "graphs; write its outputs as a stream (graphs as TriG or JSON Lines, SELECT solutions "
                    "and atoms as JSON Lines).")
    run.add_argument("program", metavar="PROGRAM", help="a program file, or an example directory")
    run.add_argument("--stream", action="append", default=[], metavar="[NAME=]SOURCE",
                     help="an input stream: a .trig or .jsonl file; with Spark also a directory that such "
                          "files land in, or tcp://HOST:PORT sending JSON Lines. NAME is the stream IRI the "
                          "program reads (a program with one stream takes an unnamed source); repeatable")
    _add_program_arguments(run)
    run.add_argument("--runner", choices=["spark", "inprocess"], default="spark",
                     help="spark (default): a Spark Structured Streaming query; inprocess: this process only, "
                          "lowest latency")
    run.add_argument("-o", "--output", metavar="OUT",
                     help="output file: .trig or .jsonl (with Spark also DIR.parquet); default stdout")
    run.add_argument("--format", choices=["trig", "jsonl"],
                     help="output format; default: from -o, else the input's")
    run.add_argument("--stats", action="store_true", help="print per-phase time counters at the end")
    run.add_argument("--ui", nargs="?", const="127.0.0.1:0", metavar="[HOST:]PORT",
                     help="serve a live view of the run (outputs, throughput, latency, memory; Spark's micro-batches) "
                          "at this address; alone: 127.0.0.1 and a free port, printed at start (needs chronolog[ui])")
    run.add_argument("--record", metavar="DIR",
                     help="keep what the live view shows at the end of the run in DIR (for chronolog report)")
    run.add_argument("--provenance", nargs="?", const="", metavar="FILE",
                     help="record why each output holds: the events or solutions behind it, the facts they matched "
                          "and where each came from; the live view opens it on a click, and with FILE it is written "
                          "there (JSON Lines, for chronolog explain). Costs time: see docs/ui.md")
    bad = run.add_argument_group("late and malformed input (both runners)")
    bad.add_argument("--lateness", default="0", metavar="DURATION",
                     help="allowed lateness, e.g. '5 s': elements up to this much out of order are put back in "
                          "place (default 0)")
    bad.add_argument("--late", default="error", metavar="error|drop|FILE",
                     help="an element later than that: stop with an error naming it (default), count it (drop), "
                          "or write it to FILE with its place")
    bad.add_argument("--on-error", choices=["stop", "skip"], default="stop",
                     help="a malformed element: stop with its FILE:LINE:COL error (default; what was output before "
                          "is kept), or skip it into the --quarantine file and go on")
    bad.add_argument("--quarantine", metavar="FILE",
                     help="with --on-error skip: where each skipped element goes, with its place and the reason")
    add_run_spark_arguments(run)
    run.set_defaults(handler=_run)

    report = commands.add_parser("report", help="the HTML report of a run recorded with run --record",
                                 description="Write one self-contained HTML file with the charts and the output "
                                             "table of a run recorded with chronolog run ... --record DIR.")
    report.add_argument("run_dir", metavar="RUN_DIR", help="the folder given to run --record")
    report.add_argument("-o", "--output", metavar="OUT.html", help="where to write it (default RUN_DIR/report.html)")
    report.set_defaults(handler=_report)

    explain = commands.add_parser("explain", help="why outputs of a run with --provenance hold",
                                  description="Print the derivation of outputs recorded by chronolog run ... "
                                              "--provenance FILE: the rule, the events it combined, the facts "
                                              "each matched and where each fact came from (input, background, "
                                              "or a rule over other facts).")
    explain.add_argument("provenance", metavar="FILE", help="the file given to run --provenance")
    explain.add_argument("which", nargs="*", metavar="OUTPUT",
                         help="an output's element IRI (urn:chronolog:element:TIME:N), its firing (TIME-SEQ-N or "
                              "the fresh IRI naming it) or a time; default: every output")
    explain.add_argument("--json", action="store_true", help="print the records themselves (JSON Lines)")
    explain.set_defaults(handler=_explain)

    check = commands.add_parser("check", help="parse and validate a program without running it",
                                description="Parse and validate a program: errors as FILE:LINE:COL.")
    check.add_argument("program", metavar="PROGRAM", help="a program file")
    _add_program_arguments(check)
    check.set_defaults(handler=_check)

    bench = commands.add_parser(
        "bench", help="run a benchmark of benchmarks/ (without NAME: list them)",
        description="Run benchmarks/bench_NAME.py with the arguments that follow NAME; without NAME, list "
                    "the benchmarks. Results and the commands that reproduce them: benchmarks/RESULTS.md.")
    bench.add_argument("name", nargs="?", metavar="NAME", help="a benchmark: bench_NAME.py")
    bench.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the benchmark's own arguments")
    bench.set_defaults(handler=_bench)

    q = commands.add_parser("query", help="a SPARQL query over RDF data and its closure under rules",
                            description="Reason over the data with the rules, then answer the SPARQL query.")
    add_query_arguments(q)
    q.set_defaults(handler=query_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command: every failure is one message and a non-zero exit (``--debug``: and
    its traceback). Without ``argv``, the process is the command's own (it may tune the
    process, such as its garbage collector, for the run)."""
    args = build_parser().parse_args(argv)
    args.own_process = argv is None
    try:
        return args.handler(args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("chronolog: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # every failure ends here as one message; --debug adds the traceback
        if args.debug:
            traceback.print_exc()
        print(_message(exc), file=sys.stderr)
        return 2 if isinstance(exc, (ChronologError, SyntaxError, OSError)) else 70


def _message(exc: Exception) -> str:
    """The one-line (or, for a syntax error, positioned) message of a failure."""
    if isinstance(exc, ChronologSyntaxError):
        return str(exc)
    if isinstance(exc, (ChronologError, SyntaxError)):
        return f"chronolog: {exc}"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"chronolog: {where}{exc.strerror or exc}"
    return f"chronolog: internal error: {type(exc).__name__}: {exc} (run with --debug to see where)"


if __name__ == "__main__":
    sys.exit(main())
