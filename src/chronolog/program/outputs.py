"""What a program outputs, by kind (DESIGN.md section 3).

Every language's program returns outputs of one kind, in time order:

- ``GRAPHS``: :class:`GraphOutput`, an RDF graph with a time (DOTR DEFINE, CONSTRUCT,
  C-SPARQL's REGISTER STREAM), written as a TriG or JSON Lines stream;
- ``SOLUTIONS``: :class:`SolutionsOutput`, the SELECT solutions of one evaluation time
  (an event solution has an interval), written as JSON Lines
  ``{"time": T, "solutions": [{"x": "<http://ex/a>", "@start": 1, "@end": 3}]}``;
- ``ATOMS``: :class:`AtomsOutput`, the atoms holding at one time (LARS), written as
  ``{"time": T, "atoms": ["p(a,b)", "q"]}``.

Terms are ids of the program's :class:`~chronolog.terms.TermDictionary`; :func:`record`
turns an output into its text form, the one written to files and shipped between Spark
processes (whose dictionaries differ).
"""
from __future__ import annotations

import json
from typing import Mapping, NamedTuple, Union

from chronolog.formats import graph_text
from chronolog.terms import TermDictionary

GRAPHS, SOLUTIONS, ATOMS = "graphs", "solutions", "atoms"
OUTPUT_KINDS = (GRAPHS, SOLUTIONS, ATOMS)

Triple = tuple[int, int, int]


class GraphOutput(NamedTuple):
    """An RDF graph a rule or query built, at the time it was built."""

    time: int
    rule: str  # the rule or query that built it
    triples: tuple[Triple, ...]


class Solution(NamedTuple):
    """One solution: variable -> term id (unbound variables absent), and the interval of an
    event solution (both None for a plain one)."""

    bindings: Mapping[str, int]
    start: int | None = None
    end: int | None = None


class SolutionsOutput(NamedTuple):
    """The solutions of one query at one evaluation time (never empty)."""

    time: int
    query: str
    solutions: tuple[Solution, ...]


class AtomsOutput(NamedTuple):
    """The atoms that hold at one time point, as text (``p(a,b)``, ``q``)."""

    time: int
    atoms: tuple[str, ...]


Output = Union[GraphOutput, SolutionsOutput, AtomsOutput]


class ExplainedGraph(GraphOutput):
    """A ``GraphOutput`` that says why it holds: ``why``, its provenance record
    (docs/formats.md), made by a program compiled with ``Options.provenance``."""


class ExplainedSolutions(SolutionsOutput):
    """A ``SolutionsOutput`` that says why it holds (``why``, as ``ExplainedGraph``)."""


class ExplainedAtoms(AtomsOutput):
    """An ``AtomsOutput`` that says why it holds (``why``, as ``ExplainedGraph``)."""


def explained(output: Output, record: dict) -> Output:
    """``output`` with its provenance record (equal to ``output``: only what it carries differs)."""
    kind = ExplainedGraph if isinstance(output, GraphOutput) else \
        ExplainedSolutions if isinstance(output, SolutionsOutput) else ExplainedAtoms
    made = kind(*output)
    made.why = record  # type: ignore[attr-defined]
    return made


def explanation(output: Output) -> dict | None:
    """The provenance record of an output, when its program recorded one."""
    return getattr(output, "why", None)


def kind_of(output: Output) -> str:
    """The output kind of one output."""
    if isinstance(output, GraphOutput):
        return GRAPHS
    if isinstance(output, SolutionsOutput):
        return SOLUTIONS
    return ATOMS


def solution_record(solution: Solution, dictionary: TermDictionary) -> dict[str, object]:
    """A solution as the JSON object of the solution stream format."""
    text = dictionary.text
    record: dict[str, object] = {name: text(tid) for name, tid in solution.bindings.items() if tid is not None}
    if solution.start is not None:
        record["@start"] = solution.start
        record["@end"] = solution.end
    return record


def solution_text(solution: Solution, dictionary: TermDictionary) -> str:
    """A solution's JSON object as text."""
    return json.dumps(solution_record(solution, dictionary), ensure_ascii=False)


def render(output: Output, dictionary: TermDictionary) -> tuple[str, str | list[str]]:
    """An output as (its rule or query, its body as text): a graph as N-Triples, solutions
    as their JSON records, atoms as their texts. What crosses processes and feeds sinks."""
    if isinstance(output, GraphOutput):
        return output.rule, graph_text(output.triples, dictionary)
    if isinstance(output, SolutionsOutput):
        return output.query, [solution_text(s, dictionary) for s in output.solutions]
    return "", list(output.atoms)


def solutions_line(time: int, texts: list[str]) -> str:
    """One line of a solution stream (without its newline), from its solutions' JSON texts
    (as :func:`render` writes them): the text ``json.dumps`` makes of the whole line."""
    return f'{{"time": {time}, "solutions": [{", ".join(texts)}]}}'


def atoms_line(time: int, atoms: tuple[str, ...] | list[str]) -> str:
    """One line of an atom stream (without its newline)."""
    return json.dumps({"time": time, "atoms": list(atoms)}, ensure_ascii=False)
