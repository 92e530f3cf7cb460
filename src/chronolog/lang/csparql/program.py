"""C-SPARQL lowered onto the windowed program: the windows' union is the default graph,
reported at window close when not empty, RSTREAM."""
from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.lang.csparql.syntax import parse
from chronolog.program.contract import ProgramSpec
from chronolog.program.windowed import ContinuousQuery, WindowedProgram
from chronolog.sparql import prepare
from chronolog.terms import TermDictionary
from chronolog.timeunits import unit_ms
from chronolog.window.r2s import RSTREAM
from chronolog.window.report import NonEmptyContent, WindowClose


def compile_csparql(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> WindowedProgram:
    tree = parse(spec.text, spec.filename, unit_ms(spec.options.time_unit))  # type: ignore[arg-type]
    static = tuple(_static_path(iri) for iri in tree.static)
    if static:
        options = spec.options.__class__(**{**spec.options.__dict__, "background": spec.options.background + static})
        spec = ProgramSpec(spec.language, spec.text, spec.filename, options)
    program = WindowedProgram(spec, dictionary)
    query = prepare(tree.sparql, program.dictionary, filename=spec.filename)
    if tree.is_stream and query.form != "CONSTRUCT":
        raise ChronologSyntaxError(f"REGISTER STREAM {tree.name} needs a CONSTRUCT query (got {query.form})",
                                   spec.filename, 1, 1, spec.text.splitlines()[0] if spec.text else "")
    windows = {f"{w.stream}#{i}": (w.stream, w.window) for i, w in enumerate(tree.windows)}
    program.register(ContinuousQuery(tree.name, windows, NonEmptyContent(WindowClose()), RSTREAM, query, named=False))
    return program


def _static_path(iri: str) -> str:
    """The file of a ``FROM <iri>`` graph: a file: IRI or a path, which must exist."""
    parsed = urlparse(iri)
    if parsed.scheme in ("", "file"):
        path = unquote(parsed.path)
        if not os.path.isfile(path):
            raise ChronologError(f"FROM <{iri}>: no such file {path!r}")
        return path
    raise ChronologError(f"FROM <{iri}>: chronolog reads static graphs from files (file: IRIs); "
                         "give other background data with --background")
