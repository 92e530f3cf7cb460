"""The LARS parser and checker: Laser's programs parse, any text gives a tree or a
positioned error, and each static error names its place."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronolog.errors import ChronologSyntaxError
from chronolog.lang.lars import parse
from chronolog.lang.lars.check import AT, BOX, DIAMOND
from chronolog.lang.lars.syntax import parse as parse_syntax

COOLING = """\
@(T, steam(V)) :- time_win(10, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)
@(T, liquid(V)) :- time_win(10, 0, 1, @(T, temp(V))) and COMP(<, V, 100) and COMP(>=, V, 1)
@(T, isSteam) :- time_win(10, 0, 1, @(T, steam(V)))
@(T, isLiquid)  :- time_win(10, 0, 1, @(T, liquid(V)))
alarm :- time_win(10, 0, 1, box(isSteam))
normal :- time_win(10, 0, 1, box(isLiquid))
veryHot(T) :- time_win(10,0,1, @(T, steam(V))) and COMP(>=, V, 150)
veryCold(T) :- time_win(10,0,1, @(T, liquid(V))) and COMP(=, V, 1)
freeze :- not(alarm) and not(normal)
"""
JOIN = ("'http://example.org/stream/predicate#p1'(X,Z) :- time_win(80, 0, 1, diamond("
        "'http://example.org/stream/predicate#p'(X,Y))) and time_win(80 ,0,1,diamond("
        "'http://example.org/stream/predicate#p'(Y,Z)))")


def test_lasers_cooling_program_parses_unchanged() -> None:
    program = parse(COOLING, "cooling.lars")
    assert len(program.rules) == 9
    alarm = program.rules[4].literals[0]
    assert (alarm.window.size, alarm.modality, alarm.atom.pred) == (10, BOX, "isSteam")
    steam = program.rules[0]
    assert steam.head_time.name == "T" and steam.literals[0].modality == AT
    assert [r.stratum for r in program.rules] == [0] * 8 + [1]  # freeze negates alarm and normal


def test_quoted_iris_are_names() -> None:
    rule = parse(JOIN).rules[0]
    assert rule.head.pred == "http://example.org/stream/predicate#p1"
    assert [lit.modality for lit in rule.literals] == [DIAMOND, DIAMOND]


def test_comments_blank_lines_and_tuple_windows() -> None:
    program = parse("% a comment\n\nq :- tuple_win(3, 0, 1, diamond(b))\nr :- tuple_win(2, box(b))\n")
    assert [(r.literals[0].window.tuple, r.literals[0].window.size) for r in program.rules] == [(True, 3), (True, 2)]


def test_time_window_unit_multiplies_the_size() -> None:
    assert parse("q :- time_win(3, 0, 5, diamond(b))").rules[0].literals[0].window.size == 15


@pytest.mark.parametrize("text, line, col, message", [
    ("q :- a or b", 1, 8, "'or' is not supported"),
    ("q(X) :- not(a(X))", 1, 15, "unsafe rule: the variable X"),
    ("q(Y) :- a(X)", 1, 3, "head variable Y"),
    ("% c\nq :- time_win(3, 1, 1, a)", 2, 18, "second argument of time_win must be 0"),
    ("a :- not(b)\nb :- a", 1, 6, "negation is not stratified"),
    ("q :- diamond(box(a))", 1, 14, "outside plain LARS"),
    ("q :- time_win(2, 0, 1, time_win(1, 0, 1, a))", 1, 24, "outside plain LARS"),
    ("diamond(q) :- a", 1, 1, "a rule head is an atom or @(T, atom)"),
    ("q :- @(x, a)", 1, 8, "the time of @"),
    ("q :- a(", 1, 8, "expected a variable or a constant"),
    ("q :- tuple_win(0, diamond(a))", 1, 16, "tuple window must be 1 or more"),
    ("q :- X", 1, 6, "found the variable X"),
    ("q :- COMP(~, 1, 2)", 1, 11, "unexpected character"),
    ("q :- MATH(<, R, 1, 2)", 1, 11, "as the operator of MATH"),
    ("q :- a and", 1, 11, "expected an atom"),
])
def test_errors_name_their_place(text: str, line: int, col: int, message: str) -> None:
    with pytest.raises(ChronologSyntaxError) as caught:
        parse(text, "p.lars")
    error = caught.value
    assert (error.filename, error.lineno, error.offset) == ("p.lars", line, col)
    assert message in error.message
    assert str(error).startswith(f"p.lars:{line}:{col}: ")
    assert str(error).splitlines()[-1] == "    " + " " * (col - 1) + "^"


TOKENS = st.sampled_from([
    "q", "p(X)", "a(X,Y)", "X", "T", "'i#r'", "3", "0", "1", "-2", ":-", " and ", " or ", "not", "diamond", "box",
    "@", "time_win", "tuple_win", "MATH", "COMP", "(", ")", ",", ">=", "+", "%", "\n", " ", "'", "~", "predicate_win",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=25).map("".join) | st.text(max_size=40))
def test_any_text_gives_a_program_or_a_positioned_error(text: str) -> None:
    try:
        parse(text, "f.lars")
    except ChronologSyntaxError as error:
        assert error.filename == "f.lars" and error.lineno >= 1 and error.offset >= 1
        assert error.lineno <= text.count("\n") + 1


def test_the_parse_tree_keeps_positions() -> None:
    rule = parse_syntax("q :- b\n  r(X) :- diamond(s(X))").rules[1]
    assert rule.head.pos == 9 and rule.body[0].inner.pos == 25
