"""The EP-SPARQL parser: the paper's operators and shapes parse to the tree they mean, and any
text gives a tree or a positioned error (FILE:LINE:COL, the line, a caret)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronolog.errors import ChronologSyntaxError
from chronolog.lang.epsparql.syntax import Binary, Construct, Filtered, Projected, Select, Triples, parse

P = "PREFIX : <http://e/>\n"


def test_chains_of_one_operator_associate_left() -> None:
    where = parse(P + "SELECT ?c WHERE { ?c :p ?a } SEQ { ?c :p ?b } SEQ { ?c :p ?d }").select.where
    assert isinstance(where, Binary) and where.op == "SEQ"
    assert isinstance(where.left, Binary) and where.left.op == "SEQ"
    assert isinstance(where.right, Triples) and str(where.right.triples[0].object) == "d"


@pytest.mark.parametrize("op", ["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "OPTIONAL", "AND", "UNION"])
def test_every_operator(op: str) -> None:
    where = parse(P + f"SELECT * {{ {{ ?x :p ?y }} {op.lower()} {{ ?x :q ?z }} }}").select.where
    assert isinstance(where, Binary) and where.op == op


def test_braces_group_and_filters_apply_to_their_group() -> None:
    text = P + """SELECT ?c WHERE {{ ?c :p ?a } SEQ { ?c :p ?b } FILTER(?a < ?b)}
                  EQUALSOPTIONAL { ?c :q ?x } FILTER(!BOUND(?x) && getDURATION() < "PT40S"^^xsd:duration)"""
    where = parse(text).select.where
    assert isinstance(where, Filtered) and where.filters[0].name == "&&"
    inner = where.pattern
    assert isinstance(inner, Binary) and inner.op == "EQUALSOPTIONAL"
    assert isinstance(inner.left, Filtered) and inner.left.pattern.op == "SEQ"


def test_juxtaposed_groups_join_and_triples_abbreviate() -> None:
    where = parse(P + "SELECT * WHERE { ?s :p ?o ; :q ?r , 1 . ?s a :T } { ?s :z 2.5 }").select.where
    assert isinstance(where, Binary) and where.op == "AND"
    assert len(where.left.triples) == 4
    assert str(where.left.triples[3].predicate) == "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def test_several_construct_rules_and_one_select() -> None:
    program = parse(P + "CONSTRUCT { ?x :d 1 } WHERE { ?x :p 1 }\nCONSTRUCT { ?x :e 1 } { ?x :d 1 }\nSELECT ?x { ?x :e 1 }")
    assert [type(s) for s in program.statements] == [Construct, Construct, Select]
    assert len(program.rules) == 2 and program.select is not None


@pytest.mark.parametrize("text, line, col, message", [
    (P + "SELECT ?x { ?x :p 1 }\nSELECT ?y { ?y :p 1 }", 3, 1, "at most one SELECT"),
    (P + "SELECT (?x + 1 ?y) { ?x :p 1 }", 2, 16, "expected AS ?variable after a projected expression"),
    (P + "SELECT ?x (?y + 1 AS ?x) { ?x :p ?y }", 2, 26, "?x is projected twice"),
    (P + "SELECT ?x { { SELECT ?x WHERE { ?x :p 1 } }", 2, 44, "expected '}'"),
    (P + "SELECT ?x { ?x :p 1 } SEQ", 2, 26, "SEQ needs a graph pattern on its right"),
    (P + "SELECT ?x { SEQ { ?x :p 1 } }", 2, 13, "SEQ needs a graph pattern on its left"),
    (P + "SELECT ?x {\n  ?x nope:p 1 }", 3, 6, "unknown prefix 'nope'"),
    (P + "SELECT ?x { ?x :p 1 FILTER(FOO(?x)) }", 2, 28, "unknown function FOO"),
    (P + "SELECT ?x { ?x :p 1 FILTER(getDURATION(?x) > 1) }", 2, 28, "takes no arguments"),
    (P + "SELECT ?x { {} SEQ { ?x :p 1 } }", 2, 13, "an empty group"),
    (P + "SELECT { ?x :p 1 }", 2, 8, "expected variables or '*'"),
    ("SELECT ?x { ?x <a b> 1 }", 1, 16, "expected a term, got '<'"),
])
def test_errors_name_their_place(text: str, line: int, col: int, message: str) -> None:
    with pytest.raises(ChronologSyntaxError) as caught:
        parse(text, "q.eps")
    err = caught.value
    assert message in err.message and (err.lineno, err.offset) == (line, col)
    assert str(err).startswith(f"q.eps:{line}:{col}: ") and str(err).rstrip().endswith("^")


PIECES = ["SELECT", "CONSTRUCT", "WHERE", "FILTER", "PREFIX", ":", "<http://e/>", "{", "}", "(", ")",
          "?x", "?y", ":p", "1", '"a"', "SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "AND", "UNION",
          ".", ";", ",", "&&", "<", "!", "getDURATION()", "BOUND", "*", '"PT1S"^^xsd:duration', "\n", "#c\n"]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(PIECES), max_size=25).map(" ".join)))
def test_any_text_gives_a_tree_or_a_positioned_error(text: str) -> None:
    try:
        parse(P + text, "f.eps")
    except ChronologSyntaxError as err:
        assert err.filename == "f.eps" and err.lineno >= 1 and err.offset >= 1
        assert str(err).startswith(f"f.eps:{err.lineno}:{err.offset}: ")


def test_projections_and_subqueries() -> None:
    program = parse(P + "CONSTRUCT { ?x :n ?n } { SELECT ?x (?v + 1 AS ?n) WHERE { ?x :p ?v } }\n"
                        "SELECT ?sum / ?count AS ?average ?x WHERE { ?x :sum ?sum ; :count ?count }")
    rule, select = program.statements
    assert isinstance(rule.where, Projected) and [str(v) for v, _ in rule.where.items] == ["x", "n"]
    assert rule.where.items[0][1] is None and rule.where.items[1][1] is not None
    assert select.variables == ("average", "x") and isinstance(select.where, Projected)
