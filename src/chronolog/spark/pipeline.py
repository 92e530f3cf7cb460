"""The stages of the streaming pipeline that run on executors (DESIGN.md section 4).

``enrich`` (a ``mapInArrow`` function, stateless and parallel): each partition holds whole
time points in time order (see :mod:`chronolog.spark.source`); per time point, parse the
elements, reason, run the EVENT queries, and emit one row per event and rule group,
keyed by the group's partition key (:mod:`chronolog.lang.keys`). A rule group that never
looks back (every rule a bare terminator: no predicate, negation or aggregate) holds no
state, so its detections are made here and pass through the keyed stage under
``PASSTHROUGH_KEY``, like diagnostics: one key in place of one per event (CityBench Q1's
same-time rule keyed by an observation made thousands of keys per batch, each a round
trip to the state store).

``TemporalProcessor`` (``transformWithStateInPandas``, one instance per key): the key's
temporal engine state lives in the state store between batches; events are pushed in
(time, order within the time point) order; the composite events become output graphs.
An event-time timer clears a key's state once the watermark is past everything its rules
can still reach, so state is bounded by the rules, not by the stream.

Terms cross processes as N-Triples text; every Python worker builds the program once
(:func:`worker_for`) with a term dictionary of its own, and the enrichment stage's workers
the background closure with it: once per worker process, not per batch.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterator

import pyarrow as pa

from chronolog import cep
from chronolog.cep.partition import RuleGroup, partition_rules
from chronolog.engine import Engine, OutputGraph
from chronolog.errors import ChronologError, ChronologSyntaxError
from chronolog.formats import parse_terms
from chronolog.lang.dotr import value_decoder
from chronolog.spark.encoding import parse_ntriples
from chronolog.streams import jsonl_element, LineError

PASSTHROUGH_KEY = "!"  # rows needing no state: diagnostics, detections of stateless groups
EVENT_SCHEMA = pa.schema([
    ("key", pa.string()), ("time", pa.int64()), ("seq", pa.int64()), ("type", pa.string()),
    ("attrs", pa.list_(pa.string())), ("kind", pa.string()), ("place", pa.string()),
])
EVENT_DDL = ("key string, time long, seq long, type string, attrs array<string>, kind string, "
             "place string")
OUTPUT_DDL = "time long, kind string, rule string, graph string, place string, key string, n long"


@dataclass(frozen=True)
class ProgramSpec:
    """What a worker needs to build the program: shipped to executors, hashable."""

    text: str
    filename: str | None
    background: tuple[str, ...]
    rules: tuple[str, ...]


class Worker:
    """One Python worker's compiled program: the engine for enrichment, and per rule
    group a temporal engine whose state is swapped in and out per key."""

    def __init__(self, spec: ProgramSpec) -> None:
        self.engine = engine = Engine(spec.text, filename=spec.filename, background=spec.background,
                                      rules=spec.rules)
        refuse_feedback(engine)
        self.groups: list[RuleGroup] = partition_rules([r.rule for r in engine.rules.values()],
                                                      engine.attributes)
        self.routes: dict[str, list[tuple[int, int | None]]] = {}  # type -> (group, key position)
        for g, group in enumerate(self.groups):
            for etype in group.types:
                if etype not in engine.rules:  # input types; composite ones stay inside the group
                    attrs = engine.attributes[etype]
                    position = attrs.index(group.key[etype]) if group.key else None
                    self.routes.setdefault(etype, []).append((g, position))
        dictionary = engine.dictionary
        by_id = value_decoder(dictionary)

        @lru_cache(maxsize=1 << 16)
        def term_id(text: str) -> int:
            return dictionary.encode(parse_terms([text])[0])

        def decode(value: object) -> object:
            return by_id(term_id(value)) if isinstance(value, str) else by_id(value)

        self.term_id = term_id
        self.temporal: list[cep.TemporalEngine] = []
        self.horizons: list[int] = []
        self.empty: list[bytes] = []
        self.stateless: list[bool] = []
        for group in self.groups:
            temporal = cep.TemporalEngine(decode=decode)
            for etype in group.types:
                if etype not in engine.rules:
                    temporal.declare(etype, engine.attributes[etype])
            rules = [next(r.rule for r in engine.rules.values() if r.rule.name == name) for name in group.rules]
            for rule in rules:
                temporal.register(rule)
            self.stateless.append(not any(r.predicates or r.negations or r.aggregates for r in rules))
            self.temporal.append(temporal)
            self.horizons.append(max(temporal.rules.horizons.values(), default=0))
            self.empty.append(temporal.snapshot())
        self._text = engine.term_text

    # -- enrichment ------------------------------------------------------------------
    def parse(self, payload: str, syntax: str, place: str) -> list[tuple[int, int, int]]:
        """The encoded triples of one shipped element (raises ChronologError when malformed)."""
        dictionary = self.engine.dictionary
        if syntax == "jsonl":
            try:
                return list(jsonl_element(payload, dictionary, None, 1).triples)
            except LineError as error:
                file, _, line = place.rpartition(":")
                raise ChronologSyntaxError(error.message, file, int(line), error.col, payload) from None
        return parse_ntriples(payload, dictionary)

    def event_rows(self, time: int, triples: list[tuple[int, int, int]]) -> list[tuple]:
        """(key, time, seq, type, attrs, kind, place) rows of one time point's events, and of
        the detections of stateless groups (``PASSTHROUGH_KEY``, type: the rule, attrs: the
        graph and the key it was detected under)."""
        rows = []
        text = self._text
        attributes = self.engine.attributes
        stateless: dict[tuple[int, str], list[tuple]] = {}
        for seq, event in enumerate(self.engine.events(time, triples)):
            routes = self.routes.get(event.type)
            if not routes:
                continue
            values = [None if event.attrs[a] is None else text(event.attrs[a]) for a in attributes[event.type]]
            for g, position in routes:
                key = f"{g}|" if position is None else f"{g}|{values[position]}"
                if self.stateless[g]:
                    stateless.setdefault((g, key), []).append((time, seq, event.type, values))
                else:
                    rows.append((key, time, seq, event.type, values, "event", None))
        for (g, key), events in stateless.items():  # a key's events of the time point at once
            for t, kind, rule, graph, place, _, n in self.detect(g, key, None, events)[2]:
                rows.append((PASSTHROUGH_KEY, t, n, rule, [graph, key], kind, place))
        return rows

    # -- temporal reasoning ----------------------------------------------------------
    def detect(self, group: int, key: str, snapshot: bytes | None,
               events: list[tuple[int, int, str, list]]) -> tuple[bytes | None, int | None, list[tuple]]:
        """Push a key's events of one batch; returns its new state (None: nothing worth
        keeping), the engine's time, and the output rows."""
        temporal = self.temporal[group]
        temporal.restore(snapshot or self.empty[group])
        attributes = self.engine.attributes
        composites: list[cep.Event] = []
        for time, _, etype, values in sorted(events, key=lambda e: (e[0], e[1])):
            event = cep.Event(etype, time, time, dict(zip(attributes[etype], values)))
            composites.extend(temporal.push(event))
        out = []
        tag = hashlib.blake2b(key.encode("utf-8"), digest_size=4).hexdigest()
        counts: dict[int, int] = {}
        for composite in composites:
            if composite.type not in self.engine.rules:
                continue
            n = counts[composite.end] = counts.get(composite.end, 0) + 1
            graph = self.graph(composite, f"k{tag}t{composite.end}n{n}")
            out.append((graph.time, "graph", graph.rule, self.ntriples(graph), None, key, n))
        if temporal.stored_event_count() == 0:  # nothing a later event could combine with
            return None, temporal.now, out
        return temporal.snapshot(), temporal.now, out

    def graph(self, composite: cep.Event, firing: str) -> OutputGraph:
        """The engine's output graph, with the composite's shipped terms re-encoded here."""
        lowered = self.engine.rules[composite.type]
        attrs = {name: self.term_id(value) if isinstance(value, str) and name not in lowered.aggregated else value
                 for name, value in composite.attrs.items()}
        return self.engine.graph(composite._replace(attrs=attrs), firing)

    def ntriples(self, graph: OutputGraph) -> str:
        decode = self.engine.dictionary.decode  # a term's str() is its N-Triples text
        return "".join(f"{decode(s)} {decode(p)} {decode(o)} .\n" for s, p, o in graph.triples)


