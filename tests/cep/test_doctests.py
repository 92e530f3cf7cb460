"""The ``>>>`` examples in the temporal engine's docstrings run."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import chronolog.cep

MODULES = sorted(m.name for m in pkgutil.iter_modules(chronolog.cep.__path__, "chronolog.cep."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
