"""Keeping a materialization up to date as facts enter and leave a window (Barbieri et al.).

The knowledge at an evaluation instant is background closure ∪ window content ∪ what the
rules derive from both. The background closure never changes (``Reasoner``'s two lower
layers); the window's part lives in one overlay database, kept up to date by one of three
strategies that all give the same overlay:

- ``naive``: recompute the overlay from the window content at every instant (the
  reasoner's per-time-point evaluation, stratified negation included);
- ``dred``: delete and re-derive (Volz et al., Barbieri's Table 3): overestimate what the
  facts that left take with them, remove it, re-derive what still has a derivation, then
  derive from what entered;
- ``expiration``: Barbieri's Tables 4-6: every fact carries the last instant it can hold
  (an explicit fact: the last instant it is in the window; a derived fact: the minimum over
  its premises, the maximum over its derivations); an instant drops the facts whose time
  is past, and derives only from what entered (an existing fact derived again with a later
  expiration keeps the later one, which is propagated like a new fact). The facts and their
  expirations live in :class:`chronolog.datalog.annotated.AnnotatedStore`, the store
  Laser's horizons use.

DRed and expiration are for rules without negation (a clear error otherwise: negation
can make a fact that entered retract a derived one, which neither bookkeeping covers).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Iterable, Mapping

from chronolog.datalog.annotated import INFINITY, AnnotatedStore, Fact as Annotated
from chronolog.datalog.program import Rule
from chronolog.datalog.reasoner import Reasoner
from chronolog.errors import ChronologError
from chronolog.joins import CompiledJoin, order
from chronolog.store import TRIPLE, Database, Fact, Layers
from chronolog.terms import Var

STRATEGIES = ("naive", "dred", "expiration")
Triple = tuple[int, int, int]


class MaintenanceError(ChronologError):
    """A strategy asked for rules it cannot maintain."""


class Maintenance(ABC):
    """The overlay of one window's content over a closed background (see the module)."""

    name: str

    def __init__(self, reasoner: Reasoner) -> None:
        self.reasoner = reasoner
        reasoner.close()
        self.explicit: dict[Triple, int] = {}  # window content -> the last instant it holds

    @abstractmethod
    def update(self, now: int, entered: Mapping[Triple, int], left: Iterable[Triple]) -> Layers:
        """The view at instant ``now``, after ``entered`` (triple -> last instant in the
        window) came in and ``left`` (triples no longer in the window at all) went."""

    def _content(self, entered: Mapping[Triple, int], left: Iterable[Triple]) -> tuple[list[Triple], list[Triple]]:
        """Apply a change to the explicit content: (triples new to it, triples gone)."""
        explicit = self.explicit
        gone = [t for t in left if explicit.pop(t, None) is not None]
        new = [t for t in entered if t not in explicit]
        for t, last in entered.items():
            if explicit.get(t, last) <= last:
                explicit[t] = last
        return new, gone

    @property
    @abstractmethod
    def overlay(self) -> Database:
        """What holds besides the background closure (content and derived, not background)."""

    def state(self) -> dict[Triple, int]:
        return dict(self.explicit)

    def clear(self) -> None:
        """Back to an empty window (before a restore)."""
        self.explicit.clear()
        self.overlay.clear()

    def _refuse_negation(self) -> None:
        negated = [r for r in self.reasoner.program.rules if r.negatives]
        if negated:
            raise MaintenanceError(f"--maintenance {self.name} does not support rules with negation "
                                   f"({negated[0]}); use --maintenance naive")


class Naive(Maintenance):
    """Recompute the overlay from the window content at every instant."""

    name = "naive"

    def update(self, now: int, entered: Mapping[Triple, int], left: Iterable[Triple]) -> Layers:
        self._content(entered, left)
        return self.reasoner.at(self.explicit)

    @property
    def overlay(self) -> Database:
        return self.reasoner.overlay


