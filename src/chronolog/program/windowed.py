"""The compiled program of the window languages (C-SPARQL, RSP-QL): continuous queries
evaluated over windows, with reasoning kept up to date as triples enter and leave.

Each :class:`ContinuousQuery` has named windows over named streams (a
:class:`chronolog.window.schedule.Schedule`), a SPARQL query prepared once, and a
relation-to-stream operator. At every evaluation instant the query runs over the
background closure plus, either (``named=False``, C-SPARQL) the union of its windows'
contents in the default graph with what the rules derive from it, or (``named=True``,
RSP-QL) each window's content and what the rules derive from it as the named graph of the
window's IRI (``WINDOW :w { P }`` is ``GRAPH :w { P }``), beside the query's static named
graphs (RSP-QL's ``FROM NAMED <g>``, read as they are). A query may hold solutions its
language computes itself from the windows' items at each instant (:class:`Inline`:
RSEP-QL's MATCH), filled in before it runs. The answer goes through the R2S operator:
SELECT and ASK give solutions (an ASK one solution binding ``ask`` to ``true``/``false``;
a solution that binds ``@start`` and ``@end`` carries them as its interval), CONSTRUCT
gives a graph.

On Spark the program runs under one key (:class:`~chronolog.program.contract.GlobalPlan`):
windows and their materialization are state that one instant's evaluation reads whole.
"""
from __future__ import annotations

import os
import pickle
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Collection, Mapping, Protocol
from urllib.parse import unquote, urlparse

from pyoxigraph import Literal, NamedNode

from chronolog.datalog.loading import reasoner_for
from chronolog.datalog.maintenance import Maintenance, MaintenanceError, maintenance
from chronolog.datalog.reasoner import Reasoner
from chronolog.errors import ChronologError
from chronolog.formats import load_graph
from chronolog.program.contract import Inputs, Program, ProgramSpec, ProgramWarning, rule_warnings
from chronolog.program.outputs import GRAPHS, SOLUTIONS, GraphOutput, Output, Solution, SolutionsOutput, explained
from chronolog.program.window_provenance import WindowExplainer
from chronolog.program.termtext import as_ids, as_text
from chronolog.sparql import PreparedQuery
from chronolog.sparql import algebra as A
from chronolog.sparql.evaluate import QUAD
from chronolog.sparql.maintained import MaintainedAnswer
from chronolog.store import TRIPLE, Database, Fact, Layers
from chronolog.terms import TermDictionary
from chronolog.window.buffer import WindowBuffer
from chronolog.window.r2s import R2S, relation_to_stream
from chronolog.window.report import ReportPolicy
from chronolog.window.schedule import Instant, Schedule
from chronolog.window.scope import TupleWindow, Window

XSD_BOOLEAN = NamedNode("http://www.w3.org/2001/XMLSchema#boolean")
XSD_INTEGER = NamedNode("http://www.w3.org/2001/XMLSchema#integer")
START, END = "@start", "@end"  # the variables of a solution's interval


class Inline(Protocol):
    """Solutions a language computes itself from the windows' items at each instant and
    puts into its query (RSEP-QL's MATCH, :mod:`chronolog.lang.rspql.mixed`); its state as
    text, for snapshots; with provenance, the window items behind a solution, as quads of
    their window."""

    def fill(self, time: int, buffers: Mapping[str, WindowBuffer]) -> None: ...

    def state(self) -> object: ...

    def set_state(self, state: object) -> None: ...

    def facts(self, solution: Mapping) -> list: ...


@dataclass
class ContinuousQuery:
    """One registered query, as a language lowered it."""

    name: str
    windows: Mapping[str, tuple[str, Window]]  # window name (IRI) -> (stream IRI, window)
    policy: ReportPolicy
    r2s: R2S
    query: PreparedQuery
    named: bool  # windows as named graphs (RSP-QL), else their union as the default graph
    graphs: Mapping[str, str] = field(default_factory=dict)  # static named graph IRI -> its file
    inline: Inline | None = None


