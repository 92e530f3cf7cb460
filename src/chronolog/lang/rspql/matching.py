"""RSEP-QL's ``MATCH ( E )`` evaluated directly over the window contents at each
evaluation instant, not lowered onto :mod:`chronolog.cep` (docs/languages/rspql.md says why).

At an instant, each window's content is read from its buffer, one graph per timestamp
(elements of one stream with the same time merge into one graph). Each BEP's events are
computed once per instant, in time order; the operators then follow Eqs. 7, 9-11 with the
active window (an upper time bound) and the substituted mapping passed down: a BEP under μ
is its events compatible with μ, found in an index on the variables μ binds (built once per
instant and binding), cut at the bound by bisection. Consumption (section 4.4) keeps, per
window, the triples still usable: the new ones (Δ) and those of the previous input no answer
used.

:class:`EventMatching` is that evaluation with its state from instant to instant;
:class:`MatchProgram` runs a query whose WHERE is the MATCH alone; a MATCH joined with other
patterns runs inside :class:`chronolog.program.windowed.WindowedProgram`
(:mod:`chronolog.lang.rspql.mixed`).
"""
from __future__ import annotations

import pickle
from bisect import bisect_right
from collections import Counter
from functools import partial
from itertools import islice
from operator import itemgetter
from typing import Iterable, Mapping

from chronolog.errors import ChronologError
from chronolog.lang.rspql.events import (
    Consumption, Event, First, Last, Pattern, Selection, Seq, Term, is_variable, variables_of, windows_of,
)
from chronolog.lang.rspql.syntax import RspqlQuery
from chronolog.program.contract import Inputs, Program, ProgramSpec
from chronolog.program.outputs import SOLUTIONS, Output, Solution, SolutionsOutput, explained
from chronolog.provenance.facts import input_origin
from chronolog.program.termtext import as_ids, as_text
from chronolog.terms import TermDictionary
from chronolog.window.buffer import WindowBuffer
from chronolog.window.r2s import DSTREAM, relation_to_stream
from chronolog.window.report import EvaluateAt, ReportPolicy, WindowClose
from chronolog.window.schedule import Instant, Schedule

Mapping_ = frozenset  # (variable, term id) pairs
EventKey = tuple[Mapping_, int, int]
Events = dict[EventKey, frozenset]  # event -> the (window, triple) pairs that justify it
_NONE: frozenset = frozenset()
Bucket = tuple[list[int], list[tuple[EventKey, frozenset, dict]]]  # start times, (event, used, mapping)


def precedes(a: EventKey, b: EventKey) -> bool:
    """≺: ``a`` ends before ``b`` starts."""
    return a[2] < b[1]


def first(events: Events) -> Events:
    """The events no other event precedes: those starting no later than the earliest end."""
    if not events:
        return events
    bound = min(k[2] for k in events)
    return {e: u for e, u in events.items() if e[1] <= bound}


def last(events: Events) -> Events:
    """The events that precede no other: those ending no earlier than the latest start."""
    if not events:
        return events
    bound = max(k[1] for k in events)
    return {e: u for e, u in events.items() if e[2] >= bound}


def _compatible(mapping: Mapping_, mu: Mapping[str, int]) -> bool:
    return all(mu.get(k, v) == v for k, v in mapping)


