"""Semi-naive evaluation: the background closure once, then what holds at each time point.

The background closure lives in two databases: ``lower`` (the background's facts and what
the monotone strata derive) and ``upper`` (what strata with negation, or above one, derive).
At a time point the new facts go to an ``overlay`` that is cleared, not rebuilt, at the next
one (DOTR's Δ- and Δ+ in one step). Evaluation is driven by the new facts only: each new
fact is routed to the rule atoms it can match and the compiled plan starting at that atom
runs with the new facts as its source. When a time point's facts can change what a negated
atom sees, ``upper`` is set aside and the non-monotone strata are recomputed over
``lower`` + overlay, so negation stays exact.

A rule that computes new terms and depends on itself (:attr:`Program.unbounded`) may
derive without end; the facts such rules derive in one saturation (a time point, or the
background closure) are counted, and past ``max_derived`` the run stops with an error
naming the rule that derived the most, rather than filling memory.
"""
from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Callable, Iterable

from chronolog.datalog.program import CONSTRAINT_PREFIX, Program, Rule
from chronolog.errors import ChronologError
from chronolog.joins import CompiledJoin, Pattern, order
from chronolog.store import Mask
from chronolog.store import TRIPLE, Database, Fact, Layers
from chronolog.terms import RDF, TermDictionary, Var

RouteKey = tuple[str, object]
Batch = dict[str, list[Fact]]
MAX_DERIVED = 1_000_000  # facts rules that compute new terms may derive in one saturation


