"""``python pausepoint.py PLACE MARKER chronolog-arguments...``: ``python -m chronolog ...``,
except that the driver stops at an exact place of the stream file sink (``-o``), writes the
file MARKER and waits there, for a test to SIGKILL it at a known point of a micro-batch
rather than wherever a timer happens to fall. PLACE is, for the first batch that brings
new output:

- ``before-log``: its graphs are written and fsynced to the output file, its ``batch
  end-offset`` line is not in the side file yet (the output holds a partial batch that
  Spark has not committed: a restart re-runs the batch, which must be cut off first);
- ``after-log:N``: written and logged (and at least N batches logged), not committed by
  Spark (a restart re-runs the batch, which the sink must skip).
"""
from __future__ import annotations

import os
import sys
import time


def install(place: str, marker: str) -> None:
    from chronolog.spark import sinks

    original = sinks._OnceFile.append
    armed: list[sinks._OnceFile] = []  # a file whose next side-file append is to wait
    where, _, count = place.partition(":")

    def pause(what: str) -> None:
        with open(marker, "w") as out:
            out.write(what)
        while True:
            time.sleep(60)

    def open_hook(file, mode="r", *args, **kwargs):
        if armed and mode == "a" and os.fspath(file) == os.fspath(armed[0].log):
            pause("before-log")
        return open(file, mode, *args, **kwargs)

    def append(self, batch_id, write):
        wrote: list[bool] = []

        def tracked(out):
            start = out.tell()
            write(out)
            wrote.append(out.tell() > start)
            if wrote[-1] and where == "before-log":
                armed.append(self)

        original(self, batch_id, tracked)
        if wrote and wrote[-1] and where == "after-log" and len(self._logged()) >= int(count or 1):
            pause(f"after-log {batch_id}")

    sinks.open = open_hook  # append finds ``open`` in its module before the builtins
    sinks._OnceFile.append = append


if __name__ == "__main__":
    place, marker, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]
    if place.partition(":")[0] not in ("before-log", "after-log"):
        raise SystemExit(f"pausepoint: unknown place {place!r} (before-log, after-log:N)")
    install(place, marker)
    from chronolog.cli import main

    sys.exit(main(arguments))