class _Basic:
    """One BEP compiled against the term ids: per triple pattern, a test of its constants
    and the positions of its variables."""

    def __init__(self, e: Event, ids: Mapping[Term, int]) -> None:
        self.window = e.window
        self.variables = variables_of(e)
        self.patterns = []
        for tr in e.triples:
            consts = [(i, ids[t]) for i, t in enumerate(tr) if not is_variable(t)]
            test = (itemgetter(*(i for i, _ in consts)), tuple(v for _, v in consts) if len(consts) > 1
                    else consts[0][1]) if consts else None
            self.patterns.append((test, tuple((i, t[1:]) for i, t in enumerate(tr) if is_variable(t))))
        self.templates = [tuple(t[1:] if is_variable(t) else None for t in tr) for tr in e.triples]
        names = self.patterns[0][1]
        one = len(self.patterns) == 1 and len({n for _, n in names}) == len(names)
        self.scan = self.patterns[0] if one else None  # one triple pattern, no variable twice: a scan
        self.constants = [tuple(None if is_variable(t) else ids[t] for t in tr) for tr in e.triples]

    def solutions(self, graph: Iterable[tuple]) -> list[dict[str, int]]:
        """The solutions of the BGP over ``graph``."""
        solutions: list[dict[str, int]] = [{}]
        for test, names in self.patterns:
            if test is None:
                candidates = list(graph)
            else:
                get, want = test
                candidates = [tr for tr in graph if get(tr) == want]
            nxt = []
            for sol in solutions:
                for tr in candidates:
                    ext = dict(sol)
                    for i, name in names:
                        if ext.setdefault(name, tr[i]) != tr[i]:
                            break
                    else:
                        nxt.append(ext)
            solutions = nxt
        return solutions

    def events(self, items: list[tuple[int, tuple]], track: bool) -> Bucket:
        """The BEP's events over a window's items (time order), as a bucket: a one-triple
        BGP scans the items once, another runs over each time's graph."""
        times: list[int] = []
        events: list[tuple[EventKey, frozenset, dict]] = []
        if self.scan is not None:
            test, names = self.scan
            for time, tr in items:
                if test is None or test[0](tr) == test[1]:
                    sol = {name: tr[i] for i, name in names}
                    times.append(time)
                    events.append(((frozenset(sol.items()), time, time), self.used(sol) if track else _NONE, sol))
            return times, events
        grouped: dict[int, set] = {}
        for t, tr in items:
            grouped.setdefault(t, set()).add(tr)
        for time, graph in grouped.items():
            for sol in self.solutions(graph):
                times.append(time)
                events.append(((frozenset(sol.items()), time, time), self.used(sol) if track else _NONE, sol))
        return times, events

    def used(self, sol: Mapping[str, int]) -> frozenset:
        """The (window, triple) pairs a solution matched."""
        return frozenset((self.window, tuple(c if n is None else sol[n] for n, c in zip(names, consts)))
                         for names, consts in zip(self.templates, self.constants))


class Matcher:
    """One instant's evaluation: every BEP's events over its window's graphs."""

    def __init__(self, contents: Mapping[str, list[tuple[int, tuple]]], basics: Mapping[Event, _Basic],
                 track: bool) -> None:
        """``contents``: each window's items in time order; ``track``: keep the triples each
        event used (for a consumption policy)."""
        self.track = track
        self.basics = basics
        self.basic = {e: compiled.events(contents.get(e.window, []), track) for e, compiled in basics.items()}
        self._indexes: dict[tuple[Event, tuple[str, ...]], tuple[itemgetter, dict]] = {}

    def _bucket(self, e: Event, mu: Mapping[str, int]) -> Bucket | None:
        """``e``'s events compatible with μ, in time order."""
        bound = tuple(filter(mu.__contains__, self.basics[e].variables))
        if not bound:
            return self.basic[e]
        found = self._indexes.get((e, bound))
        if found is None:
            get = itemgetter(*bound)
            index: dict = {}
            for time, item in zip(*self.basic[e]):
                key = get(item[2])
                bucket = index.get(key)
                if bucket is None:
                    index[key] = ([time], [item])
                else:
                    bucket[0].append(time)
                    bucket[1].append(item)
            found = self._indexes[(e, bound)] = (get, index)
        return found[1].get(found[0](mu))

    def __call__(self, e: Pattern, hi: int, mu: Mapping[str, int]) -> Events:
        if isinstance(e, Event):
            bucket = self._bucket(e, mu)
            if bucket is None:
                return {}
            times, items = bucket
            return {key: used for key, used, _ in islice(items, bisect_right(times, hi))}
        if isinstance(e, First):
            return first(self(e.pattern, hi, mu))
        if isinstance(e, Last):
            return last(self(e.pattern, hi, mu))
        return self._seq(e, hi, mu)

    def _seq(self, e: Seq, hi: int, mu: Mapping[str, int]) -> Events:
        out: Events = {}

        track = self.track

        def add(m1: EventKey, m2: EventKey, used: frozenset) -> None:
            key = (m1[0] | m2[0], m1[1], m2[2])
            found = out.get(key)
            out[key] = used if found is None or not track else found | used

        seconds = self(e.then, hi, mu)
        if e.selection is Selection.NAIVE:
            firsts = last(self(e.first, hi, mu))
            for m2, u2 in last(seconds).items():
                for m1, u1 in firsts.items():
                    if precedes(m1, m2) and _compatible(m1[0], dict(m2[0])):
                        add(m1, m2, u1 | u2 if track else u1)
            return out

        def before(m2: EventKey) -> Events:
            return self(e.first, min(hi, m2[1] - 1), {**mu, **dict(m2[0])} if mu else dict(m2[0]))

        if e.selection is Selection.UNRESTRICTED:
            for m2, u2 in seconds.items():
                for m1, u1 in before(m2).items():
                    add(m1, m2, u1 | u2 if track else u1)
            return out
        pick = first if e.selection is Selection.CHRONOLOGICAL else last
        groups: dict[Mapping_, Events] = {}
        for m2, u2 in seconds.items():
            if before(m2):
                groups.setdefault(m2[0], {})[m2] = u2
        for group in groups.values():
            for m2, u2 in pick(group).items():
                for m1, u1 in pick(before(m2)).items():
                    add(m1, m2, u1 | u2 if track else u1)
        return out


