"""A naive end-to-end DOTR evaluator, written from the definitions, for differential tests.

Programs are plain data (``Program``, ``EventQuery``, ``RuleSpec``...) that ``render``
turns into DOTR text for the engine; the reference never reads that text. At each time
point t, from scratch:

1. the enriched knowledge is the perfect model of background ∪ the triples of t under
   the Datalog rules (``reference.datalog.perfect_model``, naive fixpoint);
2. an EVENT query's events at t are its solutions over the enriched knowledge that are
   not solutions over the background closure alone (DOTR's delta semantics: facts that
   hold anyway are not events). Solutions are computed over *all* the query's variables by
   a naive join of the triple patterns (FILTERs by SPARQL 1.1 section 17; no RDF store,
   since a Datalog model may give a triple a literal subject), subtracted as sets, and only
   then projected (a projection keeps its multiplicity, as SELECT without DISTINCT does);
3. the events are pushed, one by one, into the naive TESLA evaluator
   (``reference.tesla.ReferenceTesla``) with rules built here from the specs: a WHERE
   condition constrains the latest-bound event it mentions (a negated event if it mentions
   one), so parameters decide which events qualify *before* last/first select; conditions
   with an aggregate are checked on the whole combination;
4. every detection becomes its rule's DEFINE template, instantiated: WITH variables take
   the event's terms (aggregates become canonical literals), every other variable and
   every blank node a fresh term per firing (``urn:chronolog:ref:...``); a triple with an
   unbound term, a literal subject or a non-IRI predicate is left out, as in CONSTRUCT;
5. the detection of a rule with FEEDBACK (delay d) at t is an input graph at t + d: the
   triples of t + d are those of the stream's elements at t + d and of every graph fed
   back to t + d. Time points are processed in time order, a time point with only
   fed-back graphs included (``advance``, ``drain``).

The order of the events of one time point is not defined by DOTR (it is the order in
which SPARQL returns solutions); it decides ties between equal times (``last`` prefers the
later arrival) and which firing consumes first. ``run`` takes it from an ``order``
callback (the differential test passes the order the engine used, after checking that the
engine's events are the reference's as a multiset); by default events come in program
order, rows sorted.

Outputs compare with ``canonical``: per graph, fresh terms (``urn:chronolog:`` IRIs and
blank nodes) are renamed canonically, numeric literals compared by datatype and value.
"""
from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import pyoxigraph as ox

from chronolog.cep import (
    Aggregate,
    AggValue,
    Attr,
    Between,
    Compare,
    Const,
    Event,
    Negation,
    Predicate,
    Rule,
    Terminator,
    Within,
    consuming,
    each_,
    first,
    last,
    no_consumption,
)
from reference.datalog import perfect_model
from reference.tesla import ReferenceTesla

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
FRESH = "urn:chronolog:"

Term = ox.NamedNode | ox.Literal | ox.BlankNode
Triple = tuple[Term, Term, Term]


# -- programs as data ----------------------------------------------------------------------

@dataclass(frozen=True)
class EventQuery:
    """``EVENT name AS SELECT select WHERE { patterns FILTER(var op number) ... }``.

    Pattern positions are SPARQL text: ``?var``, ``<iri>``, ``:local`` or a literal."""

    name: str
    select: tuple[str, ...]  # variable names without '?'
    patterns: tuple[tuple[str, str, str], ...]
    filters: tuple[tuple[str, str, int], ...] = ()  # (variable, operator, integer)

    def where(self) -> str:
        body = " . ".join(" ".join(p) for p in self.patterns)
        filters = "".join(f" FILTER(?{v} {op} {k})" for v, op, k in self.filters)
        return f"{{ {body}{filters} }}"

    def variables(self) -> tuple[str, ...]:
        return tuple(sorted({x[1:] for p in self.patterns for x in p if x.startswith("?")}))


@dataclass(frozen=True)
class Ref:
    alias: str
    attribute: str


@dataclass(frozen=True)
class Agg:
    """``FUNC(type.attribute WITHIN within FROM of WHERE ...)`` (or BETWEEN a AND b);
    ``where`` refers to the aggregated event by its type name."""

    func: str
    type: str
    attribute: str | None  # None: COUNT(type)
    within: int | None
    of: str | None
    between: tuple[str, str] | None = None
    where: tuple[Cond, ...] = ()


