"""Late, out-of-order and malformed input on both runners (issue #12, points 1-4): one
lateness policy, one error policy, nothing lost, nothing silent, what came before kept."""
from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path

import pytest

from chronolog import cli
from golden import canonical_output

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "fixtures" / "dotr" / "two_streams" / "alarm.dotr"  # Smoke after Hot of one sensor, 5 s
RUNNERS = ["inprocess", pytest.param("spark", marks=pytest.mark.spark)]


def temp(time: int, sensor: str, value: int) -> str:
    return json.dumps({"time": time, "graph": f"<http://example.org/{sensor}> <http://example.org/temp> {value} ."})


def smoke(time: int, sensor: str) -> str:
    return json.dumps({"time": time, "graph": f"<http://example.org/{sensor}> <http://example.org/smoke> true ."})


def run(runner: str, tmp_path: Path, lines: list[str], *options: str, request=None) -> tuple[int, list[str], Path]:
    """Run the alarm program over ``lines``: exit code, the output's alarm times, the stream."""
    if request is not None and runner == "spark":
        request.getfixturevalue("spark")  # the shared session
    stream = tmp_path / "stream.jsonl"
    stream.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    code = cli.main(["run", str(PROGRAM), "--stream", str(stream), "--runner", runner, "-o", str(out), *options])
    times = [line.split("\t")[0] for line in canonical_output(out)] if out.exists() else []
    return code, times, stream


