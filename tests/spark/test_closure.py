"""Spark closure == in-process Reasoner closure: built-in rule sets, user rules with
negation, local relations, comparisons and assignments, and random programs; the Parquet
round trip and the command."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronolog import cli
from chronolog.datalog import Reasoner, load_program, load_rules
from chronolog.datalog.parquet_closure import LOWER, UPPER, load_closure
from chronolog.formats import encode_text, load_graph
from chronolog.spark.closure import Closure, spark_closure, triples_frame
from chronolog.spark.command import build_parser, materialize_spark_command
from chronolog.store import TRIPLE
from chronolog.terms import OWL, RDF, TermDictionary
from reference.datalog import render
from test_datalog import programs

pytestmark = pytest.mark.spark

PREFIXES = """@prefix : <http://example.org/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""

# A small ontology touching the OWL 2 RL tables that need joins of three or more atoms,
# lists (local relations), comparisons (prp-fp's ?y1 != ?y2, cls-maxc2's ?n = 1) and sameAs.
ONTOLOGY = PREFIXES + """
:Dog rdfs:subClassOf :Animal . :Animal rdfs:subClassOf :Being .
:hasParent owl:inverseOf :hasChild . :hasParent rdfs:subPropertyOf :ancestor .
:rex a :Dog ; :hasParent :max ; :hasId :id1, :id2 .
:hasId a owl:FunctionalProperty .
:Pet owl:intersectionOf ( :Animal :Tame ) . :rex a :Tame .
:Owner owl:equivalentClass [ owl:onProperty :owns ; owl:someValuesFrom :Pet ] . :ann :owns :rex .
:OneCar owl:maxCardinality 1 ; owl:onProperty :drives . :ann a :OneCar ; :drives :car1, :car2 .
:age rdfs:range xsd:integer . :rex :age 5 .
"""

USER_RULES = """PREFIX : <http://example.org/>
reach(?x, ?y) :- :edge(?x, ?y).
reach(?x, ?z) :- reach(?x, ?y), :edge(?y, ?z).
:reaches(?x, ?y) :- reach(?x, ?y), :Node(?x).
:linked(?x) :- :edge(?x, ?y).
:Isolated(?x) :- :Node(?x), not :linked(?x).
:Hot(?s) :- :temp(?s, ?v), ?v > 45.
:Cool(?s) :- :temp(?s, ?v), not :Hot(?s).
:doubled(?s, ?w) :- :temp(?s, ?v), ?w = ?v * 2 + 0.5.
:next(?s, ?w) :- :doubled(?s, ?v), ?w = ?v + 1, ?w > 50.
:Big(?s) :- :temp(?s, ?v), ?w = ?v * 10, ?w > 100.
:AlsoHot(?s) :- :Hot(?s), not :Cool(?s), not :Isolated(:a).
[broken-and-hot] false :- :Hot(?s), :Broken(?s).
"""

USER_DATA = PREFIXES + """
:a :edge :b . :b :edge :c . :c :edge :d . :a a :Node . :d a :Node . :e a :Node .
:s1 :temp 50 . :s2 :temp 12 . :s3 :temp "7.5"^^xsd:decimal . :s1 a :Broken .
"""


def closures_agree(spark, specs: list[tuple[str, str]], data: str) -> Closure:
    """The Spark closure, checked relation by relation and layer by layer against the
    Reasoner's over the same dictionary (so ids, blank nodes included, compare directly)."""
    d = TermDictionary()
    program = load_program(specs, d)
    triples = list(encode_text(data, d, format="ttl"))
    closure = spark_closure(spark, program, d, triples_frame(spark, triples))
    reasoner = Reasoner(program, d)
    reasoner.add_background(triples)
    reasoner.close()
    for layer, expected in ((LOWER, reasoner.lower), (UPPER, reasoner.upper)):
        got = closure.lower if layer == LOWER else closure.upper
        for name, relation in expected.relations.items():
            assert {tuple(r) for r in got[name].collect()} == relation.facts, (layer, name)
    assert sorted(closure.diagnostics()) == sorted(reasoner.diagnostics(reasoner.background_view))
    return closure


