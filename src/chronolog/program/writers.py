"""Output writers by kind (DESIGN.md section 3), the same for every runner: RDF graphs as
a TriG or JSON Lines stream, SELECT solutions and atoms as JSON Lines. Each output is
flushed as soon as it is written, so a reader (or another chronolog) sees it at once.
"""
from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from types import TracebackType
from typing import IO, Union

from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.program.contract import ATOMS_IN
from chronolog.program.outputs import (
    ATOMS, GRAPHS, SOLUTIONS, AtomsOutput, GraphOutput, Output, SolutionsOutput, atoms_line, solution_text,
    solutions_line,
)
from chronolog.streams import STREAM_FORMAT_BY_EXTENSION, LateElement, StreamElement, open_stream_writer
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
    def write_rendered(self, time: int, body: str | list[str]) -> None:
        """Write one output as :func:`~chronolog.program.outputs.render` gave its body (what
        a Spark sink receives): the same bytes as ``write``, with no dictionary between."""

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

    def write_rendered(self, time: int, body: str | list[str]) -> None:
        self._stream.write_text(time, body)  # type: ignore[arg-type]
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
        self._line(solutions_line(output.time, [solution_text(s, self._dictionary) for s in output.solutions]))

    def write_rendered(self, time: int, body: str | list[str]) -> None:
        self._line(solutions_line(time, body))  # type: ignore[arg-type]


class AtomWriter(LineWriter):
    """``{"time": T, "atoms": [...]}`` per time point."""

    def write(self, output: Output) -> None:
        assert isinstance(output, AtomsOutput)
        self._line(atoms_line(output.time, output.atoms))

    def write_rendered(self, time: int, body: str | list[str]) -> None:
        self._line(atoms_line(time, body))  # type: ignore[arg-type]


def open_output_writer(target: Target, kind: str, dictionary: TermDictionary, *, format: str,
                       ms_per_unit=1) -> OutputWriter:
    """The writer of ``kind`` outputs in ``format`` (see :func:`output_format`)."""
    if kind == GRAPHS:
        return GraphWriter(target, dictionary, format, ms_per_unit)
    if kind == SOLUTIONS:
        return SolutionWriter(target, dictionary)
    return AtomWriter(target)


class LateWriter:
    """A late-element file (``--late FILE``): each late element in the input's stream
    format with the place it was read from (``"source"`` in JSON Lines, a ``# source:``
    comment in TriG), so it can be replayed and traced."""

    def __init__(self, path: str | os.PathLike, input_kind: str, dictionary: TermDictionary, ms_per_unit=1) -> None:
        self.path = str(path)
        self._atoms = input_kind == ATOMS_IN
        if self._atoms:
            self._out: IO[bytes] = open(path, "wb")
        else:
            self._stream = open_stream_writer(path, dictionary, format=output_format(GRAPHS, self.path),
                                              ms_per_unit=ms_per_unit)

    def __call__(self, late: LateElement) -> None:
        if self._atoms:
            record = {"time": late.element.time, "atoms": list(late.element.triples), "source": late.where}
            self._out.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
            self._out.flush()
        else:
            self._stream.write(late.element, late.where)

    def close(self) -> None:
        (self._out if self._atoms else self._stream).close()


class QuarantineWriter:
    """A quarantine file (``--on-error skip``): one JSON line per malformed element, with
    where it was, why it was refused, and its text: ``{"source": "FILE:LINE", "reason":
    "...", "element": "..."}``."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        self._out: IO[bytes] = open(path, "wb")

    def __call__(self, error: ChronologError) -> None:
        self.write(quarantine_record(error))

    def write(self, record: dict[str, object]) -> None:
        self._out.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        self._out.flush()

    def close(self) -> None:
        self._out.close()


def quarantine_record(error: Exception) -> dict[str, object]:
    """What the quarantine keeps of a malformed element."""
    if isinstance(error, ChronologSyntaxError):
        return {"source": f"{error.filename}:{error.lineno}:{error.offset}", "reason": error.message,
                "element": (error.text or "").rstrip("\n")}
    return {"source": None, "reason": str(error), "element": None}
