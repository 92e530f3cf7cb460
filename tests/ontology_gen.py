"""Small random ontologies (and large synthetic KBs) for testing and benchmarking rule sets.

``small_ontology(seed)`` draws a few dozen triples over a tiny vocabulary so that every
RDFS and OWL 2 RL rule has a chance to fire: class and property hierarchies (with cycles),
domains and ranges, property characteristics, chains, keys, set constructors, restrictions,
disjointness, equality and negative assertions, and instance data. Every node is an IRI
(list nodes and restrictions too): no blank nodes, so closures compare as plain sets.

``kb(n_triples, seed)`` builds a larger knowledge base for the closure benchmark.
"""
from __future__ import annotations

import random
from typing import Iterator

from pyoxigraph import Literal, NamedNode, Triple

EX = "http://example.org/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"


def ex(name: str) -> NamedNode:
    return NamedNode(EX + name)


def rdf(name: str) -> NamedNode:
    return NamedNode(RDF + name)


def rdfs(name: str) -> NamedNode:
    return NamedNode(RDFS + name)


def owl(name: str) -> NamedNode:
    return NamedNode(OWL + name)


TYPE = rdf("type")
NIL = rdf("nil")


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.triples: list[Triple] = []
        self.lists = 0
        self.nodes = 0
        self.literals = 0

    def add(self, s: NamedNode, p: NamedNode, o: NamedNode | Literal) -> None:
        self.triples.append(Triple(s, p, o))

    def rdf_list(self, items: list) -> NamedNode:
        """An rdf:List with IRI nodes ex:L<n>_<i>."""
        self.lists += 1
        head: NamedNode = NIL
        for i in reversed(range(len(items))):
            node = ex(f"L{self.lists}_{i}")
            self.add(node, rdf("first"), items[i])
            self.add(node, rdf("rest"), head)
            head = node
        return head

    def node(self, prefix: str) -> NamedNode:
        self.nodes += 1
        return ex(f"{prefix}{self.nodes}")

    def literal(self) -> Literal:
        """A fresh integer literal (distinct values, so no two literals are equal)."""
        self.literals += 1
        return Literal(str(self.literals), datatype=NamedNode(XSD + "integer"))


# axiom kinds the generator draws from (a kind listed twice is drawn twice as often)
_OWL_AXIOMS = [
    "subClassOf", "subClassOf", "subClassOf", "equivalentClass", "subPropertyOf", "subPropertyOf",
    "equivalentProperty", "domain", "range", "dataRange", "inverseOf", "Transitive", "Symmetric",
    "Functional", "InverseFunctional", "FunctionalData", "Irreflexive", "Asymmetric", "chain", "key",
    "intersectionOf", "unionOf", "oneOf", "someValuesFrom", "someValuesFromThing", "allValuesFrom",
    "hasValue", "maxCardinality", "maxQualifiedCardinality", "disjointWith", "complementOf",
    "AllDisjointClasses", "AllDisjointProperties", "propertyDisjointWith", "AllDifferent",
    "differentFrom", "sameAs", "sameAsProperty", "NegativePropertyAssertion", "NegativeDataAssertion",
    "declareClass", "declareProperty", "nothing", "stringRange", "hasValuePair", "maxCardinality", "maxQualifiedCardinality",
]
_RDFS_AXIOMS = ["rdfsClass", "rdfProperty", "containerMembership", "datatype", "subPropertyOf", "subClassOf",
                "domain", "range", "dataRange"]