Operand = Ref | Agg | int | str  # str: an IRI constant such as ':roomA'


@dataclass(frozen=True)
class Cond:
    left: Operand
    op: str  # = != < <= > >=
    right: Operand


@dataclass(frozen=True)
class Item:
    """One pattern item: the terminator (selection None), a predicate (each/last/first,
    n-th) or a negation (selection 'not'); ``within``/``of`` or ``between`` is its scope."""

    type: str
    alias: str
    selection: str | None = None
    n: int = 1
    within: int | None = None
    of: str | None = None
    between: tuple[str, str] | None = None


@dataclass(frozen=True)
class RuleSpec:
    name: str  # local name: the rule IRI is EX + name, its event type is name
    template: tuple[tuple[str, str, str], ...]  # SPARQL terms: ?var, _:label, <iri>, :local, literal
    pattern: tuple[Item, ...]
    where: tuple[Cond, ...] = ()
    bindings: tuple[tuple[str, Operand], ...] = ()  # WITH ?var = operand
    consuming: tuple[str, ...] = ()
    feedback: int | None = None  # FEEDBACK AFTER this many time units


@dataclass(frozen=True)
class Program:
    events: tuple[EventQuery, ...]
    rules: tuple[RuleSpec, ...]


# -- rendering -------------------------------------------------------------------------------

def _operand(op: Operand) -> str:
    if isinstance(op, Ref):
        return f"{op.alias}.{op.attribute}"
    if isinstance(op, Agg):
        target = op.type if op.attribute is None else f"{op.type}.{op.attribute}"
        scope = f"BETWEEN {op.between[0]} AND {op.between[1]}" if op.between else f"WITHIN {op.within} ms FROM {op.of}"
        where = (" WHERE " + " AND ".join(_cond(c) for c in op.where)) if op.where else ""
        return f"{op.func.upper()}({target} {scope}{where})"
    return str(op)


def _cond(c: Cond) -> str:
    return f"{_operand(c.left)} {c.op} {_operand(c.right)}"


def render(program: Program) -> str:
    """The program as DOTR text."""
    lines = [f"PREFIX : <{EX}>", "# generated by tests/reference/dotr.py"]
    for q in program.events:
        lines.append(f"EVENT {q.name} AS SELECT {' '.join('?' + v for v in q.select)} WHERE {q.where()}")
    for r in program.rules:
        lines.append(f"RULE :{r.name}")
        lines.append("  DEFINE { " + " . ".join(" ".join(t) for t in r.template) + " . }")
        parts = []
        for i, item in enumerate(r.pattern):
            alias = f" AS {item.alias}" if item.alias != item.type else ""
            if i == 0:
                parts.append(f"{item.type}{alias}")
                continue
            scope = (f"BETWEEN {item.between[0]} AND {item.between[1]}" if item.between
                     else f"WITHIN {item.within} ms FROM {item.of}")
            if item.selection == "not":
                head = "NOT "
            else:
                head = item.selection.upper() + (f" {item.n}" if item.n != 1 else "") + " "
            parts.append(f"{head}{item.type}{alias} {scope}")
        lines.append("  FROM " + " AND ".join(parts))
        if r.where:
            lines.append("  WHERE " + " AND ".join(_cond(c) for c in r.where))
        if r.bindings:
            lines.append("  WITH " + ", ".join(f"?{v} = {_operand(o)}" for v, o in r.bindings))
        if r.consuming:
            lines.append("  CONSUMING " + ", ".join(r.consuming))
        if r.feedback is not None:
            lines.append("  FEEDBACK" if r.feedback == 1 else f"  FEEDBACK AFTER {r.feedback} ms")
    return "\n".join(lines) + "\n"


# -- terms -----------------------------------------------------------------------------------

class Node:
    """An attribute value with no order (an IRI, a blank node, a non-numeric literal): equal
    to itself only."""

    __slots__ = ("term",)

    def __init__(self, term: Term) -> None:
        self.term = term

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other.term == self.term

    def __hash__(self) -> int:
        return hash(self.term)