def refuse_feedback(engine: Engine) -> None:
    """FEEDBACK needs a rule's output back at the source, a cycle a streaming query cannot
    have; such programs run in process."""
    if engine.feedback_rules:
        names = ", ".join(sorted(engine.feedback_rules))
        raise ChronologError(f"rules with FEEDBACK ({names}) run with --runner inprocess only: on Spark their "
                             "output graphs cannot go back into the input stream")


_WORKERS: dict[ProgramSpec, Worker] = {}


def worker_for(spec: ProgramSpec) -> Worker:
    """This process's compiled program (built once per Python worker)."""
    worker = _WORKERS.get(spec)
    if worker is None:
        worker = _WORKERS[spec] = Worker(spec)
    return worker


def _time_points(batches: Iterator[pa.RecordBatch]) -> Iterator[list[dict]]:
    """The partition's rows, a time point (or a diagnostic row) at a time."""
    current: list[dict] = []
    for batch in batches:
        for row in batch.to_pylist():
            if row["kind"] != "element":
                yield [row]
                continue
            if current and current[0]["time"] != row["time"]:
                yield current
                current = []
            current.append(row)
    if current:
        yield current


def enrich(spec: ProgramSpec):
    """The ``mapInArrow`` function of the enrichment stage for ``spec``."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        worker = worker_for(spec)
        rows: list[tuple] = []
        for group in _time_points(batches):
            if len(rows) >= 4096:  # Arrow batches of some size, not one per time point
                yield _record_batch(rows)
                rows = []
            first = group[0]
            if first["kind"] != "element":
                rows.append((PASSTHROUGH_KEY, first["time"], first["seq"], first["kind"],
                             [first["payload"], first["syntax"]], first["kind"], first["place"]))
            else:
                triples: dict[tuple[int, int, int], None] = {}
                for row in group:
                    try:
                        triples.update(dict.fromkeys(worker.parse(row["payload"], row["syntax"], row["place"])))
                    except ChronologSyntaxError as error:
                        message = str(error)
                    except (ChronologError, SyntaxError) as error:
                        message = f"{row['place']}: {error}"
                    else:
                        continue
                    rows.append((PASSTHROUGH_KEY, row["time"], row["seq"], "error", [message, "error"],
                                 "error", row["place"]))
                rows.extend(worker.event_rows(first["time"], list(triples)))
        if rows:
            yield _record_batch(rows)

    return run


def _record_batch(rows: list[tuple]) -> pa.RecordBatch:
    columns = list(zip(*rows))
    return pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, EVENT_SCHEMA)],
                                      schema=EVENT_SCHEMA)


def processor_class():  # -> the StatefulProcessor subclass (pyspark imported on first use)
    import pandas as pd
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    columns = ["time", "kind", "rule", "graph", "place", "key", "n"]

    class TemporalProcessor(StatefulProcessor):
        """One key's temporal reasoning (see the module docstring)."""

        def __init__(self, spec: ProgramSpec) -> None:
            # this stage never reasons: its workers need not build the background closure
            self.spec = replace(spec, background=(), rules=())

        def init(self, handle) -> None:
            self.handle = handle
            # the engine state, its time, and the pending timer (each state call is a round
            # trip to the JVM, so a key costs one read and one write per batch)
            self.state = handle.getValueState("engine", "snapshot binary, now long, timer long")

        def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
            key = key[0]
            frames = list(rows)
            if key == PASSTHROUGH_KEY:
                for frame in frames:
                    graphs = frame["kind"] == "graph"
                    yield pd.DataFrame({
                        "time": frame["time"], "kind": frame["kind"], "rule": frame["type"].where(graphs, ""),
                        "graph": [a[0] for a in frame["attrs"]], "place": frame["place"],
                        "key": [a[1] if g else key for a, g in zip(frame["attrs"], graphs)],
                        "n": frame["seq"]}, columns=columns)
                return
            worker = worker_for(self.spec)
            group = int(key.split("|", 1)[0])
            events = [(int(t), int(s), ty, list(a)) for frame in frames
                      for t, s, ty, a in zip(frame["time"], frame["seq"], frame["type"], frame["attrs"])]
            stored = self.state.get()
            snapshot, now, out = worker.detect(group, key, stored[0] if stored else None, events)
            if snapshot is not None:
                timer = stored[2] if stored else None
                if timer is None:  # a pending timer re-arms itself while the key is in reach
                    timer = now + worker.horizons[group] + 1
                    self.handle.registerTimer(timer)
                self.state.update((snapshot, now, timer))
            elif stored:
                self.state.clear()  # a timer still pending finds nothing to do
            if out:
                yield pd.DataFrame(out, columns=columns)

        def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
            stored = self.state.get()
            if stored is not None:
                snapshot, now, _ = stored
                horizon = worker_for(self.spec).horizons[int(key[0].split("|", 1)[0])]
                if timerValues.getCurrentWatermarkInMs() > now + horizon:
                    self.state.clear()
                else:
                    timer = now + horizon + 1
                    self.handle.registerTimer(timer)
                    self.state.update((snapshot, now, timer))
            return iter([])

        def close(self) -> None:
            pass

    return TemporalProcessor
