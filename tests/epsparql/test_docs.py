"""Every example of docs/languages/epsparql.md runs: its program on its stream, under its
policy, gives its output."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chronolog.formats import encode_text
from chronolog.lang.registry import compile_program
from chronolog.program.contract import Options, ProgramSpec
from chronolog.program.outputs import solution_record

PAGE = Path(__file__).resolve().parents[2] / "docs" / "languages" / "epsparql.md"
EXAMPLE = re.compile(r"```eps policy=(\w+)\n(.*?)```\n\n```stream\n(.*?)```\n\n```output\n(.*?)```", re.S)
EXAMPLES = EXAMPLE.findall(PAGE.read_text())


def test_the_page_has_its_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("policy, program, stream, output", EXAMPLES)
def test_example_runs(policy: str, program: str, stream: str, output: str) -> None:
    compiled = compile_program(ProgramSpec("epsparql", program, "doc.eps", Options(policy=policy)))
    d = compiled.dictionary
    got = []
    for line in stream.splitlines():
        record = json.loads(line)
        element = tuple(encode_text(record["graph"], d, format="ttl"))
        for out in compiled.push(record["time"], {"": [element]}):
            got.append({"time": out.time, "solutions": [solution_record(s, d) for s in out.solutions]})
    assert got == [json.loads(line) for line in output.splitlines()]
