"""The Datalog reasoner: the DOTR example, language errors, builtins, and a differential
test of per-time-point reasoning against a naive from-scratch fixpoint."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode

from chronolog.datalog import Reasoner, load_program
from chronolog.errors import ChronologSyntaxError
from chronolog.terms import RDF, XSD, TermDictionary
from reference.datalog import perfect_model, render

EX = "http://example.org/"
RDF_TYPE = RDF + "type"


def reasoner(text: str, background: list[tuple[str, str, str]] = ()) -> tuple[Reasoner, TermDictionary]:
    d = TermDictionary()
    r = Reasoner(load_program([(text, "rules.dl")], d), d)
    r.add_background(tuple(d.iri(EX + x) if ":" not in x else d.iri(x) for x in t) for t in background)
    r.close()
    return r, d


def decoded(view, d: TermDictionary) -> set[tuple[str, ...]]:
    def name(tid: int) -> str:
        term = d.decode(tid)
        if isinstance(term, NamedNode) and term.value.startswith(EX):
            return term.value[len(EX):]
        return str(term) if not isinstance(term, NamedNode) else term.value

    return {tuple(name(x) for x in f) for f in view.scan("triple")}


ROOMS = """PREFIX : <http://example.org/>
:is_in_room(?A, ?B) :- :is_at_location(?A, ?C), :is_in_room(?C, ?B).
"""


def test_dotr_room_example() -> None:
    """DOTR section 3: :s1 :is_at_location :locA at 10 gives :s1 :is_in_room :roomA at 10 only."""
    r, d = reasoner(ROOMS, [("locA", "is_in_room", "roomA"), ("locB", "is_in_room", "roomA")])
    at10 = decoded(r.at([(d.iri(EX + "s1"), d.iri(EX + "is_at_location"), d.iri(EX + "locA"))]), d)
    assert ("s1", "is_in_room", "roomA") in at10
    at12 = decoded(r.at([(d.iri(EX + "s2"), d.iri(EX + "is_at_location"), d.iri(EX + "locB"))]), d)
    assert ("s2", "is_in_room", "roomA") in at12
    assert ("s1", "is_in_room", "roomA") not in at12  # what held only at 10 is gone at 12
    assert ("s1", "is_at_location", "locA") not in at12


def test_recursion_and_local_relations() -> None:
    text = """PREFIX : <http://example.org/>
    reach(?x, ?y) :- :edge(?x, ?y).
    reach(?x, ?z) :- reach(?x, ?y), :edge(?y, ?z).
    :reaches(?x, ?y) :- reach(?x, ?y), :Node(?x).
    """
    r, d = reasoner(text, [("a", "edge", "b"), ("b", "edge", "c"), ("a", RDF_TYPE, "Node")])
    got = decoded(r.close(), d)
    assert {("a", "reaches", "b"), ("a", "reaches", "c")} <= got
    assert not any(t[1] == "reach" for t in got)  # local relations are not RDF


def test_negation_sees_each_time_point() -> None:
    text = """PREFIX : <http://example.org/>
    :Alarm(?x) :- :Reading(?x), not :Calibrating(?x).
    """
    r, d = reasoner(text, [("s", RDF_TYPE, "Reading")])
    assert ("s", RDF_TYPE, "Alarm") in decoded(r.close(), d)
    view = r.at([(d.iri(EX + "s"), d.iri(RDF_TYPE), d.iri(EX + "Calibrating"))])
    assert ("s", RDF_TYPE, "Alarm") not in decoded(view, d)
    assert ("s", RDF_TYPE, "Alarm") in decoded(r.at([]), d)


def test_comparisons_and_arithmetic() -> None:
    text = """PREFIX : <http://example.org/>
    PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
    :Hot(?s) :- :temp(?s, ?v), ?v > 45.
    :doubled(?s, ?w) :- :temp(?s, ?v), ?w = ?v * 2 + 0.5.
    :Same(?s) :- :temp(?s, ?v), ?v = "50"^^xsd:decimal.
    :Odd(?s) :- :temp(?s, ?v), ?v > "abc".
    """
    d = TermDictionary()
    r = Reasoner(load_program([(text, "rules.dl")], d), d)
    temp = d.iri(EX + "temp")
    r.add_background([(d.iri(EX + "a"), temp, d.encode(Literal("50", datatype=NamedNode(XSD + "integer")))),
                      (d.iri(EX + "b"), temp, d.encode(Literal("12", datatype=NamedNode(XSD + "integer"))))])
    got = decoded(r.close(), d)
    assert ("a", RDF_TYPE, "Hot") in got and ("b", RDF_TYPE, "Hot") not in got
    assert ("a", RDF_TYPE, "Same") in got
    assert not any(t[2] == "Odd" for t in got)  # comparing a number with a string is an error: false
    doubled = {t[2] for t in got if t[1] == "doubled"}
    assert doubled == {'"100.5"^^<http://www.w3.org/2001/XMLSchema#decimal>',
                       '"24.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'}


def test_constraints_become_diagnostics() -> None:
    text = """PREFIX : <http://example.org/>
    [disjoint] false :- :Cat(?x), :Dog(?x).
    """
    r, d = reasoner(text, [("rex", RDF_TYPE, "Dog")])
    assert r.diagnostics(r.close()) == []
    view = r.at([(d.iri(EX + "rex"), d.iri(RDF_TYPE), d.iri(EX + "Cat"))])
    assert r.diagnostics(view) == [("disjoint", (d.iri(EX + "rex"),))]


@pytest.mark.parametrize(
    "text, where, message",
    [
        (":p(?x) :- :q(?x ?y).", "rules.dl:2:17", "expected ')' or ',', found '?y'"),
        (":p(?x) :- :q(?x)", "rules.dl:2:17", "expected '.' at the end of the rule"),
        (":p(?x) :- ex:q(?x).", "rules.dl:2:11", "unknown prefix 'ex:'"),
        (":p(?x, ?y) :- :q(?x).", "rules.dl:2:8", "unsafe rule: head variable ?y"),
        (":p(?x) :- :q(?x), not :r(?x, ?z).", "rules.dl:2:30", "unsafe rule: variable ?z of a negated atom"),
        (":p(?x) :- :q(?x), ?y > 3.", "rules.dl:2:19", "unsafe rule: variable ?y"),
        (":p(?x) :- :q(?x), not :p(?x).", "rules.dl:2:23", "negation through recursion"),
        ("r(?x) :- :q(?x).\nr(?x, ?y) :- :q(?x, ?y).", "rules.dl:3:1", "relation 'r' is used with 2 arguments"),
        (":p(?x, ?y, ?z) :- :q(?x, ?y, ?z).", "rules.dl:2:19", "an IRI predicate takes 1 argument"),
        (':p(?x) :- :q(?x, "a\\q").', "rules.dl:2:20", "unknown escape"),
        (":p(?x) :- :q(?x) ; .", "rules.dl:2:18", "unexpected character ';'"),
    ],
)
def test_rule_errors_name_the_place(text: str, where: str, message: str) -> None:
    source = "PREFIX : <http://example.org/>\n" + text
    with pytest.raises(ChronologSyntaxError) as info:
        load_program([(source, "rules.dl")], TermDictionary())
    shown = str(info.value)
    assert shown.startswith(where + ": "), shown
    assert message in shown
    assert "^" in shown.splitlines()[-1]


# -- differential: per-time-point reasoning == naive fixpoint from scratch ----------------

CONSTS = ["a", "b", "c"]
VARS = ["?x", "?y", "?z"]


@st.composite
def programs(draw):
    """Random stratified programs over predicates p0..p5 with levels, and their data."""
    npred = 6
    levels = [draw(st.integers(0, 2)) for _ in range(npred)]
    preds = [f"p{i}" for i in range(npred)]
    term = st.sampled_from(VARS + CONSTS[:2])
    strata: list[list] = [[], [], []]
    for _ in range(draw(st.integers(1, 7))):
        head_pred = draw(st.integers(0, npred - 1))
        level = levels[head_pred]
        usable = [p for p, lv in zip(preds, levels) if lv <= level]
        lower = [p for p, lv in zip(preds, levels) if lv < level]
        pos = [(draw(term), draw(st.sampled_from(usable)), draw(term)) for _ in range(draw(st.integers(1, 3)))]
        bound = sorted({a for atom in pos for a in (atom[0], atom[2]) if a.startswith("?")})
        if not bound:
            continue
        neg = []
        if lower and draw(st.booleans()):
            neg.append((draw(st.sampled_from(bound)), draw(st.sampled_from(lower)), draw(st.sampled_from(bound + CONSTS))))
        head = (draw(st.sampled_from(bound + CONSTS)), preds[head_pred], draw(st.sampled_from(bound)))
        strata[level].append((head, pos, neg))
    fact = st.tuples(st.sampled_from(CONSTS), st.sampled_from(preds), st.sampled_from(CONSTS))
    background = draw(st.sets(fact, max_size=12))
    points = draw(st.lists(st.sets(fact, max_size=6), min_size=1, max_size=5))
    return strata, background, points


@settings(max_examples=300, deadline=None)
@given(programs())
def test_reasoning_at_t_equals_naive_fixpoint(case) -> None:
    strata, background, points = case
    d = TermDictionary()
    r = Reasoner(load_program([(render(strata, EX), "random.dl")], d), d)
    enc = lambda t: tuple(d.iri(EX + x) for x in t)  # noqa: E731
    r.add_background(enc(t) for t in background)
    assert decoded(r.close(), d) == perfect_model(set(background), strata)
    for elements in points:
        got = decoded(r.at([enc(t) for t in elements]), d)
        assert got == perfect_model(set(background) | elements, strata)
