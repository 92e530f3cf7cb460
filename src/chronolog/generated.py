"""Generated Python source, compiled so that a traceback shows the generated line.

The join engine and the CEP compiler generate Python and ``exec`` it. Code compiled from a
string has no file to read its lines from, so a traceback through it would show none; the
source is registered with :mod:`linecache` under a fake filename unique to its text, so
tracebacks, ``pdb`` and ``inspect`` show the generated lines.

>>> import traceback
>>> namespace = {}
>>> exec(compile_generated("def f(x):\\n    return 1 / x\\n", "example"), namespace)
>>> try:
...     namespace["f"](0)
... except ZeroDivisionError as e:
...     frame = traceback.extract_tb(e.__traceback__)[-1]
>>> frame.filename, frame.lineno, frame.line
('<example def7d6d68803>', 2, 'return 1 / x')
"""
from __future__ import annotations

import hashlib
import linecache
from types import CodeType


def compile_generated(source: str, name: str) -> CodeType:
    """``source`` compiled as a module under ``<NAME HASH>``, its lines kept in linecache.

    The hash of the text makes the filename unique to it: compiling the same text again
    reuses the entry, so the cache grows with distinct sources only.
    """
    filename = f"<{name} {hashlib.sha1(source.encode()).hexdigest()[:12]}>"
    # mtime None: linecache.checkcache keeps the entry (there is no file to check against)
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return compile(source, filename, "exec")
