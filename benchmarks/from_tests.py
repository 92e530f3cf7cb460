"""The test helpers some benchmarks reuse (the synthetic ontology generator, the reference
TESLA evaluator, the bounded-state workload), loaded from their files in tests/, which is
not on the import path."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[1] / "tests"


def load(relative: str) -> ModuleType:
    """The module of ``tests/<relative>`` (a .py path), named after its path."""
    name = relative.removesuffix(".py").replace("/", ".")
    spec = importlib.util.spec_from_file_location(name, TESTS / relative)
    assert spec is not None and spec.loader is not None
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
