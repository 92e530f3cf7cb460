"""Why a fact holds at a time point: an input element's, the background's, or a rule's
(with the facts the rule combined, each explained the same way).

A derivation is searched after the fact, in the view that held at the time point (the
reasoner records nothing while it runs, so reasoning without provenance pays nothing):
a rule whose head matches the fact and whose body holds in the view, each premise proved
in turn, never through a fact already on the path being proved, so every tree found is
a finite, well-founded derivation. A fact that holds is derivable, so the search finds
a tree unless it runs out of its budget (a proof that would read more than
``budget`` rule bodies), when the fact is reported as holding, its derivation unsearched.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Sequence

from chronolog.datalog.program import Program, Rule
from chronolog.datalog.reasoner import estimate
from chronolog.formats import iter_encoded_triples
from chronolog.joins import Assign, CompiledJoin, Pattern, order
from chronolog.store import TRIPLE, Fact, Layers
from chronolog.terms import TermDictionary, Var

Origin = dict  # the JSON form of a fact's explanation (docs/formats.md, provenance)


def fact_text(relation: str, fact: Fact, dictionary: TermDictionary) -> str:
    """A triple as N-Triples (``<s> <p> <o> .``), another relation's fact as ``rel(a, b)``."""
    terms = [str(dictionary.decode(t)) for t in fact]
    if relation == TRIPLE:
        return " ".join(terms) + " ."
    return f"{relation}({', '.join(terms)})"


def rule_text(rule: Rule) -> str:
    """Where a rule was written and its text: ``rooms.dl:3:1: :a(?x) :- :b(?x).``"""
    return f"{rule.place}: {rule.place.text.strip()}"


def input_origin(text: str, elements: Sequence[tuple[str, int]]) -> Origin:
    """The explanation of a fact that input elements (stream, time) brought."""
    return {"fact": text, "from": "input", "elements": [{"stream": s, "time": t} for s, t in elements]}


def element_sources(time: int, inputs: Mapping[str, Sequence[Sequence[Fact]]]) -> dict[Fact, tuple[tuple[str, int], ...]]:
    """The elements (stream, time) each triple of a time point's ``inputs`` (elements by
    stream) came from."""
    sources: dict[Fact, tuple[tuple[str, int], ...]] = {}
    for stream, elements in inputs.items():
        for element in elements:
            for triple in element:
                known = sources.get(triple, ())
                if (stream, time) not in known:
                    sources[triple] = (*known, (stream, time))
    return sources


def asserted(paths: Sequence[str], dictionary: TermDictionary, closure: Layers) -> Callable[[Fact], bool]:
    """Whether a triple was asserted by one of the background files ``paths`` (read again
    when first asked); for a closure folder (``materialize --parquet``), asserted and
    derived are one, so every triple of the ``closure`` counts."""
    if any(Path(path, "manifest.json").is_file() for path in paths):
        return closure.contains(TRIPLE)
    read: set[Fact] | None = None

    def test(fact: Fact) -> bool:
        nonlocal read
        if read is None:
            read = {t for path in paths for t in iter_encoded_triples(path, dictionary)}
        return fact in read

    return test


class Derivations:
    """What explains facts from one view to the next: a program's rules by the relation
    they derive, their bodies compiled once, and which triples the background asserted
    (``asserted``). ``at`` explains one view's facts."""

    def __init__(self, program: Program, dictionary: TermDictionary, background: Callable[[Fact], bool],
                 budget: int = 10_000) -> None:
        self.dictionary = dictionary
        self.background = background
        self.budget = budget
        self.rules: dict[str, list[Rule]] = {}
        for rule in program.rules:
            if not rule.is_constraint:
                self.rules.setdefault(rule.head.relation, []).append(rule)
        self.compiled: dict[tuple[int, tuple[Var, ...]], CompiledJoin] = {}

    def at(self, view: Layers, inputs: Mapping[Fact, Sequence[tuple[str, int]]]) -> "FactOrigins":
        """The explainer of ``view``'s facts, ``inputs`` those input elements brought."""
        return FactOrigins(self, view, inputs)