def _basics(e: Pattern) -> list[Event]:
    if isinstance(e, Event):
        return [e]
    if isinstance(e, Seq):
        return _basics(e.first) + _basics(e.then)
    return _basics(e.pattern)


class EventMatching:
    """``MATCH ( E )`` over a query's windows, instant after instant, under a consumption
    policy: :meth:`events` at each evaluation instant, in time order."""

    def __init__(self, pattern: Pattern, consumption: Consumption, dictionary: TermDictionary,
                 explain: bool = False) -> None:
        """``explain``: each event keeps the (window, triple) pairs it used, whatever the
        consumption policy (it always does under one that consumes)."""
        self.pattern = pattern
        self.consumption = consumption
        self.explain = explain
        self.windows = sorted(windows_of(pattern))
        ids = {t: dictionary.iri(t) if isinstance(t, str) else dictionary.encode(t)
               for e in _basics(pattern) for tr in e.triples for t in tr if not is_variable(t)}
        self.basics = {e: _Basic(e, ids) for e in dict.fromkeys(_basics(pattern))}
        self.inputs: dict[str, frozenset] | None = None  # unconsumed triples per window (P^c, P^r)
        self.snapshots: dict[str, frozenset] = {}  # SDS_w at the previous evaluation
        self.used: frozenset = frozenset()  # what the previous answer used

    def events(self, time: int, buffers: Mapping[str, WindowBuffer]) -> Events:
        """⟦MATCH E⟧ at ``time``, the windows' buffers slid to it."""
        contents = {name: list(islice(buffers[name].items, buffers[name].inside)) for name in self.windows}
        track = self.consumption is not Consumption.UNRESTRICTED
        if track:
            snapshots = {w: frozenset(tr for _, tr in items) for w, items in contents.items()}
            kept = {w: (self.inputs or {}).get(w, frozenset()) - {t for x, t in self.used if x == w} for w in contents}
            self.inputs = {w: (snapshots[w] - self.snapshots.get(w, frozenset())) | (kept[w] & snapshots[w])
                           for w in contents}
            self.snapshots = snapshots
            contents = {w: [(t, tr) for t, tr in items if tr in self.inputs[w]] for w, items in contents.items()}
        events = Matcher(contents, self.basics, track or self.explain)(self.pattern, time, {})
        if track:
            self.used = frozenset(u for us in events.values() for u in us)
        return events

    def state(self, dictionary: TermDictionary) -> tuple:
        text = partial(as_text, dictionary)
        return (None if self.inputs is None else {w: text(sorted(ts)) for w, ts in self.inputs.items()},
                {w: text(sorted(ts)) for w, ts in self.snapshots.items()},
                [(w, text(t)) for w, t in self.used])

    def set_state(self, state: tuple, dictionary: TermDictionary) -> None:
        ids = partial(as_ids, dictionary)
        inputs, snapshots, used = state
        self.inputs = None if inputs is None else {w: frozenset(ids(ts)) for w, ts in inputs.items()}
        self.snapshots = {w: frozenset(ids(ts)) for w, ts in snapshots.items()}
        self.used = frozenset((w, ids(t)) for w, t in used)


def consumption_of(query: RspqlQuery, spec: ProgramSpec) -> Consumption:
    """The query's CONSUME clause, else ``--policy``, else unrestricted."""
    name = query.consume.value if query.consume is not None else (spec.options.policy or "unrestricted")
    if name not in {c.value for c in Consumption}:
        raise ChronologError(f"policy {name!r}: expected unrestricted, chronological or recent")
    return Consumption(name)


