"""C-SPARQL lowered onto the windowed program: the windows' union is the default graph,
reported at window close (with COMPUTED EVERY d: every d, aligned to 0) when not empty,
RSTREAM."""
from __future__ import annotations

from chronolog.errors import ChronologSyntaxError
from chronolog.lang.csparql.syntax import parse
from chronolog.program.contract import ProgramSpec
from chronolog.program.windowed import ContinuousQuery, WindowedProgram, with_static_background
from chronolog.sparql.extension import prepare_extended
from chronolog.terms import TermDictionary
from chronolog.timeunits import unit_ms
from chronolog.window.r2s import RSTREAM
from chronolog.window.report import NonEmptyContent, Periodic, WindowClose

TIMESTAMP = "http://larkc.eu/csparql/sparql/jena/ext#timestamp"  # f:timestamp, as C-SPARQL's engine names it


def compile_csparql(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> WindowedProgram:
    tree = parse(spec.text, spec.filename, unit_ms(spec.options.time_unit))  # type: ignore[arg-type]
    spec = with_static_background(spec, tree.static)
    program = WindowedProgram(spec, dictionary)
    query = prepare_extended(tree.sparql, spec.text, program.dictionary, spec.filename,
                             functions={TIMESTAMP: program.timestamp})
    if tree.is_stream and query.form != "CONSTRUCT":
        raise ChronologSyntaxError(f"REGISTER STREAM {tree.name} needs a CONSTRUCT query (got {query.form})",
                                   spec.filename, 1, 1, spec.text.splitlines()[0] if spec.text else "")
    windows = {f"{w.stream}#{i}": (w.stream, w.window) for i, w in enumerate(tree.windows)}
    policy = NonEmptyContent(WindowClose() if tree.every is None else Periodic(tree.every))
    program.register(ContinuousQuery(tree.name, windows, policy, RSTREAM, query, named=False))
    return program

