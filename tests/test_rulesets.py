"""The built-in rule sets rdfs and owl-rl: one hand-written case per rule, a differential
comparison with owlrl on generated ontologies, and the CityBench background closure."""
from __future__ import annotations

import re

import owlrl
import pytest
import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, parse

from chronolog.datalog import Reasoner, load_program
from chronolog.errors import ChronologError
from chronolog.joins import CompiledJoin, order
from chronolog.rulesets import ruleset_source
from chronolog.terms import TermDictionary

from ontology_gen import small_ontology
from shared_data import shared_path

PREFIXES = """
@prefix : <http://example.org/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
TYPE = f"<{RDF}type>"
SAME_AS = f"<{OWL}sameAs>"

NT = tuple[str, str, str]  # a triple as N-Triples terms


def turtle(text: str) -> list[Triple]:
    return list(parse(PREFIXES + text, format=RdfFormat.TURTLE))


def as_nt(triples) -> set[NT]:
    return {(str(t.subject), str(t.predicate), str(t.object)) for t in triples}


class Closure:
    """Our closure of some triples under a rule set: triples as N-Triples, diagnostics."""

    def __init__(self, triples: list[Triple], name: str) -> None:
        d = TermDictionary()
        self.program = load_program([ruleset_source(name)], d)
        self.reasoner = Reasoner(self.program, d)
        self.reasoner.add_background((d.encode(t.subject), d.encode(t.predicate), d.encode(t.object)) for t in triples)
        self.view = self.reasoner.close()
        self.triples = {tuple(str(d.decode(x)) for x in f) for f in self.view.scan("triple")}
        self.diagnostics = self.reasoner.diagnostics(self.view)
        self.labels = {label for label, _ in self.diagnostics}

    def applicable(self) -> set[str]:
        """Labels of the rules whose body has a solution in the closure (the rule was exercised)."""
        out = set()
        view = self.view
        for rule in self.program.rules:
            if rule.label and rule.label not in out:
                steps = order(rule.body, lambda p, mask: view.fanout(p.relation, mask))
                if CompiledJoin(steps, rule.head.args).bind(view)(None):
                    out.add(rule.label)
        return out


def rule_labels(name: str) -> set[str]:
    text, _ = ruleset_source(name)
    return set(re.findall(r"^\[([a-zA-Z0-9-]+)\]", text, re.M))


# -- one case per rule ----------------------------------------------------------------------
# (rule set, label, input, expected): expected is Turtle for entailed triples, or "!" for a
# diagnostic with the rule's label.

CASES = [
    # rdfs
    ("rdfs", "rdfD2", ":a :p :b .", ":p a rdf:Property ."),
    ("rdfs", "rdfs2", ":p rdfs:domain :C . :a :p :b .", ":a a :C ."),
    ("rdfs", "rdfs3", ":p rdfs:range :C . :a :p :b .", ":b a :C ."),
    ("rdfs", "rdfs4a", ":a :p :b .", ":a a rdfs:Resource ."),
    ("rdfs", "rdfs4b", ":a :p :b .", ":b a rdfs:Resource ."),
    ("rdfs", "rdfs5", ":p rdfs:subPropertyOf :q . :q rdfs:subPropertyOf :r .", ":p rdfs:subPropertyOf :r ."),
    ("rdfs", "rdfs6", ":p a rdf:Property .", ":p rdfs:subPropertyOf :p ."),
    ("rdfs", "rdfs7", ":p rdfs:subPropertyOf :q . :a :p :b .", ":a :q :b ."),
    ("rdfs", "rdfs8", ":C a rdfs:Class .", ":C rdfs:subClassOf rdfs:Resource ."),
    ("rdfs", "rdfs9", ":C rdfs:subClassOf :D . :a a :C .", ":a a :D ."),
    ("rdfs", "rdfs10", ":C a rdfs:Class .", ":C rdfs:subClassOf :C ."),
    ("rdfs", "rdfs11", ":C rdfs:subClassOf :D . :D rdfs:subClassOf :E .", ":C rdfs:subClassOf :E ."),
    ("rdfs", "rdfs12", "rdf:_1 a rdfs:ContainerMembershipProperty .", "rdf:_1 rdfs:subPropertyOf rdfs:member ."),
    ("rdfs", "rdfs13", ":T a rdfs:Datatype .", ":T rdfs:subClassOf rdfs:Literal ."),
    # owl-rl, Table 4
    ("owl-rl", "eq-sym", ":a owl:sameAs :b .", ":b owl:sameAs :a ."),
    ("owl-rl", "eq-trans", ":a owl:sameAs :b . :b owl:sameAs :c .", ":a owl:sameAs :c ."),
    ("owl-rl", "eq-rep-s", ":a owl:sameAs :b . :a :p :o .", ":b :p :o ."),
    ("owl-rl", "eq-rep-p", ":p owl:sameAs :q . :a :p :o .", ":a :q :o ."),
    ("owl-rl", "eq-rep-o", ":o owl:sameAs :o2 . :a :p :o .", ":a :p :o2 ."),
    ("owl-rl", "eq-diff1", ":a owl:sameAs :b . :a owl:differentFrom :b .", "!"),
    # the pair includes the last member (owlrl's loop misses it)
    ("owl-rl", "eq-diff2", ":x a owl:AllDifferent ; owl:members (:a :b :c) . :a owl:sameAs :c .", "!"),
    ("owl-rl", "eq-diff3", ":x a owl:AllDifferent ; owl:distinctMembers (:a :b) . :b owl:sameAs :a .", "!"),
    # Table 5
    ("owl-rl", "prp-ap", "", "rdfs:label a owl:AnnotationProperty . owl:incompatibleWith a owl:AnnotationProperty ."),
    ("owl-rl", "prp-dom", ":p rdfs:domain :C . :a :p :b .", ":a a :C ."),
    ("owl-rl", "prp-rng", ":p rdfs:range :C . :a :p :b .", ":b a :C ."),
    ("owl-rl", "prp-fp", ":p a owl:FunctionalProperty . :x :p :a, :b .", ":a owl:sameAs :b . :b owl:sameAs :a ."),
    ("owl-rl", "prp-ifp", ":p a owl:InverseFunctionalProperty . :a :p :y . :b :p :y .", ":a owl:sameAs :b ."),
    ("owl-rl", "prp-irp", ":p a owl:IrreflexiveProperty . :a :p :a .", "!"),
    ("owl-rl", "prp-symp", ":p a owl:SymmetricProperty . :a :p :b .", ":b :p :a ."),
    ("owl-rl", "prp-asyp", ":p a owl:AsymmetricProperty . :a :p :b . :b :p :a .", "!"),
    ("owl-rl", "prp-trp", ":p a owl:TransitiveProperty . :a :p :b . :b :p :c . :c :p :d .", ":a :p :c, :d . :b :p :d ."),
    ("owl-rl", "prp-spo1", ":p rdfs:subPropertyOf :q . :a :p :b .", ":a :q :b ."),
    ("owl-rl", "prp-spo2", ":gp owl:propertyChainAxiom (:parent :parent) . :a :parent :b . :b :parent :c .",
     ":a :gp :c ."),
    ("owl-rl", "prp-spo2", ":r owl:propertyChainAxiom (:p :q :p) . :a :p :b . :b :q :c . :c :p :d . :c :p :e .",
     ":a :r :d, :e ."),
    ("owl-rl", "prp-eqp1", ":p owl:equivalentProperty :q . :a :p :b .", ":a :q :b ."),
    ("owl-rl", "prp-eqp2", ":p owl:equivalentProperty :q . :a :q :b .", ":a :p :b ."),
    ("owl-rl", "prp-pdw", ":p owl:propertyDisjointWith :q . :a :p :b . :a :q :b .", "!"),
    ("owl-rl", "prp-adp", ":x a owl:AllDisjointProperties ; owl:members (:p :q :r) . :a :p :b . :a :r :b .", "!"),
    ("owl-rl", "prp-inv1", ":p owl:inverseOf :q . :a :p :b .", ":b :q :a ."),
    ("owl-rl", "prp-inv2", ":p owl:inverseOf :q . :a :q :b .", ":b :p :a ."),
    ("owl-rl", "prp-key", ":C owl:hasKey (:k1 :k2) . :a a :C ; :k1 1 ; :k2 2 . :b a :C ; :k1 1 ; :k2 2 .",
     ":a owl:sameAs :b . :b owl:sameAs :a ."),
    ("owl-rl", "prp-npa1", ":n owl:sourceIndividual :a ; owl:assertionProperty :p ; owl:targetIndividual :b . :a :p :b .",
     "!"),
    ("owl-rl", "prp-npa2", ':n owl:sourceIndividual :a ; owl:assertionProperty :p ; owl:targetValue "v" . :a :p "v" .',
     "!"),
    # Table 6
    ("owl-rl", "cls-thing", "", "owl:Thing a owl:Class ."),
    ("owl-rl", "cls-nothing1", "", "owl:Nothing a owl:Class ."),
    ("owl-rl", "cls-nothing2", ":C rdfs:subClassOf owl:Nothing . :a a :C .", "!"),
    ("owl-rl", "cls-int1", ":C owl:intersectionOf (:A :B :D) . :x a :A, :B, :D .", ":x a :C ."),
    ("owl-rl", "cls-int2", ":C owl:intersectionOf (:A :B) . :y a :C .", ":y a :A, :B ."),
    ("owl-rl", "cls-uni", ":C owl:unionOf (:A :B) . :y a :B .", ":y a :C ."),
    ("owl-rl", "cls-com", ":A owl:complementOf :B . :x a :A, :B .", "!"),
    ("owl-rl", "cls-svf1", ":R owl:someValuesFrom :C ; owl:onProperty :p . :u :p :v . :v a :C .", ":u a :R ."),
    ("owl-rl", "cls-svf2", ":R owl:someValuesFrom owl:Thing ; owl:onProperty :p . :u :p :v .", ":u a :R ."),
    ("owl-rl", "cls-avf", ":R owl:allValuesFrom :C ; owl:onProperty :p . :u a :R ; :p :v .", ":v a :C ."),
    ("owl-rl", "cls-hv1", ":R owl:hasValue :v ; owl:onProperty :p . :u a :R .", ":u :p :v ."),
    ("owl-rl", "cls-hv2", ":R owl:hasValue :v ; owl:onProperty :p . :u :p :v .", ":u a :R ."),
    ("owl-rl", "cls-maxc1",
     ':R owl:maxCardinality "0"^^xsd:nonNegativeInteger ; owl:onProperty :p . :u a :R ; :p :v .', "!"),
    ("owl-rl", "cls-maxc2",
     ':R owl:maxCardinality "1"^^xsd:nonNegativeInteger ; owl:onProperty :p . :u a :R ; :p :v1, :v2 .',
     ":v1 owl:sameAs :v2 ."),
    ("owl-rl", "cls-maxqc1", ':R owl:maxQualifiedCardinality "0"^^xsd:nonNegativeInteger ; owl:onProperty :p ; '
                             'owl:onClass :C . :u a :R ; :p :v . :v a :C .', "!"),
    ("owl-rl", "cls-maxqc2", ':R owl:maxQualifiedCardinality "0"^^xsd:nonNegativeInteger ; owl:onProperty :p ; '
                             'owl:onClass owl:Thing . :u a :R ; :p :v .', "!"),
    ("owl-rl", "cls-maxqc3", ':R owl:maxQualifiedCardinality "1"^^xsd:nonNegativeInteger ; owl:onProperty :p ; '
                             'owl:onClass :C . :u a :R ; :p :v1, :v2, :v3 . :v1 a :C . :v2 a :C .',
     ":v1 owl:sameAs :v2 ."),
    ("owl-rl", "cls-maxqc4", ':R owl:maxQualifiedCardinality "1"^^xsd:nonNegativeInteger ; owl:onProperty :p ; '
                             'owl:onClass owl:Thing . :u a :R ; :p :v1, :v2 .', ":v1 owl:sameAs :v2 ."),
    ("owl-rl", "cls-oo", ":C owl:oneOf (:a :b) .", ":a a :C . :b a :C ."),
    # Table 7
    ("owl-rl", "cax-sco", ":A rdfs:subClassOf :B . :x a :A .", ":x a :B ."),
    ("owl-rl", "cax-eqc1", ":A owl:equivalentClass :B . :x a :A .", ":x a :B ."),
    ("owl-rl", "cax-eqc2", ":A owl:equivalentClass :B . :x a :B .", ":x a :A ."),
    ("owl-rl", "cax-dw", ":A owl:disjointWith :B . :x a :A, :B .", "!"),
    ("owl-rl", "cax-adc", ":x a owl:AllDisjointClasses ; owl:members (:A :B :C) . :z a :A, :C .", "!"),
    # Table 8
    ("owl-rl", "dt-type1", "", "xsd:integer a rdfs:Datatype . rdf:PlainLiteral a rdfs:Datatype ."),
    ("owl-rl", "dt-not-type", ':age rdfs:range xsd:integer . :bob :age "abc" .', "!"),
    ("owl-rl", "dt-not-type", ":name rdfs:range xsd:string . :bob :name 42 .", "!"),
    ("owl-rl", "dt-not-type", ':on rdfs:range xsd:boolean . :bob :on "2020-01-01T00:00:00Z"^^xsd:dateTime .', "!"),
    ("owl-rl", "dt-not-type", ':at rdfs:range xsd:dateTime . :bob :at "now" .', "!"),
    ("owl-rl", "dt-not-type", ':lang rdfs:range rdf:langString . :bob :lang 1.5 .', "!"),
    # Table 9
    ("owl-rl", "scm-cls", ":C a owl:Class .",
     ":C rdfs:subClassOf :C, owl:Thing ; owl:equivalentClass :C . owl:Nothing rdfs:subClassOf :C ."),
    ("owl-rl", "scm-sco", ":A rdfs:subClassOf :B . :B rdfs:subClassOf :C .", ":A rdfs:subClassOf :C ."),
    ("owl-rl", "scm-eqc1", ":A owl:equivalentClass :B .", ":A rdfs:subClassOf :B . :B rdfs:subClassOf :A ."),
    ("owl-rl", "scm-eqc2", ":A rdfs:subClassOf :B . :B rdfs:subClassOf :A .", ":A owl:equivalentClass :B ."),
    ("owl-rl", "scm-op", ":p a owl:ObjectProperty .", ":p rdfs:subPropertyOf :p ; owl:equivalentProperty :p ."),
    ("owl-rl", "scm-dp", ":p a owl:DatatypeProperty .", ":p rdfs:subPropertyOf :p ; owl:equivalentProperty :p ."),
    ("owl-rl", "scm-spo", ":p rdfs:subPropertyOf :q . :q rdfs:subPropertyOf :r .", ":p rdfs:subPropertyOf :r ."),
    ("owl-rl", "scm-eqp1", ":p owl:equivalentProperty :q .", ":p rdfs:subPropertyOf :q . :q rdfs:subPropertyOf :p ."),
    ("owl-rl", "scm-eqp2", ":p rdfs:subPropertyOf :q . :q rdfs:subPropertyOf :p .", ":p owl:equivalentProperty :q ."),
    ("owl-rl", "scm-dom1", ":p rdfs:domain :A . :A rdfs:subClassOf :B .", ":p rdfs:domain :B ."),
    ("owl-rl", "scm-dom2", ":q rdfs:domain :A . :p rdfs:subPropertyOf :q .", ":p rdfs:domain :A ."),
    ("owl-rl", "scm-rng1", ":p rdfs:range :A . :A rdfs:subClassOf :B .", ":p rdfs:range :B ."),
    ("owl-rl", "scm-rng2", ":q rdfs:range :A . :p rdfs:subPropertyOf :q .", ":p rdfs:range :A ."),
    ("owl-rl", "scm-hv", ":R1 owl:hasValue :i ; owl:onProperty :p . :R2 owl:hasValue :i ; owl:onProperty :q . "
                         ":p rdfs:subPropertyOf :q .", ":R1 rdfs:subClassOf :R2 ."),
    ("owl-rl", "scm-svf1", ":R1 owl:someValuesFrom :A ; owl:onProperty :p . :R2 owl:someValuesFrom :B ; "
                           "owl:onProperty :p . :A rdfs:subClassOf :B .", ":R1 rdfs:subClassOf :R2 ."),
    ("owl-rl", "scm-svf2", ":R1 owl:someValuesFrom :A ; owl:onProperty :p . :R2 owl:someValuesFrom :A ; "
                           "owl:onProperty :q . :p rdfs:subPropertyOf :q .", ":R1 rdfs:subClassOf :R2 ."),
    ("owl-rl", "scm-avf1", ":R1 owl:allValuesFrom :A ; owl:onProperty :p . :R2 owl:allValuesFrom :B ; "
                           "owl:onProperty :p . :A rdfs:subClassOf :B .", ":R1 rdfs:subClassOf :R2 ."),
    ("owl-rl", "scm-avf2", ":R1 owl:allValuesFrom :A ; owl:onProperty :p . :R2 owl:allValuesFrom :A ; "
                           "owl:onProperty :q . :p rdfs:subPropertyOf :q .", ":R2 rdfs:subClassOf :R1 ."),
    ("owl-rl", "scm-int", ":C owl:intersectionOf (:A :B) .", ":C rdfs:subClassOf :A, :B ."),
    ("owl-rl", "scm-uni", ":C owl:unionOf (:A :B) .", ":A rdfs:subClassOf :C . :B rdfs:subClassOf :C ."),
]


@pytest.mark.parametrize("name,label,given,expected", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_rule(name: str, label: str, given: str, expected: str) -> None:
    data = turtle(given)
    closure = Closure(data, name)
    if expected == "!":
        assert label in closure.labels, closure.diagnostics
        return
    assert not closure.labels
    wanted = as_nt(turtle(expected))
    assert wanted, "a case must expect something"
    assert not wanted & as_nt(data), "the expected triples must be entailed, not given"
    assert wanted <= closure.triples, wanted - closure.triples


def test_every_rule_has_a_case() -> None:
    for name in ("rdfs", "owl-rl"):
        covered = {label for n, label, _, _ in CASES if n == name}
        assert rule_labels(name) == covered


NEGATIVE = [
    # prp-key needs every key property to agree
    (":C owl:hasKey (:k1 :k2) . :a a :C ; :k1 1 ; :k2 2 . :b a :C ; :k1 1 ; :k2 3 .", f"<{OWL}sameAs>"),
    # a one-property key only merges instances sharing that value (owlrl merges all of them)
    (":C owl:hasKey (:k) . :a a :C ; :k 1 . :b a :C ; :k 2 .", f"<{OWL}sameAs>"),
    # a chain needs every link
    (":gp owl:propertyChainAxiom (:p :q) . :a :p :b . :c :q :d .", "<http://example.org/gp>"),
    # cls-int1 needs every class of the intersection
    (":C owl:intersectionOf (:A :B :D) . :x a :A, :D .", None),
    # a single functional value is not made owl:sameAs itself (eq-ref is left out)
    (":p a owl:FunctionalProperty . :x :p :a .", f"<{OWL}sameAs>"),
]


@pytest.mark.parametrize("given,predicate", NEGATIVE)
def test_rule_does_not_overreach(given: str, predicate: str | None) -> None:
    closure = Closure(turtle(given), "owl-rl")
    if predicate is None:  # no new rdf:type :C
        assert ("<http://example.org/x>", TYPE, "<http://example.org/C>") not in closure.triples
    else:
        assert not [t for t in closure.triples if t[1] == predicate]


def test_well_typed_literals_are_not_flagged() -> None:
    closure = Closure(turtle(':age rdfs:range xsd:integer . :bob :age 42, "7"^^xsd:int . '
                             ':name rdfs:range xsd:string . :bob :name "Bob" . '
                             ':flag rdfs:range xsd:boolean . :bob :flag true . '
                             ':at rdfs:range xsd:dateTime . :bob :at "2020-01-01T00:00:00Z"^^xsd:dateTime . '
                             ':label rdfs:range rdf:PlainLiteral . :bob :label "x", "y"@en .'), "owl-rl")
    assert closure.diagnostics == []
    assert ('"42"^^<http://www.w3.org/2001/XMLSchema#integer>', TYPE, f"<{XSD}integer>") in closure.triples


def test_ruleset_source() -> None:
    text, filename = ruleset_source("owl-rl")
    assert filename == "owl-rl.dl" and "[prp-spo2]" in text
    assert ruleset_source("rdfs")[1] == "rdfs.dl"
    with pytest.raises(ChronologError, match="owl-rl, rdfs"):
        ruleset_source("owl2-ql")


# -- differential: owlrl on generated ontologies -------------------------------------------

def _to_rdflib(term):
    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))


def _from_rdflib(term) -> str:
    if isinstance(term, rdflib.URIRef):
        return str(NamedNode(str(term)))
    if isinstance(term, rdflib.BNode):
        return "_:" + str(term)
    if term.language:
        return str(Literal(str(term), language=term.language))
    return str(Literal(str(term), datatype=NamedNode(str(term.datatype or XSD + "string"))))


def owlrl_closure(triples: list[Triple], name: str) -> tuple[set[NT], list[str]]:
    """owlrl's closure (default options: no axiomatic triples) and its error messages."""
    g = rdflib.Graph()
    for t in triples:
        g.add((_to_rdflib(t.subject), _to_rdflib(t.predicate), _to_rdflib(t.object)))
    semantics = owlrl.RDFS_Semantics if name == "rdfs" else owlrl.OWLRL_Semantics
    owlrl.DeductiveClosure(semantics).expand(g)
    errors = [str(o) for o in g.objects(None, rdflib.URIRef("http://www.daml.org/2002/03/agents/agent-ont#error"))]
    out = set()
    for s, p, o in g:
        # owlrl reports inconsistencies as triples on fresh blank nodes (err:ErrorMessage);
        # we report them as diagnostics. Generated data has no blank nodes otherwise.
        if isinstance(s, rdflib.BNode):
            continue
        out.add((_from_rdflib(s), _from_rdflib(p), _from_rdflib(o)))
    return out, errors