class MatchProgram(Program):
    """A registered RSP-QL query whose WHERE is one ``MATCH ( E )``."""

    def __init__(self, spec: ProgramSpec, tree: RspqlQuery, dictionary: TermDictionary | None = None) -> None:
        assert tree.match is not None
        self.spec = spec
        self.dictionary = dictionary or TermDictionary()
        self.warnings = []
        self.output_kind = SOLUTIONS
        self.tree = tree
        self.matching = EventMatching(tree.match, consumption_of(tree, spec), self.dictionary,
                                      explain=spec.options.provenance)
        self.windows = {w.name: (w.stream, w.window) for w in tree.windows}  # all set the instants
        policy: ReportPolicy = WindowClose() if tree.instants is None else EvaluateAt(tree.instants)
        self.schedule = Schedule(self.windows, policy)
        self.previous: Counter = Counter()

    @property
    def streams(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for s, _ in self.windows.values()))

    def push(self, time: int, inputs: Inputs) -> list[Output]:
        triples = {name: [t for element in elements for t in element] for name, elements in inputs.items()}
        return [o for instant in self.schedule.push(time, triples) for o in self._evaluate(instant)]

    def flush(self) -> list[Output]:
        return [o for instant in self.schedule.flush() for o in self._evaluate(instant)]

    def held(self) -> dict[str, int]:
        return {"window items": self.schedule.held()}

    def _evaluate(self, instant: Instant) -> list[Output]:
        if not instant.evaluated:  # matching reads the windows' contents, not their changes
            return []
        events = self.matching.events(instant.time, self.schedule.buffers)
        names = self.tree.select
        answer = Counter(tuple(map(dict(m).__getitem__, names)) + (start, end) for m, start, end in events)
        rows = relation_to_stream(self.tree.r2s, self.previous, answer)
        self.previous = answer
        if not rows:
            return []
        solutions = tuple(Solution(dict(zip(names, row)), row[-2], row[-1]) for row in rows)  # type: ignore[index]
        output = SolutionsOutput(instant.time, self.tree.name, solutions)
        if not self.matching.explain:
            return [output]
        return [explained(output, self._record(instant.time, rows, events))]

    def _record(self, time: int, rows: list, events: Events) -> dict:
        """The provenance record of an output: each solution with the window items its
        events used, each with the elements (stream, time) of the window that hold it in
        the solution's interval (DSTREAM solutions left the answer: nothing holds them)."""
        names = self.tree.select
        used: dict[tuple, frozenset] = {}
        for (m, start, end), pairs in events.items():
            key = tuple(map(dict(m).__getitem__, names)) + (start, end)
            used[key] = used.get(key, frozenset()) | pairs
        buffers, streams = self.schedule.buffers, self.schedule.streams
        text = partial(as_text, self.dictionary)
        record: dict = {"time": time, "query": self.tree.name, "at": self.spec.filename or "", "solutions": []}
        if self.tree.r2s is DSTREAM:
            record["note"] = "these solutions left the answer (DSTREAM): what made them hold is gone"
        for row in rows:
            start, end = row[-2], row[-1]
            facts = []
            for window, triple in sorted(used.get(row, ()), key=lambda pair: (pair[0], text(pair[1]))):
                times = [t for t, item in islice(buffers[window].items, buffers[window].inside)
                         if item == triple and start <= t <= end]
                facts.append({**input_origin(" ".join(text(triple)) + " .", [(streams[window], t) for t in times]),
                              "window": f"<{window}>"})
            record["solutions"].append({"bindings": dict(zip(names, text(row[:-2]))), "start": start, "end": end,
                                        "facts": facts})
        return record

    def snapshot(self) -> bytes:
        text = partial(as_text, self.dictionary)
        return pickle.dumps((
            tuple(self.schedule.state()[i] for i in (0, 1, 3)),  # last instant, was empty, first time
            {n: ([(t, text(v)) for t, v in b.items], b.inside) for n, b in self.schedule.buffers.items()},
            self.matching.state(self.dictionary),
            [text(row[:-2]) + row[-2:] for row in self.previous.elements()],
        ), protocol=5)

    def restore(self, data: bytes) -> None:
        ids = partial(as_ids, self.dictionary)
        (last_, was_empty, origin), buffers, matching, previous = pickle.loads(data)
        self.schedule.set_state((last_, was_empty, {n: ([(t, ids(v)) for t, v in items], inside)
                                                    for n, (items, inside) in buffers.items()}, origin))
        self.matching.set_state(matching, self.dictionary)
        self.previous = Counter(ids(row[:-2]) + tuple(row[-2:]) for row in previous)
