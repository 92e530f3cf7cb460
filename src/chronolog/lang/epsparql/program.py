"""The compiled EP-SPARQL program (the program contract): one operator network per statement,
run one time point at a time.

At time T the elements' triples (closed under RDFS with the background, when asked) occur
over ``[T, T]``. The CONSTRUCT rules then run to their fixpoint within T: the triples they
derive occur over their solution's interval ``[start, T]`` and feed every statement again,
round after round until a round derives nothing new that a pattern could read (rounds are
inflationary: what a round derived stays). The last round's SELECT solutions are the output
at T (``"@start"``/``"@end"`` their interval); a file without SELECT outputs the derived
triples as an RDF stream. Only the last round changes state (stores, consumption).
"""
from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass

from pyoxigraph import BlankNode

from chronolog.errors import SourceMap
from chronolog.formats import parse_terms
from chronolog.lang.epsparql import network as N
from chronolog.lang.epsparql.lowering import SELECTIONS, Fresh, Lowering, order_by_text, template
from chronolog.lang.epsparql.syntax import Program as Tree
from chronolog.lang.epsparql.syntax import parse
from chronolog.program.contract import Inputs, Program, ProgramSpec, ProgramWarning
from chronolog.lang.epsparql.provenance import OccurrenceOrigins
from chronolog.program.outputs import GRAPHS, SOLUTIONS, GraphOutput, Output, Solution, SolutionsOutput, explained
from chronolog.terms import TermDictionary, Var
from chronolog.timeunits import unit_ms

Triple = tuple[int, int, int]


@dataclass
class Statement:
    name: str
    node: N.Node
    template: tuple[tuple, ...] | None  # CONSTRUCT: the template; SELECT: None
    projection: tuple[Var, ...]