def small_ontology(seed: int, n_axioms: int = 18, n_facts: int = 18, rdfs_only: bool = False) -> list[Triple]:
    """A random small ontology plus instance data, all IRIs and integer literals."""
    rng = random.Random(seed)
    b = _Builder(rng)
    classes = [ex(f"C{i}") for i in range(6)]
    props = [ex(f"P{i}") for i in range(5)]
    inds = [ex(f"I{i}") for i in range(7)]
    dprop = ex("D0")
    C = lambda: rng.choice(classes)  # noqa: E731
    P = lambda: rng.choice(props)  # noqa: E731
    I = lambda: rng.choice(inds)  # noqa: E731,E741
    kinds = _RDFS_AXIOMS if rdfs_only else _OWL_AXIOMS
    for _ in range(n_axioms):
        k = rng.choice(kinds)
        if k == "subClassOf":
            b.add(C(), rdfs("subClassOf"), C())
        elif k == "equivalentClass":
            b.add(C(), owl("equivalentClass"), C())
        elif k == "subPropertyOf":
            b.add(P(), rdfs("subPropertyOf"), P())
        elif k == "equivalentProperty":
            b.add(P(), owl("equivalentProperty"), P())
        elif k == "domain":
            b.add(rng.choice(props + [dprop]), rdfs("domain"), C())
        elif k == "range":
            b.add(P(), rdfs("range"), C())
        elif k == "dataRange":
            b.add(dprop, rdfs("range"), NamedNode(XSD + "integer"))
        elif k == "stringRange":  # integer values typed xsd:string: dt-not-type
            b.add(dprop, rdfs("range"), NamedNode(XSD + "string"))
        elif k == "inverseOf":
            b.add(P(), owl("inverseOf"), P())
        elif k in ("Transitive", "Symmetric", "Functional", "InverseFunctional", "Irreflexive", "Asymmetric"):
            b.add(P(), TYPE, owl(k + "Property"))
        elif k == "FunctionalData":
            b.add(dprop, TYPE, owl("FunctionalProperty"))
        elif k == "chain":
            b.add(P(), owl("propertyChainAxiom"), b.rdf_list([P() for _ in range(rng.choice((1, 2, 3)))]))
        elif k == "key":
            # owlrl's prp-key only compares the first n-1 key properties (and, with one key
            # property, none at all); a key listing one property twice is checked fully by it.
            p = rng.choice(props + [dprop])
            b.add(C(), owl("hasKey"), b.rdf_list([p, p]))
        elif k in ("intersectionOf", "unionOf"):
            b.add(C(), owl(k), b.rdf_list(rng.sample(classes, rng.choice((1, 2, 3)))))
        elif k == "oneOf":
            b.add(C(), owl("oneOf"), b.rdf_list(rng.sample(inds, rng.choice((1, 2)))))
        elif k in ("someValuesFrom", "someValuesFromThing", "allValuesFrom", "hasValue"):
            r = b.node("R")
            b.add(r, owl("onProperty"), P())
            if k == "someValuesFrom":
                b.add(r, owl("someValuesFrom"), C())
            elif k == "someValuesFromThing":
                b.add(r, owl("someValuesFrom"), owl("Thing"))
            elif k == "allValuesFrom":
                b.add(r, owl("allValuesFrom"), C())
            else:
                b.add(r, owl("hasValue"), I())
            # tie the restriction to the hierarchy in either direction
            if rng.random() < 0.5:
                b.add(C(), rdfs("subClassOf"), r)
            else:
                b.add(r, rdfs("subClassOf"), C())
        elif k in ("maxCardinality", "maxQualifiedCardinality"):
            r = b.node("R")
            b.add(r, owl("onProperty"), P())
            n = Literal(str(rng.choice((0, 1, 1))), datatype=NamedNode(XSD + "nonNegativeInteger"))
            b.add(r, owl(k), n)
            if k == "maxQualifiedCardinality":
                b.add(r, owl("onClass"), rng.choice([owl("Thing"), C()]))
            b.add(C(), rdfs("subClassOf"), r)
            b.add(I(), TYPE, r)
        elif k == "hasValuePair":  # scm-hv: two hasValue restrictions on related properties
            i, p1, p2 = I(), P(), P()
            for p in (p1, p2):
                r = b.node("R")
                b.add(r, owl("onProperty"), p)
                b.add(r, owl("hasValue"), i)
            b.add(p1, rdfs("subPropertyOf"), p2)
        elif k == "disjointWith":
            b.add(C(), owl("disjointWith"), C())
        elif k == "complementOf":
            b.add(C(), owl("complementOf"), C())
        elif k == "AllDisjointClasses":
            x = b.node("X")
            b.add(x, TYPE, owl("AllDisjointClasses"))
            b.add(x, owl("members"), b.rdf_list(rng.sample(classes, 3)))
        elif k == "AllDisjointProperties":
            x = b.node("X")
            b.add(x, TYPE, owl("AllDisjointProperties"))
            b.add(x, owl("members"), b.rdf_list(rng.sample(props, 3)))
        elif k == "propertyDisjointWith":
            b.add(P(), owl("propertyDisjointWith"), P())
        elif k == "AllDifferent":
            x = b.node("X")
            b.add(x, TYPE, owl("AllDifferent"))
            b.add(x, owl(rng.choice(("members", "distinctMembers"))), b.rdf_list(rng.sample(inds, 3)))
        elif k == "differentFrom":
            b.add(I(), owl("differentFrom"), I())
        elif k == "sameAs":
            b.add(I(), owl("sameAs"), I())
        elif k == "sameAsProperty":
            b.add(P(), owl("sameAs"), P())
        elif k == "nothing":
            b.add(C(), rdfs("subClassOf"), owl("Nothing"))
        elif k == "NegativePropertyAssertion":
            x = b.node("N")
            b.add(x, TYPE, owl("NegativePropertyAssertion"))
            i1, p, i2 = I(), P(), I()
            b.add(x, owl("sourceIndividual"), i1)
            b.add(x, owl("assertionProperty"), p)
            b.add(x, owl("targetIndividual"), i2)
            if rng.random() < 0.5:
                b.add(i1, p, i2)
        elif k == "NegativeDataAssertion":
            x = b.node("N")
            i, lt = I(), b.literal()
            b.add(x, TYPE, owl("NegativePropertyAssertion"))
            b.add(x, owl("sourceIndividual"), i)
            b.add(x, owl("assertionProperty"), dprop)
            b.add(x, owl("targetValue"), lt)
            if rng.random() < 0.5:
                b.add(i, dprop, lt)
        elif k == "declareClass":
            b.add(C(), TYPE, owl("Class"))
        elif k == "declareProperty":
            b.add(P(), TYPE, owl(rng.choice(("ObjectProperty", "DatatypeProperty"))))
        elif k == "rdfsClass":
            b.add(C(), TYPE, rdfs("Class"))
        elif k == "rdfProperty":
            b.add(P(), TYPE, rdf("Property"))
        elif k == "containerMembership":
            b.add(P(), TYPE, rdfs("ContainerMembershipProperty"))
        elif k == "datatype":
            b.add(C(), TYPE, rdfs("Datatype"))
    for _ in range(n_facts):
        r = rng.random()
        if r < 0.3:
            b.add(I(), TYPE, C())
        elif r < 0.85:
            b.add(I(), P(), I())
        else:
            b.add(I(), dprop, b.literal())
    return b.triples


