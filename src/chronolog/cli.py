"""The ``chronolog`` command."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from chronolog import __version__
from chronolog.errors import ChronologError
from chronolog.sparql.command import add_query_arguments, query_command


def _materialize(args: argparse.Namespace) -> int:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chronolog",
        description="A stream reasoner: ontological reasoning per time point, temporal patterns across them.",
    )
    parser.add_argument("--version", action="version", version=f"chronolog {__version__}")
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
    mat.set_defaults(handler=_materialize)

    q = commands.add_parser("query", help="a SPARQL query over RDF data and its closure under rules",
                            description="Reason over the data with the rules, then answer the SPARQL query.")
    add_query_arguments(q)
    q.set_defaults(handler=query_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except ChronologError as exc:
        print(f"chronolog: {exc}" if not isinstance(exc, SyntaxError) else str(exc), file=sys.stderr)
        return 2
    except SyntaxError as exc:  # pyoxigraph's own parse errors that escaped wrapping
        print(f"chronolog: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("chronolog: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
