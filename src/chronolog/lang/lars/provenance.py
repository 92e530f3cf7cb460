"""Why a LARS atom holds (``chronolog run --provenance``): the rule that derived it and
the facts its body was grounded on (each an input atom at its time, or derived the same
way), with the negated literals that did not hold.

A derived fact is explained when it is derived (the engine's windows move on), from the
body groundings that hold then; its explanation is kept while the fact lives, and goes
into snapshots. An output's record lists every atom it holds, each cut at ``DEPTH``
levels (a recursive rule can chain derivations across many time points).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from chronolog.atomstreams import atom_text, parse_atom
from chronolog.datalog.annotated import Fact
from chronolog.errors import SourceMap
from chronolog.lang.lars.check import ExtLiteral
from chronolog.lang.lars.syntax import Term
from chronolog.program.outputs import AtomsOutput

if TYPE_CHECKING:
    from chronolog.lang.lars.engine import Binding, LarsEngine, _Rule

DEPTH = 25


class AtomOrigins:
    """The explanations of one LARS engine's derived facts."""

    def __init__(self, engine: "LarsEngine", value: Callable[[Term, "Binding"], object]) -> None:
        """``value(term, binding)``: a term's value under a body instance."""
        self.engine = engine
        self.value = value
        syntax = engine.checked.syntax
        smap = SourceMap(syntax.source, syntax.filename)
        name = syntax.filename or "<program>"
        self._rule_at = {}
        for rule in engine.rules:
            line, column, _ = smap.position(rule.rule.rule.pos)
            self._rule_at[rule.position] = f"{name}:{line}:{column}: {rule.rule.rule.text.strip()}"
        self._why: dict[Fact, dict] = {}

    def derived(self, fact: Fact, rule: "_Rule", binding: "Binding") -> None:
        """Explain a fact ``rule`` derived from the body instance ``binding``."""
        engine, value = self.engine, self.value
        premises = []
        for step in rule.plans[None]:
            for extended, _, _, _, ground in engine._ground(step, binding, None):
                if all(extended[k] == v for k, v in binding.items() if k in extended):
                    premises.append(self.origin(ground))
                    break
        why: dict = {"fact": _text(fact), "from": "rule", "rule": self._rule_at[rule.position], "premises": premises}
        absent = [item for item in rule.tests if isinstance(item, ExtLiteral) and item.negated]
        if absent:
            why["absent"] = [atom_text((lit.atom.pred, tuple(value(a, binding) for a in lit.atom.args)))
                             for lit in absent]
        self._why[fact] = why

    def origin(self, fact: Fact) -> dict:
        """A fact's explanation: an input atom's, or the one recorded when it was derived."""
        if fact.seq is not None:
            return {"fact": _text(fact), "from": "input", "elements": [{"stream": "", "time": fact.at}]}
        return self._why.get(fact) or {"fact": _text(fact), "from": "unexplained",
                                        "note": "derived before its derivation was recorded"}

    def record(self, output: AtomsOutput) -> dict:
        """The record of an output: every atom it holds, explained."""
        self._why = {fact: why for fact, why in self._why.items() if fact.alive}
        store, t = self.engine.store, output.time
        atoms = []
        for text in output.atoms:
            pred, args = parse_atom(text)
            holding = [f for f in store.matching((pred, len(args)), tuple(range(len(args))), args)
                       if f.alive and f.at in (None, t)]
            best = next((f for f in holding if f in self._why or f.seq is not None), holding[0] if holding else None)
            atoms.append(_cut(self.origin(best), DEPTH) if best is not None else
                         {"fact": text, "from": "unexplained", "note": "no fact holds it now"})
        return {"time": t, "query": "", "at": self.engine.spec.filename or "", "atoms": atoms}

    def of(self, facts: Sequence[Fact]) -> list[dict | None]:
        """The explanations of ``facts`` (for a snapshot), None where there is none."""
        return [self._why.get(fact) for fact in facts]

    def restore(self, facts: Sequence[Fact], why: Sequence[dict | None] | None) -> None:
        """Take the explanations a snapshot kept for ``facts``."""
        self._why = {fact: w for fact, w in zip(facts, why or ()) if w is not None}


def _text(fact: Fact) -> str:
    text = atom_text((fact.pred[0], fact.args))
    return text if fact.at is None else f"{text} at {fact.at}"


def _cut(origin: dict, depth: int) -> dict:
    """``origin`` with its premises down to ``depth`` levels."""
    if "premises" not in origin:
        return origin
    if depth == 0:
        return {**{k: v for k, v in origin.items() if k != "premises"}, "note": f"derivation cut at {DEPTH} levels"}
    return {**origin, "premises": [_cut(p, depth - 1) for p in origin["premises"]]}
