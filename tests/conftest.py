"""Shared test set-up: where the shared data and conformance suites live."""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"the shared data folder is missing: {SHARED}")
    return SHARED
