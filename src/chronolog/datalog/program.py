"""Lowering a parsed Datalog program onto the store: encoded atoms, safety, stratification.

Stratification is per rule: rule r depends on rule q when q's head unifies with one of r's
body atoms (constants must agree position by position); the strongly connected components
of that graph, in dependency order, are the strata, and a negated dependency inside a
component is negation through recursion, rejected with the place of the negated atom.

Termination: rules only recombine the terms they are given, except where arithmetic
computes a new one (``?y = ?x + 1``). A rule that puts a computed term in its head and
depends on itself can feed each new term back to its own body and derive without end:
:attr:`Program.unbounded` lists them (``chronolog check`` warns), and the reasoner stops
them at run time (``max_derived``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog.datalog.builtins import Evaluator, Expressions
from chronolog.datalog.syntax import AtomNode, BinaryNode, ExprNode, ProgramNode, RuleNode, TermNode, parse
from chronolog.errors import ChronologSyntaxError, SourceMap
from chronolog.joins import Arg, Assign, Filter, Pattern, Step
from chronolog.store import TRIPLE
from chronolog.terms import RDF, XSD, TermDictionary, Var

CONSTRAINT_PREFIX = "false:"


@dataclass(frozen=True)
class Place:
    """Where a rule was written, for messages."""

    filename: str | None
    line: int
    column: int
    text: str

    def __str__(self) -> str:
        return f"{self.filename or '<rules>'}:{self.line}:{self.column}"


@dataclass
class Rule:
    """One lowered rule. A constraint's head is the local relation ``false:<label>``."""

    index: int
    head: Pattern
    body: tuple[Step, ...]
    label: str | None
    place: Place
    negation_places: dict[int, Place] = field(default_factory=dict)  # body index -> place
    stratum: int = -1
    computed: tuple[tuple[str, Place], ...] = ()  # head variables computed by arithmetic, with their places
    recursive: bool = False  # depends on itself (set by stratify)

    @property
    def is_constraint(self) -> bool:
        return self.head.relation.startswith(CONSTRAINT_PREFIX)

    @property
    def name(self) -> str:
        """How messages call it: by its label when it has one."""
        return f"rule [{self.label}]" if self.label else "this rule"

    @property
    def positives(self) -> list[int]:
        return [i for i, s in enumerate(self.body) if isinstance(s, Pattern) and not s.negated]

    @property
    def negatives(self) -> list[Pattern]:
        return [s for s in self.body if isinstance(s, Pattern) and s.negated]

    def __str__(self) -> str:
        name = f"[{self.label}] " if self.label else ""
        return f"{name}rule at {self.place}: {self.place.text.strip()}"


@dataclass
class Program:
    """Rules and facts ready to evaluate, with strata in dependency order."""

    rules: list[Rule]
    facts: list[tuple[str, tuple[int, ...]]]
    arities: dict[str, int]
    strata: list[list[Rule]] = field(default_factory=list)
    nonmonotone: set[int] = field(default_factory=set)  # strata with negation or below one

    @property
    def unbounded(self) -> list[Rule]:
        """The rules that can create unboundedly many new terms: a head term computed by
        arithmetic, and a dependency on themselves that feeds it back to their body."""
        return [r for r in self.rules if r.computed and r.recursive]

    def warnings(self) -> list[tuple[Place, str]]:
        """What ``chronolog check`` reports about the rules: where each unbounded rule
        computes its new term, and why it may not end."""
        return [(place, f"{rule.name} may derive without end: its head's ?{name} is computed by arithmetic and the "
                        f"rule depends on itself, so each new value can make another (a run stops after max_derived "
                        f"facts of such rules per time point)")
                for rule in self.unbounded for name, place in rule.computed[:1]]


