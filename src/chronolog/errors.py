"""Errors users read: every static error names FILE:LINE:COL, every runtime error its place."""
from __future__ import annotations

from bisect import bisect_right


class ChronologError(Exception):
    """Base class of every error chronolog raises on purpose."""


class ChronologSyntaxError(SyntaxError, ChronologError):
    """A syntax or static-semantics error in a program or data file.

    Printed as ``FILE:LINE:COL: message``, then the offending line and a caret,
    like pyoxigraph's and Python's own SyntaxError (same attributes).
    """

    def __init__(
        self,
        message: str,
        filename: str | None = None,
        lineno: int | None = None,
        offset: int | None = None,
        text: str | None = None,
    ) -> None:
        super().__init__(message, (filename, lineno, offset, text))
        self.message = message

    @classmethod
    def at(cls, message: str, source: str, pos: int, filename: str | None) -> "ChronologSyntaxError":
        """Build an error at character offset ``pos`` of ``source``."""
        return SourceMap(source, filename).error(message, pos)

    def __str__(self) -> str:
        where = f"{self.filename or '<input>'}:{self.lineno or 0}:{self.offset or 0}: "
        out = where + self.message
        if self.text:
            line = self.text.rstrip("\n")
            out += "\n    " + line
            if self.offset:
                out += "\n    " + " " * (self.offset - 1) + "^"
        return out


class LateElementError(ChronologError):
    """A stream element older than the stream's current time, under the 'reject' policy."""


class SourceMap:
    """Character offsets of one source text to (line, column, line text), in O(log n)."""

    def __init__(self, source: str, filename: str | None) -> None:
        self.source = source
        self.filename = filename
        self._starts = [0] + [i + 1 for i, c in enumerate(source) if c == "\n"]

    def position(self, pos: int) -> tuple[int, int, str]:
        """1-based line and column of ``pos``, and the text of its line."""
        line = bisect_right(self._starts, pos)
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.source)
        return line, pos - start + 1, self.source[start:end]

    def offset(self, line: int, column: int) -> int:
        """The character offset of a 1-based line and column."""
        return self._starts[line - 1] + column - 1

    def error(self, message: str, pos: int) -> ChronologSyntaxError:
        line, column, text = self.position(pos)
        return ChronologSyntaxError(message, self.filename, line, column, text)
