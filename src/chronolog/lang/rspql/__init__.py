"""RSP-QL (the W3C RSP community group's query language): ``.rspql`` files, one registered
query each, over named windows with RSEP-QL's window semantics (Definition 3,
:mod:`chronolog.window.scope`, ``Bounds.RSEPQL``): at instant t, with
``t' = floor(t/STEP)*STEP``, a window holds the elements with ``t' - RANGE < time <= t'``; a
landmark window ``[FROM t0]`` the elements with ``t0 <= time <= t``. Evaluated every STEP,
or at the instants of ``EVALUATE AT``. :mod:`.syntax` parses; the program is
:class:`chronolog.program.windowed.WindowedProgram`, each window a named graph."""
from __future__ import annotations

from chronolog.lang.registry import Language
from chronolog.program.contract import Program, ProgramSpec
from chronolog.terms import TermDictionary


def parse(text: str, filename: str | None = None) -> object:
    from chronolog.lang.rspql.syntax import parse as parse_syntax

    return parse_syntax(text, filename)


def compile(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> Program:
    from chronolog.lang.rspql.program import compile_rspql

    return compile_rspql(spec, dictionary)


LANGUAGE = Language(name="rspql", title="RSP-QL", extensions=(".rspql",), parse=parse, compile=compile,
                    options=frozenset({"background", "rules", "max_derived", "maintenance", "policy", "provenance"}))
