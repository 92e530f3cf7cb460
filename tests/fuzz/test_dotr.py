"""Fuzzing DOTR: any text parses to a tree or a positioned error, and compiles (through
the language registry, as ``chronolog check`` does) to a program or a ChronologError."""
from __future__ import annotations

from hypothesis import given, settings

from chronolog.errors import ChronologError
from chronolog.lang.dotr.syntax import parse_dotr
from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec

from fuzz.texts import assert_positioned, corpus, fuzz_texts

TOKENS = [
    "PREFIX : <http://example.org/>\n", "EVENT ", "Smoke", "Hot", " AS ", "SELECT ?s ?v WHERE { ?s :p ?v }",
    "SELECT * WHERE { ?s ?p ?o FILTER(?o > 1) }", "RULE :r\n", "RULE ", " DEFINE { ?x a :A ; :s ?s . }", " FROM ",
    " AND ", " NOT ", " LAST ", " FIRST ", " EACH ", " WITHIN ", "5 min", "0", "PT1S", "99999999999999999999 d",
    "9007199254740992", " FROM Smoke", " WHERE ", "Smoke.s", " = ", "Hot.s", " WITH ", "?s = Smoke.s", "?m = ",
    "MAX(", "COUNT(", "Hot.v", ")", " CONSUMING ", " FEEDBACK ", " AFTER ", " BETWEEN ", "{", "}", "?x", ",", "\n",
]
VALID = corpus("examples/**/*.dotr", "tests/fixtures/dotr/**/*.dotr")


@settings(max_examples=300, deadline=None)
@given(fuzz_texts(TOKENS, VALID))
def test_any_text_gives_a_tree_or_a_positioned_error(text: str) -> None:
    try:
        parse_dotr(text, "f.dotr")
    except ChronologError as error:
        assert_positioned(error, "f.dotr", text)


@settings(max_examples=200, deadline=None)
@given(fuzz_texts(TOKENS, VALID))
def test_any_text_compiles_or_gives_a_chronolog_error(text: str) -> None:
    try:
        compile_program(ProgramSpec("dotr", text, "f.dotr"))
    except ChronologError as error:
        assert_positioned(error, "f.dotr", text)
