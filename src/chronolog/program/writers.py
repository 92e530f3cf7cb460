"""Output writers by kind (DESIGN.md section 3), the same for every runner: RDF graphs as
a TriG or JSON Lines stream, SELECT solutions and atoms as JSON Lines. Each output is
flushed as soon as it is written, so a reader (or another chronolog) sees it at once.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from types import TracebackType
from typing import IO, Union

from chronolog.errors import ChronologError
from chronolog.program.outputs import (
    ATOMS, GRAPHS, SOLUTIONS, AtomsOutput, GraphOutput, Output, SolutionsOutput, atoms_line, solution_record,
    solutions_line,
)
from chronolog.streams import STREAM_FORMAT_BY_EXTENSION, StreamElement, open_stream_writer
from chronolog.terms import TermDictionary

Target = Union[str, os.PathLike, IO[bytes]]
FORMATS = {GRAPHS: ("trig", "jsonl"), SOLUTIONS: ("jsonl",), ATOMS: ("jsonl",)}
WHAT = {GRAPHS: "RDF graphs", SOLUTIONS: "SELECT solutions", ATOMS: "atoms"}


def output_format(kind: str, path: str | None, given: str | None = None, fallback: str | None = None) -> str:
    """The format outputs of ``kind`` are written in: ``given`` (``--format``), else from
    ``path``'s extension, else ``fallback`` (the input's format), else the kind's first."""
    allowed = FORMATS[kind]
    if given is None and path not in (None, "-"):
        ext = os.path.splitext(str(path))[1].lower()
        given = STREAM_FORMAT_BY_EXTENSION.get(ext)
        if given is None:
            raise ChronologError(f"{path}: cannot tell the output format from its extension "
                                 f"(expected {' or '.join('.' + f for f in allowed)})")
    if given is None:
        given = fallback if fallback in allowed else allowed[0]
    if given not in allowed:
        raise ChronologError(f"{WHAT[kind]} are written as {' or '.join(allowed)}, not {given}")
    return given


class OutputWriter(ABC):
    """Writes outputs of one kind; ``count`` says how many."""

    count = 0

    @abstractmethod
    def write(self, output: Output) -> None:
        """Write one output."""

    @abstractmethod
    def close(self) -> None:
        """Close a file the writer opened; flush one it was given."""

    def __enter__(self) -> "OutputWriter":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class GraphWriter(OutputWriter):
    """Graphs as a stream in the input formats (TriG or JSON Lines)."""

    def __init__(self, target: Target, dictionary: TermDictionary, format: str, ms_per_unit=1) -> None:
        self._stream = open_stream_writer(target, dictionary, format=format, ms_per_unit=ms_per_unit)

    def write(self, output: Output) -> None:
        assert isinstance(output, GraphOutput)
        self._stream.write(StreamElement(output.time, output.triples))
        self.count += 1

    def close(self) -> None:
        self._stream.close()


class LineWriter(OutputWriter):
    """One JSON line per output, to a path or binary file."""

    def __init__(self, target: Target) -> None:
        self._owned = isinstance(target, (str, os.PathLike))
        self._out: IO[bytes] = open(target, "wb") if self._owned else target  # type: ignore[arg-type]

    def _line(self, line: str) -> None:
        self._out.write(line.encode("utf-8") + b"\n")
        self._out.flush()
        self.count += 1

    def close(self) -> None:
        if self._owned:
            self._out.close()
        else:
            self._out.flush()


class SolutionWriter(LineWriter):
    """``{"time": T, "solutions": [...]}`` per evaluation time with solutions."""

    def __init__(self, target: Target, dictionary: TermDictionary) -> None:
        super().__init__(target)
        self._dictionary = dictionary

    def write(self, output: Output) -> None:
        assert isinstance(output, SolutionsOutput)
        self._line(solutions_line(output.time, [solution_record(s, self._dictionary) for s in output.solutions]))


class AtomWriter(LineWriter):
    """``{"time": T, "atoms": [...]}`` per time point."""

    def write(self, output: Output) -> None:
        assert isinstance(output, AtomsOutput)
        self._line(atoms_line(output.time, output.atoms))


def open_output_writer(target: Target, kind: str, dictionary: TermDictionary, *, format: str,
                       ms_per_unit=1) -> OutputWriter:
    """The writer of ``kind`` outputs in ``format`` (see :func:`output_format`)."""
    if kind == GRAPHS:
        return GraphWriter(target, dictionary, format, ms_per_unit)
    if kind == SOLUTIONS:
        return SolutionWriter(target, dictionary)
    return AtomWriter(target)