class _Lowering:
    def __init__(self, tree: ProgramNode, dictionary: TermDictionary, expressions: Expressions,
                 arities: dict[str, int]) -> None:
        self.tree = tree
        self.dictionary = dictionary
        self.expressions = expressions
        self.arities = arities
        self.rdf_type = dictionary.iri(RDF + "type")
        self.map = SourceMap(tree.source, tree.filename)

    def error(self, message: str, pos: int) -> ChronologSyntaxError:
        return self.map.error(message, pos)

    def place(self, pos: int) -> Place:
        line, column, text = self.map.position(pos)
        return Place(self.tree.filename, line, column, text)

    def constant(self, node: TermNode) -> int:
        try:
            return self.dictionary.encode(self._term(node))
        except ValueError as error:  # pyoxigraph refuses an IRI, language tag or label
            raise self.error(f"invalid {node.kind} {node.value!r}: {error}", node.pos) from None

    def _term(self, node: TermNode) -> NamedNode | BlankNode | Literal:
        if node.kind == "iri":
            return NamedNode(node.value)
        if node.kind == "bnode":
            return BlankNode(f"{id(self.tree):x}_{node.value}")
        if node.kind == "boolean":
            return Literal(node.value, datatype=NamedNode(XSD + "boolean"))
        if node.kind == "number":
            text = node.value
            if "e" in text.lower():
                dtype = "double"
            elif "." in text:
                dtype = "decimal"
            else:
                dtype = "integer"
            return Literal(text.lstrip("+"), datatype=NamedNode(XSD + dtype))
        if node.kind == "literal":
            if node.lang:
                return Literal(node.value, language=node.lang)
            if node.datatype is not None:
                return Literal(node.value, datatype=NamedNode(node.datatype.value))
            return Literal(node.value)
        raise self.error(f"'{node.value}' is not a term here (a variable, IRI or literal was expected)", node.pos)

    def arg(self, node: TermNode) -> Arg:
        if node.kind == "var":
            return Var(node.value)
        return self.constant(node)

    def atom(self, node: AtomNode) -> Pattern:
        pred = node.predicate
        args = [self.arg(a) for a in node.args]
        if pred.kind == "name":
            name = pred.value
            if name in ("not", "false", "true"):
                raise self.error(f"'{name}' cannot be a predicate", pred.pos)
            if name == TRIPLE and len(args) != 3:
                raise self.error(f"triple(...) takes 3 arguments (subject, predicate, object), got {len(args)}", node.pos)
            known = self.arities.setdefault(name, len(args))
            if known != len(args):
                raise self.error(f"relation '{name}' is used with {len(args)} arguments here and {known} elsewhere", node.pos)
            return Pattern(name, tuple(args), node.negated)
        iri = self.constant(pred)
        if len(args) == 1:
            return Pattern(TRIPLE, (args[0], self.rdf_type, iri), node.negated)
        if len(args) == 2:
            return Pattern(TRIPLE, (args[0], iri, args[1]), node.negated)
        raise self.error(
            f"an IRI predicate takes 1 argument (a class) or 2 (a property), got {len(args)}; "
            "use triple(?s, ?p, ?o) or a local relation for other arities", node.pos)

    def expression(self, node: ExprNode, vars_: list[Var]) -> Evaluator:
        if isinstance(node, TermNode):
            if node.kind == "var":
                v = Var(node.value)
                if v not in vars_:
                    vars_.append(v)
                return self.expressions.variable(vars_.index(v))
            return self.expressions.constant(self.constant(node))
        if node.op in ("=", "!=", "<", "<=", ">", ">="):
            raise self.error("comparisons cannot be nested", node.pos)
        left = self.expression(node.left, vars_)
        right = None if node.right is None else self.expression(node.right, vars_)
        return self.expressions.binary(node.op, left, right)

    def rule(self, index: int, node: RuleNode) -> Rule:
        positive_vars: set[Var] = set()
        for lit in node.body:
            if isinstance(lit, AtomNode) and not lit.negated:
                positive_vars |= {Var(a.value) for a in lit.args if a.kind == "var"}
        body: list[Step] = []
        negation_places: dict[int, Place] = {}
        bound = set(positive_vars)
        pending_assign: list[tuple[BinaryNode, Var]] = []
        computed: dict[Var, int] = {}  # variables arithmetic computes -> where
        for lit in node.body:
            if isinstance(lit, AtomNode):
                if lit.negated:
                    negation_places[len(body)] = self.place(lit.pos)
                body.append(self.atom(lit))
                continue
            target = lit.left
            if (lit.op == "=" and isinstance(target, TermNode) and target.kind == "var"
                    and Var(target.value) not in positive_vars):
                pending_assign.append((lit, Var(target.value)))
                if isinstance(lit.right, BinaryNode):
                    computed.setdefault(Var(target.value), target.pos)
                continue
            vars_: list[Var] = []
            left = self.expression(lit.left, vars_)
            right = self.expression(lit.right, vars_)  # type: ignore[arg-type]
            body.append(Filter(tuple(vars_), self.expressions.test(lit.op, left, right)))
        # assignments in an order where each one's inputs are bound
        while pending_assign:
            for k, (lit, var) in enumerate(pending_assign):
                vars_ = []
                expr = self.expression(lit.right, vars_)  # type: ignore[arg-type]
                if set(vars_) <= bound:
                    body.append(Assign(var, tuple(vars_), self.expressions.assign(expr)))
                    bound.add(var)
                    del pending_assign[k]
                    break
            else:
                lit, var = pending_assign[0]
                missing = self._first_unbound(lit.right, bound)  # type: ignore[arg-type]
                raise self.error(f"unsafe rule: variable ?{missing.value} in this assignment is not bound by a positive atom",
                                 missing.pos)
        for lit in node.body:
            if isinstance(lit, BinaryNode):
                missing = self._first_unbound(lit, bound)
                if missing is not None:
                    raise self.error(f"unsafe rule: variable ?{missing.value} is not bound by a positive atom", missing.pos)
            elif isinstance(lit, AtomNode) and lit.negated:
                for a in lit.args:
                    if a.kind == "var" and Var(a.value) not in bound:
                        raise self.error(f"unsafe rule: variable ?{a.value} of a negated atom is not bound by a positive atom", a.pos)
        if node.head is None:
            label = node.label or f"constraint-{index}"
            outs = tuple(sorted(positive_vars))
            head = Pattern(CONSTRAINT_PREFIX + label, outs)
            self.arities[head.relation] = len(outs)
        else:
            head = self.atom(node.head)
            if node.head.negated:
                raise self.error("a rule head cannot be negated", node.head.pos)
            for argnode in node.head.args:
                if argnode.kind == "bnode" and node.body:
                    raise self.error("blank nodes are not allowed in rule heads", argnode.pos)
                if argnode.kind == "var" and Var(argnode.value) not in bound:
                    raise self.error(f"unsafe rule: head variable ?{argnode.value} is not bound in the body", argnode.pos)
        for lit in node.body:
            if isinstance(lit, AtomNode):
                for a in lit.args:
                    if a.kind == "bnode":
                        raise self.error("blank nodes are not allowed in rule bodies; use a variable", a.pos)
        made = tuple((a.value, self.place(computed[Var(a.value)])) for a in node.head.args
                     if a.kind == "var" and Var(a.value) in computed) if node.head is not None else ()
        return Rule(index, head, tuple(body), node.label, self.place(node.pos), negation_places, computed=made)

    def _first_unbound(self, node: ExprNode, bound: set[Var]) -> TermNode | None:
        if isinstance(node, TermNode):
            return node if node.kind == "var" and Var(node.value) not in bound else None
        for child in (node.left, node.right):
            if child is not None:
                found = self._first_unbound(child, bound)
                if found is not None:
                    return found
        return None


