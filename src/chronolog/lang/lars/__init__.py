"""LARS (Laser's programs): ``.lars`` files, evaluated incrementally to Definitions 3-6 of
the Laser paper. :mod:`.syntax` parses, :mod:`.check` checks, :mod:`.engine` evaluates;
atom streams are read by :mod:`chronolog.atomstreams`."""
from __future__ import annotations

from chronolog.lang.registry import Language
from chronolog.program.contract import Program, ProgramSpec
from chronolog.terms import TermDictionary


def parse(text: str, filename: str | None = None) -> object:
    """The checked parse tree of a program (positioned errors)."""
    from chronolog.lang.lars.check import check
    from chronolog.lang.lars.syntax import parse as parse_syntax

    return check(parse_syntax(text, filename))


def compile(spec: ProgramSpec, dictionary: TermDictionary | None = None) -> Program:
    """The incremental program of a LARS spec."""
    from chronolog.lang.lars.engine import LarsEngine

    return LarsEngine(spec, parse(spec.text, spec.filename), dictionary)  # type: ignore[arg-type]


LANGUAGE = Language(name="lars", title="LARS", extensions=(".lars",), parse=parse, compile=compile,
                    options=frozenset({"provenance"}))
