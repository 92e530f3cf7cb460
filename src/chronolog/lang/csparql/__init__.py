"""C-SPARQL (Barbieri et al.): ``.csparql`` files, one registered query each, evaluated
over windows with C-SPARQL's own timing (:mod:`chronolog.window.scope`, ``Bounds.CSPARQL``):
windows aligned to 0, the k-th holding ``k*STEP <= time < k*STEP + RANGE`` and reported at
its close, empty windows not reported, the remaining windows closed at the end of the
stream. C-SPARQL's ``f:timestamp(?s, ?p, ?o)`` (``PREFIX f:
<http://larkc.eu/csparql/sparql/jena/ext#>``, as its engine names it) is the time of the most
recent element in the windows holding the triple. :mod:`.syntax` parses; the program is
:class:`chronolog.program.windowed.WindowedProgram`."""
from __future__ import annotations

from chronolog.lang.registry import Language
from chronolog.program.contract import Program, ProgramSpec
from chronolog.terms import TermDictionary


def parse(text: str, filename: str | None = None) -> object:
    from chronolog.lang.csparql.syntax import parse as parse_syntax

    return parse_syntax(text, filename)


def compile(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> Program:
    from chronolog.lang.csparql.program import compile_csparql

    return compile_csparql(spec, dictionary)


LANGUAGE = Language(name="csparql", title="C-SPARQL", extensions=(".csparql",), parse=parse, compile=compile,
                    options=frozenset({"background", "rules", "max_derived", "maintenance", "provenance"}))
