"""Every example of docs/languages/lars.md runs: its program on its stream gives its output,
on the engine and on the reference evaluator."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec
from reference.lars import ReferenceLars

PAGE = Path(__file__).resolve().parents[2] / "docs" / "languages" / "lars.md"
EXAMPLE = re.compile(r"```lars\n(.*?)```\n\n```stream\n(.*?)```\n\n```output\n(.*?)```", re.S)
EXAMPLES = EXAMPLE.findall(PAGE.read_text())


def lars(text: str):
    """A LARS program compiled through the registry."""
    return compile_program(ProgramSpec("lars", text))


def lines(block: str) -> list[tuple[int, list[str]]]:
    return [(r["time"], r["atoms"]) for r in map(json.loads, block.splitlines())]


def test_the_page_has_its_examples() -> None:
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("program, stream, output", EXAMPLES)
def test_example_runs(program: str, stream: str, output: str) -> None:
    engine = lars(program)
    got = [(o.time, list(o.atoms)) for t, atoms in lines(stream) for o in engine.push(t, {"": [tuple(atoms)]})]
    assert got == lines(output) == ReferenceLars(program).output_stream(lines(stream))
