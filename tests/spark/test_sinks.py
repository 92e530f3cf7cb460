"""The sinks' delivery guarantees, without Spark: a batch re-run after a crash lands once."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from chronolog.errors import ChronologError
from chronolog.program import GRAPHS, SOLUTIONS
from chronolog.spark.sinks import ConsoleSink, OutputRecord, ParquetSink, StreamFileSink, sink_for

G = "<http://e/a> <http://e/p> <http://e/b> .\n"


def detections(time: int, n: int = 1) -> list[OutputRecord]:
    return [OutputRecord(time, "http://e/rule", G.replace("/b>", f"/b{i}>"), "k") for i in range(n)]


@pytest.mark.parametrize("fmt, suffix", [("trig", ".trig"), ("jsonl", ".jsonl")])
def test_stream_file_sink_is_exactly_once_across_a_crash(tmp_path: Path, fmt: str, suffix: str) -> None:
    once = StreamFileSink(tmp_path / f"once{suffix}", GRAPHS, fmt)
    once.reset()
    for batch, time in enumerate((10, 20, 30)):
        once.write(batch, detections(time, batch + 1))
    once.close()
    expected = (tmp_path / f"once{suffix}").read_bytes()

    out = tmp_path / f"out{suffix}"
    sink = StreamFileSink(out, GRAPHS, fmt)
    sink.reset()
    sink.write(0, detections(10, 1))
    sink.write(1, detections(20, 2))
    with open(out, "ab") as partial:  # batch 2 was being written when the process died
        partial.write(b"<urn:chronolog:element:30:0> <http://www.w3.org/ns/prov#genera")
    sink.close()  # the process died: its lock went with it
    restarted = StreamFileSink(out, GRAPHS, fmt)  # a new process, same files
    restarted.write(1, detections(20, 2))  # logged already: skipped
    restarted.write(2, detections(30, 3))
    assert out.read_bytes() == expected
    restarted.write(2, detections(30, 3))  # a batch already written is not written again
    assert out.read_bytes() == expected


def test_parquet_sink_one_file_per_batch(tmp_path: Path) -> None:
    sink = ParquetSink(tmp_path / "out.parquet", GRAPHS)
    sink.reset()
    sink.write(0, detections(10, 2))
    sink.write(1, detections(20, 1))
    sink.write(1, detections(20, 1))  # re-run: same file, replaced
    files = sorted((tmp_path / "out.parquet").glob("*.parquet"))
    assert [f.name for f in files] == ["batch-000000000.parquet", "batch-000000001.parquet"]
    table = pq.read_table(tmp_path / "out.parquet")
    assert sorted(table.column("time").to_pylist()) == [10, 10, 20]
    assert set(table.column_names) == {"time", "source", "body", "key"}


def test_sink_for_chooses_by_output() -> None:
    assert isinstance(sink_for(None, GRAPHS, "trig"), ConsoleSink)
    assert isinstance(sink_for("-", GRAPHS, "trig"), ConsoleSink)
    assert isinstance(sink_for("x.parquet", GRAPHS, "trig"), ParquetSink)
    assert isinstance(sink_for("x.trig", GRAPHS, "trig"), StreamFileSink)


def test_solution_sink_writes_one_line_per_evaluation_time(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    sink = StreamFileSink(out, SOLUTIONS, "jsonl")
    sink.reset()
    solution = '{"x": "<http://e/a>", "@start": 3, "@end": 5}'
    sink.write(0, [OutputRecord(5, "q", [solution, '{"x": "\\"5\\""}'], "*")])
    assert out.read_text() == ('{"time": 5, "solutions": [{"x": "<http://e/a>", "@start": 3, "@end": 5}, '
                               '{"x": "\\"5\\""}]}\n')


def test_two_runs_cannot_write_the_same_file(tmp_path: Path) -> None:
    first = StreamFileSink(tmp_path / "out.trig", GRAPHS, "trig")
    first.reset()
    second = StreamFileSink(tmp_path / "out.trig", GRAPHS, "trig")
    with pytest.raises(ChronologError, match="another chronolog run is writing this file"):
        second.reset()
    first.close()
    second.reset()  # free again once the first run has ended
    second.close()
