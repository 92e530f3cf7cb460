"""What a run reads and writes, checked the same way on both runners: outputs that must
not clobber an input nor be half-written, and the late and error policies of
``--late error|drop|FILE`` and ``--on-error stop|skip``."""
from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from chronolog.errors import ChronologError
from chronolog.lateness import ErrorPolicy, LatePolicy
from chronolog.program.writers import LateWriter, QuarantineWriter
from chronolog.terms import TermDictionary

LATE_MODES = ("error", "drop")  # or a file name
ERROR_MODES = ("stop", "skip")


def check_inputs(paths: Iterable[str], flag: str) -> None:
    """Each input file exists, is a file and can be read (a clear error before any work)."""
    for path in paths:
        if os.path.isdir(path) and not path.endswith(".parquet") and flag != "--background":
            raise ChronologError(f"{flag} {path}: is a directory, not a file")
        if not os.path.exists(path):
            raise ChronologError(f"{flag} {path}: no such file")
        if not os.access(path, os.R_OK):
            raise ChronologError(f"{flag} {path}: cannot be read (permission denied)")


def check_output(output: str | None, inputs: Iterable[str], flag: str = "-o") -> None:
    """Refuse an output file that is one of the run's inputs (it would be erased), that is
    a directory, or whose folder does not exist or cannot be written."""
    if output in (None, "-"):
        return
    target = Path(output)
    for given in inputs:
        if given and not given.startswith("tcp://") and os.path.exists(given) and target.exists() \
                and os.path.samefile(given, target):
            raise ChronologError(f"{flag} {output} is also an input of this run ({given}): refusing to overwrite it")
    if target.is_dir() and target.suffix != ".parquet":
        raise ChronologError(f"{flag} {output}: is a directory, not a file")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise ChronologError(f"{flag} {output}: no such folder {folder}")
    if not os.access(folder, os.W_OK):
        raise ChronologError(f"{flag} {output}: cannot write in {folder} (permission denied)")


@contextlib.contextmanager
def atomic_file(path: str) -> Iterator[str]:
    """A temporary file beside ``path``, renamed onto it when the run ends (normally or
    with an error: what was output before the error is kept). Readers never see a
    half-written file, and two runs writing the same path do not interleave."""
    target = Path(path)
    folder = target.parent or Path(".")
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=folder)
    except OSError as exc:
        raise ChronologError(f"-o {path}: cannot write there ({exc.strerror})") from None
    fcntl.flock(handle, fcntl.LOCK_EX)  # held while this run writes: an unlocked partial file is a dead run's
    _remove_dead_partials(folder, target.name)
    try:
        yield partial
    finally:
        os.replace(partial, target)
        os.close(handle)


def _remove_dead_partials(folder: Path, name: str) -> None:
    """Remove the partial files of runs that died writing ``name`` (killed with no chance to
    rename them): those no live run holds a lock on (this run's own is locked too)."""
    for stale in folder.glob(f".{glob.escape(name)}.*.partial"):
        try:
            with open(stale, "rb") as held:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                stale.unlink()
        except OSError:  # locked by a live run, or gone already
            continue


def late_policy(mode: str, input_kind: str, dictionary: TermDictionary, ms_per_unit=1) -> LatePolicy:
    """``--late error`` (stop), ``drop`` (count) or a file to write late elements to."""
    if mode == "error":
        return LatePolicy.reject()
    if mode == "drop":
        return LatePolicy.drop()
    return LatePolicy.divert(LateWriter(mode, input_kind, dictionary, ms_per_unit))


def error_policy(mode: str, quarantine: str | None) -> ErrorPolicy:
    """``--on-error stop`` or ``skip`` (malformed elements to the quarantine file)."""
    if mode == "stop":
        return ErrorPolicy()
    if quarantine is None:
        raise ChronologError("--on-error skip needs --quarantine FILE (where the skipped elements are kept)")
    return ErrorPolicy(QuarantineWriter(quarantine))


def close_policies(late: LatePolicy, errors: ErrorPolicy) -> list[str]:
    """Close the files the policies wrote; the summary lines of what they kept."""
    lines = []
    writer = getattr(late, "sink", None)
    if isinstance(writer, LateWriter):
        writer.close()
    count = getattr(late, "count", 0)
    if count:
        where = f"written to {writer.path}" if isinstance(writer, LateWriter) else "dropped"
        lines.append(f"{count:,} late element{'s' if count != 1 else ''} {where}")
    if isinstance(errors.sink, QuarantineWriter):
        errors.sink.close()
        if errors.count:
            lines.append(f"{errors.count:,} malformed element{'s' if errors.count != 1 else ''} skipped, "
                         f"kept in {errors.sink.path}")
    return lines