def decode(term: object) -> object:
    """How the reference reads an event attribute: numbers, strings and booleans by value."""
    if not isinstance(term, ox.Literal):
        return Node(term) if isinstance(term, (ox.NamedNode, ox.BlankNode)) else term
    dt = term.datatype.value
    try:
        if dt in (XSD + "integer", XSD + "int", XSD + "long"):
            return int(term.value)
        if dt == XSD + "decimal":
            return Decimal(term.value)
        if dt in (XSD + "double", XSD + "float"):
            return float(term.value)
        if dt == XSD + "boolean":
            return term.value in ("true", "1")
        if dt == XSD + "string":
            return term.value
    except ValueError:
        pass
    return Node(term)


def literal(value: object) -> ox.Literal:
    """The literal an aggregate's value becomes in an output graph."""
    if isinstance(value, bool):
        return ox.Literal("true" if value else "false", datatype=ox.NamedNode(XSD + "boolean"))
    if isinstance(value, int):
        return ox.Literal(str(value), datatype=ox.NamedNode(XSD + "integer"))
    if isinstance(value, Decimal):  # the canonical form: no exponent, no trailing zeros, one digit after '.'
        text = format(value.normalize() if value else Decimal(0), "f")
        return ox.Literal(text if "." in text else text + ".0", datatype=ox.NamedNode(XSD + "decimal"))
    if isinstance(value, float):
        return ox.Literal(repr(value), datatype=ox.NamedNode(XSD + "double"))
    raise TypeError(f"no literal for {value!r}")


def key(term: Term) -> str:
    """The string form used by ``reference.datalog``: local names for EX IRIs, else N-Triples."""
    if isinstance(term, ox.NamedNode) and term.value.startswith(EX):
        return term.value[len(EX):]
    return str(term)


# -- the naive evaluator ---------------------------------------------------------------------

_CMP = {"=": "==", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def tesla_rules(program: Program) -> list[Rule]:
    """The TESLA rules of a program, built from the specs (not from the engine's lowering)."""
    out = []
    for spec in program.rules:
        roles = {it.alias: ("negation" if it.selection == "not" else "bound", i) for i, it in enumerate(spec.pattern)}
        aggregates: list[Aggregate] = []

        def term(op: Operand, agg: tuple[str, str] | None = None, aggregates: list[Aggregate] = aggregates):
            if isinstance(op, Ref):
                if agg is not None and op.alias == agg[0]:
                    return Attr(agg[1], op.attribute)
                return Attr(op.alias, op.attribute)
            if isinstance(op, Agg):
                name = f"g{len(aggregates)}"
                scope = Between(*op.between) if op.between else Within(op.within, op.of)
                where = tuple(Compare(term(c.left, (op.type, name)), _CMP[c.op], term(c.right, (op.type, name)))
                              for c in op.where)
                aggregates.append(Aggregate(name, op.func, op.type, op.attribute, scope, where))
                return AggValue(name)
            return Const(_parse_term(op) if isinstance(op, str) else op)

        placed: dict[str, list[Compare]] = {it.alias: [] for it in spec.pattern}
        rule_where = []
        for c in spec.where:
            compare = Compare(term(c.left), _CMP[c.op], term(c.right))
            refs = [o.alias for o in (c.left, c.right) if isinstance(o, Ref)]
            if not refs or any(isinstance(o, Agg) for o in (c.left, c.right)):
                rule_where.append(compare)
                continue
            negated = [a for a in refs if roles[a][0] == "negation"]
            placed[negated[0] if negated else max(refs, key=lambda a: roles[a][1])].append(compare)
        head, *rest = spec.pattern
        predicates, negations = [], []
        for it in rest:
            scope = Between(*it.between) if it.between else Within(it.within, it.of)
            if it.selection == "not":
                negations.append(Negation(it.alias, it.type, scope, placed[it.alias]))
            else:
                sel = each_() if it.selection == "each" else (last if it.selection == "last" else first)(it.n)
                predicates.append(Predicate(it.alias, it.type, sel, scope, placed[it.alias]))
        outputs = [(var, term(op)) for var, op in spec.bindings]
        out.append(Rule(
            name=EX + spec.name, emits=spec.name,
            terminator=Terminator(head.alias, head.type, placed[head.alias]),
            predicates=predicates, negations=negations, aggregates=aggregates, where=rule_where,
            outputs=outputs, consuming=consuming(*spec.consuming) if spec.consuming else no_consumption()))
    return out


def _parse_term(text: str) -> Term:
    """A template constant in SPARQL syntax (the forms ``render`` writes)."""
    if text == "a":
        return ox.NamedNode(RDF_TYPE)
    if text.startswith("<"):
        return ox.NamedNode(text[1:-1])
    if text.startswith(":"):
        return ox.NamedNode(EX + text[1:])
    if text.startswith('"'):
        return ox.Literal(text[1:-1])
    if text in ("true", "false"):
        return ox.Literal(text, datatype=ox.NamedNode(XSD + "boolean"))
    return ox.Literal(text, datatype=ox.NamedNode(XSD + ("decimal" if "." in text else "integer")))


def solutions(query: EventQuery, triples: set[Triple]) -> set[tuple[Term | None, ...]]:
    """Every solution of the query's pattern (all its variables, sorted), matched naively
    over ``triples``: a Datalog model may hold triples with a literal subject, which no RDF
    store takes."""
    rows: list[dict[str, Term]] = [{}]
    for pattern in query.patterns:
        rows = [bound for row in rows for t in triples if (bound := _unify(pattern, t, row)) is not None]
    names = query.variables()
    return {tuple(row[v] for v in names) for row in rows
            if all(_holds(row[v], op, k) for v, op, k in query.filters)}


def _unify(pattern: tuple[str, str, str], triple: Triple, row: dict[str, Term]) -> dict[str, Term] | None:
    """``row`` extended so that ``pattern`` matches ``triple``, or None."""
    bound = dict(row)
    for text, term in zip(pattern, triple):
        if not text.startswith("?"):
            if _parse_term(text) != term:
                return None
        elif bound.setdefault(text[1:], term) != term:
            return None
    return bound


_NUMERIC = {XSD + d for d in ("integer", "decimal", "int", "long", "short", "byte", "nonNegativeInteger")}


def _holds(term: Term, op: str, k: int) -> bool:
    """``FILTER(term op k)`` by SPARQL 1.1 section 17: numbers compare by value; any other
    term is an error for the ordering operators and for two literals, and RDFterm-equal
    tells an IRI or blank node apart from the number."""
    if isinstance(term, ox.Literal) and term.datatype.value in _NUMERIC:
        return _CMP_VALUE[op](Decimal(term.value), k)
    if isinstance(term, ox.Literal) or op not in ("=", "!="):
        return False
    return op == "!="


_CMP_VALUE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
              ">=": operator.ge}