class DRed(Maintenance):
    """Delete and re-derive (Volz et al.)."""

    name = "dred"

    def __init__(self, reasoner: Reasoner) -> None:
        super().__init__(reasoner)
        self._refuse_negation()
        self._overlay = reasoner.database()
        self.view = Layers([reasoner.lower, reasoner.upper, self._overlay])
        self._checks: dict[int, object] = {}

    @property
    def overlay(self) -> Database:
        return self._overlay

    def update(self, now: int, entered: Mapping[Triple, int], left: Iterable[Triple]) -> Layers:
        new, gone = self._content(entered, left)
        overlay, reasoner = self._overlay, self.reasoner
        doomed: set[tuple[str, Fact]] = {(TRIPLE, t) for t in gone if t in overlay.triples}
        frontier: dict[str, list[Fact]] = {TRIPLE: [t for _, t in doomed]}
        while any(frontier.values()):  # overestimate: everything with a derivation through a deletion
            found: dict[str, list[Fact]] = {}
            for rule, i, facts in reasoner.consequences(self.view, frontier):
                relation = rule.head.relation
                held = overlay.relations[relation]
                for head in reasoner.plan(self.view, rule, i)(facts):
                    if head in held and (relation, head) not in doomed:
                        doomed.add((relation, head))
                        found.setdefault(relation, []).append(head)
            frontier = found
        for relation, fact in doomed:
            overlay.relations[relation].discard(fact)
        seed: dict[str, list[Fact]] = {}
        for relation, fact in doomed:  # re-derive: still explicit, or one rule step from what is left
            if (relation == TRIPLE and fact in self.explicit) or self._derivable(relation, fact):
                seed.setdefault(relation, []).append(fact)
        known = self.view.contains(TRIPLE)
        seed.setdefault(TRIPLE, []).extend(t for t in new if not known(t))
        for relation, facts in seed.items():
            overlay.relations[relation].update(facts)
        reasoner.derive(self.view, overlay, {r: f for r, f in seed.items() if f})
        return self.view

    def _derivable(self, relation: str, fact: Fact) -> bool:
        for rule in self.reasoner.program.rules:
            if rule.head.relation != relation:
                continue
            binding: dict[Var, int] = {}
            if all((binding.setdefault(a, v) == v) if isinstance(a, Var) else a == v
                   for a, v in zip(rule.head.args, fact)):
                inputs = tuple(binding)
                check = self._checks.get(rule.index)
                if check is None:
                    steps = order(rule.body, lambda p, m: self.view.fanout(p.relation, m), bound=inputs)
                    check = self._checks[rule.index] = (CompiledJoin(steps, (), inputs).bind(self.view), inputs)
                run, names = check  # type: ignore[misc]
                if run(None, *(binding[v] for v in names)):
                    return True
        return False


