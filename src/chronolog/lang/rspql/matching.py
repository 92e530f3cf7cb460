"""RSEP-QL's ``MATCH ( E )`` evaluated directly over the window contents at each
evaluation instant (windows are small), not yet lowered onto :mod:`chronolog.cep`.

At an instant, each window's content is read from its buffer, one graph per timestamp
(elements of one stream with the same time merge into one graph). Each BEP's events are
computed once per instant; the operators then follow Eqs. 7, 9-11 with the active window
(an upper time bound) and the substituted mapping passed down: a BEP under μ is its
events compatible with μ. Consumption (section 4.4) keeps, per window, the triples still
usable: the new ones (Δ) and those of the previous input no answer used.
"""
from __future__ import annotations

import pickle
from collections import Counter
from functools import partial
from typing import Callable, Mapping

from chronolog.errors import ChronologError
from chronolog.lang.rspql.events import Consumption, Event, First, Last, Pattern, Selection, Seq, Term, is_variable
from chronolog.lang.rspql.syntax import RspqlQuery
from chronolog.program.contract import Inputs, Program, ProgramSpec
from chronolog.program.outputs import SOLUTIONS, Output, Solution, SolutionsOutput
from chronolog.program.termtext import as_ids, as_text
from chronolog.terms import TermDictionary
from chronolog.window.r2s import relation_to_stream
from chronolog.window.report import EvaluateAt, ReportPolicy, WindowClose
from chronolog.window.schedule import Instant, Schedule

Mapping_ = frozenset  # (variable, term id) pairs
EventKey = tuple[Mapping_, int, int]
Events = dict[EventKey, frozenset]  # event -> the (window, triple) pairs that justify it


def precedes(a: EventKey, b: EventKey) -> bool:
    """≺: ``a`` ends before ``b`` starts."""
    return a[2] < b[1]


def _select(events: Events, before: Callable[[EventKey, EventKey], bool]) -> Events:
    """The events no other event comes ``before``."""
    return {e: u for e, u in events.items() if not any(before(o, e) for o in events)}


def first(events: Events) -> Events:
    return _select(events, precedes)


def last(events: Events) -> Events:
    return _select(events, lambda o, e: precedes(e, o))


def _compatible(mapping: Mapping_, mu: Mapping[str, int]) -> bool:
    return all(mu.get(k, v) == v for k, v in mapping)


class Matcher:
    """One instant's evaluation: every BEP's events over its window's graphs."""

    def __init__(self, pattern: Pattern, graphs: Mapping[str, Mapping[int, set]], ids: Mapping[str, int]) -> None:
        self.basic: dict[Event, Events] = {}
        self._collect(pattern, graphs, ids)

    def _collect(self, e: Pattern, graphs: Mapping[str, Mapping[int, set]], ids: Mapping[str, int]) -> None:
        if isinstance(e, Event):
            events: Events = {}
            for time, graph in graphs.get(e.window, {}).items():
                for sol in _bgp(e.triples, graph, ids):
                    used = frozenset((e.window, tuple(sol[t[1:]] if is_variable(t) else ids[t] for t in tr))
                                     for tr in e.triples)
                    key = (frozenset(sol.items()), time, time)
                    events[key] = events.get(key, frozenset()) | used
            self.basic[e] = events
        elif isinstance(e, Seq):
            self._collect(e.first, graphs, ids)
            self._collect(e.then, graphs, ids)
        else:
            self._collect(e.pattern, graphs, ids)

    def __call__(self, e: Pattern, hi: int, mu: Mapping[str, int]) -> Events:
        if isinstance(e, Event):
            return {k: u for k, u in self.basic[e].items() if k[1] <= hi and _compatible(k[0], mu)}
        if isinstance(e, First):
            return first(self(e.pattern, hi, mu))
        if isinstance(e, Last):
            return last(self(e.pattern, hi, mu))
        return self._seq(e, hi, mu)

    def _seq(self, e: Seq, hi: int, mu: Mapping[str, int]) -> Events:
        out: Events = {}

        def add(m1: EventKey, m2: EventKey, used: frozenset) -> None:
            key = (m1[0] | m2[0], m1[1], m2[2])
            out[key] = out.get(key, frozenset()) | used

        seconds = self(e.then, hi, mu)
        if e.selection is Selection.NAIVE:
            firsts = last(self(e.first, hi, mu))
            for m2, u2 in last(seconds).items():
                for m1, u1 in firsts.items():
                    if precedes(m1, m2) and _compatible(m1[0], dict(m2[0])):
                        add(m1, m2, u1 | u2)
            return out

        def before(m2: EventKey) -> Events:
            return self(e.first, min(hi, m2[1] - 1), {**mu, **dict(m2[0])})

        if e.selection is Selection.UNRESTRICTED:
            for m2, u2 in seconds.items():
                for m1, u1 in before(m2).items():
                    add(m1, m2, u1 | u2)
            return out
        pick = first if e.selection is Selection.CHRONOLOGICAL else last
        groups: dict[Mapping_, Events] = {}
        for m2, u2 in seconds.items():
            if before(m2):
                groups.setdefault(m2[0], {})[m2] = u2
        for group in groups.values():
            for m2, u2 in pick(group).items():
                for m1, u1 in pick(before(m2)).items():
                    add(m1, m2, u1 | u2)
        return out