def _unifies(head: Pattern, atom: Pattern) -> bool:
    if head.relation != atom.relation:
        return False
    for a, b in zip(head.args, atom.args):
        if not isinstance(a, Var) and not isinstance(b, Var) and a != b:
            return False
    return True


def _key(p: Pattern) -> tuple[str, int | None]:
    """A bucket for unification candidates: the relation and its constant predicate."""
    if p.relation == TRIPLE:
        pred = p.args[1]
        return (TRIPLE, None if isinstance(pred, Var) else pred)
    return (p.relation, None)


def stratify(rules: list[Rule]) -> list[list[Rule]]:
    """Strata in dependency order; raises on negation through recursion."""
    body_index: dict[tuple[str, int | None], list[tuple[Rule, Pattern]]] = {}
    for r in rules:
        for step in r.body:
            if isinstance(step, Pattern):
                body_index.setdefault(_key(step), []).append((r, step))
    succ: dict[int, list[tuple[int, bool, Pattern]]] = {r.index: [] for r in rules}
    for q in rules:
        rel, pred = _key(q.head)
        candidates: Iterable[tuple[Rule, Pattern]]
        if rel == TRIPLE and pred is None:
            candidates = [x for k, lst in body_index.items() if k[0] == TRIPLE for x in lst]
        else:
            candidates = body_index.get((rel, pred), []) + (body_index.get((rel, None), []) if pred is not None else [])
        for r, atom in candidates:
            if _unifies(q.head, atom):
                succ[q.index].append((r.index, atom.negated, atom))
    components = _tarjan([r.index for r in rules], {k: [t for t, _, _ in v] for k, v in succ.items()})
    by_index = {r.index: r for r in rules}
    strata: list[list[Rule]] = []
    component_of: dict[int, int] = {}
    for n, comp in enumerate(reversed(components)):
        for i in comp:
            component_of[i] = n
        strata.append(sorted((by_index[i] for i in comp), key=lambda r: r.index))
    for q, edges in succ.items():
        for r, negated, atom in edges:
            if negated and component_of[q] == component_of[r]:
                rule = by_index[r]
                place = next(p for i, p in rule.negation_places.items() if rule.body[i] is atom)
                via = "itself" if q == r else str(by_index[q])
                raise ChronologSyntaxError(
                    f"negation through recursion: this negated atom depends on the rule it is in, via {via}",
                    place.filename, place.line, place.column, place.text)
    for n, stratum in enumerate(strata):
        for r in stratum:
            r.stratum = n
            r.recursive = len(stratum) > 1 or any(t == r.index for t, _, _ in succ[r.index])
    return strata


