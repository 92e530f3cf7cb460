"""``chronolog query QUERY.rq DATA... [--rules ...] [--results json|csv|tsv|xml]``.

The CLI (``chronolog.cli``) adds these arguments to its ``query`` sub-command and calls
:func:`query_command`. With ``--rules`` the data is materialized by
``chronolog.datalog.materialize`` first; without, it is loaded as is. A one-off query has
no stream time: its evaluation time, what NOW() returns, is the moment the query starts
running, read once, so NOW() is the same everywhere in one execution.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

import pyoxigraph as ox

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.sparql import prepare
from chronolog.sparql.evaluate import QUAD
from chronolog.sparql.results import FORMATS, write_results
from chronolog.store import Database, Layers
from chronolog.terms import TermDictionary

_RDF_FORMATS = {
    ".ttl": ox.RdfFormat.TURTLE, ".turtle": ox.RdfFormat.TURTLE, ".nt": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS, ".trig": ox.RdfFormat.TRIG, ".rdf": ox.RdfFormat.RDF_XML,
    ".xml": ox.RdfFormat.RDF_XML, ".owl": ox.RdfFormat.RDF_XML, ".n3": ox.RdfFormat.N3,
}


def add_query_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", metavar="QUERY.rq", help="the SPARQL 1.1 query file")
    parser.add_argument("data", metavar="DATA", nargs="+", help="RDF files (Turtle, N-Triples, N-Quads, TriG, RDF/XML)")
    parser.add_argument("--rules", action="append", default=[], metavar="RULES",
                        help="reason first: rdfs, owl-rl or a Datalog file (.dl); repeatable")
    parser.add_argument("--results", choices=FORMATS, default="json", help="result format (default json)")
    parser.add_argument("--base", default=None, help="base IRI of the query (default: the query file's URI)")
    parser.add_argument("-o", "--output", default=None, help="write results here instead of stdout")


def load_data(paths: list[str], dictionary: TermDictionary) -> Layers:
    """Load RDF files into one database: default graph -> ``triple``, named graphs -> ``quad``."""
    db = Database()
    quads = db.relation(QUAD, 4)
    enc = dictionary.encode
    for path in paths:
        fmt = _RDF_FORMATS.get(Path(path).suffix.lower())
        if fmt is None:
            raise ChronologError(f"{path}: unknown RDF file extension (expected one of {', '.join(sorted(_RDF_FORMATS))})")
        try:
            for q in ox.parse(path=path, format=fmt, base_iri=Path(path).resolve().as_uri()):
                if isinstance(q.graph_name, ox.DefaultGraph):
                    db.triples.add((enc(q.subject), enc(q.predicate), enc(q.object)))
                else:
                    quads.add((enc(q.graph_name), enc(q.subject), enc(q.predicate), enc(q.object)))
        except SyntaxError as e:
            line = getattr(e, "lineno", None) or 1
            col = getattr(e, "offset", None) or 1
            raise ChronologSyntaxError(str(e.msg if hasattr(e, "msg") else e), path, line, col, e.text) from None
    return Layers([db])


def query_command(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``chronolog query``; returns the exit status (0 ok, 1 bad input)."""
    out = out or sys.stdout
    err = err or sys.stderr
    dictionary = TermDictionary()
    try:
        text = Path(args.query).read_text(encoding="utf-8")
        base = args.base or Path(args.query).resolve().as_uri()
        prepared = prepare(text, dictionary, base=base, filename=args.query)
        if args.rules:
            from chronolog.datalog import materialize

            view = materialize(list(args.data), list(args.rules), dictionary)
        else:
            view = load_data(list(args.data), dictionary)
        result = prepared.execute(view, time.time_ns() // 1_000_000)
        if args.output:
            with open(args.output, "w", encoding="utf-8", newline="") as f:
                write_results(result, f, args.results)
        else:
            write_results(result, out, args.results)
    except (ChronologError, OSError) as e:
        err.write(f"chronolog query: {e}\n" if not isinstance(e, ChronologSyntaxError) else f"{e}\n")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chronolog query", description="Run a SPARQL 1.1 query over RDF data.")
    add_query_arguments(parser)
    return query_command(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