def kb(n_triples: int, seed: int = 0) -> Iterator[Triple]:
    """A synthetic KB of about ``n_triples`` triples for the closure benchmark.

    Schema (scaled with the size): a class tree of depth 6, a property hierarchy with
    domains and ranges, transitive, symmetric and inverse properties; data: individuals
    typed with leaf classes, linked by the properties (transitive ones along short chains).
    """
    rng = random.Random(seed)
    n_classes = max(20, n_triples // 200)
    n_props = max(10, n_triples // 5000)
    classes = [ex(f"Class{i}") for i in range(n_classes)]
    out: list[Triple] = []
    for i in range(1, n_classes):
        parent = classes[(i - 1) // 3]  # a ternary tree
        out.append(Triple(classes[i], rdfs("subClassOf"), parent))
        out.append(Triple(classes[i], TYPE, owl("Class")))
    props = [ex(f"prop{i}") for i in range(n_props)]
    for i, p in enumerate(props):
        out.append(Triple(p, TYPE, owl("ObjectProperty")))
        if i % 4 == 1:
            out.append(Triple(p, rdfs("subPropertyOf"), props[i - 1]))
        if i % 5 == 0:
            out.append(Triple(p, rdfs("domain"), rng.choice(classes[: n_classes // 3 + 1])))
        if i % 5 == 1:
            out.append(Triple(p, rdfs("range"), rng.choice(classes[: n_classes // 3 + 1])))
        if i % 7 == 2:
            out.append(Triple(p, TYPE, owl("TransitiveProperty")))
        if i % 7 == 3:
            out.append(Triple(p, TYPE, owl("SymmetricProperty")))
        if i % 7 == 4:
            out.append(Triple(p, owl("inverseOf"), props[i - 1]))
    n_inds = max(10, (n_triples - len(out)) // 4)
    leaves = classes[n_classes // 3:]
    transitive = [p for i, p in enumerate(props) if i % 7 == 2]
    others = [p for i, p in enumerate(props) if i % 7 != 2]
    for i in range(n_inds):
        ind = ex(f"ind{i}")
        out.append(Triple(ind, TYPE, rng.choice(leaves)))
        out.append(Triple(ind, rng.choice(others), ex(f"ind{rng.randrange(n_inds)}")))
        out.append(Triple(ind, rng.choice(others), ex(f"ind{rng.randrange(n_inds)}")))
        # transitive links go to a nearby individual: short chains, bounded closure
        if transitive:
            j = i + 1 if i % 8 != 7 else i - 7
            out.append(Triple(ind, transitive[i % len(transitive)], ex(f"ind{j % n_inds}")))
    return iter(out)
