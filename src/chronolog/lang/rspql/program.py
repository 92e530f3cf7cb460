"""RSP-QL lowered onto the windowed program: each window's content (with what the rules
derive from it) is the named graph of the window's IRI, the static graphs of ``FROM NAMED``
are named graphs as they are, ``FROM`` graphs join the background; evaluated at every
window's slide (each STEP; a landmark or interval window when elements arrive), or at the
instants of ``EVALUATE AT``; the registered R2S operator. A query whose WHERE is a
``MATCH ( E )`` alone is evaluated by :mod:`.matching` instead; a MATCH beside other
patterns joins them as :mod:`.mixed` says."""
from __future__ import annotations

from chronolog.errors import ChronologError
from chronolog.lang.rspql.matching import MatchProgram, consumption_of
from chronolog.lang.rspql.mixed import MatchJoin
from chronolog.lang.rspql.syntax import parse
from chronolog.program.contract import Program, ProgramSpec
from chronolog.program.windowed import ContinuousQuery, WindowedProgram, static_graph_file, with_static_background
from chronolog.sparql.extension import prepare_extended
from chronolog.terms import TermDictionary
from chronolog.timeunits import unit_ms
from chronolog.window.report import EvaluateAt, ReportPolicy, WindowClose


def compile_rspql(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> Program:
    tree = parse(spec.text, spec.filename, unit_ms(spec.options.time_unit))  # type: ignore[arg-type]
    if tree.alone:
        return MatchProgram(spec, tree, dictionary)
    if tree.match is None and spec.options.policy is not None:
        raise ChronologError("--policy applies to an RSP-QL query with MATCH ( E ); this one has none")
    program = WindowedProgram(with_static_background(spec, tree.static), dictionary)
    query = prepare_extended(tree.sparql, spec.text, program.dictionary, spec.filename)
    inline = None
    if tree.match is not None:
        inline = MatchJoin(tree.match, consumption_of(tree, spec), program.dictionary, spec.options.provenance)
        query = inline.lower(query)
    windows = {w.name: (w.stream, w.window) for w in tree.windows}
    policy: ReportPolicy = WindowClose() if tree.instants is None else EvaluateAt(tree.instants)
    graphs = {iri: static_graph_file(iri, spec.filename) for iri in tree.named}
    program.register(ContinuousQuery(tree.name, windows, policy, tree.r2s, query, named=True, graphs=graphs,
                                     inline=inline))
    return program