class Expiration(Maintenance):
    """Barbieri et al.'s expiration times (Tables 4-6)."""

    name = "expiration"

    def __init__(self, reasoner: Reasoner) -> None:
        super().__init__(reasoner)
        self._refuse_negation()
        self._overlay = reasoner.database()
        self.view = Layers([reasoner.lower, reasoner.upper, self._overlay])
        self.store = AnnotatedStore()
        self.held: dict[str, dict[Fact, Annotated]] = {name: {} for name in self._overlay.relations}
        background = Layers([reasoner.lower, reasoner.upper])
        self._in_background = {name: background.contains(name) for name in self._overlay.relations}
        self._plans: dict[tuple[int, int], tuple[object, list[tuple[int, int, dict[Fact, Annotated]]], int]] = {}

    @property
    def overlay(self) -> Database:
        return self._overlay

    def clear(self) -> None:
        super().clear()
        self.store = AnnotatedStore()
        for held in self.held.values():
            held.clear()

    def expiration(self, relation: str, fact: Fact) -> int:
        """The last instant ``fact`` holds (a background fact: forever)."""
        held = self.held[relation].get(fact)
        return INFINITY if held is None else held.horizon

    def update(self, now: int, entered: Mapping[Triple, int], left: Iterable[Triple]) -> Layers:
        self._content(entered, left)
        overlay = self._overlay.relations
        for fact in self.store.expire(now, 0):
            relation = fact.pred[0]
            del self.held[relation][fact.args]
            overlay[relation].discard(fact.args)
        delta: dict[str, list[Fact]] = {}
        for triple, last in entered.items():
            self._offer(now, TRIPLE, triple, last, delta)
        while delta:
            found: dict[str, list[Fact]] = {}
            for rule, i, facts in self.reasoner.consequences(self.view, delta):
                run, premises, width = self._plan(rule, i)
                relation = rule.head.relation
                heads = self.held[relation]
                for row in run(facts):  # type: ignore[operator]
                    # the premises' earliest expiration (a background premise: never)
                    last = INFINITY
                    for begin, end, held in premises:
                        premise = held.get(row[begin:end])
                        if premise is not None and premise.horizon < last:
                            last = premise.horizon
                    head = row[:width]
                    known = heads.get(head)
                    if known is None or known.horizon < last:  # most derivations find the head known
                        self._offer(now, relation, head, last, found)
            delta = found
        return self.view

    def _offer(self, now: int, relation: str, fact: Fact, last: int, delta: dict[str, list[Fact]]) -> None:
        """``fact`` holds until ``last``: keep it if that is later than what is known."""
        if last < now:
            return
        facts = self.held[relation]
        held = facts.get(fact)
        if held is not None:
            if held.horizon >= last:
                return
            self.store.remove(held)
        elif self._in_background[relation](fact):
            return
        else:
            self._overlay.relations[relation].add(fact)
        annotated = Annotated((relation, len(fact)), fact, None, now, horizon=last)
        self.store.insert(annotated)
        facts[fact] = annotated
        delta.setdefault(relation, []).append(fact)

    def _plan(self, rule: Rule, first: int) -> tuple[object, list[tuple[int, int, dict[Fact, Annotated]]], int]:
        """The plan of ``rule`` from body atom ``first``: each row is the head's arguments
        then every positive premise's, so a derivation's premises (and their expirations)
        are slices of it: (plan, [(start, end, premise's expirations)], head width)."""
        key = (rule.index, first)
        hit = self._plans.get(key)
        if hit is None:
            positives = [rule.body[k] for k in rule.positives]
            outputs = list(rule.head.args)
            premises = []
            for p in positives:
                premises.append((len(outputs), len(outputs) + len(p.args), self.held[p.relation]))  # type: ignore[union-attr]
                outputs.extend(p.args)  # type: ignore[union-attr]
            steps = order(rule.body, lambda p, m: self.view.fanout(p.relation, m), first=first)
            hit = self._plans[key] = (CompiledJoin(steps, outputs).bind(self.view), premises, len(rule.head.args))
        return hit


class Unreasoned(Maintenance):
    """No rules: the overlay is the window content the background does not hold, kept up
    to date triple by triple (every strategy would give this; none need run)."""

    name = "none"

    def __init__(self, reasoner: Reasoner) -> None:
        super().__init__(reasoner)
        self._overlay = reasoner.database()
        self.view = Layers([reasoner.lower, reasoner.upper, self._overlay])
        self._in_background = Layers([reasoner.lower, reasoner.upper]).contains(TRIPLE)

    @property
    def overlay(self) -> Database:
        return self._overlay

    def update(self, now: int, entered: Mapping[Triple, int], left: Iterable[Triple]) -> Layers:
        new, gone = self._content(entered, left)
        triples = self._overlay.triples
        if len(gone) * 2 >= len(triples):  # most of it leaves (a tumbling window): rebuild
            leaving = set(gone)
            staying = [t for t in triples if t not in leaving]
            triples.clear()
            triples.update(staying)
        else:
            for t in gone:
                triples.discard(t)
        triples.update(t for t in new if not self._in_background(t))
        return self.view


def maintenance(name: str, reasoner: Reasoner) -> Maintenance:
    """The strategy called ``name`` over ``reasoner``'s (closed) background (with no rules,
    whatever the name, the window content as it is)."""
    kinds = {cls.name: cls for cls in (Naive, DRed, Expiration)}
    if name not in kinds:
        raise MaintenanceError(f"unknown maintenance strategy {name!r}: expected one of {', '.join(STRATEGIES)}")
    if not reasoner.program.rules:
        return Unreasoned(reasoner)
    return kinds[name](reasoner)