@dataclass
class Detection:
    time: int
    rule: str  # the rule IRI
    triples: frozenset[Triple]


@dataclass
class Step:
    time: int
    events: list[Event]  # in the order they were pushed
    detections: list[Detection] = field(default_factory=list)


class ReferenceDotr:
    """Push time points; each push recomputes everything at that time point from scratch."""

    def __init__(self, program: Program, background: Sequence[Triple], strata: list = ()) -> None:
        self.program = program
        self.strata = list(strata)
        self.terms: dict[str, Term] = {}
        self.background_facts = list(background)  # the enriched model is recomputed from these, not the closure
        self.background = self._model(background)
        self.background_solutions = {q.name: solutions(q, self.background) for q in program.events}
        self.tesla = ReferenceTesla(tesla_rules(program), decode)
        self.templates = {EX + r.name: r for r in program.rules}
        self.fired = 0
        self.pending: dict[int, set[Triple]] = {}  # time -> triples fed back to it

    def _model(self, triples: Sequence[Triple]) -> set[Triple]:
        facts = set()
        for t in triples:
            k = tuple(key(x) for x in t)
            for x, kx in zip(t, k):
                self.terms[kx] = x
            facts.add(k)
        model = perfect_model(facts, self.strata)
        return {tuple(self.terms[x] if x in self.terms else ox.NamedNode(EX + x) for x in f) for f in model}

    def events(self, time: int, triples: Sequence[Triple]) -> list[Event]:
        """The events of every EVENT query at this time point, program order, rows sorted."""
        enriched = self._model(self.background_facts + list(triples))
        out = []
        for q in self.program.events:
            names = q.variables()
            new = solutions(q, enriched) - self.background_solutions[q.name]
            rows = [tuple(sol[names.index(v)] for v in q.select) for sol in new]
            out.extend(Event(q.name, time, time, dict(zip(q.select, row))) for row in sorted(rows, key=str))
        return out

    def push(self, time: int, triples: Sequence[Triple],
             order: Callable[[int, list[Event]], list[Event]] | None = None) -> Step:
        """One time point: the stream's triples at ``time`` and those fed back to it."""
        triples = list(triples) + sorted(self.pending.pop(time, ()), key=str)
        events = self.events(time, triples)
        if order is not None:
            events = order(time, events)
        step = Step(time, events)
        for composites in self.tesla.push_point(events):
            for composite in composites:
                if composite.type in {r.name for r in self.program.rules}:
                    step.detections.append(self._graph(composite))
        for detection in step.detections:
            spec = self.templates[detection.rule]
            if spec.feedback is not None:
                self.pending.setdefault(time + spec.feedback, set()).update(detection.triples)
        return step

    def advance(self, time: int, triples: Sequence[Triple],
                order: Callable[[int, list[Event]], list[Event]] | None = None) -> Iterator[Step]:
        """The feedback-only time points before ``time``, then ``time``: one step each,
        computed lazily (a caller may look at each step before the next is computed)."""
        yield from self.drain(time - 1, order)
        yield self.push(time, triples, order)

    def drain(self, until: int, order: Callable[[int, list[Event]], list[Event]] | None = None) -> Iterator[Step]:
        """The feedback-only time points up to ``until``, in time order."""
        while self.pending and min(self.pending) <= until:
            yield self.push(min(self.pending), [], order)

    def _graph(self, composite: Event) -> Detection:
        spec = next(r for r in self.program.rules if r.name == composite.type)
        self.fired += 1
        values: dict[str, Term | None] = {}
        aggregated = {v for v, op in spec.bindings if isinstance(op, Agg)}
        for var, value in composite.attrs.items():
            if value is None:
                values[var] = None
            elif var in aggregated or not isinstance(value, (ox.NamedNode, ox.Literal, ox.BlankNode)):
                values[var] = literal(value)
            else:
                values[var] = value
        fresh: dict[str, Term] = {}
        triples = set()
        for tpl in spec.template:
            terms: list[Term | None] = []
            for slot in tpl:
                if slot.startswith("?"):
                    var = slot[1:]
                    if var in values or any(v == var for v, _ in spec.bindings):
                        terms.append(values.get(var))
                    else:
                        terms.append(fresh.setdefault(slot, ox.NamedNode(f"{FRESH}ref:{self.fired}:{var}")))
                elif slot.startswith("_:"):
                    terms.append(fresh.setdefault(slot, ox.BlankNode(f"ref{self.fired}x{slot[2:]}")))
                else:
                    terms.append(_parse_term(slot))
            s, p, o = terms
            if s is None or p is None or o is None or isinstance(s, ox.Literal) or not isinstance(p, ox.NamedNode):
                continue
            triples.add((s, p, o))
        return Detection(composite.end, EX + spec.name, frozenset(triples))