class DerivationLimitError(ChronologError):
    """Rules that compute new terms derived more than ``max_derived`` facts at once."""


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

    def __init__(self, program: Program, dictionary: TermDictionary, max_derived: int = MAX_DERIVED) -> None:
        self.program = program
        self.dictionary = dictionary
        self.max_derived = max_derived
        self._unbounded = frozenset(r.index for r in program.unbounded)
        self.rdf_type = dictionary.iri(RDF + "type")
        self.lower = self._database()
        self.upper = self._database()
        self.overlay = self._database()
        self.background_view = Layers([self.lower, self.upper])
        self._close_lower = Layers([self.lower])
        self._now = Layers([self.lower, self.upper, self.overlay])
        self._recompute = Layers([self.lower, self.overlay])
        self._bound: dict[tuple[int, int, int], Callable[..., list[tuple]]] = {}
        self._planned_sizes: dict[tuple[int, int], tuple[int, ...]] = {}
        self._guards: dict[tuple[int, int, int], Callable[[int], bool] | None] = {}
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

    def _database(self, removable: bool = False) -> Database:
        db = Database(removable)
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

    def adopt_closure(self, lower: Database, upper: Database) -> Layers:
        """Take a background closure computed elsewhere under this program's rules (by
        ``chronolog materialize --runner spark --parquet``) as this reasoner's, closed,
        without deriving anything again. Its two layers are the ones ``close`` builds."""
        if self.closed:
            raise RuntimeError("the background is closed already; a closure cannot be adopted")
        for mine, theirs in ((self.lower, lower), (self.upper, upper)):
            for name, relation in theirs.relations.items():
                if relation.facts:
                    mine.relation(name, relation.arity).add_all(relation.facts)
        self.closed = True
        return self.background_view

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

    @property
    def incremental_view(self) -> Layers:
        """The view ``at`` returns when the time point only added facts to the background
        closure (background + overlay); any other view means the non-monotone strata were
        recomputed and some background-derived facts may not hold at this time point."""
        return self._now

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

    # -- maintenance over windows (chronolog.datalog.maintenance) ----------------------

    def database(self) -> Database:
        """An empty database with a relation for every relation of the program, whose
        facts can leave one by one (a window's part of the materialization)."""
        return self._database(removable=True)

    def derive(self, view: Layers, target: Database, new: Batch) -> None:
        """Derive into ``target`` (a layer of ``view``) everything that follows from the
        facts ``new``, already in ``target``: semi-naive, every stratum."""
        self._saturate(view, target, new, None)

    def consequences(self, view: Layers, new: Batch) -> Iterable[tuple[Rule, int, list[Fact]]]:
        """(rule, body atom, facts): every rule atom facts of ``new`` match, with them."""
        return self._routes_of(view, new, self._routes)

    def plan(self, view: Layers, rule: Rule, first: int) -> Callable[..., list[tuple]]:
        """The plan of ``rule`` from body atom ``first`` (its facts given), heads out."""
        return self._plan(view, rule, first)

    # -- evaluation --------------------------------------------------------------------

    def _plan(self, view: Layers, rule: Rule, first: int):
        """The plan of ``rule`` starting at body atom ``first``, bound to ``view``.

        While the background closure is computed, relations grow by orders of magnitude,
        so a plan is re-ordered when a relation it reads has grown past twice its size at
        planning time; after that, plans are fixed.
        """
        key = (id(view), rule.index, first)
        bound = self._bound.get(key)
        if bound is not None and (self.closed or not self._outgrown(view, rule, first)):
            return bound
        steps = order(rule.body, lambda p, mask: estimate(view, p, mask), first=first)
        plan = CompiledJoin(steps, rule.head.args)
        self._planned_sizes[(rule.index, first)] = self._sizes(view, rule)
        bound = self._bound[key] = plan.bind(view)
        return bound

    def _sizes(self, view: Layers, rule: Rule) -> tuple[int, ...]:
        return tuple(view.size(s.relation) for s in rule.body if isinstance(s, Pattern))

    def _outgrown(self, view: Layers, rule: Rule, first: int) -> bool:
        before = self._planned_sizes[(rule.index, first)]
        return any(now > 2 * then + 64 for now, then in zip(self._sizes(view, rule), before))

    def _guard(self, view: Layers, rule: Rule, i: int) -> Callable[[int], bool] | None:
        """For a body atom with a variable predicate ?p, a test 'can predicate P match?': the
        rule's atom that binds ?p with a constant predicate (owl:onProperty(?r, ?p),
        owl:TransitiveProperty(?p), ...) must have a fact for P. Skipping a group of new
        facts whose predicate fails the test loses nothing: a later fact of that guard atom
        is routed itself and joins with every fact already there."""
        key = (id(view), rule.index, i)
        if key in self._guards:
            return self._guards[key]
        guard = None
        pvar = rule.body[i].args[1]  # type: ignore[union-attr]
        for j, step in enumerate(rule.body):
            if (j == i or not isinstance(step, Pattern) or step.negated or step.relation != TRIPLE
                    or isinstance(step.args[1], Var) or pvar not in (step.args[0], step.args[2])):
                continue
            where = 0 if step.args[0] == pvar else 2
            mask = tuple(sorted({k for k, a in enumerate(step.args) if not isinstance(a, Var)} | {where}))
            slot = mask.index(where)
            consts = [step.args[k] for k in mask]
            if len(mask) == 3:
                contains = view.contains(TRIPLE)
                guard = lambda pred, c=consts, n=slot: contains(tuple(c[:n] + [pred] + c[n + 1:]))  # noqa: E731
            else:
                lookup = view.lookup(TRIPLE, mask)
                guard = lambda pred, c=consts, n=slot: bool(lookup(tuple(c[:n] + [pred] + c[n + 1:]), ()))  # noqa: E731
            break
        self._guards[key] = guard
        return guard

    def _routes_of(self, view: Layers, batch: Batch, routes: dict[RouteKey, list[tuple[Rule, int]]]
                   ) -> Iterable[tuple[Rule, int, list[Fact]]]:
        """(rule, atom index, facts) for every rule atom that facts of ``batch`` may match."""
        for name, facts in batch.items():
            if name != TRIPLE:
                for rule, i in routes.get((name, None), ()):
                    yield rule, i, facts
                continue
            by_pred: dict[int, list[Fact]] = defaultdict(list)
            for f in facts:
                by_pred[f[1]].append(f)
            anywhere = routes.get((TRIPLE, None), ())
            for rule, i in anywhere:
                guard = self._guard(view, rule, i)
                if guard is None:
                    yield rule, i, facts
                else:
                    for pred, group in by_pred.items():
                        if guard(pred):
                            yield rule, i, group
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
        below = Layers([db for db in view.layers if db is not target])  # target.add checks the rest
        pending: dict[int, list[tuple[Rule, int, list[Fact]]]] = {}
        made: dict[int, int] = defaultdict(int)  # rule index -> facts it derived, for rules of self._unbounded
        queue: list[int] = []

        def route(batch: Batch) -> bool:
            if guard and self._negation_routes and self._hits_negation(batch):
                return False
            for rule, i, facts in self._routes_of(view, batch, self._routes):
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
                    add = target.relations[head].add
                    out = derived[head]
                    found = self._plan(view, rule, i)(facts)
                    before = len(out)
                    if below.layers:
                        known = below.contains(head)
                        out.extend(f for f in found if not known(f) and add(f))
                    else:
                        out.extend(f for f in found if add(f))
                    if rule.index in self._unbounded:
                        made[rule.index] += len(out) - before
                        if sum(made.values()) > self.max_derived:
                            raise self._limit_error(made)
                derived = {k: v for k, v in derived.items() if v}
                if not derived:
                    break
                if not route(derived):
                    return False
                work = pending.pop(s, None)
        return True

    def _limit_error(self, made: dict[int, int]) -> DerivationLimitError:
        rule = self.program.rules[max(made, key=made.__getitem__)]
        name, place = rule.computed[0]
        return DerivationLimitError(
            f"{place}: {rule.name} derived {made[rule.index]:,} new facts at one time point (or in the "
            f"background closure), computing ?{name} by arithmetic and feeding it back to itself; rules like it may "
            f"derive at most {self.max_derived:,} facts per time point (max_derived): the program seems to derive "
            f"without end\n    {rule.place.text.strip()}")

    def _hits_negation(self, batch: Batch) -> bool:
        """Could a negated atom of a non-monotone stratum see one of these new facts?"""
        for rule, i, facts in self._routes_of(self._now, batch, self._negation_routes):
            atom = rule.body[i]
            consts = [(k, a) for k, a in enumerate(atom.args) if not isinstance(a, Var)]  # type: ignore[union-attr]
            if any(all(f[k] == a for k, a in consts) for f in facts):
                return True
        return False


def estimate(view: Layers, atom: Pattern, mask: Mask) -> float:
    """Expected facts per lookup: the average bucket on ``mask``, but never more than the
    facts that match the atom's constants (an atom on an empty predicate costs nothing)."""
    average = view.fanout(atom.relation, mask)
    consts = tuple(k for k, a in enumerate(atom.args) if not isinstance(a, Var))
    if not consts or consts == mask:
        return average
    key = atom.args[consts[0]] if len(consts) == 1 else tuple(atom.args[k] for k in consts)
    return min(average, float(view.count(atom.relation, consts, key)))
