"""A progress line on a terminal (stderr), silent when stderr is not one."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Rewrites one status line at most every ``interval`` seconds; ``done`` ends it."""

    def __init__(self, stream: TextIO | None = None, interval: float = 0.2, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.interval = interval
        self._last = 0.0
        self._width = 0

    def update(self, text: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        pad = max(0, self._width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)

    def done(self, text: str) -> None:
        """The final line: printed even when no terminal is attached is not wanted, so only on one."""
        if self.enabled:
            self.update(text, force=True)
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0
