"""State as plain data: snapshots are pickles of builtins only (dicts, lists, tuples,
strings, numbers, bytes) and decimals (an ``avg`` aggregate's value, which a stored
composite event can carry), and loading refuses anything else, so bytes from a state
store or a checkpoint can never run code."""
from __future__ import annotations

import io
import pickle
from decimal import Decimal

from chronolog.errors import ChronologError


class SnapshotError(ChronologError, ValueError):
    """Bytes that are not a snapshot of plain data."""


class _PlainUnpickler(pickle.Unpickler):
    """Loads plain data only: any class or function reference is refused."""

    def find_class(self, module: str, name: str) -> object:
        if (module, name) == ("decimal", "Decimal"):
            return Decimal  # built from its string only
        raise SnapshotError(f"snapshot refers to {module}.{name}; only plain data is allowed")


def plain_loads(data: bytes, what: str = "snapshot") -> object:
    """The plain data of a snapshot; a ``SnapshotError`` (naming ``what`` was expected)
    for anything else."""
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except SnapshotError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, LookupError) as exc:
        raise SnapshotError(f"not a {what}: {exc}") from exc
