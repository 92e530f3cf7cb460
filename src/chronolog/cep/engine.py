"""``TemporalEngine``: register TESLA rules, push events, receive composite events.

Order of processing (so that results never depend on anything but the input order):
events are processed in arrival order; an event fires the rules it terminates in
registration order, and is stored afterwards; the composite events it produces are then
processed the same way, first produced first (breadth-first), before the next input
event. ``push`` returns every composite event produced, in that order. A ``within D``
scope with D > 0 reaches events strictly before its reference event, so those events of
one time point never select each other; ``within 0`` reaches the reference event's own
time point, and ``push_point`` takes a time point's input events at once, storing those
that such a scope reads before any fires, so that they see each other whatever their
order (composite events of the time point are seen once produced). Arrival order within
a time point only decides ties between equal times (``last`` prefers the later arrival)
and which firing consumes first.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from chronolog.cep.compiler import Decoder, RulePlan
from chronolog.cep.errors import EventError
from chronolog.cep.events import Event, EventType
from chronolog.lateness import LatePolicy
from chronolog.cep.rules import Rule
from chronolog.cep.ruleset import RuleSet
from chronolog.cep.state import MIN_TIME, AttrMap, TemporalState
from chronolog.errors import ChronologError


class RuleEvaluationError(ChronologError):
    """A rule failed on an event at run time (e.g. ``sum`` over values that are not numbers)."""


class TemporalEngine:
    """A TESLA complex-event engine over one stream.

    >>> from chronolog.cep import *
    >>> engine = TemporalEngine()
    >>> _ = engine.declare("Smoke", ["area"])
    >>> _ = engine.declare("Temp", ["area", "value"])
    >>> _ = engine.register(Rule(
    ...     name="fire", emits="Fire",
    ...     terminator=Terminator("S", "Smoke"),
    ...     predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
    ...                           where=[param("T.area", "S.area"), where("T.value", ">", 45)])],
    ...     outputs={"area": attr("S.area"), "temp": attr("T.value")}))
    >>> engine.push_batch([event("Temp", 10, area="A", value=50), event("Smoke", 12, area="A")])
    [Event(type='Fire', start=10, end=12, attrs={'area': 'A', 'temp': 50})]
    """

    def __init__(self, *, decode: Decoder | None = None, late: LatePolicy | None = None,
                 explain: bool = False) -> None:
        """``decode`` maps attribute values to comparable values (default: identity);
        ``late`` is the late-event policy (default: ``LatePolicy.reject()``); with
        ``explain``, composite events carry the events they were built from (their ``WHY``
        attribute: rules compiled so, at a cost; without it the rules pay nothing)."""
        self.rules = RuleSet(decode, explain)
        self.late = late if late is not None else LatePolicy.reject()
        if not isinstance(self.late, LatePolicy):
            raise TypeError(f"late must be a LatePolicy, got {self.late!r}")
        self._state = TemporalState(self.rules)
        self._inputs: dict[str, frozenset[str]] = {}
        self._dispatch: dict[str, list] = {}
        self._feeding: frozenset[str] = frozenset()
        self._same_time: frozenset[str] = frozenset()  # types some rule reads within 0 of another event

    # -- registration ----------------------------------------------------------------
    def declare(self, name: str, attributes: Iterable[str]) -> EventType:
        """Declare an input event type; pushed events must carry these attributes."""
        etype = self.rules.declare(name, attributes)
        self._inputs[name] = frozenset(etype.attributes)
        return etype

    def register(self, rule: Rule) -> RulePlan:
        """Check, compile and add a rule; raises a ``RuleError`` naming what is wrong.

        A rule added after events were pushed sees only the events still stored."""
        plan = self.rules.add(rule)
        self._bind()
        return plan

    def _bind(self) -> None:
        self._state.sync()
        dispatch: dict[str, list] = {}
        for plan, runtime in zip(self.rules.plans, self._state.runtimes):
            dispatch.setdefault(plan.terminator_type, []).append((plan.fire, runtime, plan))
        self._dispatch = dispatch
        # composite types some rule reads: only these are stored or fire rules
        self._feeding = frozenset(t for t in (*dispatch, *self._state.stores) if self.rules.types[t].derived)
        self._same_time = frozenset(t for plan in self.rules.plans for t in plan.same_time)

    # -- events ----------------------------------------------------------------------
    @property
    def now(self) -> int | None:
        """The engine's current time: the largest event time seen (None before any)."""
        now = self._state.now
        return None if now == MIN_TIME else now

    @property
    def late_count(self) -> int:
        """How many late events were diverted (under ``LatePolicy.divert``)."""
        return self._state.late_count

    def stored_event_count(self) -> int:
        """Events currently kept for the rules' scopes; bounded by the rules' horizons."""
        return self._state.stored_event_count()

    def stored_events(self) -> Iterator[Event]:
        """The events currently kept for the rules' scopes (what the state refers to)."""
        return self._state.stored_events()

    def push(self, event: Event) -> list[Event]:
        """Process one input event; returns the composite events it produced."""
        out: list[Event] = []
        self._push(event, out)
        return out

    def push_batch(self, events: Iterable[Event]) -> list[Event]:
        """Process events in order; returns all composite events produced, in order."""
        out: list[Event] = []
        push = self._push
        for event in events:
            push(event, out)
        return out

    def push_point(self, events: Sequence[Event]) -> list[list[Event]]:
        """Process the input events of one time point; the composite events each produced.

        Events read ``within 0`` of another (the same time point) are stored before any
        fires a rule, so that each sees all of them whatever their order; otherwise this
        is ``push`` of each in turn."""
        if len(events) < 2 or not self._same_time:
            results = []
            for event in events:
                out: list[Event] = []
                self._push(event, out)
                results.append(out)
            return results
        for event in events:
            self._check(event)
        time = events[0][2]
        if any(event[2] != time for event in events):
            raise EventError(f"push_point takes the events of one time point, got times "
                             f"{sorted({event[2] for event in events})}")
        if not self._advance(time):
            for event in events:
                self._late(event)
            return [[] for _ in events]
        stored: dict[int, int] = {}  # id(event) -> its sequence number, for the events stored first
        for event in events:
            if event[0] in self._same_time:
                seq = self._store_first(event)
                if seq is not None:
                    stored[id(event)] = seq
        results = []
        for event in events:
            out: list[Event] = []
            self._push(event, out, stored.get(id(event)))
            results.append(out)
        return results

    def _store_first(self, event: Event) -> int | None:
        """Store an input event that some rule reads ``within 0`` before it fires anything,
        so that a scope over its time point sees it whatever the order; its sequence number
        (None when no rule stores its type)."""
        state = self._state
        store = state.stores.get(event[0])
        if store is None:
            return None
        seq = state.seq
        store.append(event, seq)
        state.seq = seq + 1
        return seq

    def _check(self, event: Event) -> None:
        required = self._inputs.get(event[0]) if isinstance(event, Event) else None
        if required is None or event[1] > event[2] or not required <= event[3].keys():
            raise self._malformed(event)

    def _advance(self, time: int) -> bool:
        """Move the engine to ``time`` (evicting what no scope reaches any more); False when
        ``time`` is before the engine's current time (the event is late)."""
        state = self._state
        if time != state.now:
            if time < state.now:
                return False
            state.now = time
            if time >= state.evict_at:
                state.evict()
        return True

    def _push(self, event: Event, out: list[Event], stored: int | None = None) -> None:
        """Process one input event, appending the composite events it produced to ``out``:
        fire the rules it terminates, store it (unless it is already, under the sequence
        number ``stored``), then the same for the composite events it leads to. An input
        event that some rule reads ``within 0`` is stored first, as ``push_point`` stores its
        time point's: one pushed alone is a time point of its own. (The checks
        of ``_check`` and ``_advance`` are written out here: this is the hot path.)"""
        state = self._state
        required = self._inputs.get(event[0]) if isinstance(event, Event) else None
        if required is None or event[1] > event[2] or not required <= event[3].keys():
            raise self._malformed(event)
        time = event[2]
        if time != state.now:
            if time < state.now:
                self._late(event)
                return
            state.now = time
            if time >= state.evict_at:
                state.evict()
        if stored is None and event[0] in self._same_time:
            stored = self._store_first(event)
        # The input event, then the composite events that some rule reads, first
        # produced first: each fires the rules it terminates, then is stored.
        dispatch = self._dispatch
        stores = state.stores
        feeding = self._feeding
        i = len(out)
        current = event
        while True:
            if stored is None:
                seq = state.seq
                state.seq = seq + 1
            else:
                seq = stored
            handlers = dispatch.get(current[0])
            if handlers is not None:
                for fire, runtime, plan in handlers:
                    try:
                        fire(current, seq, runtime, out)
                    except (ArithmeticError, TypeError, ValueError, LookupError) as exc:
                        raise self._failure(plan, current, exc) from exc
            store = stores.get(current[0])
            if store is not None and stored is None:
                store.append(current, seq)
            stored = None
            if not feeding:
                return
            while i < len(out) and out[i][0] not in feeding:
                i += 1
            if i == len(out):
                return
            current = out[i]
            i += 1

    def _malformed(self, event: object) -> EventError:
        """The error for an event that is not an Event of a declared input type."""
        if not isinstance(event, Event):
            return EventError(f"expected an Event, got {event!r}")
        required = self._inputs.get(event[0])
        if required is None:
            if event[0] in self.rules.types:
                return EventError(f"cannot push {event!r}: {event[0]!r} is emitted by rules, not an input type")
            return EventError(f"cannot push {event!r}: unknown event type {event[0]!r}; declare it first")
        if event[1] > event[2]:
            return EventError(f"cannot push {event!r}: start {event[1]} is after end {event[2]}")
        missing = ", ".join(sorted(required - event[3].keys()))
        return EventError(f"cannot push {event!r}: missing attribute(s) {missing}")

    def _late(self, event: Event) -> None:
        now = self._state.now
        self.late.late(event, lambda: f"late event {event!r}: its time {event[2]} is before the engine's current time {now}")
        self._state.late_count += 1

    @staticmethod
    def _failure(plan: RulePlan, event: Event, exc: Exception) -> RuleEvaluationError:
        return RuleEvaluationError(f"rule {plan.name!r} failed on {event!r}: {exc}")

    # -- state -----------------------------------------------------------------------
    def snapshot(self, attrs: AttrMap | None = None) -> bytes:
        """The engine's whole state as bytes (rules excluded: they are code); ``attrs``
        rewrites stored events' attributes on the way out."""
        return self._state.snapshot(attrs)

    def restore(self, data: bytes, attrs: AttrMap | None = None) -> None:
        """Replace the state with a snapshot taken by an engine with the same rules;
        ``attrs`` undoes the rewrite ``snapshot`` was given."""
        self._state = TemporalState.restore(self.rules, data, attrs)
        self._bind()
