"""Docs that run: every ``>>>`` example in chronolog's modules is executed."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import chronolog

MODULES = sorted(m.name for m in pkgutil.walk_packages(chronolog.__path__, "chronolog.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_the_public_modules_have_examples() -> None:
    with_examples = {n for n in MODULES if doctest.DocTestFinder().find(importlib.import_module(n))
                     and any(t.examples for t in doctest.DocTestFinder().find(importlib.import_module(n)))}
    assert {"chronolog.datalog.reasoner", "chronolog.formats", "chronolog.streams", "chronolog.timeunits"} <= with_examples
