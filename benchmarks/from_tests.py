"""The test helpers some benchmarks reuse (the synthetic ontology generator, the reference
TESLA evaluator), loaded from their files in tests/, which is not on the import path."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[1] / "tests"


def _load(name: str, relative: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TESTS / relative)
    assert spec is not None and spec.loader is not None
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ontology_gen = _load("ontology_gen", "ontology_gen.py")
tesla = _load("reference.tesla", "reference/tesla.py")
