"""Semi-naive evaluation: the background closure once, then what holds at each time point.

The background closure lives in two databases: ``lower`` (the background's facts and what
the monotone strata derive) and ``upper`` (what strata with negation, or above one, derive).
At a time point the new facts go to an ``overlay`` that is cleared, not rebuilt, at the next
one (DOTR's Δ- and Δ+ in one step). Evaluation is driven by the new facts only: each new
fact is routed to the rule atoms it can match and the compiled plan starting at that atom
runs with the new facts as its source. When a time point's facts can change what a negated
atom sees, ``upper`` is set aside and the non-monotone strata are recomputed over
``lower`` + overlay, so negation stays exact.
"""
from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Iterable

from chronolog.datalog.program import CONSTRAINT_PREFIX, Program, Rule
from chronolog.joins import CompiledJoin, Pattern, Var, order
from chronolog.store import TRIPLE, Database, Fact, Layers
from chronolog.terms import RDF, TermDictionary

RouteKey = tuple[str, object]
Batch = dict[str, list[Fact]]


class Reasoner:
    """Reasoning with one program over one background, time point after time point.

    >>> from chronolog.datalog import load_program
    >>> d = TermDictionary()
    >>> ex = lambda name: d.iri("http://example.org/" + name)
    >>> rules = "PREFIX : <http://example.org/> :in(?s, ?r) :- :at(?s, ?l), :in(?l, ?r)."
    >>> r = Reasoner(load_program([(rules, "rooms.dl")], d), d)
    >>> r.add_background([(ex("locA"), ex("in"), ex("roomA"))])
    1
    >>> view = r.at([(ex("s1"), ex("at"), ex("locA"))])  # time point 10
    >>> (ex("s1"), ex("in"), ex("roomA")) in view.scan("triple")
    True
    >>> view = r.at([])  # the next time point: what held only at 10 is gone
    >>> (ex("s1"), ex("in"), ex("roomA")) in view.scan("triple")
    False
    """

    def __init__(self, program: Program, dictionary: TermDictionary) -> None:
        self.program = program
        self.dictionary = dictionary
        self.rdf_type = dictionary.iri(RDF + "type")
        self.lower = self._database()
        self.upper = self._database()
        self.overlay = self._database()
        self.background_view = Layers([self.lower, self.upper])
        self._close_lower = Layers([self.lower])
        self._now = Layers([self.lower, self.upper, self.overlay])
        self._recompute = Layers([self.lower, self.overlay])
        self._plans: dict[tuple[int, int], CompiledJoin] = {}
        self._bound: dict[tuple[int, int, int], object] = {}
        self._routes: dict[RouteKey, list[tuple[Rule, int]]] = defaultdict(list)
        self._negation_routes: dict[RouteKey, list[tuple[Rule, int]]] = defaultdict(list)
        for rule in program.rules:
            for i in rule.positives:
                self._routes[self._route_key(rule.body[i])].append((rule, i))  # type: ignore[arg-type]
            if rule.stratum in program.nonmonotone:
                for i, step in enumerate(rule.body):
                    if isinstance(step, Pattern) and step.negated:
                        self._negation_routes[self._route_key(step)].append((rule, i))
        self._nonmonotone = program.nonmonotone
        self._mono = [n for n in range(len(program.strata)) if n not in self._nonmonotone]
        self.closed = False
        for relation, fact in program.facts:
            self.lower.relation(relation, len(fact)).add(fact)

    def _database(self) -> Database:
        db = Database()
        for name, arity in self.program.arities.items():
            db.relation(name, arity)
        return db

    def _route_key(self, atom: Pattern) -> RouteKey:
        if atom.relation != TRIPLE:
            return (atom.relation, None)
        pred = atom.args[1]
        if isinstance(pred, Var):
            return (TRIPLE, None)
        obj = atom.args[2]
        if pred == self.rdf_type and not isinstance(obj, Var):
            return ("class", obj)
        return (TRIPLE, pred)

    # -- background -------------------------------------------------------------------

    def add_background(self, triples: Iterable[Fact]) -> int:
        """Add background triples (before ``close``); returns how many were new."""
        if self.closed:
            raise RuntimeError("the background is closed; background facts cannot be added any more")
        add = self.lower.triples.add
        return sum(1 for t in triples if add(t))

    def close(self) -> Layers:
        """Compute the background closure; afterwards the background is immutable."""
        if not self.closed:
            seed = {name: list(rel.facts) for name, rel in self.lower.relations.items() if rel.facts}
            self._saturate(self._close_lower, self.lower, seed, set(self._mono))
            if self._nonmonotone:
                seed = {name: list(rel.facts) for name, rel in self.lower.relations.items() if rel.facts}
                self._saturate(self.background_view, self.upper, seed, self._nonmonotone)
            self.closed = True
        return self.background_view

    # -- time points ------------------------------------------------------------------

    def at(self, triples: Iterable[Fact]) -> Layers:
        """Everything that holds at a time point whose elements hold ``triples``.

        The view returned stays valid until the next call.
        """
        if not self.closed:
            self.close()
        overlay = self.overlay
        overlay.clear()
        triples = list(triples)
        known = self.background_view.contains(TRIPLE)
        add = overlay.triples.add
        new = [t for t in triples if not known(t) and add(t)]
        if not new:
            return self._now
        if self._saturate(self._now, overlay, {TRIPLE: new}, None, guard=True):
            return self._now
        # negation may see different facts at t: recompute the non-monotone strata
        overlay.clear()
        known = self.lower.triples.__contains__
        new = [t for t in triples if not known(t) and add(t)]
        self._saturate(self._recompute, overlay, {TRIPLE: new}, set(self._mono))
        seed = {name: list(self._recompute.scan(name)) for name in self.program.arities}
        self._saturate(self._recompute, overlay, seed, self._nonmonotone)
        return self._recompute

    def diagnostics(self, view: Layers) -> list[tuple[str, tuple[int, ...]]]:
        """Constraint violations (``false :- ...`` rules) visible in ``view``."""
        out = []
        for name in self.program.arities:
            if name.startswith(CONSTRAINT_PREFIX):
                out.extend((name[len(CONSTRAINT_PREFIX):], fact) for fact in view.scan(name))
        return out

    # -- evaluation --------------------------------------------------------------------

    def _plan(self, view: Layers, rule: Rule, first: int):
        key = (id(view), rule.index, first)
        bound = self._bound.get(key)
        if bound is None:
            plan = self._plans.get((rule.index, first))
            if plan is None:
                steps = order(rule.body, lambda p, mask: view.fanout(p.relation, mask), first=first)
                plan = self._plans[(rule.index, first)] = CompiledJoin(steps, rule.head.args)
            bound = self._bound[key] = plan.bind(view)
        return bound

    def _routes_of(self, batch: Batch, routes: dict[RouteKey, list[tuple[Rule, int]]]) -> Iterable[tuple[Rule, int, list[Fact]]]:
        """(rule, atom index, facts) for every rule atom that facts of ``batch`` may match."""
        for name, facts in batch.items():
            if name != TRIPLE:
                for rule, i in routes.get((name, None), ()):
                    yield rule, i, facts
                continue
            for rule, i in routes.get((TRIPLE, None), ()):
                yield rule, i, facts
            by_pred: dict[int, list[Fact]] = defaultdict(list)
            for f in facts:
                by_pred[f[1]].append(f)
            for pred, group in by_pred.items():
                for rule, i in routes.get((TRIPLE, pred), ()):
                    yield rule, i, group
                if pred == self.rdf_type:
                    by_class: dict[int, list[Fact]] = defaultdict(list)
                    for f in group:
                        by_class[f[2]].append(f)
                    for cls, sub in by_class.items():
                        for rule, i in routes.get(("class", cls), ()):
                            yield rule, i, sub

    def _saturate(self, view: Layers, target: Database, seed: Batch, strata: set[int] | None,
                  guard: bool = False) -> bool:
        """Derive into ``target`` everything that follows from the new facts ``seed``.

        Only rules of ``strata`` (all if None) run. With ``guard``, stop and return False as soon as a new
        fact could be seen by a negated atom of a non-monotone stratum.
        """
        pending: dict[int, list[tuple[Rule, int, list[Fact]]]] = {}
        queue: list[int] = []

        def route(batch: Batch) -> bool:
            if guard and self._negation_routes and self._hits_negation(batch):
                return False
            for rule, i, facts in self._routes_of(batch, self._routes):
                s = rule.stratum
                if strata is None or s in strata:
                    work = pending.get(s)
                    if work is None:
                        heapq.heappush(queue, s)
                        pending[s] = [(rule, i, facts)]
                    else:
                        work.append((rule, i, facts))
            return True

        if not route(seed):
            return False
        while queue:
            s = heapq.heappop(queue)
            work = pending.pop(s, None)  # None: a stale entry of a stratum already run
            while work:
                derived: Batch = defaultdict(list)
                for rule, i, facts in work:
                    head = rule.head.relation
                    known = view.contains(head)
                    add = target.relations[head].add
                    out = derived[head]
                    for fact in self._plan(view, rule, i)(facts):
                        if not known(fact) and add(fact):
                            out.append(fact)
                derived = {k: v for k, v in derived.items() if v}
                if not derived:
                    break
                if not route(derived):
                    return False
                work = pending.pop(s, None)
        return True

    def _hits_negation(self, batch: Batch) -> bool:
        """Could a negated atom of a non-monotone stratum see one of these new facts?"""
        for rule, i, facts in self._routes_of(batch, self._negation_routes):
            atom = rule.body[i]
            consts = [(k, a) for k, a in enumerate(atom.args) if not isinstance(a, Var)]  # type: ignore[union-attr]
            if any(all(f[k] == a for k, a in consts) for f in facts):
                return True
        return False
