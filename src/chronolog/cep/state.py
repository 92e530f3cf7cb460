"""Everything a stream changes: stored events, consumed events, the current time.

Kept apart from the (immutable, shared) rule plans so that one ``RuleSet`` can drive
many states, e.g. one per key in Spark's state store. ``snapshot()`` writes plain data
(tuples, lists, dicts, ints, strings) with pickle; ``restore()`` reads it back with an
unpickler that refuses every class, so state bytes cannot run code. Attribute values
must be plain data too for a snapshot to succeed.
"""
from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Callable, Hashable, Iterator

from chronolog.cep.events import Event
from chronolog.cep.ruleset import RuleSet
from chronolog.cep.storage import Timeline, TypeStore
from chronolog.plain import SnapshotError, plain_loads

FORMAT = "chronolog.cep.state/1"
AttrMap = Callable[[str, dict], dict]  # (event type, attributes) -> attributes
MIN_TIME = -(2**63)


class RuleRuntime:
    """One rule's view of a state: where its loops read, and what it has consumed."""

    __slots__ = ("sources", "consumed", "log", "horizon")

    def __init__(self, sources: tuple[Timeline | dict[Hashable, Timeline], ...], horizon: int) -> None:
        self.sources = sources
        self.consumed: set[int] = set()
        self.log: deque[tuple[int, int]] = deque()
        self.horizon = horizon

    def consume(self, time: int, seqs: list[int]) -> None:
        """Mark events consumed at ``time``; forget marks on events evicted by now."""
        log = self.log
        consumed = self.consumed
        cutoff = time - self.horizon
        while log and log[0][0] < cutoff:
            consumed.discard(log.popleft()[1])
        for seq in seqs:
            if seq not in consumed:
                consumed.add(seq)
                log.append((time, seq))


class TemporalState:
    """The mutable half of an engine, bound to a ``RuleSet``."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.now = MIN_TIME
        self.evict_at = MIN_TIME
        self.seq = 0
        self.late_count = 0
        self.stores: dict[str, TypeStore] = {}
        self.live: dict[int, TypeStore] = {}  # the stores holding events (TypeStore keeps it)
        self.period = 1  # between evictions: a quarter of the shortest horizon
        self.runtimes: list[RuleRuntime] = []
        self.sync()

    def sync(self) -> None:
        """Bind the plans registered since the last call (and any new horizons)."""
        rules = self.rules
        for type_name, horizon in rules.horizons.items():
            store = self.stores.get(type_name)
            if store is None:
                self.stores[type_name] = TypeStore(horizon, self.live)
            else:
                store.horizon = horizon
        self.period = max(min((store.horizon for store in self.stores.values()), default=1) // 4, 1)
        for plan in rules.plans[len(self.runtimes):]:
            sources = tuple(
                self.stores[s.type].main if s.attribute is None else self.stores[s.type].index(s.attribute)
                for s in plan.sources
            )
            self.runtimes.append(RuleRuntime(sources, 0))
        for plan, runtime in zip(rules.plans, self.runtimes):
            runtime.horizon = max((rules.horizons[t] for t in plan.consumed_types), default=0)

    def evict(self) -> None:
        """Forget what no rule can reach any more.

        Called when ``now`` passes ``evict_at``, which is set a quarter of the shortest
        horizon ahead: eviction runs in batches, and each type keeps at most 1.25 times
        its horizon's worth of events. Events kept past their horizon are harmless:
        every scope's lower bound is at or after ``now - horizon``.
        """
        now = self.now
        live = self.live
        for key, store in list(live.items()):
            store.evict_before(now - store.horizon)
            if not store.main:
                del live[key]
        self.evict_at = now + self.period

    def stored_event_count(self) -> int:
        return sum(len(store) for store in self.stores.values())

    def stored_events(self) -> Iterator[Event]:
        """The live events of every type (an index holds no event its main timeline lacks)."""
        for store in self.stores.values():
            main = store.main
            yield from main.events[main.head:]

    def snapshot(self, attrs: AttrMap | None = None) -> bytes:
        """The state as plain-data bytes; ``attrs(type, attributes)`` rewrites each stored
        event's attributes on the way out (a host's term ids as text, say)."""
        stores = {name: _rows(store.main) for name, store in self.stores.items()}
        if attrs is not None:
            stores = {name: [(seq, start, end, attrs(name, values)) for seq, start, end, values in rows]
                      for name, rows in stores.items()}
        data = {
            "format": FORMAT,
            "rules": self.rules.fingerprint(),
            "now": self.now,
            "seq": self.seq,
            "late": self.late_count,
            "stores": stores,
            "consumed": [list(rt.log) for rt in self.runtimes],
        }
        try:
            return pickle.dumps(data, protocol=5)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise SnapshotError(f"state holds a value that is not plain data: {exc}") from exc

    @classmethod
    def restore(cls, rules: RuleSet, data: bytes, attrs: AttrMap | None = None) -> "TemporalState":
        plain = plain_loads(data, "temporal engine snapshot")
        if not isinstance(plain, dict) or plain.get("format") != FORMAT:
            raise SnapshotError("not a temporal engine snapshot (unknown format)")
        if plain["rules"] != rules.fingerprint():
            raise SnapshotError("the snapshot was taken with other event types or rules than this engine's")
        state = cls(rules)
        state.now, state.seq, state.late_count = plain["now"], plain["seq"], plain["late"]
        for name, rows in plain["stores"].items():
            store = state.stores[name]
            for seq, start, end, values in rows:
                store.append(Event(name, start, end, values if attrs is None else attrs(name, values)), seq)
        for runtime, log in zip(state.runtimes, plain["consumed"]):
            runtime.log.extend(log)
            runtime.consumed.update(seq for _, seq in log)
        return state


def _rows(timeline: Timeline) -> list[tuple]:
    """The live events of a timeline as plain tuples (seq, start, end, attrs)."""
    return [
        (timeline.seqs[i], event.start, event.end, dict(event.attrs))
        for i, event in enumerate(timeline.events[timeline.head:], timeline.head)
    ]