def _is_literal(term: str) -> bool:
    return term.startswith('"')


OWL_RL_DATATYPES = {f"<{str(dt)}>" for dt in owlrl.XsdDatatypes.OWL_RL_Datatypes}


def explained_owl_rl(triple: NT, ours: bool, given_terms: set[str]) -> str | None:
    """Why a triple in only one of the two OWL RL closures differs by design, or None."""
    s, p, o = triple
    if not ours:
        if p == SAME_AS and s == o:
            return "eq-ref: owlrl makes every term owl:sameAs itself; we leave eq-ref out"
        if _is_literal(s) and p == TYPE and o in OWL_RL_DATATYPES:
            return "dt-type2: owlrl types every literal with its datatype and supertypes; we leave it out"
        if p == f"<{OWL}disjointWith>" and s in OWL_RL_DATATYPES and o in OWL_RL_DATATYPES:
            return "owlrl adds the disjointness of the datatypes the data uses (not a rule of the spec)"
    else:
        if s == o and p in (f"<{RDFS}subClassOf>", f"<{OWL}equivalentClass>",
                            f"<{RDFS}subPropertyOf>", f"<{OWL}equivalentProperty>"):
            return ("owlrl's scm-sco/scm-spo skip c1 = c3 and scm-eqc2/scm-eqp2 skip a given c sco c; the spec "
                    "derives c rdfs:subClassOf c from a cycle (and c owl:equivalentClass c from that)")
    return None