LATE = [temp(1000, "s1", 45), smoke(3000, "s1"), temp(2000, "s2", 50), smoke(4000, "s2")]


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_late_element_stops_the_run_by_default_naming_it_and_keeping_what_came_before(
        runner: str, tmp_path: Path, capsys, request) -> None:
    code, times, stream = run(runner, tmp_path, LATE, request=request)
    err = capsys.readouterr().err
    assert code == 2
    assert f"{stream}:3: late element at time 2000" in err or f"{stream.name}:3: late element at time 2000" in err, err
    assert times == ["3000"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_late_elements_dropped_are_counted(runner: str, tmp_path: Path, capsys, request) -> None:
    code, times, _ = run(runner, tmp_path, LATE, "--late", "drop", request=request)
    assert code == 0 and times == ["3000"]
    assert "1 late element" in capsys.readouterr().err


@pytest.mark.parametrize("runner", RUNNERS)
def test_late_elements_are_written_with_their_place(runner: str, tmp_path: Path, capsys, request) -> None:
    late = tmp_path / "late.jsonl"
    code, times, stream = run(runner, tmp_path, LATE, "--late", str(late), request=request)
    assert code == 0 and times == ["3000"]
    (record,) = [json.loads(line) for line in late.read_text().splitlines()]
    assert record["time"] == 2000 and record["source"].endswith(f"{stream.name}:3")
    assert record["graph"].startswith("<http://example.org/s2> <http://example.org/temp> \"50\"^^")


@pytest.mark.parametrize("runner", RUNNERS)
def test_elements_within_the_lateness_are_put_back_in_place(runner: str, tmp_path: Path, request) -> None:
    code, times, _ = run(runner, tmp_path, LATE, "--lateness", "1500 ms", request=request)
    assert code == 0 and times == ["3000", "4000"]  # s2's reading at 2000 made the alarm at 4000


@pytest.mark.parametrize("runner", RUNNERS)
def test_negative_times_are_valid(runner: str, tmp_path: Path, request) -> None:
    code, times, _ = run(runner, tmp_path, [temp(-5000, "s1", 45), smoke(-3000, "s1"), smoke(0, "s1")],
                         request=request)
    assert code == 0 and times == ["-3000", "0"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_syntax_error_mid_stream_stops_with_its_place_and_keeps_the_output_before(
        runner: str, tmp_path: Path, capsys, request) -> None:
    code, times, stream = run(runner, tmp_path, [temp(1000, "s1", 45), smoke(3000, "s1"),
                                                 '{"time": 5000, "graph": "<http://e/a> <http://e/b> ."}',
                                                 temp(6000, "s1", 45), smoke(7000, "s1")], request=request)
    err = capsys.readouterr().err
    assert code == 2
    assert f"{stream}:3:" in err and "invalid" in err.lower()
    assert times[0] == "3000"


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_trig_syntax_error_mid_stream_stops_with_its_place(runner: str, tmp_path: Path, capsys, request) -> None:
    if runner == "spark":
        request.getfixturevalue("spark")
    stream = tmp_path / "stream.trig"
    stream.write_text('<urn:g1> <http://www.w3.org/ns/prov#generatedAtTime> 1000 .\n'
                      '<urn:g1> { <http://example.org/s1> <http://example.org/temp> 45 . }\n'
                      '<urn:g2> <http://www.w3.org/ns/prov#generatedAtTime> 3000 .\n'
                      '<urn:g2> { <http://example.org/s1> <http://example.org/smoke> true . }\n'
                      '<urn:g3> <http://www.w3.org/ns/prov#generatedAtTime> 4000 .\n'
                      '<urn:g3> { <http://example.org/s1> <http://example.org/temp> "unterminated . }\n')
    out = tmp_path / "out.trig"
    code = cli.main(["run", str(PROGRAM), "--stream", str(stream), "--runner", runner, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and f"{stream}:6:" in err, err
    assert [line.split("\t")[0] for line in canonical_output(out)] == ["3000"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_skipped_elements_go_to_the_quarantine_and_the_run_goes_on(runner: str, tmp_path: Path, capsys,
                                                                  request) -> None:
    quarantine = tmp_path / "quarantine.jsonl"
    code, times, stream = run(runner, tmp_path, [temp(1000, "s1", 45), "not json", smoke(3000, "s1")],
                              "--on-error", "skip", "--quarantine", str(quarantine), request=request)
    assert code == 0 and times == ["3000"]
    (record,) = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert record["source"] == f"{stream}:2:1" and record["element"] == "not json"
    assert record["reason"].startswith("invalid JSON")
    assert "1 malformed" in capsys.readouterr().err


@pytest.mark.parametrize("runner", RUNNERS)
def test_the_output_may_not_be_an_input(runner: str, tmp_path: Path, capsys) -> None:
    stream = tmp_path / "stream.jsonl"
    stream.write_text(temp(1000, "s1", 45) + "\n")
    assert cli.main(["run", str(PROGRAM), "--stream", str(stream), "--runner", runner, "-o", str(stream)]) == 2
    assert "is also an input of this run" in capsys.readouterr().err
    assert stream.read_text() == temp(1000, "s1", 45) + "\n"


def test_an_inprocess_output_is_never_half_written(tmp_path: Path) -> None:
    """Written to a temporary file beside it and renamed at the end: no partial file stays."""
    code, times, _ = run("inprocess", tmp_path, [temp(1000, "s1", 45), smoke(3000, "s1")])
    assert code == 0 and times == ["3000"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "stream.jsonl"]


def test_a_killed_runs_partial_output_is_removed_by_the_next_run(tmp_path: Path) -> None:
    """kill -9 leaves the temporary file a run was writing; the next run writing the same
    output removes it (unlocked: its run is dead), and leaves a live run's alone."""
    dead = tmp_path / ".out.jsonl.dead.partial"
    dead.write_text("half")
    live = tmp_path / ".out.jsonl.live.partial"
    live.write_text("being written")
    with open(live, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        code, times, _ = run("inprocess", tmp_path, [temp(1000, "s1", 45), smoke(3000, "s1")])
    assert code == 0 and times == ["3000"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.jsonl.live.partial", "out.jsonl", "stream.jsonl"]


def test_a_stream_may_come_through_a_named_pipe(tmp_path: Path) -> None:
    """A producer writes the stream as the run reads it (``mkfifo``)."""
    pipe = tmp_path / "stream.jsonl"
    os.mkfifo(pipe)
    lines = [temp(1000, "s1", 45), smoke(3000, "s1")]
    writer = threading.Thread(target=lambda: pipe.write_text("\n".join(lines) + "\n"))
    writer.start()
    out = tmp_path / "out.jsonl"
    assert cli.main(["run", str(PROGRAM), "--stream", str(pipe), "--runner", "inprocess", "-o", str(out)]) == 0
    writer.join()
    assert [line.split("\t")[0] for line in canonical_output(out)] == ["3000"]


@pytest.mark.spark
def test_a_restart_after_a_stop_resumes_past_the_bad_element(spark, tmp_path: Path, capsys) -> None:
    checkpoint = tmp_path / "checkpoint"
    lines = [temp(1000, "s1", 45), smoke(3000, "s1"), "not json", temp(6000, "s2", 45), smoke(7000, "s2")]
    options = ("--checkpoint", str(checkpoint), "--max-elements-per-batch", "2")
    code, _, _ = run("spark", tmp_path, lines, *options)
    assert code == 2 and "invalid JSON" in capsys.readouterr().err
    code, times, _ = run("spark", tmp_path, lines, *options)  # the same command again
    assert code == 0, capsys.readouterr().err
    assert times == ["3000", "7000"]  # every alarm once: the first run's and the rest


@pytest.mark.spark
def test_a_checkpoint_belongs_to_its_program(spark, tmp_path: Path, capsys) -> None:
    checkpoint = tmp_path / "checkpoint"
    lines = [temp(1000, "s1", 45), smoke(3000, "s1")]
    assert run("spark", tmp_path, lines, "--checkpoint", str(checkpoint))[0] == 0
    assert run("spark", tmp_path, lines, "--checkpoint", str(checkpoint), "--rules", "rdfs")[0] == 2
    err = capsys.readouterr().err
    assert "belongs to a run with another options" in err and "--fresh" in err
    assert run("spark", tmp_path, lines, "--checkpoint", str(checkpoint), "--lateness", "5")[0] == 2
    assert "belongs to a run with another lateness" in capsys.readouterr().err
    stamp = checkpoint / "chronolog-run.json"  # as chronolog wrote it before keyed state went into buckets
    stamp.write_text(json.dumps({k: v for k, v in json.loads(stamp.read_text()).items() if k != "buckets"}))
    assert run("spark", tmp_path, lines, "--checkpoint", str(checkpoint))[0] == 2
    assert "made by an earlier chronolog" in capsys.readouterr().err
    code, times, _ = run("spark", tmp_path, lines, "--checkpoint", str(checkpoint), "--rules", "rdfs", "--fresh")
    assert code == 0 and times == ["3000"]


@pytest.mark.spark
def test_a_socket_stream_ends_when_its_peer_closes_under_the_default_trigger(spark, tmp_path: Path) -> None:
    import socket
    import threading

    payload = ("\n".join([temp(1000, "s1", 45), smoke(3000, "s1"), temp(4000, "s2", 45), smoke(5000, "s2")])
               + "\n").encode()
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            connection.sendall(payload)

    threading.Thread(target=serve, daemon=True).start()
    out = tmp_path / "out.jsonl"
    try:
        code = cli.main(["run", str(PROGRAM), "--stream", f"tcp://127.0.0.1:{server.getsockname()[1]}",
                         "-o", str(out)])
    finally:
        server.close()
    assert code == 0
    assert [line.split("\t")[0] for line in canonical_output(out)] == ["3000", "5000"]  # the last one flushed
