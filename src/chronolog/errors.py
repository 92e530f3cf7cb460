"""Errors users read: every static error names FILE:LINE:COL, every runtime error its place."""
from __future__ import annotations


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
        line_start = source.rfind("\n", 0, pos) + 1
        line_end = source.find("\n", pos)
        if line_end < 0:
            line_end = len(source)
        lineno = source.count("\n", 0, pos) + 1
        return cls(message, filename, lineno, pos - line_start + 1, source[line_start:line_end])

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
