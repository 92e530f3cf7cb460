"""A compiled DOTR program: DOTR's per-time-point cycle (seed 000, section 4).

At each time point: update the store and reason (the elements' triples and what the rules
derive from them, over the background closure), run the EVENT queries on what changed,
turn their solutions into events, let the temporal engine detect the RULE patterns, and
build the output graphs from the DEFINE templates of the rules that fired.

A rule with ``FEEDBACK [AFTER d]`` also makes each of its output graphs, built at t, an
input element at t + d (d: one time unit unless given). That time point holds the graph
like any element: it is enriched with the background and the rules, and the EVENT queries
see it. Each time point is still processed once, with everything that holds there known
before its queries run, so a program's outputs are well defined whatever its rules feed
back (an output at t never changes what held at t). Feedback time points come in time
order with the input's: ``push(t, ...)`` first processes the feedback time points before
t, and ``flush()`` (called by ``run`` at the end of its stream) those still pending.

>>> from chronolog.program import ProgramSpec
>>> program = DotrProgram(ProgramSpec("dotr", '''
... PREFIX : <http://example.org/>
... EVENT Hot AS SELECT ?s ?v WHERE { ?s :temp ?v FILTER(?v > 40) }
... EVENT Smoke AS SELECT ?s WHERE { ?s :smoke true }
... RULE :alarm
...   DEFINE { ?a a :Alarm ; :sensor ?s . }
...   FROM Smoke AND LAST Hot WITHIN 5 s FROM Smoke
...   WHERE Hot.s = Smoke.s
...   WITH ?s = Smoke.s
... '''))
>>> from pyoxigraph import NamedNode, Literal
>>> enc = program.dictionary.encode
>>> s1, temp, smoke = (enc(NamedNode("http://example.org/" + n)) for n in ("s1", "temp", "smoke"))
>>> program.push(1000, {"": [((s1, temp, enc(Literal(45))),)]})
[]
>>> [program.decode(g) for g in program.push(3000, {"": [((s1, smoke, enc(Literal(True))),)]})]
[(3000, [('urn:chronolog:alarm:3000-0-1', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', 'http://example.org/Alarm'), ('urn:chronolog:alarm:3000-0-1', 'http://example.org/sensor', 'http://example.org/s1')])]
"""
from __future__ import annotations

import functools
import pickle
import time as _time
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

from pyoxigraph import NamedNode

from chronolog import cep
from chronolog.datalog import reasoner_for
from chronolog.errors import ChronologError, ChronologSyntaxError, SourceMap
from chronolog.cep.partition import partition_rules
from chronolog.formats import encode_text, graph_text, parse_terms
from chronolog.lang.dotr.explain import DotrExplainer
from chronolog.lang.dotr.lowering import LoweredRule, Lowering, firing_names, value_decoder
from chronolog.lang.dotr.syntax import DotrTree, parse_dotr
from chronolog.lang.dotr.templates import compile_template
from chronolog.lateness import LatePolicy
from chronolog.plain import plain_loads
from chronolog.program import (
    GRAPHS, GlobalPlan, GraphOutput, Inputs, Plan, Program, ProgramSpec, ProgramWarning, rule_warnings,
)
from chronolog.program.outputs import explained
from chronolog.sparql.incremental import BackgroundOnlyWarning, StandingQueries
from chronolog.terms import TermDictionary
from chronolog.timeunits import unit_ms

Triple = tuple[int, int, int]


class FeedbackLimitError(ChronologError):
    """Feedback went on without input for more time points than the engine's limit."""

    outputs: list = []  # the graphs detected before stopping (set by ``Engine.flush``)


OutputGraph = GraphOutput  # a detection: the graph a rule's DEFINE built, at its terminator's time
SNAPSHOT_FORMAT = "chronolog.dotr/1"


