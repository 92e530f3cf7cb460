"""Partition keys: which events the temporal engine may process apart from each other.

Rules that share event types (read or emitted) form a *group*; groups never see each
other's events. Within a group, a *key* assigns each event type an attribute such that
every rule only ever combines events with equal key values: the terminator, each
predicate, negation and aggregate, and the composite event the rule emits (when another
rule of the group reads it) are tied to each other by ``==`` parameters on exactly those
attributes. Then the events of one key value can run in a temporal engine of their own
and the results are those of one engine over all events (seed 000, section 4: temporal
reasoning partitions by the rules' parameters, e.g. the room). A group without such a
key runs under one global key.

Only qualifying conditions count (a predicate's, negation's or aggregate's own
``where``): a rule-level condition is checked after selection, so ``last`` would pick
among all keys before it applied.

>>> from chronolog.cep import Rule, Terminator, Predicate, Within, last, param, attr
>>> fire = Rule(name="fire", emits="Fire", terminator=Terminator("S", "Smoke"),
...             predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
...                                   where=[param("T.room", "S.room")])],
...             outputs={"room": attr("S.room")})
>>> [g.key for g in partition_rules([fire], {"Smoke": ["room"], "Temp": ["room", "value"]})]
[{'Smoke': 'room', 'Temp': 'room', 'Fire': 'room'}]
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chronolog.cep.expressions import Attr, Compare
from chronolog.cep.rules import Rule

_OUT = "=>"  # the alias of a rule's outputs in its (alias, attribute) nodes


@dataclass(frozen=True)
class RuleGroup:
    """Rules that share event types, and the key they are partitioned by (None: one key)."""

    rules: tuple[str, ...]
    types: tuple[str, ...]
    key: dict[str, str] | None

    def describe(self) -> str:
        """For ``chronolog check``: the key each event type of the group is split by."""
        if self.key is None:
            return "one global key (no parameter ties every event of these rules)"
        return "key " + ", ".join(f"{t}.{a}" for t, a in self.key.items())


class _UnionFind:
    """Equivalence classes of hashable items (attribute nodes of a rule; event types)."""

    def __init__(self) -> None:
        self.parent: dict = {}

    def find(self, item):
        parent = self.parent.setdefault(item, item)
        if parent != item:
            parent = self.parent[item] = self.find(parent)
        return parent

    def union(self, a, b) -> None:
        self.parent[self.find(a)] = self.find(b)


Analysis = tuple[_UnionFind, dict[str, str]]  # a rule's parameter classes, alias -> event type


def _rule_classes(rule: Rule) -> Analysis:
    """The equality classes of a rule's qualifying parameters, and alias -> event type."""
    types = {rule.terminator.alias: rule.terminator.type}
    conditions: list[Compare] = list(rule.terminator.where)
    for item in (*rule.predicates, *rule.negations):
        types[item.alias] = item.type
        conditions.extend(item.where)
    for agg in rule.aggregates:
        types[agg.name] = agg.type
        conditions.extend(agg.where)
    classes = _UnionFind()
    for cond in conditions:
        if cond.op == "==" and isinstance(cond.left, Attr) and isinstance(cond.right, Attr):
            classes.union((cond.left.alias, cond.left.name), (cond.right.alias, cond.right.name))
    for name, term in rule.outputs:
        if isinstance(term, Attr):
            classes.union((_OUT, name), (term.alias, term.name))
    return classes, types


def _groups(analysed: dict[Rule, Analysis]) -> list[list[Rule]]:
    """Rules joined when they share an event type, in registration order."""
    linked = _UnionFind()
    for rule, (_, types) in analysed.items():
        for etype in types.values():
            linked.union(etype, rule.emits)
    groups: dict[str, list[Rule]] = {}
    for rule in analysed:
        groups.setdefault(linked.find(rule.emits), []).append(rule)
    return list(groups.values())


def _propagate(rules: list[Rule], analysed: dict[Rule, Analysis], attributes: Mapping[str, Sequence[str]],
               seed: tuple[str, str]) -> dict[str, str] | None:
    """The key that follows from keying ``seed``'s type by its attribute, or None."""
    read = {t for rule in rules for t in analysed[rule][1].values()}
    key = dict([seed])
    changed = True
    while changed:
        changed = False
        for rule in rules:
            classes, types = analysed[rule]
            anchor = next(((a, key[t]) for a, t in types.items() if t in key), None)
            if anchor is None:
                continue
            cls = classes.find(anchor)
            for alias, etype in types.items():
                tied = [a for a in attributes[etype] if classes.find((alias, a)) == cls]
                if etype in key:
                    if key[etype] not in tied:
                        return None
                elif tied:
                    key[etype], changed = tied[0], True
                else:
                    return None
            tied = [name for name, _ in rule.outputs if classes.find((_OUT, name)) == cls]
            if rule.emits in key:
                if key[rule.emits] not in tied and rule.emits in read:
                    return None
            elif tied:
                key[rule.emits], changed = tied[0], True
            elif rule.emits in read:
                return None
    return key


def partition_rules(rules: Sequence[Rule], attributes: Mapping[str, Sequence[str]]) -> list[RuleGroup]:
    """The rule groups of a program and their keys (``attributes``: every event type's,
    composite types included)."""
    analysed = {rule: _rule_classes(rule) for rule in rules}
    out = []
    for group in _groups(analysed):
        types: dict[str, None] = {}
        for rule in group:
            types.update(dict.fromkeys(analysed[rule][1].values()))
            types[rule.emits] = None
        found = None
        first = group[0].terminator.type
        for attribute in attributes[first]:
            found = _propagate(group, analysed, attributes, (first, attribute))
            if found is not None:
                break
        out.append(RuleGroup(tuple(r.name for r in group), tuple(types), found))
    return out
