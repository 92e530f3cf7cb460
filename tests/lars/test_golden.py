"""The Laser paper's Examples 1-6 and 8-9 as golden tests, on the reference evaluator and on
the incremental engine.

The stream of Fig. 1 (Example 1): timeline [35, 42], a(x1,y) at 36, a(x2,y) and b(y,z) at
38 (in that order), a(x3,y) at 40.
"""
from __future__ import annotations

import pytest

from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec
from reference.lars import ReferenceLars

FIG1 = [(35, []), (36, ["a(x1,y)"]), (38, ["a(x2,y)", "b(y,z)"]), (40, ["a(x3,y)"]), (42, [])]
RULE_R = "q(X,Y,Z) :- time_win(3, 0, 1, diamond(a(X,Y))) and tuple_win(3, diamond(b(Y,Z)))"


def lars(text: str):
    """A LARS program compiled through the registry."""
    return compile_program(ProgramSpec("lars", text))


def engine_stream(text: str, elements: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    engine = lars(text)
    out = []
    for time, atoms in elements:
        out += [(o.time, list(o.atoms)) for o in engine.push(time, {"": [tuple(atoms)]})]
    return out


def both(text: str, elements: list[tuple[int, list[str]]]) -> dict[int, list[str]]:
    reference = ReferenceLars(text).output_stream(elements)
    assert engine_stream(text, elements) == reference
    return dict(reference)


def test_example1_the_windows_at_41() -> None:
    program = "\n".join([
        "time3(T, X) :- time_win(3, 0, 1, @(T, a(X, y)))",
        "tuple3a(T, X) :- tuple_win(3, @(T, a(X, y)))",
        "tuple3b(T) :- tuple_win(3, @(T, b(y, z)))",
        "tuple2a(T, X) :- tuple_win(2, @(T, a(X, y)))",
        "tuple2b(T) :- tuple_win(2, @(T, b(y, z)))",
    ])
    at41 = both(program, FIG1)[41]
    # the time window of size 3 has timeline [38, 41]: a(x2,y) and a(x3,y)
    assert [a for a in at41 if a.startswith("time3")] == ["time3(38,x2)", "time3(40,x3)"]
    # the tuple window of size 3 is the same window: the last three atoms
    assert [a for a in at41 if a.startswith("tuple3")] == ["tuple3a(38,x2)", "tuple3a(40,x3)", "tuple3b(38)"]
    # size 2 keeps [38, 41] but one atom of 38: with arrival order, b(y,z) (it came after a(x2,y))
    assert [a for a in at41 if a.startswith("tuple2")] == ["tuple2a(40,x3)", "tuple2b(38)"]


def test_examples_3_and_4_the_output_stream() -> None:
    outputs = both(RULE_R, FIG1)
    assert outputs[41] == ["q(x2,y,z)", "q(x3,y,z)"]  # Example 3
    assert outputs[38] == outputs[39] == ["q(x1,y,z)", "q(x2,y,z)"]  # Example 4
    assert outputs[40] == ["q(x2,y,z)", "q(x3,y,z)"]
    # Example 4 also lists q(x2,y,z) at 42, but Definition 3 puts the window of size 3 at
    # 42 over [39, 42], which a(x2,y) (at 38) is not in: the definitions give q(x3,y,z) alone.
    assert outputs[42] == ["q(x3,y,z)"]
    assert outputs[35] == outputs[36] == outputs[37] == []


def test_example5_the_annotation_of_a_diamond_in_a_time_window() -> None:
    engine = lars(RULE_R)
    engine.push(35, {"": [()]})
    engine.push(36, {"": [("a(x1,y)",)]})
    step = engine.rules[0].plans[None][0]  # time_win(3, 0, 1, diamond(a(X, Y))), first in the body order
    assert [(b, h) for b, h, *_ in engine._ground(step, {}, None)] == [({"X": "x1", "Y": "y"}, 39)]


def test_example6_overlapping_annotations_are_kept() -> None:
    engine = lars("q(X) :- time_win(9, 0, 1, diamond(a(X)))")
    for time in range(5, 9):
        engine.push(time, {"": [("a(y)",)] if time in (5, 8) else []})
    assert sorted((f.consider, f.horizon) for f in engine.store.facts(("q", 1))) == [(5, 14), (8, 17)]


def test_example8_box_holds_now_and_is_not_extended() -> None:
    program = "h(X) :- time_win(2, 0, 1, box(a(X)))"
    engine = lars(program)
    elements = [(t, ["a(y)"] if t >= 5 else []) for t in range(0, 8)] + [(8, [])]
    for time, atoms in elements:
        out = engine.push(time, {"": [tuple(atoms)]})
        if time == 7:
            assert [(f.consider, f.horizon) for f in engine.store.facts(("h", 1))] == [(7, 7)]
    assert out[0].atoms == ()
    assert both(program, elements)[7] == ["h(y)"]


def test_example9_tuple_annotation_counts() -> None:
    engine = lars("q(Y,Z) :- tuple_win(3, diamond(b(Y,Z)))")
    for time, atoms in FIG1[:3]:
        engine.push(time, {"": [tuple(atoms)]})
    [fact] = engine.store.facts(("q", 2))
    assert (fact.consider, fact.count_horizon) == (38, 5)  # the third atom, held until the fifth


@pytest.mark.parametrize("program, time, expected", [
    # @ in a head into the past: Laser's cooling pattern, then box over the derived atoms
    ("@(T, hot) :- time_win(2, 0, 1, @(T, temp(V))) and COMP(>=, V, 90)\nalarm :- time_win(2, 0, 1, box(hot))",
     3, ["alarm", "hot"]),
    ("hot :- temp(V) and COMP(>=, V, 90)\nalarm :- time_win(2, 0, 1, box(hot))", 3, ["hot"]),
])
def test_intensional_atoms_of_the_past_come_only_from_at_heads(program: str, time: int, expected: list[str]) -> None:
    elements = [(t, ["temp(95)"]) for t in range(0, 4)]
    assert both(program, elements)[time] == expected
