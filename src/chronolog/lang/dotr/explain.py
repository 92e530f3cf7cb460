"""Why a DOTR detection happened (``chronolog run --provenance``): the provenance record
of each output graph (docs/formats.md, "Provenance").

A detection is its rule's firing on a combination of events (the terminator, the events
each predicate selected, those each aggregate read); each event is one solution of an
EVENT query at a time point, and that solution matched triples, each an input element's,
the background's, or derived by the rules (a derivation tree down to the first two).
Everything is recorded as text when it happens: the time point's view and the terms'
ids are gone by the time a detection fires.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from chronolog import cep
from chronolog.cep import WHY
from chronolog.cep.expressions import AggValue
from chronolog.errors import SourceMap
from chronolog.provenance.facts import Derivations, asserted, element_sources
from chronolog.provenance.solutions import SolutionSupport
from chronolog.store import Fact, Layers

if TYPE_CHECKING:
    from chronolog.lang.dotr.program import DotrProgram

FEEDBACK = "(feedback)"  # the stream name of a triple fed back by a FEEDBACK rule


class DotrExplainer:
    """Builds the provenance of one DOTR program's events and detections."""

    def __init__(self, program: "DotrProgram") -> None:
        self.program = program
        smap = SourceMap(program.tree.source, program.tree.filename)
        name = program.tree.filename or "<program>"

        def at(pos: int) -> str:
            line, column, _ = smap.position(pos)
            return f"{name}:{line}:{column}"

        self.event_at = {ev.name: at(ev.pos) for ev in program.tree.events}
        self.rule_at = {lowered.rule.emits: at(decl.pos) for decl, lowered in zip(program.tree.rules, program.rules.values())}
        self.aggregates = {emits: _aggregate_labels(lowered.rule) for emits, lowered in program.rules.items()}
        self._support = {name: SolutionSupport(program.queries.prepared(name)) for name in program.attributes
                         if name not in program.rules}
        self.derivations = Derivations(program.reasoner.program, program.dictionary, asserted(
            program.spec.options.background, program.dictionary, program.reasoner.background_view))
        self._sources: tuple[int | None, dict[Fact, tuple[tuple[str, int], ...]]] = (None, {})

    def inputs(self, time: int, inputs: Mapping[str, Sequence[Sequence[Fact]]]) -> None:
        """The elements (stream, time) each triple of time point ``time`` came from."""
        self._sources = (time, element_sources(time, inputs))

    def events(self, events: list[cep.Event], view: Layers, time: int, triples: Sequence[Fact],
               now_ms: int) -> list[cep.Event]:
        """The events of time point ``time`` (whose input is ``triples``), each with its
        ``WHY``: its query, bindings and facts. A triple no element of the time point
        brought was fed back by a FEEDBACK rule."""
        program = self.program
        given = self._sources[1] if self._sources[0] == time else {}
        sources = {t: given.get(t, ((FEEDBACK, time),)) for t in triples}
        origins = self.derivations.at(view, sources)
        text = program.term_text
        out = []
        for event in events:
            facts = self._support[event.type].facts(view, now_ms, event.attrs)
            why = {"query": event.type, "at": self.event_at[event.type],
                   "bindings": {k: text(v) for k, v in event.attrs.items() if v is not None},
                   "facts": [origins.explain(*fact) for fact in facts]}
            out.append(event._replace(attrs={**event.attrs, WHY: why}))
        return out

    def record(self, composite: cep.Event, firing: str, graph_text: str) -> dict:
        """The provenance record of a detection (its ``element`` is set by the writer)."""
        return {"time": composite.end, "rule": self.program.rules[composite.type].iri, "firing": firing,
                **self._composite(composite.type, composite.attrs[WHY]), "graph": graph_text}

    def _composite(self, etype: str, why: tuple) -> dict:
        bound, read, absent = why
        record: dict = {"at": self.rule_at[etype], "events": [self._event(alias, event) for alias, event in bound]}
        if read:
            labels = self.aggregates[etype]
            record["aggregates"] = [{"name": labels.get(name, name), "events": [self._read(e, bound) for e in events]}
                                    for name, events in read]
        if absent:
            record["absent"] = list(absent)
        return record

    def _read(self, event: tuple, bound: tuple) -> dict:
        """An event an aggregate read: one the pattern bound too is named by its alias."""
        alias = next((alias for alias, other in bound if other == event), None)
        return self._event(None, event) if alias is None else {"type": event[0], "time": event[2], "same_as": alias}

    def _event(self, alias: str | None, event: tuple) -> dict:
        """An event the pattern bound or an aggregate read: (type, start, end, attributes)."""
        etype, _, end, attrs = event
        head = {"alias": alias, "type": etype, "time": end} if alias else {"type": etype, "time": end}
        why = attrs.get(WHY)
        if isinstance(why, dict):
            return {**head, **why}
        if why is not None:  # a composite event another rule detected
            return {**head, "rule": self.program.rules[etype].iri, **self._composite(etype, why)}
        return {**head, "note": "its origin was not recorded (stored before provenance was on)"}


def _aggregate_labels(rule: cep.Rule) -> dict[str, str]:
    """How a rule's aggregates are shown: ``?max = max(HighTemp.val)`` (the output
    variable they bind, when one does), by their internal names."""
    bound = {value.name: name for name, value in rule.outputs if isinstance(value, AggValue)}
    labels = {}
    for agg in rule.aggregates:
        call = f"{agg.func}({agg.type}.{agg.attribute})" if agg.attribute else f"{agg.func}({agg.type})"
        labels[agg.name] = f"?{bound[agg.name]} = {call}" if agg.name in bound else call
    return labels
