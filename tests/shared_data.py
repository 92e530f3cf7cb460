"""Where the shared data and conformance suites live, and a skip when they are not there.

They sit in ``../shared`` next to the repository (CI has them) or wherever
``$CHRONOLOG_SHARED`` points; a fresh clone without them still runs every other test.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("CHRONOLOG_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")


def shared_path(*parts: str) -> Path:
    """``SHARED/parts...``, or skip the calling test (or module, at import) naming what is missing."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data missing: {path} (set CHRONOLOG_SHARED to the shared folder)",
                    allow_module_level=True)
    return path