class EpsparqlProgram(Program):
    """An EP-SPARQL program (see the module docstring)."""

    def __init__(self, spec: ProgramSpec, dictionary: TermDictionary | None = None) -> None:
        self.spec = spec
        self.dictionary = dictionary or TermDictionary()
        options = spec.options
        policy = options.policy or "unrestricted"
        if policy not in SELECTIONS:
            from chronolog.errors import ChronologError

            raise ChronologError(f"unknown policy {policy!r}: use {', '.join(SELECTIONS)}")
        self.policy = policy
        tree = parse(spec.text, spec.filename)
        source = SourceMap(spec.text, spec.filename)
        self.lowering = Lowering(self.dictionary, source, unit_ms(options.time_unit), policy)
        order = order_by_text(self.dictionary.decode)
        self.statements = [self._statement(s, i, order) for i, s in enumerate(tree.statements)]
        self.select = next((s for s in self.statements if s.template is None), None)
        self.rules = [s for s in self.statements if s.template is not None]
        self.stores = [store for s in self.statements for node in N.walk(s.node) for store in node.stores()]
        self.output_kind = SOLUTIONS if self.select is not None else GRAPHS
        self.reads_any = any(leaf.predicate is None for s in self.statements for leaf in self._leaves(s.node))
        self.read_predicates = {leaf.predicate for s in self.statements for leaf in self._leaves(s.node)}
        self.warnings = self._unbounded(tree, source)
        self.reasoner = None
        if options.background or options.rules:
            from chronolog.datalog import reasoner_for

            self.reasoner = reasoner_for(list(options.background), list(options.rules), self.dictionary,
                                         max_derived=options.max_derived)
        self.now: int | None = None
        self.explainer = OccurrenceOrigins(self) if options.provenance else None
        if self.explainer is not None:
            for statement in self.statements:
                N.explain(statement.node)

    def _statement(self, statement: object, index: int, order: N.KeyText) -> Statement:
        from chronolog.lang.epsparql.syntax import Construct

        node = self.lowering.pattern(statement.where, [], None, order)  # type: ignore[attr-defined]
        if isinstance(statement, Construct):
            return Statement(self.lowering.label("CONSTRUCT", statement.pos), node, template(statement, self.lowering), ())
        chosen = statement.variables  # type: ignore[attr-defined]
        projection = chosen if chosen is not None else tuple(sorted(v for v in node.variables if not v.startswith("_b_")))
        return Statement("select", node, None, projection)

    @staticmethod
    def _leaves(node: N.Node) -> list[N.Leaf]:
        return [n for n in N.walk(node) if isinstance(n, N.Leaf)]

    def _unbounded(self, tree: Tree, source: SourceMap) -> list[ProgramWarning]:
        found = []
        for statement in self.statements:
            for node in N.walk(statement.node):
                if isinstance(node, N.Binary) and any(s.max_duration is None for s in node.stores()):
                    where = node.label.rsplit(" at ", 1)[1]
                    line, column = (int(x) for x in where.split(":"))
                    side = {"AND": "both sides", "OPTIONAL": "its right side"}.get(node.op, "its left side")
                    found.append(ProgramWarning(source.filename, line, column,
                                                f"unbounded state: {node.op} keeps every solution of {side} "
                                                "(no FILTER on getDURATION() bounds it)"))
        return found

    def describe(self) -> list[str]:
        lines = [f"policy: {self.policy}"]
        for statement in self.statements:
            bounds = [f"{n.label} keeps solutions up to {n.max_duration} time units"
                      for n in N.walk(statement.node) if isinstance(n, N.Binary) and n.stores()
                      and all(s.max_duration is not None for s in n.stores())]
            lines.extend(f"{statement.name}: {b}" for b in bounds)
        lines.extend(str(w) for w in self.warnings)
        return lines

    def held(self) -> dict[str, int]:
        return {"partial solutions stored": sum(store.count for store in self.stores)}

    # -- running --
    def push(self, time: int, inputs: Inputs) -> list[Output]:
        triples = list(dict.fromkeys(t for elements in inputs.values() for e in elements for t in e))
        view = None
        if self.reasoner is not None:
            from chronolog.store import Layers

            view = self.reasoner.at(triples)
            triples = list(dict.fromkeys([*triples, *Layers([self.reasoner.overlay]).scan("triple")]))
        self.now = time
        occurrences: dict[int | None, list] = {}
        seen: set = set()
        for t in triples:
            occurrences.setdefault(t[1], []).append((t, time))
            seen.add((t, time))
        origins = None if self.explainer is None else self.explainer.occurrences(time, inputs, triples, view)
        derived: dict[str, dict[Triple, None]] = {s.name: {} for s in self.rules}
        made: dict[str, list[N.Sol]] = {}  # explaining: the solutions behind them
        while True:
            rnd = N.Round(time, occurrences, origins)
            fresh = False
            for rule in self.rules:
                for sol in rule.node.delta(rnd):
                    built = self._instantiate(rule, sol)
                    if built and origins is not None:
                        made.setdefault(rule.name, []).append(sol)
                        self.explainer.constructed(origins, rule.name, sol, built)  # type: ignore[union-attr]
                    for triple in built:
                        derived[rule.name][triple] = None
                        if (triple, sol.start) not in seen:
                            seen.add((triple, sol.start))
                            occurrences.setdefault(triple[1], []).append((triple, sol.start))
                            fresh = fresh or self.reads_any or triple[1] in self.read_predicates
            answers = self.select.node.delta(rnd) if self.select is not None else []
            if not fresh:
                break
        for commit in rnd.commits:
            commit()
        for store in self.stores:
            store.expire(time)
        if self.select is None:
            graphs: list[Output] = [GraphOutput(time, name, tuple(ts)) for name, ts in derived.items() if ts]
            if self.explainer is not None:
                graphs = [explained(g, self.explainer.record(time, g.rule, made[g.rule])) for g in graphs]  # type: ignore[arg-type]
            return graphs
        return self._solutions(time, answers)

    def _instantiate(self, rule: Statement, sol: N.Sol) -> list[Triple]:
        """The template's triples for one solution; none unless it binds every variable of
        the template (section 4.2). Its blank nodes are new to the solution, as SPARQL's
        CONSTRUCT makes them, and named after it (the rule, the label, the bindings and the
        interval), so that every runner names them alike and the same solution found again
        makes the same triples."""
        bindings = sol.bindings
        blanks: dict[str, int] = {}
        out = []
        for pattern in rule.template:  # type: ignore[union-attr]
            triple = []
            for t in pattern:
                if isinstance(t, Fresh):
                    if t not in blanks:
                        blanks[t] = self._blank(rule.name, t, sol)
                    triple.append(blanks[t])
                else:
                    value = bindings.get(t) if isinstance(t, Var) else t
                    if value is None:
                        return []
                    triple.append(value)
            out.append(tuple(triple))
        return out  # type: ignore[return-value]

    def _blank(self, rule: str, label: str, sol: N.Sol) -> int:
        decode = self.dictionary.decode
        text = "\n".join([rule, label, str(sol.start), str(sol.end),
                          *(f"{v}={decode(i)}" for v, i in sorted(sol.bindings.items()) if i is not None)])
        return self.dictionary.encode(BlankNode("b" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:24]))

    def _solutions(self, time: int, answers: list[N.Sol]) -> list[Output]:
        assert self.select is not None
        found: dict[tuple, Solution] = {}
        for sol in answers:
            bindings = {str(v): sol.bindings[v] for v in self.select.projection if sol.bindings.get(v) is not None}
            found.setdefault((frozenset(bindings.items()), sol.start, sol.end), Solution(bindings, sol.start, sol.end))
        if not found:
            return []
        ordered = list(found.values())
        if len(ordered) > 1:
            ordered.sort(key=lambda s: (s.start, sorted((k, self.term_text(v)) for k, v in s.bindings.items())))
        output = SolutionsOutput(time, "select", tuple(ordered))
        if self.explainer is None:
            return [output]
        behind: dict[tuple, N.Sol] = {}  # the first solution of the network behind each output solution
        projection = self.select.projection
        for sol in answers:
            bindings = {str(v): sol.bindings[v] for v in projection if sol.bindings.get(v) is not None}
            behind.setdefault((frozenset(bindings.items()), sol.start, sol.end), sol)
        sols = [behind[(frozenset(s.bindings.items()), s.start, s.end)] for s in ordered]
        return [explained(output, self.explainer.record(time, "select", sols, projection))]

    # -- state --

    def snapshot(self) -> bytes:
        text = self.term_text
        stores = [[({str(v): text(i) for v, i in sol.bindings.items()}, sol.start, sol.end, N.why_of(sol))
                   for sol in store.solutions()] for store in self.stores]
        return pickle.dumps({"now": self.now, "stores": stores}, protocol=5)

    def restore(self, data: bytes) -> None:
        state = pickle.loads(data)
        self.now = state["now"]
        encode = self.dictionary.encode
        for store, saved in zip(self.stores, state["stores"]):
            store.clear()
            texts = [text for bindings, *_ in saved for text in bindings.values()]
            terms = iter(encode(t) for t in parse_terms(texts))

            def solution(bindings: dict, start: int, end: int, why: tuple) -> N.Sol | N.Explained:
                values = {Var(v): next(terms) for v in bindings}
                return N.Explained(values, start, end, why) if why else N.Sol(values, start, end)

            store.add(solution(*saved_solution) for saved_solution in saved)
