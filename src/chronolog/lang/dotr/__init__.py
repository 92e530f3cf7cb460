"""DOTR (seed 000): EVENT queries over per-time-point reasoning, TESLA rules across time
points, DEFINE templates as output graphs. ``syntax`` parses, ``lowering`` lowers onto the
SPARQL layer and ``cep``, ``program`` is the compiled program, ``plan`` its Spark split."""
from __future__ import annotations

from chronolog.lang.registry import Language
from chronolog.program import Program, ProgramSpec
from chronolog.terms import TermDictionary


def _parse(text: str, filename: str | None) -> object:
    from chronolog.lang.dotr.syntax import parse_dotr

    return parse_dotr(text, filename)


def _compile(spec: ProgramSpec, dictionary: TermDictionary | None) -> Program:
    from chronolog.lang.dotr.program import DotrProgram

    return DotrProgram(spec, dictionary)


LANGUAGE = Language("dotr", "DOTR", (".dotr",), _parse, _compile, frozenset({"background", "rules", "max_derived", "provenance"}))
