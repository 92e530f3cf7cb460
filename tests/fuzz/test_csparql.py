"""Fuzzing C-SPARQL: any text compiles (through the language registry) to a program or a
ChronologError, positioned when it is a syntax error."""
from __future__ import annotations

from hypothesis import example, given, settings

from chronolog.errors import ChronologError
from chronolog.lang.csparql.syntax import parse
from chronolog.lang.registry import compile_program
from chronolog.program import ProgramSpec

from fuzz.texts import assert_positioned, corpus, fuzz_texts

TOKENS = [
    "REGISTER QUERY q AS\n", "REGISTER STREAM s AS ", "COMPUTED EVERY 5s ", "PREFIX : <http://example.org/>\n",
    "SELECT ?x ?y\n", "SELECT (COUNT(?o) AS ?n)", "CONSTRUCT { ?x :p ?y }", "FROM STREAM ", "<http://example.org/s>",
    ":s", " [RANGE 10s STEP 1s]", " [RANGE 5s TUMBLING]", " [TRIPLES 3]", " [RANGE 0s STEP 1s]", " [TRIPLES 0]",
    " [RANGE 99999999999999999999s STEP 1s]", " [RANGE 9007199254740992 STEP 1]", "FROM <file:x.ttl>", "FROM NAMED ",
    "WHERE { ?x :isIn ?y }", "WHERE {", "}", " GROUP BY ?x", "[", "]", "RANGE", "STEP", "\n",
]
VALID = corpus("tests/fixtures/csparql/**/*.csparql")


@settings(max_examples=300, deadline=None)
@given(fuzz_texts(TOKENS, VALID))
def test_any_text_parses_or_gives_a_positioned_error(text: str) -> None:
    try:
        parse(text, "f.csparql")
    except ChronologError as error:
        assert_positioned(error, "f.csparql", text)


@settings(max_examples=200, deadline=None)
@given(fuzz_texts(TOKENS, VALID))
@example("REGISTER QUERY q AS SELECT * FROM STREAM <s> [RANGE 1 STEP 1] FROM <file:no/such.ttl> WHERE {}")  # was FileNotFoundError
def test_any_text_compiles_or_gives_a_chronolog_error(text: str) -> None:
    try:
        compile_program(ProgramSpec("csparql", text, "f.csparql"))
    except ChronologError as error:
        assert_positioned(error, "f.csparql", text)