def explained_rdfs(triple: NT, ours: bool, given_terms: set[str]) -> str | None:
    s, p, o = triple
    if ours and p == TYPE and o == f"<{RDFS}Resource>" and s not in given_terms:
        return ("owlrl applies rdfs4a/rdfs4b only in its first cycle, to the given triples, so terms that are "
                "subjects or objects only of derived triples (rdf:type, rdfs:Resource, a property once it is "
                "typed rdf:Property) are not typed rdfs:Resource")
    return None


# owlrl's error messages, by the rules that report them (our labels)
OWLRL_ERRORS = [
    ("'sameAs' and 'differentFrom'", "eq-diff1"),
    ("'sameAs' and 'AllDifferent'", "eq-diff2/3"),
    ("Irreflexive property", "prp-irp"),
    ("Erroneous usage of asymmetric property", "prp-asyp"),
    ("Disjoint properties in an 'AllDisjointProperties'", "prp-adp"),
    ("Erroneous usage of disjoint properties", "prp-pdw"),
    ("Negative (object) property assertion", "prp-npa1"),
    ("Negative (datatype) property assertion", "prp-npa2"),
    ("is defined of type 'Nothing'", "cls-nothing2"),
    ("Violation of complementarity", "cls-com"),
    ("Erroneous usage of maximum cardinality", "cls-maxc1"),
    ("Erroneous usage of maximum qualified cardinality", "cls-maxqc1/2"),
    ("Disjoint classes", "cax-dw/adc"),
    ("Lexical value of the literal", "dt-not-type"),
]
OUR_KINDS = {"eq-diff2": "eq-diff2/3", "eq-diff3": "eq-diff2/3", "cls-maxqc1": "cls-maxqc1/2",
             "cls-maxqc2": "cls-maxqc1/2", "cax-dw": "cax-dw/adc", "cax-adc": "cax-dw/adc"}


