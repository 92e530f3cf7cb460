"""Every mistake a user makes on the command line is one message and a non-zero exit, never
a traceback (issue #12, "clear errors"), on both runners: the checks run before Spark starts."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from chronolog import cli

ROOT = Path(__file__).resolve().parents[2]
FIRE = ROOT / "tests" / "fixtures" / "dotr" / "fire"
RUN = ["run", str(FIRE / "fire.dotr"), "--stream", str(FIRE / "stream.trig")]


@pytest.mark.parametrize("runner", ["inprocess", "spark"])
@pytest.mark.parametrize("extra, message", [
    (["--background", "missing.ttl"], "chronolog: --background missing.ttl: no such file"),
    (["--rules", "missing.dl"], "chronolog: --rules missing.dl: no such file"),
    (["-o", "no/such/folder/out.trig"], "chronolog: -o no/such/folder/out.trig: no such folder no/such/folder"),
    (["-o", "."], "chronolog: -o .: is a directory, not a file"),
    (["-o", "out.txt"], "chronolog: out.txt: cannot tell the output format from its extension"),
    (["--lateness", "soon"], "chronolog: invalid duration 'soon'"),
    (["--on-error", "skip"], "chronolog: --on-error skip needs --quarantine FILE"),
    (["--time-unit", "s", "--stream", "x=missing.jsonl"], "chronolog: "),
])
def test_bad_options_are_one_line(runner: str, extra: list[str], message: str, tmp_path: Path, capsys,
                                  monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main([*RUN, "--runner", runner, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("stream, message", [
    ("missing.jsonl", "no such stream file"),
    (".", "is a directory, not a stream file"),
    ("unreadable.jsonl", "cannot read the stream file (permission denied)"),
])
def test_bad_streams_are_one_line_in_process(stream: str, message: str, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "unreadable.jsonl").write_text("")
    os.chmod(tmp_path / "unreadable.jsonl", 0)
    if stream == "unreadable.jsonl" and os.access(tmp_path / "unreadable.jsonl", os.R_OK):
        pytest.skip("running as a user who reads every file (root)")
    assert cli.main(["run", str(FIRE / "fire.dotr"), "--stream", stream, "--runner", "inprocess"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_a_bad_trigger_is_refused_before_spark_starts(capsys) -> None:
    assert cli.main([*RUN, "--trigger", "bogus"]) == 2
    assert capsys.readouterr().err.startswith("chronolog: --trigger 'bogus': expected available-now or an interval")


def test_debug_shows_the_traceback(capsys) -> None:
    assert cli.main(["--debug", *RUN, "--runner", "inprocess", "--background", "missing.ttl"]) == 2
    assert "Traceback" in capsys.readouterr().err
