"""Laser's section 5 programs in examples/lars run unchanged, and agree with the reference."""
from __future__ import annotations

from pathlib import Path

import pytest

from chronolog.atomstreams import read_atom_stream
from chronolog.lang.registry import load_spec, compile_program
from chronolog.streams import group_time_points
from reference.lars import ReferenceLars

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "lars"
RUNS = [("diamond.lars", "p.jsonl"), ("box.lars", "z.jsonl"), ("join.lars", "p.jsonl"),
        ("multi.lars", "p.jsonl"), ("cooling.lars", "temp.jsonl")]


def run(program: str, stream: str) -> list[tuple[int, list[str]]]:
    engine = compile_program(load_spec(str(EXAMPLES / program)))
    out = []
    for time, elements in group_time_points(read_atom_stream(EXAMPLES / stream)):
        out += [(o.time, list(o.atoms)) for o in engine.push(time, {"": [e.triples for e in elements]})]
    return out


@pytest.mark.parametrize("program, stream", RUNS)
def test_example_equals_the_reference(program: str, stream: str) -> None:
    elements = [(e.time, list(e.triples)) for e in read_atom_stream(EXAMPLES / stream)]
    expected = ReferenceLars((EXAMPLES / program).read_text()).output_stream(elements)
    assert run(program, stream) == expected
    assert any(atoms for _, atoms in expected)  # the example derives something


def test_cooling_raises_the_alarm_only_after_steam_throughout_the_window() -> None:
    outputs = dict(run("cooling.lars", "temp.jsonl"))
    readings = {e.time: e.triples[0] for e in read_atom_stream(EXAMPLES / "temp.jsonl")}
    for time, atoms in outputs.items():
        steam = all(int(readings[u][5:-1]) >= 100 for u in range(max(0, time - 3), time + 1))
        assert ("alarm" in atoms) == steam
        assert ("freeze" in atoms) == ("alarm" not in atoms and "normal" not in atoms)