def test_rdfs_closure_equals_in_process(spark, shared: Path) -> None:
    from chronolog.rulesets import ruleset_source

    city = (shared / "data/citybench/ontology/city.n3").read_text()
    closures_agree(spark, [ruleset_source("rdfs")], city)


def test_owl_rl_closure_equals_in_process(spark) -> None:
    from chronolog.rulesets import ruleset_source

    closure = closures_agree(spark, [ruleset_source("owl-rl")], ONTOLOGY)
    d = closure.dictionary
    ex = lambda name: d.iri("http://example.org/" + name)  # noqa: E731
    facts = set(closure.facts(TRIPLE))
    assert (ex("rex"), d.iri(RDF + "type"), ex("Pet")) in facts  # through the intersectionOf list
    assert (ex("ann"), d.iri(RDF + "type"), ex("Owner")) in facts  # someValuesFrom
    assert (ex("car1"), d.iri(OWL + "sameAs"), ex("car2")) in facts  # maxCardinality 1


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(programs(), min_size=12, max_size=12))
def test_random_programs_equal_in_process(spark, cases) -> None:
    """Many random stratified programs at once: each in its own namespace, so they cannot
    interact, and one Spark closure checks them all (a closure costs seconds of job latency)."""
    sources, data = [], [PREFIXES]
    for k, (strata, background, _) in enumerate(cases):
        prefix = f"http://example.org/{k}/"
        sources.append((render(strata, prefix), f"random{k}.dl"))
        data.extend(f"<{prefix}{s}> <{prefix}{p}> <{prefix}{o}> .\n" for s, p, o in background)
    closures_agree(spark, sources, "".join(data))


def test_command_writes_what_the_in_process_command_writes(spark, tmp_path: Path, capsys) -> None:
    """User rules (negation over derived facts, local relations, arithmetic that
    makes new literals, filters on them, a constraint) through the command: N-Triples equal
    to ``chronolog materialize``'s, and the Parquet folder loads back to the Reasoner's layers."""
    data = tmp_path / "data.ttl"
    data.write_text(USER_DATA)
    rules = tmp_path / "user.dl"
    rules.write_text(USER_RULES)
    expected, got, folder = tmp_path / "inprocess.nt", tmp_path / "spark.nt", tmp_path / "closure"
    assert cli.main(["materialize", str(data), "--rules", str(rules), "-o", str(expected),
                     "--sort"]) == 0
    inprocess_err = capsys.readouterr().err
    args = build_parser().parse_args([str(data), "--rules", str(rules), "-o", str(got), "--sort",
                                      "--parquet", str(folder)])
    assert materialize_spark_command(args) == 0
    assert got.read_bytes() == expected.read_bytes()
    assert capsys.readouterr().err == inprocess_err  # the same inconsistency notes
    assert "broken-and-hot" in inprocess_err

    loaded = load_closure(folder)
    d = TermDictionary()
    reasoner = Reasoner(load_rules([str(rules)], d), d)
    reasoner.add_background(load_graph([str(data)], d))
    reasoner.close()
    text = lambda dictionary, facts: {tuple(str(dictionary.decode(t)) for t in f) for f in facts}  # noqa: E731
    for mine, theirs in ((loaded.lower, reasoner.lower), (loaded.upper, reasoner.upper)):
        for name, relation in theirs.relations.items():
            have = mine.relations[name].facts if name in mine.relations else set()
            assert text(loaded.dictionary, have) == text(d, relation.facts), name
    assert loaded.upper.relations[TRIPLE].facts  # negation put facts in the upper layer


def test_load_closure_reencodes_into_a_used_dictionary(spark, tmp_path: Path) -> None:
    """Stored ids are mapped through the given dictionary, which may already hold terms."""
    from chronolog.spark.parquet import write_closure

    d = TermDictionary()
    program = load_rules([], d)
    triples = list(encode_text(PREFIXES + ":a :p :b . :b :p 1 .", d, format="ttl"))
    write_closure(spark_closure(spark, program, d, triples_frame(spark, triples)), tmp_path / "c")
    other = TermDictionary()
    other.iri("http://example.org/unrelated")
    loaded = load_closure(tmp_path / "c", other)
    assert {tuple(str(other.decode(t)) for t in f) for f in loaded.view.scan(TRIPLE)} == \
        {tuple(str(d.decode(t)) for t in f) for f in triples}