@dataclass
class Stats:
    """Per-phase time counters (seconds) and volumes, for ``--stats`` and benchmarks."""

    reasoning: float = 0.0
    querying: float = 0.0
    temporal: float = 0.0
    translation: float = 0.0
    time_points: int = 0
    triples: int = 0
    events: int = 0
    detections: int = 0
    feedback: int = 0  # output graphs fed back as input (FEEDBACK rules)

    @property
    def total(self) -> float:
        return self.reasoning + self.querying + self.temporal + self.translation

    def report(self) -> str:
        total = self.total or 1e-12
        per = 1e6 * total / max(1, self.time_points)
        lines = [f"{self.time_points:,} time points, {self.triples:,} triples, {self.events:,} events, "
                 f"{self.detections:,} detections; {per:.1f} µs per time point"]
        if self.feedback:
            lines[0] += f"; {self.feedback:,} output graphs fed back"
        for phase in ("reasoning", "querying", "temporal", "translation"):
            seconds = getattr(self, phase)
            lines.append(f"  {phase:<12} {seconds:9.3f} s  {100 * seconds / total:5.1f} %")
        return "\n".join(lines)


@dataclass
class _Compiled:
    tree: DotrTree
    attributes: dict[str, list[str]]
    rules: list[LoweredRule]
    warnings: list[ProgramWarning] = field(default_factory=list)


