"""Fuzzing the Datalog rule language: any text gives a program or a positioned error,
never another exception (parsing, lowering, safety, stratification)."""
from __future__ import annotations

from hypothesis import example, given, settings

from chronolog.datalog import load_program
from chronolog.errors import ChronologError
from chronolog.rulesets import ruleset_source
from chronolog.terms import TermDictionary

from fuzz.texts import assert_positioned, corpus, fuzz_texts

TOKENS = [
    "PREFIX : <http://example.org/>\n", "@prefix ex: <http://e/> .\n", "BASE <http://e/>\n", ":p", ":q", "ex:r", "rel",
    "triple", "(", ")", "?x", "?y", "$z", ", ", ":-", ".\n", "not ", "false", "true", "[r1] ", "<http://e/a>", "<a>",
    '"s"', "'t'", "@en", "^^", "xsd:integer", "42", "-1", "3.5", "1e3", "+", "-", "*", "/", "=", "!=", "<", ">=",
    "_:b", "a", "%", "# c\n", '"\\u00e9"', '"\\uD800"', '"\\U00110000"', '"\\q"', "99999999999999999999999", "@en-",
]
VALID = corpus("examples/**/*.dl", "tests/fixtures/**/*.dl") + [ruleset_source("rdfs")[0]]


@settings(max_examples=400, deadline=None)
@given(fuzz_texts(TOKENS, VALID))
@example('PREFIX e: <http://:p/>\ne:a(?x) :- e:b(?x).')  # an IRI pyoxigraph refuses: was a ValueError
@example('PREFIX e: <http://e/>\ne:a(e:b, "\\U00110000").')  # was a ValueError from chr()
def test_any_rules_give_a_program_or_a_positioned_error(text: str) -> None:
    try:
        load_program([(text, "f.dl")], TermDictionary())
    except ChronologError as error:
        assert_positioned(error, "f.dl", text)
