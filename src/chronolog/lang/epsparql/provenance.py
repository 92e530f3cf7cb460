"""Why an EP-SPARQL output holds (``chronolog run --provenance``): each solution with the
triple occurrences its pattern combined, and where each came from: an input element, the
RDFS closure with the background (a rule over other triples), or a CONSTRUCT rule's
solution (the occurrences that one combined, in turn).

An occurrence is explained when it occurs (its time point's view is gone later); the
network carries the explanations of what each stored solution used (``network.explain``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from chronolog.lang.epsparql.network import why_of
from chronolog.provenance.facts import Derivations, asserted, element_sources, fact_text, input_origin
from chronolog.store import TRIPLE, Fact, Layers

if TYPE_CHECKING:
    from chronolog.lang.epsparql.network import Sol
    from chronolog.lang.epsparql.program import EpsparqlProgram

Occurrence = tuple[Fact, int]  # (triple, start)


class OccurrenceOrigins:
    """Explains one EP-SPARQL program's occurrences and builds its outputs' records."""

    def __init__(self, program: "EpsparqlProgram") -> None:
        self.program = program
        reasoner = program.reasoner
        self.derivations = None if reasoner is None else Derivations(reasoner.program, program.dictionary, asserted(
            program.spec.options.background, program.dictionary, reasoner.background_view))

    def occurrences(self, time: int, inputs: Mapping[str, Sequence[Sequence[Fact]]], triples: Sequence[Fact],
                    view: Layers | None) -> dict[Occurrence, dict]:
        """The explanation of each triple occurring at ``time``: an input's, or one the
        reasoning with the background derived (``view``: what held then)."""
        sources = element_sources(time, inputs)
        if view is None or self.derivations is None:
            dictionary = self.program.dictionary
            return {(t, time): input_origin(fact_text(TRIPLE, t, dictionary), sources[t]) for t in triples}
        facts = self.derivations.at(view, sources)
        return {(t, time): facts.explain(TRIPLE, t) for t in triples}

    def constructed(self, origins: dict[Occurrence, dict], rule: str, sol: "Sol", triples: Sequence[Fact]) -> None:
        """The triples a CONSTRUCT rule built from ``sol`` occur over its interval."""
        where = f"{self.program.spec.filename or '<program>'}: {rule}"
        for triple in triples:
            origins.setdefault((triple, sol.start), {
                "fact": fact_text(TRIPLE, triple, self.program.dictionary), "from": "rule", "rule": where,
                "premises": [w for w in why_of(sol) if w is not None]})

    def record(self, time: int, query: str, sols: Sequence["Sol"], projection: Sequence[str] | None = None) -> dict:
        """The record of one output: its solutions, each with what it used."""
        decode = self.program.dictionary.decode
        return {"time": time, "query": query, "at": self.program.spec.filename or "",
                "solutions": [{"bindings": {str(v): str(decode(i)) for v, i in s.bindings.items()
                                            if i is not None and (projection is None or v in projection)},
                               "start": s.start, "end": s.end,
                               "facts": [w for w in why_of(s) if w is not None]} for s in sols]}