class DotrProgram(Program):
    """A DOTR program over background knowledge, run time point by time point.

    ``reason=False`` compiles it without the background and the Datalog rules: for a
    process that only runs the temporal patterns (the keyed stage on Spark)."""

    output_kind = GRAPHS

    def __init__(self, spec: ProgramSpec, dictionary: TermDictionary | None = None, *,
                 late: LatePolicy | None = None, feedback_limit: int = 10_000, reason: bool = True) -> None:
        self.spec = spec
        self.dictionary = dictionary or TermDictionary()
        options = spec.options
        self.reasoner = reasoner_for(list(options.background) if reason else [],
                                     list(options.rules) if reason else [], self.dictionary,
                                     max_derived=options.max_derived)
        self.queries = StandingQueries(self.dictionary, self.reasoner.background_view)
        compiled = self._compile(parse_dotr(spec.text, spec.filename))
        self.tree = compiled.tree
        self._unit_ms = unit_ms(options.time_unit)
        self.attributes = compiled.attributes
        self._rank = {name: i for i, name in enumerate(self.attributes)}  # declaration order
        self.warnings = rule_warnings(self.reasoner.program) + compiled.warnings
        self.rules = {r.rule.emits: r for r in compiled.rules}
        self._builders = {emits: compile_template(r, emits, self.dictionary) for emits, r in self.rules.items()}
        self._feeds = {r.iri: r.feedback for r in compiled.rules if r.feedback is not None}
        self.late = late or LatePolicy.reject()
        self.stats = Stats()
        self._now: int | None = None
        self.feedback_limit = feedback_limit
        self._pending: dict[int, dict[Triple, None]] = {}  # FEEDBACK: time -> graphs' triples
        self.explainer = DotrExplainer(self) if options.provenance else None
        self.dictionary.pin()  # the program's constants and the background closure stay; the stream's terms go

    def _compile(self, program: DotrTree) -> _Compiled:
        smap = SourceMap(program.source, program.filename)
        found: list[ProgramWarning] = []
        attributes: dict[str, list[str]] = {}
        prologue_lines = program.prologue.count("\n") + 1 if program.prologue else 0
        for ev in program.events:
            if ev.name in attributes:
                raise smap.error(f"event {ev.name!r} is defined twice", ev.pos)
            text = f"{program.prologue}\n{ev.query.text}" if program.prologue else ev.query.text
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", BackgroundOnlyWarning)
                try:
                    reg = self.queries.register(ev.name, text, filename=program.filename)
                except ChronologSyntaxError as exc:
                    raise _shift(exc, smap, ev.query.pos, prologue_lines) from None
            line, column, _ = smap.position(ev.pos)
            found.extend(ProgramWarning(program.filename, line, column, f"event {ev.name}: {w.message}") for w in caught
                         if issubclass(w.category, BackgroundOnlyWarning))
            attributes[ev.name] = list(reg.variables)
        self.temporal = cep.TemporalEngine(decode=value_decoder(self.dictionary), explain=self.spec.options.provenance)
        for name, attrs in attributes.items():
            self.temporal.declare(name, attrs)
        lowering = Lowering(program, self.dictionary, attributes, unit_ms(self.spec.options.time_unit))
        lowered = []
        for decl in program.rules:
            rule = lowering.rule(decl)
            try:
                self.temporal.register(rule.rule)
            except cep.RuleError as exc:
                raise smap.error(str(exc), decl.pos) from None
            lowering.attributes[rule.rule.emits] = [name for name, _ in rule.rule.outputs]
            lowered.append(rule)
        self._id_attrs = {name: frozenset(attrs) for name, attrs in attributes.items()}  # attributes holding term ids
        for rule in lowered:
            self._id_attrs[rule.rule.emits] = frozenset(n for n, _ in rule.rule.outputs if n not in rule.aggregated)
        return _Compiled(program, lowering.attributes, lowered, found)

    # -- running ----------------------------------------------------------------------

    @property
    def feedback_rules(self) -> dict[str, int]:
        """The rules whose outputs are input again (FEEDBACK): rule IRI -> delay in time units."""
        return {r.iri: r.feedback for r in self.rules.values() if r.feedback is not None}

    @property
    def pending_feedback(self) -> list[int]:
        """The times of the feedback time points not processed yet."""
        return sorted(self._pending)

    def push(self, time: int, inputs: Inputs) -> list[OutputGraph]:
        """Process one time point: the triples of all of its elements, of every stream, at
        once (with the graphs fed back to it), after the feedback time points before it.
        Outputs come in time order."""
        if self.explainer is not None:
            self.explainer.inputs(time, inputs)
        if len(inputs) == 1:
            (elements,) = inputs.values()
            if len(elements) == 1:  # the common case: one element, its triples already distinct
                return self.push_triples(time, elements[0])
        return self.push_triples(time, dict.fromkeys(t for elements in inputs.values() for e in elements for t in e))

    def push_triples(self, time: int, triples: Iterable[Triple]) -> list[OutputGraph]:
        """``push`` of one time point's triples."""
        if self._now is not None and time <= self._now:
            if time == self._now:
                raise ChronologError(f"time point {time} was already processed: push all of its triples at once")
            self.late.late((time, triples), lambda: f"late time point {time}, older than the current time {self._now}")
            return []
        out = self.flush(time - 1) if self._pending else []
        fed = self._pending.pop(time, None)
        if fed is not None:
            fed.update(dict.fromkeys(triples))
            triples = fed
        out.extend(self._point(time, triples))
        return out

    def flush(self, until: int | None = None) -> list[OutputGraph]:
        """Process the feedback time points up to ``until`` (the input has reached it: no
        element at or before it will come), or, when ``until`` is None (the end of the
        stream), all of them while any is pending. A program that keeps feeding itself
        without input stops with a ``FeedbackLimitError`` after ``feedback_limit`` time
        points (its ``outputs`` hold the graphs detected until then)."""
        out: list[OutputGraph] = []
        try:
            for graphs in self._drain(until):
                out.extend(graphs)
        except FeedbackLimitError as exc:
            exc.outputs = out
            raise
        return out

    def _drain(self, until: int | None) -> Iterator[list[OutputGraph]]:
        steps, start = 0, self._now
        while self._pending:
            time = min(self._pending)
            if until is not None and time > until:
                break
            if until is None:
                steps += 1
                if steps > self.feedback_limit:
                    rules = ", ".join(sorted(self.feedback_rules))
                    raise FeedbackLimitError(
                        f"feedback does not stop: {self.feedback_limit:,} time points processed "
                        f"without input after {start}, the outputs of {rules} are still fed back (next at {time}); "
                        "raise feedback_limit, or make the rules stop feeding themselves")
            yield self._point(time, self._pending.pop(time))

    def _point(self, time: int, triples: Iterable[Triple]) -> list[OutputGraph]:
        self._now = time
        stats = self.stats
        clock = _time.perf_counter
        events = self.events(time, triples)
        t2 = clock()
        fired = list(enumerate(self.temporal.push_point(events)))
        t3 = clock()
        out = [self.graph(composite, name) for seq, composites in fired if composites
               for composite, name in firing_names(time, seq, composites)]
        if self._feeds:
            for graph in out:
                delay = self._feeds.get(graph.rule)
                if delay is not None:
                    self._pending.setdefault(time + delay, {}).update(dict.fromkeys(graph.triples))
                    stats.feedback += 1
        t4 = clock()
        stats.temporal += t3 - t2
        stats.translation += t4 - t3
        stats.detections += len(out)
        return out

    def events(self, time: int, triples: Iterable[Triple]) -> list[cep.Event]:
        """Reason at ``time`` and run the EVENT queries: the time point's events.

        Events come in a canonical order (queries in the order the program declares
        them, one query's events by their terms' N-Triples text), so which of two events
        of a time point ``last`` prefers, which one a firing consumes first, and the names
        of firings never depend on how terms happened to be numbered: a Spark executor
        with a dictionary of its own detects and names exactly what this engine does.
        """
        stats = self.stats
        clock = _time.perf_counter
        t0 = clock()
        triples = list(triples)
        view = self.reasoner.at(triples)
        t1 = clock()
        if view is self.reasoner.incremental_view:
            solutions = self.queries.step(self.reasoner.overlay, self._ms(time))
        else:
            solutions = self.queries.from_scratch(view, self._ms(time))
        events = []
        attributes = self.attributes
        names = [name for name, rows in solutions.items() if rows]  # only the queries that matched
        if len(names) > 1:
            names.sort(key=self._rank.__getitem__)
        for name in names:
            attrs = attributes[name]
            rows = solutions[name]
            if len(rows) > 1:
                rows = sorted(rows, key=self._row_key)
            events.extend(cep.Event(name, time, time, dict(zip(attrs, row))) for row in rows)
        if self.explainer is not None:
            events = self.explainer.events(events, view, time, triples, self._ms(time))
        stats.reasoning += t1 - t0
        stats.querying += clock() - t1
        stats.time_points += 1
        stats.triples += len(triples)
        stats.events += len(events)
        return events

    def _ms(self, time: int) -> int:
        """A time point in epoch milliseconds: what NOW() reads."""
        return int(time * self._unit_ms)

    def _row_key(self, row: Sequence[int | None]) -> tuple[str, ...]:
        text = self.term_text
        return tuple(text(tid) for tid in row)

    def graph(self, composite: cep.Event, firing: str) -> OutputGraph:
        """The output graph of a composite event; ``firing`` names this firing uniquely
        (:func:`firing_names`: it makes the fresh IRIs and blank nodes of the DEFINE template)."""
        graph = self._builders[composite.type](composite, firing)
        if self.explainer is None:
            return graph
        return explained(graph, self.explainer.record(composite, firing, graph_text(graph.triples, self.dictionary)))  # type: ignore[return-value]

    # -- the contract's state, description and split ------------------------------------

    def snapshot(self) -> bytes:
        """The temporal state and the feedback still pending, with every term as its
        N-Triples text."""
        text = self.term_text
        ids = self._id_attrs

        def out(etype: str, attrs: dict) -> dict:
            held = ids[etype]
            return {k: text(v) if k in held and v is not None else v for k, v in attrs.items()}

        return pickle.dumps({
            "format": SNAPSHOT_FORMAT, "temporal": self.temporal.snapshot(out), "now": self._now,
            "pending": {t: graph_text(tuple(triples), self.dictionary) for t, triples in self._pending.items()},
        }, protocol=5)

    def restore(self, data: bytes) -> None:
        state = plain_loads(data, "DOTR program snapshot")
        if not isinstance(state, dict) or state.get("format") != SNAPSHOT_FORMAT:
            raise ChronologError("not a DOTR program snapshot")
        encode, ids = self.dictionary.encode, self._id_attrs

        @functools.lru_cache(maxsize=1 << 16)
        def term_id(text: str) -> int:
            return encode(parse_terms([text])[0])

        def back(etype: str, attrs: dict) -> dict:
            held = ids[etype]
            return {k: term_id(v) if k in held and v is not None else v for k, v in attrs.items()}

        self.temporal.restore(state["temporal"], back)
        self._now = state["now"]
        self._pending = {t: dict.fromkeys(encode_text(text, self.dictionary, format="nt"))
                         for t, text in state["pending"].items()}

    def live_terms(self) -> Iterator[int]:
        """The term ids of the temporal engine's stored events and of the feedback pending."""
        ids = self._id_attrs
        for event in self.temporal.stored_events():
            held = ids[event.type]
            yield from (v for k, v in event.attrs.items() if k in held and v is not None)
        for triples in self._pending.values():
            for triple in triples:
                yield from triple

    def describe(self) -> list[str]:
        """The ok line's details: each group of connected rules with its partition key,
        and the feedback rules."""
        lines = [f"{len(self.attributes) - len(self.rules)} events, {len(self.rules)} rules"]
        for group in partition_rules([r.rule for r in self.rules.values()], self.attributes):
            names = ", ".join(self.rules[t].rule.emits for t in group.types if t in self.rules)
            lines.append(f"  rules {names}: {group.describe()}")
        for rule, delay in self.feedback_rules.items():
            unit = "time unit" if delay == 1 else "time units"
            lines.append(f"  feedback: the output graphs of {rule} are input again {delay:,} {unit} later")
        if self.feedback_rules:
            lines.append("  on Spark: the whole program under one key (its outputs go back into its input)")
        return lines

    def plan(self) -> Plan:
        """Per group and key (``DotrPlan``); a program with FEEDBACK runs whole under one key
        (``GlobalPlan``): its outputs go back into its input, a cycle that cannot cross the
        split between the stateless stage and the keyed one."""
        from chronolog.lang.dotr.plan import DotrPlan

        return GlobalPlan(self) if self.feedback_rules else DotrPlan(self)

    def report(self) -> str:
        return self.stats.report()

    def phases(self) -> dict[str, float]:
        stats = self.stats
        return {"reasoning": stats.reasoning, "queries": stats.querying, "patterns": stats.temporal,
                "output": stats.translation}

    def held(self) -> dict[str, int]:
        return {"events stored": self.temporal.stored_event_count(), "feedback time points": len(self._pending)}

    def decode(self, graph: OutputGraph) -> tuple[int, list[tuple[str, str, str]]]:
        """(time, triples as N-Triples-ish strings): for tests, examples and debugging."""
        dec = self.dictionary.decode

        def text(tid: int) -> str:
            term = dec(tid)
            return term.value if isinstance(term, NamedNode) else str(term)

        return graph.time, [(text(s), text(p), text(o)) for s, p, o in graph.triples]


def _shift(exc: ChronologSyntaxError, smap: SourceMap, start: int, prologue_lines: int) -> ChronologSyntaxError:
    """An error inside an EVENT query, moved from the query's own text to the program's."""
    q_line = (exc.lineno or 1) - prologue_lines
    if q_line < 1:
        return smap.error(exc.message, start)
    line, column, _ = smap.position(start)
    offset = (exc.offset or 1) - 1
    pos = start + offset if q_line == 1 else smap.offset(line + q_line - 1, 1) + offset
    return smap.error(exc.message, pos)
