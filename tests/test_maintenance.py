"""Maintenance over windows: Barbieri's Fig. 4 tags, and naive == DRed == expiration on
random streams and rules."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from chronolog.datalog import Reasoner, load_program
from chronolog.datalog.maintenance import MaintenanceError, maintenance
from chronolog.terms import TermDictionary

E = "http://example.org/"
RULES = {
    "transitive": ":isIn(?x, ?z) :- :isIn(?x, ?y), :isIn(?y, ?z).",
    "chain": ":q(?x, ?y) :- :p(?x, ?y).\n:r(?x, ?z) :- :q(?x, ?y), :p(?y, ?z).\n:isIn(?x, ?y) :- :r(?x, ?y).",
    "symmetric": ":isIn(?y, ?x) :- :isIn(?x, ?y).\n:p(?x, ?x) :- :isIn(?x, ?y).",
}


def strategy(name: str, rules: str, d: TermDictionary):
    return maintenance(name, Reasoner(load_program([(f"PREFIX : <{E}>\n{rules}", "r.dl")], d), d))


def test_fig4_expiration_tags():
    """Barbieri et al. Fig. 4 with the bound mapping of tests/test_windows.py: a triple of
    second s holds until s + 10; a derivation until the earliest of its premises, the latest
    derivation kept (A isIn D: 11, then 14 once A isIn E and E isIn D arrive)."""
    d = TermDictionary()
    keeper = strategy("expiration", RULES["transitive"], d)
    t = lambda a, b: (d.iri(E + a), d.iri(E + "isIn"), d.iri(E + b))  # noqa: E731
    name = lambda f: d.decode(f.args[0]).value[-1] + d.decode(f.args[2]).value[-1]  # noqa: E731
    arrivals = {1: [("A", "B")], 2: [("B", "C")], 3: [("C", "D")], 4: [("A", "E"), ("E", "D")]}
    tags = {}
    for s, pairs in arrivals.items():
        keeper.update(s, {t(a, b): s + 10 for a, b in pairs}, [])
        tags[s] = {name(f): f.horizon for f in keeper.store}
    assert tags[2] == {"AB": 11, "BC": 12, "AC": 11}
    assert tags[3] == {"AB": 11, "BC": 12, "AC": 11, "CD": 13, "BD": 12, "AD": 11}
    assert tags[4] == {"AB": 11, "BC": 12, "AC": 11, "CD": 13, "BD": 12, "AD": 14, "AE": 14, "ED": 14}
    keeper.update(12, {}, [t("A", "B")])
    assert {name(f): f.horizon for f in keeper.store} == {"BC": 12, "CD": 13, "BD": 12, "AD": 14, "AE": 14, "ED": 14}


def test_negation_is_refused_where_unsupported():
    d = TermDictionary()
    rules = ":q(?x) :- :p(?x, ?y), not :r(?x)."
    strategy("naive", rules, d)
    for name in ("dred", "expiration"):
        with pytest.raises(MaintenanceError, match="negation"):
            strategy(name, rules, d)


nodes = st.sampled_from("abcd")
predicates = st.sampled_from(["isIn", "p"])
triples = st.tuples(nodes, predicates, nodes)
streams = st.lists(st.lists(triples, max_size=3), min_size=1, max_size=10)


@settings(max_examples=120, deadline=None)
@given(streams, st.sampled_from(sorted(RULES)), st.integers(1, 4))
def test_the_three_strategies_agree(stream, rules, width):
    """A sliding window of `width` instants over random arrivals: every strategy's view is
    the same at every instant."""
    d = TermDictionary()
    keepers = [strategy(name, RULES[rules], d) for name in ("naive", "dred", "expiration")]
    content: dict = {}
    for now, arrived in enumerate(stream, start=1):
        encoded = {(d.iri(E + s), d.iri(E + p), d.iri(E + o)) for s, p, o in arrived}
        entered = {t: now + width - 1 for t in encoded}
        content.update(entered)
        left = [t for t, last in content.items() if last < now]
        for t in left:
            del content[t]
        views = [sorted(k.update(now, entered, left).scan("triple")) for k in keepers]
        assert views[0] == views[1] == views[2]


@settings(max_examples=40, deadline=None)
@given(streams, st.integers(1, 4))
def test_without_rules_the_view_is_background_and_window_content(stream, width):
    """No rules: whatever strategy is named, the view holds the background and exactly what
    the window holds (also when most of the window leaves at once)."""
    d = TermDictionary()
    background = (d.iri(E + "a"), d.iri(E + "isIn"), d.iri(E + "b"))
    reasoner = Reasoner(load_program([("", "none.dl")], d), d)
    reasoner.add_background([background])
    keeper = maintenance("expiration", reasoner)
    content: dict = {}
    for now, arrived in enumerate(stream, start=1):
        entered = {(d.iri(E + s), d.iri(E + p), d.iri(E + o)): now + width - 1 for s, p, o in arrived}
        content.update(entered)
        left = [t for t, last in content.items() if last < now]
        for t in left:
            del content[t]
        view = keeper.update(now, entered, left)
        assert set(view.scan("triple")) == set(content) | {background}
