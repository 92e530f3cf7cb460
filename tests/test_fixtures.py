"""Every golden case of tests/fixtures/<lang>/ (tests/golden.py), run through the command
line in process: the output equals the case's expected output. tests/spark/test_run.py
runs the same cases on Spark."""
from __future__ import annotations

from pathlib import Path

import pytest

from chronolog import cli
from golden import Case, canonical_output, cases

CASES = cases()


def test_every_language_has_golden_cases() -> None:
    from chronolog.lang.registry import languages

    assert {case.lang for case in CASES} == set(languages())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_inprocess_output_is_the_expected_one(case: Case, tmp_path: Path) -> None:
    out = tmp_path / f"out{case.expected.suffix}"
    assert cli.main([*case.arguments(out), "--runner", "inprocess"]) == 0
    want = canonical_output(case.expected)
    assert want and any(line.split("\t", 1)[1] for line in want), "an expected output with nothing in it proves nothing"
    assert canonical_output(out) == want