def _bgp(triples: tuple, graph: set, ids: Mapping[str, int]) -> list[dict[str, int]]:
    solutions: list[dict[str, int]] = [{}]
    for pattern in triples:
        nxt = []
        for sol in solutions:
            for triple in graph:
                ext = dict(sol)
                for term, value in zip(pattern, triple):
                    if is_variable(term):
                        if ext.setdefault(term[1:], value) != value:
                            break
                    elif ids[term] != value:
                        break
                else:
                    nxt.append(ext)
        solutions = nxt
    return solutions


def _constants(e: Pattern) -> set[Term]:
    if isinstance(e, Event):
        return {t for tr in e.triples for t in tr if not is_variable(t)}
    if isinstance(e, Seq):
        return _constants(e.first) | _constants(e.then)
    return _constants(e.pattern)


class MatchProgram(Program):
    """A registered RSP-QL query whose WHERE is one ``MATCH ( E )``."""

    def __init__(self, spec: ProgramSpec, tree: RspqlQuery, dictionary: TermDictionary | None = None) -> None:
        assert tree.match is not None
        self.spec = spec
        self.dictionary = dictionary or TermDictionary()
        self.warnings = []
        self.output_kind = SOLUTIONS
        self.tree = tree
        self.pattern = tree.match
        policy_name = tree.consume.value if tree.consume is not None else (spec.options.policy or "unrestricted")
        if policy_name not in {c.value for c in Consumption}:
            raise ChronologError(f"policy {policy_name!r}: expected unrestricted, chronological or recent")
        self.consumption = Consumption(policy_name)
        self.windows = {w.name: (w.stream, w.window) for w in tree.windows}  # all set the instants
        policy: ReportPolicy = WindowClose() if tree.instants is None else EvaluateAt(tree.instants)
        self.schedule = Schedule(self.windows, policy)
        self.ids = {t: self.dictionary.iri(t) if isinstance(t, str) else self.dictionary.encode(t)
                    for t in _constants(self.pattern)}
        self.inputs: dict[str, frozenset] | None = None  # unconsumed triples per window (P^c, P^r)
        self.snapshots: dict[str, frozenset] = {}  # SDS_w at the previous evaluation
        self.used: frozenset = frozenset()  # what the previous answer used
        self.previous: Counter = Counter()

    @property
    def streams(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for s, _ in self.windows.values()))

    def push(self, time: int, inputs: Inputs) -> list[Output]:
        triples = {name: [t for element in elements for t in element] for name, elements in inputs.items()}
        return [o for instant in self.schedule.push(time, triples) for o in self._evaluate(instant)]

    def flush(self) -> list[Output]:
        return [o for instant in self.schedule.flush() for o in self._evaluate(instant)]

    def _evaluate(self, instant: Instant) -> list[Output]:
        graphs: dict[str, dict[int, set]] = {}
        for name, buffer in self.schedule.buffers.items():
            graphs[name] = {}
            for time, triple in list(buffer.items)[:buffer.inside]:
                graphs[name].setdefault(time, set()).add(triple)
        snapshots = {w: frozenset(t for g in gs.values() for t in g) for w, gs in graphs.items()}
        if self.consumption is not Consumption.UNRESTRICTED:
            kept = {w: (self.inputs or {}).get(w, frozenset()) - {t for x, t in self.used if x == w} for w in graphs}
            self.inputs = {w: (snapshots[w] - self.snapshots.get(w, frozenset())) | (kept[w] & snapshots[w])
                           for w in graphs}
            graphs = {w: {time: g & self.inputs[w] for time, g in gs.items()} for w, gs in graphs.items()}
        events = Matcher(self.pattern, graphs, self.ids)(self.pattern, instant.time, {})
        self.used = frozenset(u for us in events.values() for u in us)
        self.snapshots = snapshots
        names = self.tree.select
        answer = Counter(tuple(dict(m).get(n) for n in names) + (start, end) for m, start, end in events)
        rows = relation_to_stream(self.tree.r2s, self.previous, answer)
        self.previous = answer
        if not rows:
            return []
        solutions = tuple(Solution({n: v for n, v in zip(names, row) if v is not None}, row[-2], row[-1])  # type: ignore[index]
                          for row in sorted(rows))  # type: ignore[type-var]
        return [SolutionsOutput(instant.time, self.tree.name, solutions)]

    def snapshot(self) -> bytes:
        text = partial(as_text, self.dictionary)
        return pickle.dumps((
            self.schedule.state()[:2],
            {n: ([(t, text(v)) for t, v in b.items], b.inside) for n, b in self.schedule.buffers.items()},
            None if self.inputs is None else {w: text(sorted(ts)) for w, ts in self.inputs.items()},
            {w: text(sorted(ts)) for w, ts in self.snapshots.items()},
            [(w, text(t)) for w, t in self.used],
            [text(row[:-2]) + row[-2:] for row in self.previous.elements()],
        ), protocol=5)

    def restore(self, data: bytes) -> None:
        ids = partial(as_ids, self.dictionary)
        (last, was_empty), buffers, inputs, snapshots, used, previous = pickle.loads(data)
        self.schedule.set_state((last, was_empty, {n: ([(t, ids(v)) for t, v in items], inside)
                                                   for n, (items, inside) in buffers.items()}))
        self.inputs = None if inputs is None else {w: frozenset(ids(ts)) for w, ts in inputs.items()}
        self.snapshots = {w: frozenset(ids(ts)) for w, ts in snapshots.items()}
        self.used = frozenset((w, ids(t)) for w, t in used)
        self.previous = Counter(ids(row[:-2]) + tuple(row[-2:]) for row in previous)