def run(program: Program, background: Sequence[Triple], strata: list, stream: Sequence[tuple[int, Sequence[Triple]]],
        order: Callable[[int, list[Event]], list[Event]] | None = None) -> list[Step]:
    ref = ReferenceDotr(program, background, strata)
    return [step for t, triples in stream for step in ref.advance(t, triples, order)]


# -- comparing outputs -----------------------------------------------------------------------

def _is_fresh(term: Term) -> bool:
    return isinstance(term, ox.BlankNode) or (isinstance(term, ox.NamedNode) and term.value.startswith(FRESH))


def _show(term: Term) -> str:
    if isinstance(term, ox.Literal):
        value = decode(term)
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return f"{value.normalize() if isinstance(value, Decimal) else value!r}^^{term.datatype.value}"
    return str(term)


def canonical(triples: frozenset[Triple] | Sequence[Triple]) -> tuple:
    """A graph up to renaming of its fresh terms: the least of its renamings, as text."""
    fresh = sorted({str(x) for t in triples for x in t if _is_fresh(x)})
    best = None
    for perm in itertools.permutations(range(len(fresh))):
        names = {f: f"_:f{i}" for f, i in zip(fresh, perm)}
        text = tuple(sorted(tuple(names.get(str(x), _show(x)) for x in t) for t in triples))
        if best is None or text < best:
            best = text
    return best if best is not None else ()


def multiset(detections: Sequence[tuple[str, Sequence[Triple]]]) -> Counter:
    """Per time point: (rule, canonical graph) counted."""
    return Counter((rule, canonical(triples)) for rule, triples in detections)
