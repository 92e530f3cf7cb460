"""Fuzzing LARS compilation: tests/lars/test_syntax.py fuzzes the parser and checker; here
any text also compiles (through the language registry) and runs over a few atoms to
outputs or a ChronologError, never another exception."""
from __future__ import annotations

from hypothesis import example, given, settings

from chronolog.errors import ChronologError
from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec

from fuzz.texts import assert_positioned, corpus, fuzz_texts

TOKENS = [
    "q", "p(X)", "a(X,Y)", "X", "T", "'i#r'", "3", "0", "1", "-2", ":-", " and ", "not", "diamond", "box", "@",
    "time_win", "tuple_win", "MATH", "COMP", "(", ")", ",", ">=", "+", "/", "%", "\n", " ", "'", "predicate_win",
    "99999999999999999999", "9007199254740992", "temp(V)", "@(T, ", "time_win(10, 0, 1, ", "MATH(/, R, V, 0)",
]
VALID = corpus("examples/lars/*.lars", "tests/fixtures/lars/**/*.lars")
ATOMS = [("temp(105)", "p(a,b)", "a(1,2)", "q"), ("temp(0)", "p(b,c)", "a(2,3)", "b")]


@settings(max_examples=300, deadline=None)
@given(fuzz_texts(TOKENS, VALID))
@example("q :- tuple_win(99999999999999999999, diamond(b))")  # was an OverflowError (a deque's maxlen)
def test_any_text_compiles_and_runs_or_gives_a_chronolog_error(text: str) -> None:
    try:
        program = compile_program(ProgramSpec("lars", text, "f.lars"))
        for time, atoms in enumerate(ATOMS):
            program.push(time, {name: [atoms] for name in program.streams or ("",)})
        program.flush()
    except ChronologError as error:
        assert_positioned(error, "f.lars", text)
