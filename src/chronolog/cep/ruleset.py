"""The registered event types and compiled rules, and the checks that span rules.

A ``RuleSet`` only grows; everything in it is immutable, so one rule set can serve many
states (one per key in the Spark pipeline). Registering a rule checks it (``compiler``),
that its output type is consistent with any other rule emitting it, and that it does not
close a cycle: a cycle would let a time point's composite events trigger each other
forever, so the type graph must stay acyclic.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable

from chronolog.cep.compiler import Decoder, RulePlan, compile_rule
from chronolog.cep.errors import CyclicRulesError, RuleError
from chronolog.cep.events import EventType
from chronolog.cep.rules import Rule


class RuleSet:
    """Declared input types, derived types and compiled rule plans, in registration order."""

    def __init__(self, decode: Decoder | None = None, explain: bool = False) -> None:
        self.decode = decode
        self.explain = explain
        self.types: dict[str, EventType] = {}
        self.plans: list[RulePlan] = []
        self.horizons: dict[str, int] = {}
        self._feeds: dict[str, set[str]] = {}

    def declare(self, name: str, attributes: Iterable[str]) -> EventType:
        """Declare an input event type and its attributes."""
        etype = EventType(name, tuple(attributes))
        known = self.types.get(name)
        if known is not None:
            if known == etype:
                return known
            what = "emitted by a rule" if known.derived else "declared"
            raise RuleError(f"event type {name!r} is already {what} with attributes {known.attributes}")
        self.types[name] = etype
        return etype

    def add(self, rule: Rule) -> RulePlan:
        """Check and compile ``rule``; nothing changes if it is rejected."""
        if any(p.name == getattr(rule, "name", None) for p in self.plans):
            raise RuleError(f"rule {rule.name!r} is already registered")
        plan = compile_rule(rule, self.types, self.decode, self.explain)
        output = plan.output
        known = self.types.get(output.name)
        if known is not None and not known.derived:
            raise RuleError(f"rule {rule.name!r} emits {output.name!r}, which is declared as an input event type")
        if known is not None and known.attributes != output.attributes:
            raise RuleError(
                f"rule {rule.name!r} emits {output.name!r} with attributes {output.attributes}, "
                f"but another rule emits it with {known.attributes}"
            )
        reads = self.reads(rule)
        path = self._path(output.name, reads)
        if path:
            raise CyclicRulesError(
                f"rule {rule.name!r} would make the rules cyclic: {' -> '.join([*path, output.name])} "
                f"(it reads {path[-1]!r} and emits {output.name!r})"
            )
        self.types.setdefault(output.name, output)
        for read in reads:
            self._feeds.setdefault(read, set()).add(output.name)
        for type_name, depth in plan.reads.items():
            self.horizons[type_name] = max(self.horizons.get(type_name, 0), depth)
        self.plans.append(plan)
        return plan

    @staticmethod
    def reads(rule: Rule) -> set[str]:
        """Every event type the rule's pattern mentions."""
        return {rule.terminator.type, *(p.type for p in rule.predicates),
                *(n.type for n in rule.negations), *(a.type for a in rule.aggregates)}

    def _path(self, start: str, targets: set[str]) -> list[str]:
        """A path of 'feeds' edges from ``start`` to one of ``targets`` ([] if none)."""
        if start in targets:
            return [start]
        stack = [(start, [start])]
        seen = {start}
        while stack:
            node, path = stack.pop()
            for nxt in sorted(self._feeds.get(node, ())):
                if nxt in targets:
                    return [*path, nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
        return []

    def fingerprint(self) -> str:
        """Identifies the types and rules, so a snapshot is restored only where it belongs."""
        text = repr((sorted(self.types.items()), [p.rule for p in self.plans]))
        return hashlib.sha256(text.encode()).hexdigest()
