"""EP-SPARQL (seed 001): SPARQL with event operators over time intervals, RDFS background
knowledge and recursive CONSTRUCT rules. :mod:`.syntax` parses, :mod:`.lowering` lowers a
tree onto the operator network of :mod:`.network`, :mod:`.program` runs it."""
from __future__ import annotations

from chronolog.lang.registry import Language
from chronolog.program.contract import Program, ProgramSpec
from chronolog.terms import TermDictionary


def parse(text: str, filename: str | None = None) -> object:
    """The parse tree of a program (positioned errors)."""
    from chronolog.lang.epsparql.syntax import parse as parse_syntax

    return parse_syntax(text, filename)


def compile(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> Program:
    """The incremental program of an EP-SPARQL spec."""
    from chronolog.lang.epsparql.program import EpsparqlProgram

    return EpsparqlProgram(spec, dictionary)


LANGUAGE = Language(name="epsparql", title="EP-SPARQL", extensions=(".eps",), parse=parse, compile=compile,
                    options=frozenset({"background", "rules", "max_derived", "policy", "provenance"}))