def static_graph_file(iri: str, program: str | None, given: bool = False) -> str | None:
    """The file of a static graph named in a query (``FROM <iri>``): a file: IRI or a path,
    a relative one from the folder of the program's file; it must exist. Any other IRI
    (``http://...``) is not fetched: with ``given`` (the run has ``--background``) that
    data stands for it (None), else it is an error."""
    parsed = urlparse(iri)
    if parsed.scheme in ("", "file"):
        path = unquote(parsed.path)
        path = os.path.join(os.path.dirname(program), path) if program and not os.path.isabs(path) else path
        if not os.path.isfile(path):
            raise ChronologError(f"FROM <{iri}>: no such file {path!r}")
        return path
    if given:
        return None
    raise ChronologError(f"FROM <{iri}>: chronolog reads static graphs from files (file: IRIs); "
                         "give other background data with --background (it then stands for this graph)")


def with_static_background(spec: ProgramSpec, iris: tuple[str, ...]) -> ProgramSpec:
    """``spec`` with the files of a query's static default graphs (``FROM <iri>``) added to
    its background, where reasoning applies to them."""
    if not iris:
        return spec
    given = bool(spec.options.background)
    files = tuple(f for iri in iris if (f := static_graph_file(iri, spec.filename, given)) is not None)
    return replace(spec, options=replace(spec.options, background=spec.options.background + files))


class _Running:
    """A query's state: its schedule, one maintenance per graph, its previous answer."""

    def __init__(self, query: ContinuousQuery, maintainers: dict[str, Maintenance], maintain_answers: bool) -> None:
        self.query = query
        self.schedule = Schedule(query.windows, query.policy)
        self.maintainers = maintainers  # "" for the union, else per window
        self.static: Database | None = None  # the static named graphs, as quads
        self.counts: dict[str, Counter] = {name: Counter() for name in maintainers}
        self.previous: Counter = Counter()
        # the answer kept up to date from what enters and leaves the view, when the query
        # allows (else evaluated in full at each instant)
        self.maintained = MaintainedAnswer.of(query.query) if maintain_answers and query.inline is None else None
        self.held: dict[str, set] = {}  # per graph, what it held at the previous evaluation
        self.quads = Database()  # over named windows: each window's graph, kept up to date
        # solutions go out in the order of their terms' texts unless the query orders them:
        # the same whether the answer was kept or evaluated, whatever the term numbering
        self.canonical = query.query.form == "SELECT" and not any(
            isinstance(n, A.OrderBy) for n in query.query.query.walk())
        self.current = False  # whether ``maintained`` holds the answer at the previous evaluation


