"""Reading and writing atom streams: normal form, positioned errors, lateness, RDF mapping."""
from __future__ import annotations

import io

import pytest

from chronolog.atomstreams import normal_atom, read_atom_stream
from chronolog.program import AtomsOutput
from chronolog.program.writers import AtomWriter
from chronolog.errors import ChronologSyntaxError, LateElementError
from chronolog.lateness import LatePolicy


def read(text: str, **kwargs: object) -> list[tuple[int, tuple[str, ...]]]:
    return [(e.time, e.triples) for e in read_atom_stream(io.BytesIO(text.encode()), **kwargs)]  # type: ignore[arg-type]


def test_atoms_are_read_in_normal_form_in_order_once() -> None:
    lines = '{"time": 1, "atoms": ["b", "p( a , \'Alice\' , 007)", "b"]}\n\n{"time": 4, "atoms": []}\n'
    assert read(lines) == [(1, ("b", "p(a,'Alice',7)")), (4, ())]


@pytest.mark.parametrize("text, normal", [
    ("p(a,b)", "p(a,b)"), ("'a'", "a"), ("p('7', 2.50)", "p(7,2.5)"), ("'http://ex/p'('http://ex/s')",
                                                                        "'http://ex/p'('http://ex/s')"),
    ("p('it\\'s')", "p('it\\'s')"), ("not(a)", "'not'(a)"),
])
def test_normal_form(text: str, normal: str) -> None:
    assert normal_atom(text) == normal
    assert normal_atom(normal) == normal


@pytest.mark.parametrize("line, col, message", [
    ('{"time": 1, "atoms": ["p(a"]}', 27, "expected ',' or ')'"),
    ('{"time": 1, "atoms": "p"}', 13, 'expected a list of atom texts'),
    ('{"time": 1, "atoms": [3]}', 13, "not an atom text"),
    ('{"time": "x", "atoms": []}', 2, 'invalid "time"'),
    ('{"time": 1, "graph": ""}', 1, "unknown key 'graph'"),
    ('{"time": 1, "atoms": [}', 23, "invalid JSON"),
])
def test_malformed_lines_name_file_line_and_column(line: str, col: int, message: str) -> None:
    source = io.BytesIO(('{"time": 0, "atoms": []}\n' + line + "\n").encode())
    source.name = "s.jsonl"  # type: ignore[attr-defined]
    with pytest.raises(ChronologSyntaxError) as caught:
        list(read_atom_stream(source))
    assert (caught.value.filename, caught.value.lineno, caught.value.offset) == ("s.jsonl", 2, col)
    assert message in caught.value.message


def test_late_elements_follow_the_policy() -> None:
    lines = '{"time": 5, "atoms": ["a"]}\n{"time": 3, "atoms": ["b"]}\n{"time": 6, "atoms": []}\n'
    with pytest.raises(LateElementError, match="late element at time 3"):
        read(lines)
    late: list = []
    assert read(lines, late=LatePolicy.divert(late)) == [(5, ("a",)), (6, ())]
    assert [item.element.time for item in late] == [3]


def test_rdf_streams_map_triples_to_atoms(tmp_path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"time": 2, "graph": "<http://ex/s> <http://ex/p> 42 . '
        '<http://ex/s> a <http://ex/C> . <http://ex/s> <http://ex/q> \\"hot\\"@en ."}\n')
    assert [(e.time, e.triples) for e in read_atom_stream(path)] == [
        (2, ("'http://ex/p'('http://ex/s',42)", "'http://ex/C'('http://ex/s')", "'http://ex/q'('http://ex/s',hot)"))]
    trig = tmp_path / "s.trig"
    trig.write_text('<http://ex/g> <http://www.w3.org/ns/prov#generatedAtTime> 7 .\n'
                    '<http://ex/g> { <http://ex/s> <http://ex/p> <http://ex/o> . }\n')
    assert [(e.time, e.triples) for e in read_atom_stream(trig)] == [(7, ("'http://ex/p'('http://ex/s','http://ex/o')",))]


def test_written_lines_read_back() -> None:
    out = io.BytesIO()
    with AtomWriter(out) as writer:
        writer.write(AtomsOutput(1, ("q(a)", "'http://ex/p'(b)")))
        writer.write(AtomsOutput(2, ()))
    assert read(out.getvalue().decode()) == [(1, ("q(a)", "'http://ex/p'(b)")), (2, ())]
