"""DOTR's split for Spark (DESIGN.md section 4): reasoning and the EVENT queries per time
point run ahead in parallel (``prepare``); the temporal patterns run per key
(``process``), a key per value of the attribute that ties a group of connected rules
together (:mod:`chronolog.cep.partition`), or one key for the group when none does.

A group whose rules never look back (every rule a bare terminator: no predicate,
negation or aggregate) holds no state: its detections are made in ``prepare`` (CityBench
Q1's same-time rule keyed by an observation would otherwise make a state-store key per
event, each a round trip to the state store).

Events travel as their terms' N-Triples text, so that each process's own dictionary
reads them; a key's state is its temporal engine's snapshot, whose events hold that text.
With provenance, an event also carries its explanation (``cep.WHY``, plain data), and
the keyed engines explain what they detect.
"""
from __future__ import annotations

import itertools
from dataclasses import replace
from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING, Sequence

from chronolog import cep
from chronolog.cep.partition import RuleGroup, partition_rules
from chronolog.formats import parse_terms
from chronolog.lang.dotr.lowering import firing_names, value_decoder
from chronolog.program import GraphOutput, Inputs, Plan, Prepared, Processed, ProgramSpec, Record

if TYPE_CHECKING:  # the program builds its plan: a plain import would be a cycle
    from chronolog.lang.dotr.program import DotrProgram

ShippedEvent = tuple[int, int, str, list, object]  # (time, seq in the time point, type, attribute texts, WHY)


class DotrPlan(Plan):
    """Routes a time point's events to their groups' keys, and runs a key's events
    through that group's temporal engine."""

    def __init__(self, program: DotrProgram) -> None:
        self.program = program
        dictionary = program.dictionary
        self.groups: list[RuleGroup] = partition_rules([r.rule for r in program.rules.values()], program.attributes)
        self.routes: dict[str, list[tuple[int, int | None]]] = {}  # type -> (group, key position)
        for g, group in enumerate(self.groups):
            for etype in group.types:
                if etype not in program.rules:  # input types; composite ones stay inside the group
                    attrs = program.attributes[etype]
                    position = attrs.index(group.key[etype]) if group.key else None
                    self.routes.setdefault(etype, []).append((g, position))
        by_id = value_decoder(dictionary)

        @lru_cache(maxsize=1 << 16)
        def term_id(text: str) -> int:
            return dictionary.encode(parse_terms([text])[0])

        def decode(value: object) -> object:
            return by_id(term_id(value)) if isinstance(value, str) else by_id(value)

        self.term_id = term_id
        dictionary.on_reclaim(term_id.cache_clear)  # its ids may be gone
        self.temporal: list[cep.TemporalEngine] = []
        self.horizons: list[int] = []
        self.empty: list[bytes] = []
        self.stateless: list[bool] = []
        for group in self.groups:
            temporal = cep.TemporalEngine(decode=decode, explain=program.spec.options.provenance)
            for etype in group.types:
                if etype not in program.rules:
                    temporal.declare(etype, program.attributes[etype])
            rules = [next(r.rule for r in program.rules.values() if r.rule.name == name) for name in group.rules]
            for rule in rules:
                temporal.register(rule)
            self.stateless.append(not any(r.predicates or r.negations or r.aggregates for r in rules))
            self.temporal.append(temporal)
            self.horizons.append(max(temporal.rules.horizons.values(), default=0))
            self.empty.append(temporal.snapshot())

    def keyed_spec(self, spec: ProgramSpec) -> ProgramSpec:
        """The keyed stage never reasons: its workers compile the program without the
        background and the Datalog rules (a large closure would be built in each)."""
        return replace(spec, options=replace(spec.options, background=(), rules=()))

    def prepare(self, time: int, inputs: Inputs) -> Prepared:
        program = self.program
        triples = dict.fromkeys(t for elements in inputs.values() for e in elements for t in e)
        if program.explainer is not None:
            program.explainer.inputs(time, inputs)
        text = program.term_text
        attributes = program.attributes
        records: list[Record] = []
        stateless: dict[tuple[int, str], list[ShippedEvent]] = {}
        for seq, event in enumerate(program.events(time, triples)):
            routes = self.routes.get(event.type)
            if not routes:
                continue
            values = [None if event.attrs[a] is None else text(event.attrs[a]) for a in attributes[event.type]]
            why = event.attrs.get(cep.WHY)
            for g, position in routes:
                key = f"{g}|" if position is None else f"{g}|{values[position]}"
                if self.stateless[g]:
                    stateless.setdefault((g, key), []).append((time, seq, event.type, values, why))
                else:
                    records.append(Record(key, time, seq, (event.type, values, why)))
        outputs: list[GraphOutput] = []
        for (g, key), events in stateless.items():  # a key's events of the time point at once
            outputs.extend(self._detect(g, key, None, events)[2])
        return Prepared(records, outputs)

    def process(self, key: str, state: bytes | None, records: Sequence[Record]) -> Processed:
        events = [(r.time, r.seq, *r.payload) for r in records]  # type: ignore[misc]
        group = int(key.split("|", 1)[0])
        snapshot, now, outputs = self._detect(group, key, state, events)
        expires = None if snapshot is None or now is None else now + self.horizons[group]
        return Processed(snapshot, outputs, expires)

    def _detect(self, group: int, key: str, snapshot: bytes | None,
                events: list[ShippedEvent]) -> tuple[bytes | None, int | None, list[GraphOutput]]:
        """Push a key's events (in time order, then seq: as ``process`` is handed a key's
        records, and as ``prepare`` makes them); its new state (None: nothing worth
        keeping), the engine's time, and the output graphs."""
        program = self.program
        temporal = self.temporal[group]
        temporal.restore(snapshot or self.empty[group])
        attributes = program.attributes
        out = []
        for time, at_time in itertools.groupby(events, key=itemgetter(0)):
            point = list(at_time)  # a time point's events at once: they may be read within 0 of each other
            fired = temporal.push_point([cep.Event(etype, time, time, _attrs(attributes[etype], values, why))
                                         for _, _, etype, values, why in point])
            for (_, seq, *_), composites in zip(point, fired):
                if not composites:  # most events complete no pattern
                    continue
                for composite, name in firing_names(time, seq, composites):
                    lowered = program.rules[composite.type]
                    attrs = {a: self.term_id(v) if isinstance(v, str) and a not in lowered.aggregated else v
                             for a, v in composite.attrs.items()}
                    out.append(program.graph(composite._replace(attrs=attrs), name))
        if temporal.stored_event_count() == 0:  # nothing a later event could combine with
            return None, temporal.now, out
        return temporal.snapshot(), temporal.now, out


def _attrs(names: list[str], values: list, why: object) -> dict:
    """A shipped event's attributes (with its explanation, when it has one)."""
    attrs = dict(zip(names, values))
    if why is not None:
        attrs[cep.WHY] = why
    return attrs
