"""RSEP-QL event patterns straight from the paper's equations (Dell'Aglio et al. 2016,
sections 3-4), for differential tests: windows recomputed from the whole stream at each
instant (Definition 3), event mappings as sets, substitution μ2(E1) and the nested active
window W^⊔[0, t3-1]•W of Eq. 7, selection by Eqs. 9-11, consumption by section 4.4.

Terms are as in :mod:`chronolog.lang.rspql.events`: a variable ``?x``, an IRI (a string)
or a pyoxigraph ``Literal``. A stream is a list of elements
``(time, graph)``, a graph a frozenset of triples. An event is ``(mapping, t1, t2)``, a
mapping a frozenset of (variable, IRI) pairs. How each policy is read: the docstrings
below and docs/languages/rspql.md.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from chronolog.lang.rspql.events import Consumption, Event, First, Last, Pattern, Selection, Seq, is_variable, windows_of
from chronolog.window.scope import IntervalWindow, LandmarkWindow, SlidingWindow, Window

Graph = frozenset
Element = tuple[int, Graph]
EventMapping = tuple[frozenset, int, int]
Used = frozenset  # (window, triple) pairs that justify an event


def content(window: Window, stream: Sequence[Element], t: int) -> list[Element]:
    """W(S, t) by Definition 3."""
    if isinstance(window, SlidingWindow):
        top = t // window.step * window.step
        return [(time, g) for time, g in stream if top - window.range < time <= top]
    if isinstance(window, LandmarkWindow):
        return [(time, g) for time, g in stream if window.start <= time <= t]
    if isinstance(window, IntervalWindow):
        return [(time, g) for time, g in stream if window.start <= time <= window.end and time <= t]
    raise ValueError(f"no RSEP-QL definition for {window!r}")


def snapshot(window: Window, stream: Sequence[Element], t: int) -> frozenset:
    """SDS_w(t): the union of the window's graphs."""
    return frozenset(triple for _, g in content(window, stream, t) for triple in g)


def bgp(triples: Sequence[tuple[str, str, str]], graph: Iterable[tuple[str, str, str]],
        mu: Mapping[str, str]) -> list[dict[str, str]]:
    """The solutions of μ(P) over ``graph``, each extended with μ."""
    solutions = [dict(mu)]
    for pattern in triples:
        nxt = []
        for sol in solutions:
            for triple in graph:
                ext = dict(sol)
                if all(_bind(ext, p, v) for p, v in zip(pattern, triple)):
                    nxt.append(ext)
        solutions = nxt
    return solutions


def _bind(sol: dict[str, str], term: str, value: str) -> bool:
    if not is_variable(term):
        return term == value
    return sol.setdefault(term, value) == value


def precedes(a: EventMapping, b: EventMapping) -> bool:
    """≺: a ends before b starts (a strict partial order on intervals)."""
    return a[2] < b[1]


def first(events: dict[EventMapping, Used]) -> dict[EventMapping, Used]:
    return {e: u for e, u in events.items() if not any(precedes(o, e) for o in events)}


def last(events: dict[EventMapping, Used]) -> dict[EventMapping, Used]:
    return {e: u for e, u in events.items() if not any(precedes(e, o) for o in events)}