def _tarjan(nodes: list[int], succ: dict[int, list[int]]) -> list[list[int]]:
    """Strongly connected components, each emitted after every component it reaches."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            children = succ[node]
            if i < len(children):
                work.append((node, i + 1))
                child = children[i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def _nonmonotone(strata: list[list[Rule]]) -> set[int]:
    """Strata with a negated atom, and every stratum that depends on one."""
    bad: set[int] = set()
    heads_of: dict[int, list[Pattern]] = {}
    for n, stratum in enumerate(strata):
        heads_of[n] = [r.head for r in stratum]
        if any(r.negatives for r in stratum):
            bad.add(n)
            continue
        for r in stratum:
            if any(isinstance(s, Pattern) and _unifies(h, s) for m in bad for h in heads_of[m] for s in r.body):
                bad.add(n)
                break
    return bad


def load_program(sources: Sequence[tuple[str, str | None]], dictionary: TermDictionary) -> Program:
    """Parse, lower, check and stratify rule texts ``(text, filename)`` into one program."""
    expressions = Expressions(dictionary)
    arities: dict[str, int] = {TRIPLE: 3}
    rules: list[Rule] = []
    facts: list[tuple[str, tuple[int, ...]]] = []
    for text, filename in sources:
        tree = parse(text, filename)
        lowering = _Lowering(tree, dictionary, expressions, arities)
        for node in tree.rules:
            rule = lowering.rule(len(rules), node)
            if not rule.body:
                facts.append((rule.head.relation, tuple(a for a in rule.head.args)))  # type: ignore[misc]
            else:
                rules.append(rule)
    for n, r in enumerate(rules):
        r.index = n
    strata = stratify(rules)
    return Program(rules, facts, arities, strata, _nonmonotone(strata))