class WindowedProgram(Program):
    """Continuous queries over windows (see the module docstring)."""

    maintain_answers = True  # keep answers up to date from the view's changes where a query allows

    def __init__(self, spec: ProgramSpec, dictionary: TermDictionary | None = None) -> None:
        self.spec = spec
        self.dictionary = dictionary or TermDictionary()
        options = spec.options
        self.strategy = options.maintenance or "naive"
        self._base = reasoner_for(list(options.background), list(options.rules), self.dictionary,
                                  max_derived=options.max_derived)
        self.warnings: list[ProgramWarning] = rule_warnings(self._base.program)
        self._base_taken = False
        self.running: list[_Running] = []
        self.output_kind = SOLUTIONS
        self._evaluating: _Running | None = None  # the query being evaluated (for timestamp)
        self._times: dict[tuple[int, int, int], int] | None = None  # its window triples' latest times
        self.explainer = WindowExplainer(self) if options.provenance else None

    def _reasoner(self) -> Reasoner:
        """A reasoner over the one background closure (the first maintenance takes the one
        that computed it, the others adopt its closure)."""
        if not self._base_taken:
            self._base_taken = True
            return self._base
        reasoner = Reasoner(self._base.program, self.dictionary, self.spec.options.max_derived)
        reasoner.adopt_closure(self._base.lower, self._base.upper)
        return reasoner

    def register(self, query: ContinuousQuery) -> None:
        if self.strategy == "expiration" and any(isinstance(w, TupleWindow) for _, w in query.windows.values()):
            raise MaintenanceError("--maintenance expiration needs windows whose items leave at a known time: "
                                   "a tuple window ([TRIPLES n]) does not; use naive or dred")
        graphs = list(query.windows) if query.named else [""]
        running = _Running(query, {g: maintenance(self.strategy, self._reasoner()) for g in graphs},
                           self.maintain_answers)
        if query.graphs:
            running.static = Database()
            relation = running.static.relation(QUAD, 4)
            for iri, path in query.graphs.items():
                g = self.dictionary.iri(iri)
                relation.update((g,) + t for t in load_graph(path, self.dictionary))
        self.running.append(running)
        self.output_kind = GRAPHS if query.query.form in ("CONSTRUCT", "DESCRIBE") else SOLUTIONS

    @property
    def streams(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for r in self.running for s, _ in r.query.windows.values()))

    def push(self, time: int, inputs: Inputs) -> list[Output]:
        triples = {name: [t for element in elements for t in element] for name, elements in inputs.items()}
        out: list[Output] = []
        for running in self.running:
            out.extend(o for instant in running.schedule.push(time, triples) for o in self._evaluate(running, instant))
        return sorted(out, key=lambda o: o.time)

    def flush(self) -> list[Output]:
        out = [o for running in self.running for instant in running.schedule.flush()
               for o in self._evaluate(running, instant)]
        return sorted(out, key=lambda o: o.time)

    def held(self) -> dict[str, int]:
        return {"window items": sum(running.schedule.held() for running in self.running)}

    @property
    def base_reasoner(self) -> Reasoner:
        """The reasoner of the background closure every query's windows sit on (its
        program is every maintenance's)."""
        return self._base

    def timestamp(self, s: object, p: object, o: object) -> Literal | None:
        """The time of the most recent element that holds the triple ``(s, p, o)`` in the
        windows of the query being evaluated (C-SPARQL's ``timestamp``), None (an error)
        when no window holds it (a derived or background triple, say)."""
        running = self._evaluating
        if running is None:
            return None
        if self._times is None:
            self._times = {}
            for buffer in running.schedule.buffers.values():
                for time, triple in list(buffer.items)[:buffer.inside]:
                    if self._times.get(triple, time) <= time:
                        self._times[triple] = time
        ids = tuple(self.dictionary.lookup(t) for t in (s, p, o))  # type: ignore[arg-type]
        time = self._times.get(ids)  # type: ignore[arg-type]
        return None if time is None else Literal(str(time), datatype=XSD_INTEGER)

    def _evaluate(self, running: _Running, instant: Instant) -> list[Output]:
        query = running.query
        self._evaluating, self._times = running, None
        views = {}
        for graph, keeper in running.maintainers.items():
            entered: dict = {}
            left = []
            counts = running.counts[graph]
            for window, change in instant.changes.items():
                if graph and window != graph:
                    continue
                for triple, last in change.entered:
                    counts[triple] += 1
                    if entered.get(triple, last) <= last:  # the latest instant it may stay to
                        entered[triple] = last
                for triple in change.left:
                    counts[triple] -= 1
                    if not counts[triple]:
                        del counts[triple]
                        left.append(triple)
            views[graph] = keeper.update(instant.time, entered, [t for t in left if t not in entered])
        if not instant.evaluated:  # the windows changed at an instant the policy skips
            return []
        if query.inline is not None:
            query.inline.fill(instant.time, running.schedule.buffers)
        if query.named:
            view, entered, left = self._named_view(running)
            answer = self._answer(query.query, view) if running.maintained is None else \
                self._maintain(running, view, {QUAD: entered}, left)
        elif running.maintained is None:
            view = views[""]
            answer = self._answer(query.query, view)
        else:
            view = views[""]
            overlay = set(running.maintainers[""].overlay.triples)
            before = running.held.get("", set())
            running.held[""] = overlay
            answer = self._maintain(running, view, {TRIPLE: overlay - before}, before - overlay)
        rows = relation_to_stream(query.r2s, running.previous, answer)
        running.previous = answer
        if not rows:
            return []
        if running.canonical:
            rows.sort(key=self._row_key)  # type: ignore[arg-type]
        names = query.query.variables if query.query.form == "SELECT" else ["ask"]
        if self.output_kind == GRAPHS:
            output: Output = GraphOutput(instant.time, query.name, tuple(dict.fromkeys(rows)))  # type: ignore[arg-type]
        elif names[-2:] != [START, END]:
            output = SolutionsOutput(instant.time, query.name, tuple(
                Solution({n: v for n, v in zip(names, row) if v is not None}) for row in rows))  # type: ignore[arg-type]
        else:
            output = SolutionsOutput(instant.time, query.name, tuple(
                Solution({n: v for n, v in zip(names[:-2], row) if v is not None}, *map(self._time, row[-2:]))  # type: ignore[arg-type, index]
                for row in rows))
        if self.explainer is not None:
            output = explained(output, self.explainer.record(running, instant.time, rows, names, views, view))
        return [output]

    def _named_view(self, running: _Running) -> tuple[Layers, list[Fact], list[Fact]]:
        """The view of a query over named windows: the background, the static named
        graphs, and each window's graph (its content and what the rules derive from it)
        as quads, kept up to date from what changed in it; with the quads that entered
        and left since the previous evaluation."""
        relation = running.quads.relation(QUAD, 4)
        entered: list[Fact] = []
        left: list[Fact] = []
        for graph, keeper in running.maintainers.items():
            g = self.dictionary.iri(graph)
            now = set(running.counts[graph])
            now.update(keeper.overlay.triples)
            before = running.held.get(graph, set())
            running.held[graph] = now
            left.extend((g,) + t for t in before - now)
            entered.extend((g,) + t for t in now - before)
        for quad in left:
            relation.discard(quad)
        relation.update(entered)
        static = [running.static] if running.static is not None else []
        return Layers([self._base.lower, self._base.upper, *static, running.quads]), entered, left

    def _maintain(self, running: _Running, view: Layers, entered: dict[str, Collection[Fact]],
                  left: Collection[Fact]) -> Counter:
        """The query's answer from what entered and left the view since the previous
        evaluation (the background never changes); when most of it changed (a tumbling
        window), evaluating in full is cheaper, and the kept answer is rebuilt once the
        changes are small again."""
        kept = running.maintained
        assert kept is not None
        came = sum(map(len, entered.values()))
        now = sum(map(len, running.held.values()))
        before = now - came + len(left)
        if 2 * (came + len(left)) > now + before:
            running.current = False
            return self._answer(running.query.query, view)
        if not running.current:
            running.current = True
            return Counter(kept.start(view))
        return Counter(kept.update(view, entered, left))

    def _row_key(self, row: tuple) -> tuple[str, ...]:
        text = self.term_text
        return tuple(text(t) for t in row)

    def _time(self, term: int | None) -> int | None:
        return None if term is None else int(self.dictionary.decode(term).value)

    def _answer(self, query: PreparedQuery, view: Layers) -> Counter:
        encode = self.dictionary.encode
        result = query.execute(view)
        if query.form == "SELECT":
            return Counter(tuple(None if t is None else encode(t) for t in row) for row in result)
        if query.form == "ASK":
            return Counter([(encode(Literal("true" if bool(result) else "false", datatype=XSD_BOOLEAN)),)])
        return Counter(dict.fromkeys((tuple(encode(t) for t in triple) for triple in result), 1))

    # -- state, as text ------------------------------------------------------------------

    def snapshot(self) -> bytes:
        text = partial(as_text, self.dictionary)
        state = []
        for running in self.running:
            last, was_empty, buffers, origin = running.schedule.state()
            state.append((
                (last, was_empty, {n: ([(t, text(v)) for t, v in items], inside) for n, (items, inside) in buffers.items()},
                 origin),
                {g: (text(list(running.counts[g].elements())), [(text(t), last) for t, last in k.state().items()])
                 for g, k in running.maintainers.items()},
                [text(row) for row in running.previous.elements()],
                None if running.query.inline is None else running.query.inline.state(),
            ))
        return pickle.dumps(state, protocol=5)

    def restore(self, data: bytes) -> None:
        ids = partial(as_ids, self.dictionary)
        for running, (schedule, graphs, previous, inline) in zip(self.running, pickle.loads(data)):
            last, was_empty, buffers, origin = schedule
            running.schedule.set_state((last, was_empty, {n: ([(t, ids(v)) for t, v in items], inside)
                                                          for n, (items, inside) in buffers.items()}, origin))
            for graph, (counts, explicit) in graphs.items():
                running.counts[graph] = Counter(ids(counts))
                keeper = running.maintainers[graph]
                keeper.clear()
                if explicit:
                    keeper.update(min(last for _, last in explicit), {ids(t): last for t, last in explicit}, [])
            running.previous = Counter(ids(row) for row in previous)
            running.held, running.current = {}, False
            running.quads.relation(QUAD, 4).clear()
            if running.query.inline is not None:
                running.query.inline.set_state(inline)