def owlrl_kinds(errors: list[str]) -> set[str]:
    kinds = set()
    for message in errors:
        kind = next((k for prefix, k in OWLRL_ERRORS if prefix in message), None)
        assert kind is not None, f"unknown owlrl error {message!r}"
        kinds.add(kind)
    return kinds


SEEDS = range(50)
_CACHE: dict[tuple[str, int], tuple[list[Triple], Closure]] = {}


def generated(name: str, seed: int) -> tuple[list[Triple], Closure]:
    key = (name, seed)
    if key not in _CACHE:
        data = small_ontology(seed, rdfs_only=name == "rdfs")
        _CACHE[key] = (data, Closure(data, name))
    return _CACHE[key]


@pytest.mark.parametrize("name", ["rdfs", "owl-rl"])
@pytest.mark.parametrize("seed", SEEDS)
def test_same_closure_as_owlrl(name: str, seed: int) -> None:
    data, ours = generated(name, seed)
    theirs, errors = owlrl_closure(data, name)
    given_terms = {x for t in as_nt(data) for x in (t[0], t[2])}  # subjects and objects
    explain = explained_rdfs if name == "rdfs" else explained_owl_rl
    unexplained = [("ours only", t) for t in sorted(ours.triples - theirs) if not explain(t, True, given_terms)]
    unexplained += [("owlrl only", t) for t in sorted(theirs - ours.triples) if not explain(t, False, given_terms)]
    assert not unexplained
    if name == "owl-rl":
        our_kinds = {OUR_KINDS.get(label, label) for label in ours.labels}
        their_kinds = owlrl_kinds(errors)
        # dt-not-type: owlrl checks lexical forms, we check value classes; the generated data
        # has only well-formed integers, which owlrl then finds disjoint from xsd:string
        # (cax-dw) where we report dt-not-type.
        if "dt-not-type" in our_kinds:
            our_kinds.discard("dt-not-type")
            their_kinds.discard("cax-dw/adc")
            our_kinds.discard("cax-dw/adc")
        assert their_kinds <= our_kinds
        # owlrl's eq-diff2/3 and prp-adp loops stop one member short of the list's end, so we
        # may find violations there that owlrl misses
        assert our_kinds - their_kinds <= {"eq-diff2/3", "prp-adp"}


@pytest.mark.parametrize("name", ["rdfs", "owl-rl"])
def test_generated_ontologies_exercise_every_rule(name: str) -> None:
    """Every rule of the rule set has a solution of its body in some generated closure."""
    seen: set[str] = set()
    for seed in SEEDS:
        seen |= generated(name, seed)[1].applicable()
    facts_only = {"prp-ap", "cls-thing", "cls-nothing1", "dt-type1"}  # facts: no body to exercise
    assert rule_labels(name) - facts_only - seen == set()


# -- CityBench background --------------------------------------------------------------------

CITY_FILES = [("SensorRepository.n3", RdfFormat.TURTLE), ("ontology/ssn.owl", RdfFormat.RDF_XML),
              ("ontology/city.n3", RdfFormat.TURTLE)]


@pytest.mark.parametrize("name,size", [("rdfs", 75356), ("owl-rl", 73696)])
def test_citybench_background_closure(name: str, size: int) -> None:
    citybench = shared_path("data", "citybench")
    data = [t for f, fmt in CITY_FILES for t in parse(path=str(citybench / f), format=fmt)]
    closure = Closure(data, name)
    assert len(closure.triples) == size
    assert closure.diagnostics == []
