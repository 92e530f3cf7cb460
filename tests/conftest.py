"""Shared test set-up: the ``shared`` fixture, the shared data folder or a skip naming it."""
from __future__ import annotations

from pathlib import Path

import pytest

from shared_data import shared_path


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_path()
