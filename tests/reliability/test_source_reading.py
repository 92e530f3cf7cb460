"""The Spark source reads stream files in bounded steps (issue 12, item 9), driven here
through its reader's offsets as Spark drives them, without a session."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronolog.spark.source import _source_classes


def _write_stream(path: Path, times: list[int]) -> None:
    path.write_text("".join(json.dumps({"time": t, "graph": f"<urn:s{i}> <urn:p> {t} ."}) + "\n"
                            for i, t in enumerate(times)))


def _run(streams: dict[str, str], start: dict | None = None, **options: str) -> tuple[list[tuple], int, dict]:
    """Every row the available-now batches hand out from ``start``, the most records the
    driver held at once, and the last offset."""
    reader = _source_classes()({"streams": json.dumps(streams), **options}).streamReader(None)
    reader.prepareForTriggerAvailableNow()
    offset = start or reader.initialOffset()
    rows, held = [], 0
    while True:
        end = reader.latestOffset(offset, reader.getDefaultReadLimit())
        if end == offset:
            return rows, held, offset
        held = max(held, sum(len(s.records) for s in reader.scanners.values()))
        rows += [row for part in reader.partitions(offset, end) for row in reader.read(part)]
        reader.commit(end)
        offset = end


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    times = [t for t in range(0, 3000) for _ in range(t % 3)]  # 0, 1 or 2 elements a time point
    times[100], times[101] = times[101], times[100]
    path = tmp_path / "s.jsonl"
    _write_stream(path, times)
    return path


def test_reading_in_steps_hands_out_the_same_rows(stream: Path) -> None:
    whole, held_whole, _ = _run({"": str(stream)})
    stepped, held, _ = _run({"": str(stream)}, readAhead="100")
    assert stepped == whole and whole[-1][0] == "end"
    assert held_whole == 3000 and held <= 100 + 2, "the driver held more than a step of the stream"


def test_a_restart_reads_past_what_was_committed_without_holding_it(stream: Path) -> None:
    whole, _, _ = _run({"": str(stream)}, readAhead="100")
    reader = _source_classes()({"streams": json.dumps({"": str(stream)}), "readAhead": "1000"}).streamReader(None)
    first = reader.latestOffset(reader.initialOffset(), reader.getDefaultReadLimit())
    done = [row for part in reader.partitions(reader.initialOffset(), first) for row in reader.read(part)]
    rest, held, _ = _run({"": str(stream)}, start=first, readAhead="100")
    assert done + rest == whole
    assert held <= 100 + 2


def test_two_streams_read_in_steps_merge_in_time_order(tmp_path: Path) -> None:
    _write_stream(tmp_path / "a.jsonl", list(range(0, 600, 2)))
    _write_stream(tmp_path / "b.jsonl", list(range(1, 600, 2)))
    streams = {"a": str(tmp_path / "a.jsonl"), "b": str(tmp_path / "b.jsonl")}
    whole, _, _ = _run(streams)
    stepped, _, _ = _run(streams, readAhead="7")
    assert stepped == whole
    assert [row[2] for row in stepped[:-1]] == list(range(600))
