"""Lowering DOTR programs: EVENT queries to standing SPARQL queries, RULEs to TESLA rules
of the temporal engine, DEFINE clauses to output templates. Errors keep their place.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, Hashable, Iterator, Mapping, Sequence

from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog import cep
from chronolog.errors import ChronologSyntaxError, SourceMap
from chronolog.lang.dotr.syntax import (
    AggregateNode, Condition, Constant, DotrTree, Operand, Ref, RuleDecl, Scope, Span,
)
from chronolog.sparql.parse import parse_template
from chronolog.terms import V_BOOLEAN, V_DATETIME, V_NUMERIC, V_STRING, XSD, TermDictionary, Var
from chronolog.timeunits import TimeFormatError, parse_duration

_DECODED = (V_NUMERIC, V_STRING, V_BOOLEAN, V_DATETIME)


@dataclass(frozen=True)
class TermRef:
    """A term with no orderable value (an IRI, a blank node, a language string): equal
    to itself only, never less or greater than anything."""

    id: int


def value_decoder(dictionary: TermDictionary) -> Callable[[Hashable], object]:
    """How the temporal engine reads term ids: numbers, strings, booleans and dateTimes by
    value; every other term as a ``TermRef`` (identity only)."""
    value = dictionary.value

    def decode(tid: Hashable) -> object:
        if not isinstance(tid, int):
            return tid
        vclass, v = value(tid)
        return v if vclass in _DECODED else TermRef(tid)

    return decode


def firing_names(time: int, seq: int, composites: Sequence[cep.Event]) -> Iterator[tuple[cep.Event, str]]:
    """Each composite event the ``seq``-th event of time point ``time`` produced, with the
    name of its firing: ``time-seq-n`` for the rule's n-th firing on that event.

    The name depends on the firing's place in the stream only, not on the process, the
    partition key or what came before, so every runner names a detection alike (its fresh
    IRI ``urn:chronolog:RULE:NAME``, its blank nodes ``RULE.NAMEx...``)."""
    counts: dict[str, int] = {}
    for composite in composites:
        n = counts[composite.type] = counts.get(composite.type, 0) + 1
        yield composite, f"{time}-{seq}-{n}"


# A template position: ("id", term id), ("var", name) or ("bnode", label)
Slot = tuple[str, object]


@dataclass(frozen=True)
class Template:
    """A DEFINE graph: triples over constants, variables and per-firing blank nodes."""

    triples: tuple[tuple[Slot, Slot, Slot], ...]

    @property
    def variables(self) -> list[str]:
        seen: dict[str, None] = {}
        for triple in self.triples:
            for kind, value in triple:
                if kind == "var":
                    seen.setdefault(str(value))
        return list(seen)


@dataclass(frozen=True)
class LoweredRule:
    """One DOTR rule: its TESLA rule, its template, and how each output is encoded."""

    iri: str
    rule: cep.Rule
    template: Template
    aggregated: frozenset[str]  # outputs holding decoded aggregate values, not term ids
    fresh: tuple[str, ...]  # template variables that get a fresh IRI per firing
    feedback: int | None = None  # FEEDBACK: outputs are input again this many time units later


class Lowering:
    """Lowers one parsed program against the event attributes the queries project."""

    def __init__(self, program: DotrTree, dictionary: TermDictionary,
                 attributes: Mapping[str, list[str]], ms_per_unit: int | Decimal = 1) -> None:
        self.program = program
        self.ms_per_unit = ms_per_unit
        self.dictionary = dictionary
        self.attributes = dict(attributes)
        self.map = SourceMap(program.source, program.filename)
        self.decode = value_decoder(dictionary)

    def error(self, message: str, pos: int) -> ChronologSyntaxError:
        return self.map.error(message, pos)

    def iri(self, text: str, pos: int) -> str:
        if text.startswith("<"):
            return text[1:-1]
        prefix, sep, local = text.partition(":")
        if not sep:
            return text
        if prefix not in self.program.prefixes:
            raise self.error(f"unknown prefix '{prefix}:'", pos)
        return self.program.prefixes[prefix] + local

    def emitted_type(self, decl: RuleDecl) -> str:
        """The event type a rule's firings form, as other rules name it in FROM."""
        text = decl.name
        if text.startswith("<"):
            text = text[1:-1]
        for sep in ("#", "/", ":"):
            text = text.rsplit(sep, 1)[-1]
        return text

    def rule(self, decl: RuleDecl) -> LoweredRule:
        emits = self.emitted_type(decl)
        if emits in self.attributes:
            raise self.error(f"rule name {emits!r} is already an event or rule name", decl.name_pos)
        aliases: dict[str, tuple[str, int, str]] = {}  # alias -> (type, order, role)
        for n, item in enumerate(decl.pattern):
            if item.type not in self.attributes:
                known = ", ".join(sorted(self.attributes)) or "none"
                raise self.error(f"unknown event {item.type!r} (known: {known})", item.pos)
            if item.alias in aliases:
                raise self.error(f"alias {item.alias!r} is bound twice in this pattern (use AS to rename)", item.pos)
            role = "terminator" if n == 0 else ("negation" if item.negated else "predicate")
            aliases[item.alias] = (item.type, n, role)
        for item in decl.pattern[1:]:
            scope = item.scope
            assert scope is not None
            for alias in (scope.first, scope.second):
                if alias is not None and (alias not in aliases or aliases[alias][2] == "negation"):
                    raise self.error(f"the scope refers to {alias!r}, which is not an event bound in this pattern",
                                     scope.pos)
        self._aggregates: list[cep.Aggregate] = []
        self._aliases = aliases
        placed: dict[str, list[cep.Compare]] = {a: [] for a in aliases}
        rule_where: list[cep.Compare] = []
        for cond in decl.where:
            compare = self.compare(cond)
            refs = [o for o in (cond.left, cond.right) if isinstance(o, Ref)]
            if any(isinstance(o, AggregateNode) for o in (cond.left, cond.right)) or not refs:
                rule_where.append(compare)
                continue
            negated = [r.alias for r in refs if aliases[r.alias][2] == "negation"]
            target = negated[0] if negated else max((r.alias for r in refs), key=lambda a: aliases[a][1])
            placed[target].append(compare)
        items = decl.pattern
        terminator = cep.Terminator(items[0].alias, items[0].type, tuple(placed[items[0].alias]))
        predicates, negations = [], []
        for item in items[1:]:
            scope = self.scope(item.scope)  # type: ignore[arg-type]
            if item.negated:
                negations.append(cep.Negation(item.alias, item.type, scope, tuple(placed[item.alias])))
                continue
            selection = {"each": cep.each_, "last": cep.last, "first": cep.first}[item.selection or "each"]
            if not isinstance(scope, cep.Within):
                raise self.error("a selected event needs WITHIN duration FROM alias", item.pos)
            sel = selection() if item.selection == "each" else selection(item.n)
            predicates.append(cep.Predicate(item.alias, item.type, sel, scope, tuple(placed[item.alias])))
        outputs: list[tuple[str, cep.expressions.Term]] = []
        aggregated = set()
        for binding in decl.bindings:
            if any(name == binding.var for name, _ in outputs):
                raise self.error(f"?{binding.var} is bound twice in WITH", binding.pos)
            if isinstance(binding.value, Constant):
                term = cep.Const(self.constant(binding.value))  # outputs carry term ids, not values
            else:
                term = self.operand(binding.value)
            if isinstance(binding.value, AggregateNode):
                aggregated.add(binding.var)
            outputs.append((binding.var, term))
        template = self.template(decl.template)
        bound = {name for name, _ in outputs}
        for name in bound - set(template.variables):
            pos = next(b.pos for b in decl.bindings if b.var == name)
            raise self.error(f"?{name} is bound in WITH but not used in DEFINE", pos)
        fresh = tuple(v for v in template.variables if v not in bound)
        consumed = []
        for alias, pos in decl.consuming:
            if alias not in aliases or aliases[alias][2] == "negation":
                raise self.error(f"CONSUMING {alias}: not an event selected by this pattern", pos)
            consumed.append(alias)
        rule = cep.Rule(
            name=self.iri(decl.name, decl.name_pos) if ":" in decl.name or decl.name.startswith("<") else decl.name,
            emits=emits, terminator=terminator, predicates=tuple(predicates), negations=tuple(negations),
            aggregates=tuple(self._aggregates), where=tuple(rule_where), outputs=tuple(outputs),
            consuming=cep.consuming(*consumed) if consumed else cep.no_consumption(),
        )
        return LoweredRule(rule.name, rule, template, frozenset(aggregated), fresh, self.feedback(decl))

    def feedback(self, decl: RuleDecl) -> int | None:
        """FEEDBACK's delay in time units (one when not given); it must be positive: an
        output at t is a consequence of what held at t, so it can only hold later."""
        if decl.feedback is None:
            return None
        if decl.feedback.duration is None:
            return 1
        try:
            delay = parse_duration(decl.feedback.duration, ms_per_unit=self.ms_per_unit)
        except TimeFormatError as exc:
            raise self.error(str(exc), decl.feedback.pos) from None
        if delay <= 0:
            raise self.error("a FEEDBACK delay must be positive: an output graph at t is input again only after t",
                             decl.feedback.pos)
        return delay

    def scope(self, scope: Scope) -> cep.Within | cep.Between:
        if scope.kind == "between":
            return cep.Between(scope.first, scope.second)  # type: ignore[arg-type]
        try:
            duration = parse_duration(scope.duration or "", ms_per_unit=self.ms_per_unit)
        except TimeFormatError as exc:
            raise self.error(str(exc), scope.pos) from None
        if duration < 0:
            raise self.error("a WITHIN duration must not be negative (WITHIN 0: the same time point)", scope.pos)
        return cep.Within(duration, scope.first)

    def compare(self, cond: Condition) -> cep.Compare:
        return cep.Compare(self.operand(cond.left), cond.op, self.operand(cond.right))

    def operand(self, op: Operand, aggregate_of: tuple[str, str] | None = None) -> cep.expressions.Term:
        if isinstance(op, Ref):
            if aggregate_of is not None and op.alias == aggregate_of[0]:
                self.check_attribute(aggregate_of[0], op)
                return cep.Attr(aggregate_of[1], op.attribute)
            if op.alias not in self._aliases:
                raise self.error(f"unknown alias {op.alias!r} in {op.alias}.{op.attribute}", op.pos)
            self.check_attribute(self._aliases[op.alias][0], op)
            return cep.Attr(op.alias, op.attribute)
        if isinstance(op, Constant):
            return cep.Const(self.decode(self.constant(op)))
        return self.aggregate(op)

    def check_attribute(self, event_type: str, ref: Ref) -> None:
        attrs = self.attributes[event_type]
        if ref.attribute not in attrs:
            raise self.error(f"event {event_type!r} has no attribute {ref.attribute!r} "
                             f"(its attributes: {', '.join(attrs) or 'none'})", ref.pos)

    def aggregate(self, node: AggregateNode) -> cep.AggValue:
        if node.ref.alias not in self.attributes:
            raise self.error(f"unknown event {node.ref.alias!r} in {node.func.upper()}(...)", node.ref.pos)
        if node.ref.attribute != "*":
            self.check_attribute(node.ref.alias, node.ref)
        if node.scope is None:
            raise self.error(f"{node.func.upper()}(...) needs a scope: WITHIN duration FROM alias or BETWEEN a AND b",
                             node.pos)
        for alias in (node.scope.first, node.scope.second):
            if alias is not None and alias not in self._aliases:
                raise self.error(f"the scope refers to {alias!r}, which is not an event bound in this pattern",
                                 node.scope.pos)
        name = f"agg{len(self._aggregates)}"
        where = tuple(cep.Compare(self.operand(c.left, (node.ref.alias, name)), c.op,
                                  self.operand(c.right, (node.ref.alias, name))) for c in node.where)
        attribute = None if node.ref.attribute == "*" else node.ref.attribute
        self._aggregates.append(cep.Aggregate(name, node.func, node.ref.alias, attribute,  # type: ignore[arg-type]
                                              self.scope(node.scope), where))
        return cep.AggValue(name)

    def constant(self, c: Constant) -> int:
        d = self.dictionary
        if c.kind in ("iri", "pname"):
            return d.encode(NamedNode(self.iri(c.text, c.pos)))
        if c.kind == "boolean":
            return d.encode(Literal(c.text, datatype=NamedNode(XSD + "boolean")))
        if c.kind == "number":
            dtype = "double" if "e" in c.text.lower() else "decimal" if "." in c.text else "integer"
            return d.encode(Literal(c.text.lstrip("+"), datatype=NamedNode(XSD + dtype)))
        if c.lang:
            return d.encode(Literal(c.text, language=c.lang))
        if c.datatype:
            return d.encode(Literal(c.text, datatype=NamedNode(self.iri(c.datatype, c.pos))))
        return d.encode(Literal(c.text))

    def template(self, span: Span) -> Template:
        """DEFINE's graph, read by chronolog's SPARQL front end as a CONSTRUCT template."""
        program = self.program
        encode = self.dictionary.encode
        triples = []
        for triple in parse_template(program.source, span.pos, span.pos + len(span.text), program.prologue,
                                     program.filename):
            slots: list[Slot] = []
            for term in triple:
                if isinstance(term, Var):
                    slots.append(("var", str(term)))
                elif isinstance(term, BlankNode):
                    slots.append(("bnode", term.value))
                else:
                    slots.append(("id", encode(term)))
            triples.append(tuple(slots))
        if not triples:
            raise self.error("DEFINE needs at least one triple", span.pos)
        return Template(tuple(triples))  # type: ignore[arg-type]

