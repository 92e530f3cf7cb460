"""Why a window query's output holds (C-SPARQL, RSP-QL; ``chronolog run --provenance``):
for each solution, the facts its pattern matched in the windows' view, and where each
came from: a window item (the element of its stream that brought it, with its time), the
background, or a rule over other facts (the query's reasoning over the window).

An RSP-QL pattern inside ``WINDOW :w { }`` matches window ``:w``'s graph: each of its
facts is explained in that window's view; a static named graph's facts are background.
A DSTREAM output holds solutions that left the answer: what made them hold is gone.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from chronolog.provenance.facts import Derivations, FactOrigins, asserted, fact_text
from chronolog.provenance.solutions import Held, SolutionSupport
from chronolog.sparql.evaluate import QUAD
from chronolog.store import TRIPLE, Fact, Layers
from chronolog.window.r2s import DSTREAM

if TYPE_CHECKING:
    from chronolog.program.windowed import WindowedProgram, _Running

CONSTRUCT_SOLUTIONS = 100  # the solutions a CONSTRUCT or ASK output's record lists, at most


class WindowExplainer:
    """Builds the provenance records of one windowed program's outputs."""

    def __init__(self, program: "WindowedProgram") -> None:
        self.program = program
        self._support: dict[str, SolutionSupport] = {}
        base = program.base_reasoner
        self.derivations = Derivations(base.program, program.dictionary, asserted(
            program.spec.options.background, program.dictionary, base.background_view))

    def record(self, running: "_Running", time: int, rows: Sequence[tuple], names: Sequence[str],
               views: Mapping[str, Layers], view: Layers) -> dict:
        """The record of one evaluation's output: ``rows`` of the variables ``names`` (a
        SELECT), or the triples a CONSTRUCT built; ``views`` are the windows' views by
        graph (``""``: their union), ``view`` the one the query ran over."""
        query = running.query
        support = self._support.get(query.name)
        if support is None:
            extra = None if query.inline is None else query.inline.facts
            support = self._support[query.name] = SolutionSupport(query.query, extra)
        explain = self._explainer(running, views)
        record: dict = {"time": time, "query": query.name, "at": self.program.spec.filename or ""}
        if query.r2s is DSTREAM:
            record["note"] = "these solutions left the answer (DSTREAM): what made them hold is gone"
        text = self.program.term_text
        if query.query.form == "SELECT" and query.r2s is not DSTREAM:
            record["solutions"] = [
                {"bindings": {n: text(v) for n, v in zip(names, row) if v is not None},
                 "facts": [explain(fact) for fact in support.facts(view, time, dict(zip(names, row)))]}
                for row in rows]
        elif query.r2s is not DSTREAM:  # what a CONSTRUCT or an ASK was built from
            record["solutions"] = [{"bindings": {n: text(v) for n, v in bindings.items()},
                                    "facts": [explain(fact) for fact in facts]}
                                   for bindings, facts in support.matches(view, time, CONSTRUCT_SOLUTIONS)]
        else:
            record["solutions"] = [{"bindings": {n: text(v) for n, v in zip(names, row) if v is not None},
                                    "facts": []} for row in rows]
        return record

    def _explainer(self, running: "_Running", views: Mapping[str, Layers]) -> Callable[[Held], dict]:
        """How a fact of this evaluation is explained: in the view of the window it was
        matched in (a quad's graph), else in the union's."""
        program = self.program
        origins: dict[str, FactOrigins] = {}

        def of(graph: str) -> FactOrigins:
            """The facts of window ``graph``, of the union of the windows (``""``), or, over
            named windows, of the default graph: the background's."""
            found = origins.get(graph)
            if found is None:
                view, items = (views[graph], _items(running, graph)) if graph in views else \
                    (program.base_reasoner.background_view, {})
                found = origins[graph] = self.derivations.at(view, items)
            return found

        windows = {program.dictionary.iri(name): name for name in running.maintainers if name}

        def explain(fact: Held) -> dict:
            relation, values = fact
            if relation == TRIPLE:
                return of("").explain(TRIPLE, values)
            window = windows.get(values[0])
            if window is None:  # a static named graph (FROM NAMED)
                return {"fact": fact_text(QUAD, values, program.dictionary), "from": "background"}
            return {**of(window).explain(TRIPLE, values[1:]), "window": f"<{window}>"}

        return explain


def _items(running: "_Running", graph: str) -> dict[Fact, tuple[tuple[str, int], ...]]:
    """The triples in the windows of ``graph`` (``""``: all of them), each with the
    elements (stream, time) that brought it."""
    schedule = running.schedule
    found: dict[Fact, tuple[tuple[str, int], ...]] = {}
    for window, buffer in schedule.buffers.items():
        if graph and window != graph:
            continue
        stream = schedule.streams[window]
        for time, triple in list(buffer.items)[:buffer.inside]:
            known = found.get(triple, ())
            if (stream, time) not in known:
                found[triple] = (*known, (stream, time))
    return found