class FactOrigins:
    """Explains the facts of one view (see :class:`Derivations`).

    ``inputs`` maps each input triple of the view to the elements that brought it, as
    (stream, time) pairs.
    """

    def __init__(self, derivations: Derivations, view: Layers,
                 inputs: Mapping[Fact, Sequence[tuple[str, int]]]) -> None:
        self.derivations = derivations
        self.dictionary = derivations.dictionary
        self.view = view
        self.inputs = inputs
        self.budget = derivations.budget
        self._spent = 0  # rule bodies read by the current explanation
        self._joins: dict[tuple[int, tuple[Var, ...]], Callable[..., list[tuple]]] = {}
        self._proved: dict[tuple[str, Fact], Origin] = {}

    def explain(self, relation: str, fact: Fact) -> Origin:
        """The explanation of a fact that holds in the view."""
        self._spent = 0
        found = self._prove(relation, fact, frozenset())
        if found is None:
            return {"fact": fact_text(relation, fact, self.dictionary), "from": "unexplained",
                    "note": f"holds at this time point; no derivation found within {self.budget:,} rule evaluations"}
        return found

    def _prove(self, relation: str, fact: Fact, path: frozenset) -> Origin | None:
        key = (relation, fact)
        done = self._proved.get(key)
        if done is not None:
            return done
        text = fact_text(relation, fact, self.dictionary)
        if relation == TRIPLE:
            elements = self.inputs.get(fact)
            if elements is not None:
                return self._keep(key, input_origin(text, elements))
            if self.derivations.background(fact):
                return self._keep(key, {"fact": text, "from": "background"})
        if key in path:
            return None
        path = path | {key}
        for rule in self.derivations.rules.get(relation, ()):
            for premises, absent in self._instances(rule, fact):
                proofs = []
                for premise in premises:
                    proof = self._prove(*premise, path)
                    if proof is None:
                        break
                    proofs.append(proof)
                else:
                    origin = {"fact": text, "from": "rule", "rule": rule_text(rule), "premises": proofs}
                    if absent:
                        origin["absent"] = [fact_text(r, f, self.dictionary) for r, f in absent]
                    return self._keep(key, origin)
                if self._spent > self.budget:
                    return None
        return None

    def _keep(self, key: tuple[str, Fact], origin: Origin) -> Origin:
        self._proved[key] = origin
        return origin

    def _instances(self, rule: Rule, fact: Fact):
        """The instances of ``rule`` whose head is ``fact`` and whose body holds: for each,
        its positive premises and its negated atoms (facts that do not hold)."""
        binding: dict[Var, int] = {}
        for arg, value in zip(rule.head.args, fact):
            if isinstance(arg, Var):
                if binding.setdefault(arg, value) != value:
                    return
            elif arg != value:
                return
        assigned = {step.var for step in rule.body if isinstance(step, Assign)}
        inputs = tuple(sorted(v for v in binding if v not in assigned))
        variables = tuple(sorted({a for step in rule.body if isinstance(step, Pattern) for a in step.args
                                  if isinstance(a, Var)} | assigned))
        run = self._join(rule, inputs, variables)
        self._spent += 1
        for row in run(None, *(binding[v] for v in inputs)):
            values = dict(zip(variables, row))
            if any(values.get(v, value) != value for v, value in binding.items()):
                continue  # a head term computed by the body, to another value
            values.update(binding)
            premises, absent = [], []
            for step in rule.body:
                if isinstance(step, Pattern):
                    instance = (step.relation, tuple(values[a] if isinstance(a, Var) else a for a in step.args))
                    (absent if step.negated else premises).append(instance)
            yield premises, absent

    def _join(self, rule: Rule, inputs: tuple[Var, ...], variables: tuple[Var, ...]) -> Callable[..., list[tuple]]:
        key = (rule.index, inputs)
        run = self._joins.get(key)
        if run is None:
            compiled = self.derivations.compiled
            join = compiled.get(key)
            if join is None:
                view = self.view
                steps = order(rule.body, lambda p, mask: estimate(view, p, mask), bound=inputs)
                join = compiled[key] = CompiledJoin(steps, variables, inputs)
            run = self._joins[key] = join.bind(self.view)
        return run