class Evaluation:
    """⟨⟨E⟩⟩ at one instant t over windows (name -> (stream, window)), with the triples
    each window may still use (None: all of them, P^u)."""

    def __init__(self, windows: Mapping[str, tuple[str, Window]], streams: Mapping[str, Sequence[Element]],
                 t: int, inputs: Mapping[str, frozenset] | None) -> None:
        self.windows, self.streams, self.t, self.inputs = windows, streams, t, inputs

    def __call__(self, e: Pattern, hi: int, mu: Mapping[str, str]) -> dict[EventMapping, Used]:
        """⟨⟨μ(E)⟩⟩ under the active window W^⊔[0, hi]•W^id."""
        if isinstance(e, Event):
            return self.basic(e, hi, mu)
        if isinstance(e, First):
            return first(self(e.pattern, hi, mu))
        if isinstance(e, Last):
            return last(self(e.pattern, hi, mu))
        return self.seq(e, hi, mu)

    def basic(self, e: Event, hi: int, mu: Mapping[str, str]) -> dict[EventMapping, Used]:
        """Basic event pattern: {(μ, t_k, t_k) | μ ∈ ⟦P⟧_{G_k}, (G_k, t_k) ∈ W•W_j(S, t)}, G_k
        cut to the window's unconsumed triples (section 4.4)."""
        stream, window = self.windows[e.window]
        out: dict[EventMapping, Used] = {}
        for time, graph in content(window, self.streams.get(stream, []), self.t):
            if time > hi:
                continue
            if self.inputs is not None:
                graph = graph & self.inputs[e.window]
            for sol in bgp(e.triples, graph, mu):
                used = frozenset((e.window, tuple(sol.get(x, x) for x in triple)) for triple in e.triples)
                key = (frozenset(sol.items()), time, time)
                out[key] = out.get(key, frozenset()) | used
        return out

    def seq(self, e: Seq, hi: int, mu: Mapping[str, str]) -> dict[EventMapping, Used]:
        out: dict[EventMapping, Used] = {}

        def add(m1: EventMapping, u1: Used, m2: EventMapping, u2: Used) -> None:
            key = (m1[0] | m2[0], m1[1], m2[2])
            out[key] = out.get(key, frozenset()) | u1 | u2

        seconds = self(e.then, hi, mu)
        if e.selection is Selection.NAIVE:  # Eq. 9: the latest of each, compared
            firsts = last(self(e.first, hi, mu))
            for m2, u2 in last(seconds).items():
                for m1, u1 in firsts.items():
                    if precedes(m1, m2) and _compatible(m1[0], m2[0]):
                        add(m1, u1, m2, u2)
            return out

        def before(m2: EventMapping) -> dict[EventMapping, Used]:
            """⟨⟨μ2(E1)⟩⟩ under W^⊔[0, t3-1]•W."""
            return self(e.first, min(hi, m2[1] - 1), {**mu, **dict(m2[0])})

        if e.selection is Selection.UNRESTRICTED:  # Eq. 7
            for m2, u2 in seconds.items():
                for m1, u1 in before(m2).items():
                    add(m1, u1, m2, u2)
            return out
        # Eqs. 10/11: per mapping μ2, the first (last) E2 event with an E1 event before it,
        # then the first (last) such E1 event
        pick = first if e.selection is Selection.CHRONOLOGICAL else last
        matched = {m2: u2 for m2, u2 in seconds.items() if before(m2)}
        for mapping in {m2[0] for m2 in matched}:
            for m2, u2 in pick({m: u for m, u in matched.items() if m[0] == mapping}).items():
                for m1, u1 in pick(before(m2)).items():
                    add(m1, u1, m2, u2)
        return out


def _compatible(a: frozenset, b: frozenset) -> bool:
    da, db = dict(a), dict(b)
    return all(db.get(k, v) == v for k, v in da.items())


def answers(pattern: Pattern, windows: Mapping[str, tuple[str, Window]], streams: Mapping[str, Sequence[Element]],
            instants: Iterable[int], policy: Consumption) -> list[tuple[int, dict[EventMapping, Used]]]:
    """⟦MATCH E⟧ at each evaluation instant, in order, under consumption ``policy``:
    P^u gives every window's whole snapshot; P^c and P^r (the same function: they differ
    in the SEQ operators the query uses) give I_i(w) = Δ_i(w) ∪ (I_{i-1}(w) minus the
    triples used at t_{i-1}), inside SDS_w(t_i) (Definitions 8-10)."""
    out = []
    inputs: dict[str, frozenset] | None = None
    previous: dict[str, frozenset] = {}
    used: frozenset = frozenset()
    for t in sorted(set(instants)):
        snaps = {w: snapshot(win, streams.get(s, []), t) for w, (s, win) in windows.items()
                 if w in windows_of(pattern)}
        if policy is not Consumption.UNRESTRICTED:
            kept = {w: ((inputs or {}).get(w, frozenset()) - {tr for x, tr in used if x == w}) for w in snaps}
            inputs = {w: (snaps[w] - previous.get(w, frozenset())) | (kept[w] & snaps[w]) for w in snaps}
        events = Evaluation(windows, streams, t, inputs)(pattern, t, {})
        used = frozenset(u for us in events.values() for u in us)
        previous = snaps
        out.append((t, events))
    return out


def joined(events: dict[EventMapping, Used], solutions: Iterable[Mapping[str, str]]) -> list[EventMapping]:
    """``MATCH E Join P`` (section 4.1's Join, Definition 6's MATCH): each event mapping
    merged with each compatible solution of P, the event's interval kept beside it."""
    return [(m | frozenset(s.items()), t1, t2) for m, t1, t2 in events for s in solutions
            if _compatible(m, frozenset(s.items()))]
