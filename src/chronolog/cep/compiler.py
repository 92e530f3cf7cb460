"""Rule checking and compilation: a ``Rule`` becomes an immutable ``RulePlan``.

Checking happens once, at registration, so that a bad rule fails with a message that
names the rule and the offending clause. Compilation generates one Python function per
rule (nested loops over the predicates' scopes, conditions inlined), so nothing is
interpreted per event. User values never enter the generated text: names, constants and
the decoder are passed in the function's namespace; ``RulePlan.source`` keeps the text
for inspection, and tracebacks show its lines (:mod:`chronolog.generated`).

Evaluation order inside a firing (the semantics are in ``rules``, ``policies`` and the
reference evaluator ``tests/reference/tesla.py``): terminator filters; for each predicate
in order, the qualifying events of its scope (filters and parameters checked against the
events bound so far, consumed events skipped), of which the selection keeps all (each)
or the n-th (last/first); then negations, aggregates and the rule's conditions on the
complete combination; then one composite event per surviving combination, in the
lexicographic order of the bound events' arrival. Events consumed by a firing are marked
after the whole firing.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from chronolog.cep.errors import (
    MissingScopeError,
    RuleError,
    UnknownAliasError,
    UnknownAttributeError,
    UnknownEventTypeError,
)
from chronolog.cep.events import WHY, Event, EventType
from chronolog.cep.expressions import AggValue, Attr, Compare, Const, End, Start, Term
from chronolog.cep.policies import Consumption, Selection
from chronolog.cep.rules import Aggregate, Between, Negation, Predicate, Rule, Scope, Terminator, Within
from chronolog.values import holds, numeric_avg, numeric_sum
from chronolog.generated import compile_generated

Decoder = Callable[[Hashable], Any]
AGGREGATE_FUNCTIONS = ("avg", "sum", "min", "max", "count")


@dataclass(frozen=True)
class Source:
    """Where a generated loop reads events: a type's main timeline or one of its indexes."""

    type: str
    attribute: str | None


@dataclass(frozen=True)
class RulePlan:
    """A checked, compiled rule: shared by every state, never changed after compilation.

    ``fire(terminator, seq, runtime, out)`` appends the composite events of one firing
    to ``out`` and marks what it consumes in ``runtime``. ``reads`` gives, per type the rule reads, how
    far back from the terminator's time it may look (its horizon).
    """

    rule: Rule
    output: EventType
    terminator_type: str
    sources: tuple[Source, ...]
    reads: Mapping[str, int]
    same_time: frozenset[str]  # types it reads within 0 of an event
    consumed_types: frozenset[str]
    fire: Callable[..., None]
    source: str

    @property
    def name(self) -> str:
        return self.rule.name


def _uses_aggregate(cond: Compare) -> bool:
    return isinstance(cond.left, AggValue) or isinstance(cond.right, AggValue)


class _Scope:
    """What one alias means while checking a rule: its type and variable suffix."""

    __slots__ = ("type", "var", "depth")

    def __init__(self, type: EventType, var: str, depth: int) -> None:
        self.type, self.var, self.depth = type, var, depth


def compile_rule(rule: Rule, types: Mapping[str, EventType], decode: Decoder | None,
                 explain: bool = False) -> RulePlan:
    """Check ``rule`` against the known ``types`` and compile it; with ``explain``, its
    composite events say what they were built from (their ``WHY`` attribute)."""
    return _Compiler(rule, types, decode, explain).compile()


class _Compiler:
    def __init__(self, rule: Rule, types: Mapping[str, EventType], decode: Decoder | None,
                 explain: bool = False) -> None:
        if not isinstance(rule, Rule):
            raise RuleError(f"expected a Rule, got {type(rule).__name__}")
        if not isinstance(rule.name, str) or not rule.name:
            raise RuleError("a rule needs a non-empty name")
        self.rule = rule
        self.types = types
        self.decode = decode
        self.explain = explain
        self.namespace: dict[str, Any] = {
            "bisect_left": bisect_left,
            "bisect_right": bisect_right,
            "Event": Event,
            "NEW": tuple.__new__,
            "DEC": decode,
            "NSUM": numeric_sum,
            "NAVG": numeric_avg,
            "HOLDS": holds,
        }
        self.constants: dict[tuple[type, Any], str] = {}
        self.lines: list[str] = []
        self.bindings: list[int] = []
        self.indent = 1
        self.sources: list[Source] = []
        self.reads: dict[str, int] = {}
        self.same_time: set[str] = set()  # types read within 0: the engine stores a time point's events first
        self.pattern: dict[str, _Scope] = {}

    # -- errors and lookups -------------------------------------------------------
    def fail(self, error: type[RuleError], message: str) -> RuleError:
        return error(f"rule {self.rule.name!r}: {message}")

    def event_type(self, name: str, what: str) -> EventType:
        if not isinstance(name, str) or name not in self.types:
            known = ", ".join(sorted(self.types)) or "none"
            raise self.fail(
                UnknownEventTypeError,
                f"{what} has unknown event type {name!r} (known types: {known}); declare it, "
                "or register the rule that emits it first",
            )
        return self.types[name]

    def bound(self, alias: str, where: str) -> _Scope:
        scope = self.pattern.get(alias)
        if scope is None:
            bound = ", ".join(self.pattern) or "none"
            raise self.fail(
                UnknownAliasError,
                f"{where} refers to {alias!r}, which is not an event bound earlier in the "
                f"pattern (bound so far: {bound})",
            )
        return scope

    def check_scope(self, scope: Scope | None, what: str) -> int:
        """Check a scope and return how far back from the terminator it reaches."""
        if scope is None:
            raise self.fail(
                MissingScopeError,
                f"{what} needs a scope: Within(D, of=<event>) or Between(<event>, <event>)",
            )
        if isinstance(scope, Within):
            self.check_duration(scope, what)
            return self.bound(scope.of, f"{what}: 'within {scope.duration} from {scope.of}'").depth + scope.duration
        if isinstance(scope, Between):
            after = self.bound(scope.after, f"{what}: 'between {scope.after} and {scope.before}'")
            self.bound(scope.before, f"{what}: 'between {scope.after} and {scope.before}'")
            return after.depth
        raise self.fail(RuleError, f"{what}: expected a Within or Between scope, got {scope!r}")

    def check_duration(self, scope: Within, what: str) -> None:
        d = scope.duration
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise self.fail(RuleError, f"{what}: 'within' needs a non-negative integer duration, got {d!r}")

    def check_condition(self, cond: Compare, where: str, own: dict[str, _Scope], aggregates: bool) -> None:
        if not isinstance(cond, Compare):
            raise self.fail(RuleError, f"{where}: expected a Compare condition, got {cond!r}")
        for term in (cond.left, cond.right):
            self.check_term(term, where, own, aggregates)

    def check_term(self, term: Term, where: str, own: dict[str, _Scope], aggregates: bool) -> None:
        if isinstance(term, Const):
            return
        if isinstance(term, AggValue):
            if not aggregates or term.name not in self.aggregate_vars:
                raise self.fail(
                    UnknownAliasError,
                    f"{where} uses aggregate {term.name!r}, which is not an aggregate of this rule"
                    if aggregates
                    else f"{where} uses aggregate {term.name!r}; aggregates are usable only in "
                    "the rule's where clause and outputs",
                )
            return
        if not isinstance(term, (Attr, Start, End)):
            raise self.fail(RuleError, f"{where}: unknown term {term!r}")
        scope = own.get(term.alias) or self.bound(term.alias, where)
        if isinstance(term, Attr) and term.name not in scope.type.attributes:
            raise self.fail(
                UnknownAttributeError,
                f"{where}: {term.alias}.{term.name}: event type {scope.type.name!r} has no "
                f"attribute {term.name!r} (it has: {', '.join(scope.type.attributes) or 'none'})",
            )

    # -- code generation helpers ---------------------------------------------------
    def const(self, value: Any) -> str:
        key = (type(value), value) if isinstance(value, Hashable) else (object, id(value))
        name = self.constants.get(key)
        if name is None:
            name = self.constants[key] = f"C{len(self.constants)}"
            self.namespace[name] = value
        return name

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def var(self, alias: str, local: dict[str, _Scope]) -> str:
        return (local.get(alias) or self.pattern[alias]).var

    def render_term(self, term: Term, local: dict[str, _Scope], decoded: bool) -> str:
        if isinstance(term, Const):
            return self.const(term.value)
        if isinstance(term, AggValue):
            return self.aggregate_vars[term.name]
        var = self.var(term.alias, local)
        if isinstance(term, Start):
            return f"e{var}[1]"
        if isinstance(term, End):
            return f"t{var}"
        raw = f"a{var}[{self.const(term.name)}]"
        return f"DEC({raw})" if decoded and self.decode is not None else raw

    def render_conditions(self, conds: tuple[Compare, ...], local: dict[str, _Scope]) -> tuple[str, bool]:
        """The conjunction as an expression, and whether it may raise TypeError."""
        parts = []
        may_raise = False
        for cond in conds:
            decoded = not cond.compares_raw()
            left = self.render_term(cond.left, local, decoded)
            right = self.render_term(cond.right, local, decoded)
            if decoded:  # by value: chronolog.values' comparison, which never raises
                parts.append(f"HOLDS({cond.op!r}, {left}, {right})")
                may_raise |= self.decode is not None
            else:
                parts.append(f"{left} {cond.op} {right}")
        return " and ".join(f"({p})" for p in parts), may_raise

    def emit_test(self, conds: tuple[Compare, ...], local: dict[str, _Scope], on_fail: str | None) -> None:
        """Emit a check of ``conds``: run ``on_fail`` ('continue', 'return') when they
        fail or, when ``on_fail`` is None, open an ``if`` block for what follows."""
        if not conds:
            return
        expr, may_raise = self.render_conditions(conds, local)
        if may_raise:
            self.emit("try:")
            self.emit(f"    ok = {expr}")
            self.emit("except TypeError:")
            self.emit("    ok = False")
            expr = "ok"
        if on_fail is None:
            self.emit(f"if {expr}:")
            self.indent += 1
        else:
            self.emit(f"if not ({expr}):")
            self.emit(f"    {on_fail}")

    def index_for(self, alias: str, conds: tuple[Compare, ...]) -> tuple[Compare | None, str | None, str]:
        """An equality parameter of ``alias`` with a bound event, usable as an index."""
        for cond in conds:
            if cond.op == "==" and cond.compares_raw():
                left, right = cond.left, cond.right
                if left.alias == alias and right.alias != alias:
                    return cond, left.name, self.render_term(right, {}, False)
                if right.alias == alias and left.alias != alias:
                    return cond, right.name, self.render_term(left, {}, False)
        return None, None, ""

    def open_scope(self, var: str, type: str, alias: str, scope: Scope, conds: tuple[Compare, ...],
                   depth: int) -> tuple[Compare, ...]:
        """Emit the lookup of a scope's range ``lo{var}:hi{var}`` over timeline ``tl{var}``
        (opening an ``if`` when an index may have no entry); returns the conditions left
        to check on each event (an indexed parameter needs no check)."""
        self.reads[type] = max(self.reads.get(type, 0), depth)
        index_cond, attribute, key = self.index_for(alias, conds)
        slot = len(self.sources)
        self.sources.append(Source(type, attribute))
        if index_cond is None:
            self.emit(f"tl{var} = src[{slot}]")
        else:
            conds = tuple(c for c in conds if c is not index_cond)
            self.emit(f"tl{var} = src[{slot}].get({key})")
            self.emit(f"if tl{var} is not None:")
            self.indent += 1
        self.emit(f"tm{var} = tl{var}.times")
        if isinstance(scope, Within) and scope.duration == 0:  # the anchor's own time point
            self.same_time.add(type)
            anchor = self.pattern[scope.of].var
            self.emit(f"lo{var} = bisect_left(tm{var}, t{anchor}, tl{var}.head)")
            self.emit(f"hi{var} = bisect_right(tm{var}, t{anchor}, lo{var})")
        elif isinstance(scope, Within):
            anchor = self.pattern[scope.of].var
            self.emit(f"lo{var} = bisect_left(tm{var}, t{anchor} - {self.const(scope.duration)}, tl{var}.head)")
            self.emit(f"hi{var} = bisect_left(tm{var}, t{anchor}, lo{var})")
        else:
            after, before = self.pattern[scope.after].var, self.pattern[scope.before].var
            self.emit(f"lo{var} = bisect_right(tm{var}, t{after}, tl{var}.head)")
            self.emit(f"hi{var} = bisect_left(tm{var}, t{before}, lo{var})")
        return conds

    def bind(self, var: str, index: str) -> None:
        self.emit(f"e{var} = ev{var}[{index}]")
        self.emit(f"a{var} = e{var}[3]")
        self.emit(f"t{var} = e{var}[2]")
        self.bindings.append(len(self.lines) - 2)

    # -- the rule -------------------------------------------------------------------
    def compile(self) -> RulePlan:
        rule = self.rule
        if not isinstance(rule.emits, str) or not rule.emits:
            raise self.fail(RuleError, "needs the name of the event type it emits")
        if not isinstance(rule.consuming, Consumption):
            raise self.fail(RuleError, f"consuming must be a Consumption policy, got {rule.consuming!r}")
        self.aggregate_vars = {a.name: f"g{i}" for i, a in enumerate(rule.aggregates)}
        self.check_aliases()
        term = rule.terminator
        self.pattern[term.alias] = _Scope(self.event_type(term.type, f"terminator {term.alias!r}"), "0", 0)
        for cond in term.where:
            self.check_condition(cond, f"terminator {term.alias!r}", {}, False)
        for i, pred in enumerate(rule.predicates, 1):
            what = f"predicate {pred.alias!r}"
            etype = self.event_type(pred.type, what)
            if not isinstance(pred.selection, Selection):
                raise self.fail(RuleError, f"{what}: selection must be each_(), last(n) or first(n), got {pred.selection!r}")
            if isinstance(pred.scope, Between):
                raise self.fail(RuleError, f"{what}: predicates take 'within D from <event>'; between is for negations and aggregates")
            depth = self.check_scope(pred.scope, what)
            own = {pred.alias: _Scope(etype, str(i), depth)}
            for cond in pred.where:
                self.check_condition(cond, what, own, False)
            self.pattern[pred.alias] = own[pred.alias]
        aliases = set(rule.aliases())
        for alias in rule.consuming.aliases:
            if alias not in aliases:
                raise self.fail(UnknownAliasError, f"consuming {alias!r}, which is not an event of the pattern (events: {', '.join(rule.aliases())})")
        negations = [self.check_negation(m, neg) for m, neg in enumerate(rule.negations)]
        aggregates = [self.check_aggregate(m, agg) for m, agg in enumerate(rule.aggregates)]
        for cond in rule.where:
            self.check_condition(cond, "where clause", {}, True)
        names: set[str] = set()
        for name, value in rule.outputs:
            if name in names:
                raise self.fail(RuleError, f"output attribute {name!r} is defined twice")
            names.add(name)
            if not isinstance(value, (Attr, Const, Start, End, AggValue)):
                raise self.fail(RuleError, f"output {name!r}: expected a term, got {value!r}")
            self.check_term(value, f"output {name!r}", {}, True)
        # Consumption only matters where this rule's predicates read a consumed type:
        # those predicates skip consumed events, those aliases record what they bind.
        consumed = rule.consuming.consumed(rule.aliases())
        consumed_types = frozenset(self.pattern[a].type.name for a in consumed)
        read_by_predicates = {self.pattern[p.alias].type.name for p in rule.predicates}
        self.effective_consumed = [a for a in rule.aliases() if a in consumed and self.pattern[a].type.name in read_by_predicates]
        self.checked_types = consumed_types & read_by_predicates
        self.generate(negations, aggregates)
        source = "\n".join(self.prune_bindings())
        exec(compile_generated(source, f"rule {rule.name}"), self.namespace)
        return RulePlan(
            rule=rule,
            output=EventType(rule.emits, tuple(name for name, _ in rule.outputs), derived=True),
            terminator_type=term.type,
            sources=tuple(self.sources),
            reads=dict(self.reads),
            same_time=frozenset(self.same_time),
            consumed_types=self.checked_types,
            fire=self.namespace["fire"],
            source=source,
        )

    def prune_bindings(self) -> list[str]:
        """Drop ``a<v> = ...`` / ``t<v> = ...`` bindings that no later line reads."""
        lines = self.lines
        dead = set()
        for at in self.bindings:
            for offset in (0, 1):
                target = lines[at + offset].split("=")[0].strip()
                word = re.compile(rf"\b{target}\b")
                if not any(word.search(line) for line in lines[at + 2:]):
                    dead.add(at + offset)
        return [line for i, line in enumerate(lines) if i not in dead]

    def check_aliases(self) -> None:
        rule = self.rule
        for part in (rule.terminator, *rule.predicates, *rule.negations, *rule.aggregates):
            if not isinstance(part, (Terminator, Predicate, Negation, Aggregate)):
                raise self.fail(RuleError, f"expected a pattern element, got {part!r}")
        aliases = [
            rule.terminator.alias,
            *(p.alias for p in rule.predicates),
            *(n.alias for n in rule.negations),
            *(a.name for a in rule.aggregates),
        ]
        for alias in aliases:
            if not isinstance(alias, str) or not alias:
                raise self.fail(RuleError, f"every event of the rule needs a non-empty alias, got {alias!r}")
            if aliases.count(alias) > 1:
                raise self.fail(RuleError, f"alias {alias!r} is used twice in the rule")

    def check_negation(self, m: int, neg: Negation) -> tuple[Negation, dict[str, _Scope]]:
        what = f"negation {neg.alias!r}"
        etype = self.event_type(neg.type, what)
        depth = self.check_scope(neg.scope, what)
        own = {neg.alias: _Scope(etype, f"n{m}", depth)}
        for cond in neg.where:
            self.check_condition(cond, what, own, False)
        return neg, own

    def check_aggregate(self, m: int, agg: Aggregate) -> tuple[Aggregate, dict[str, _Scope]]:
        what = f"aggregate {agg.name!r}"
        if agg.func not in AGGREGATE_FUNCTIONS:
            raise self.fail(RuleError, f"{what}: unknown function {agg.func!r}; use one of {', '.join(AGGREGATE_FUNCTIONS)}")
        etype = self.event_type(agg.type, what)
        if agg.attribute is None and agg.func != "count":
            raise self.fail(RuleError, f"{what}: {agg.func} needs an attribute to aggregate")
        if agg.attribute is not None and agg.attribute not in etype.attributes:
            raise self.fail(
                UnknownAttributeError,
                f"{what}: event type {etype.name!r} has no attribute {agg.attribute!r} "
                f"(it has: {', '.join(etype.attributes) or 'none'})",
            )
        depth = self.check_scope(agg.scope, what)
        own = {agg.name: _Scope(etype, f"c{m}", depth)}
        for cond in agg.where:
            self.check_condition(cond, what, own, False)
        return agg, own

    # -- generation -----------------------------------------------------------------
    def level(self, aliases: set[str]) -> int:
        """The position of the last predicate among ``aliases`` (0: the terminator)."""
        order = {alias: i for i, alias in enumerate(self.rule.aliases())}
        return max((order[a] for a in aliases if a in order), default=0)

    def plan_checks(self, negations: list, aggregates: list) -> dict[int, list]:
        """Group negations, aggregates and where conditions by the predicate after which
        everything they read is bound, so each runs once per partial match, not once per
        complete combination (hoisting; the result is the same)."""
        checks: dict[int, list] = {}
        agg_level: dict[str, int] = {}
        for cond in self.rule.where:
            if not _uses_aggregate(cond):
                checks.setdefault(self.level(_aliases(cond)), []).append(("where", cond))
        for neg, own in negations:
            deps = _scope_aliases(neg.scope) | {a for c in neg.where for a in _aliases(c)}
            checks.setdefault(self.level(deps - set(own)), []).append(("not", (neg, own)))
        for agg, own in aggregates:
            deps = _scope_aliases(agg.scope) | {a for c in agg.where for a in _aliases(c)}
            agg_level[agg.name] = lvl = self.level(deps - set(own))
            checks.setdefault(lvl, []).append(("agg", (agg, own)))
        for cond in self.rule.where:
            if _uses_aggregate(cond):
                lvl = max(self.level(_aliases(cond)),
                          *(agg_level[t.name] for t in (cond.left, cond.right) if isinstance(t, AggValue)))
                checks.setdefault(lvl, []).append(("where", cond))
        return checks

    def generate(self, negations: list, aggregates: list) -> None:
        rule = self.rule
        self.checks = self.plan_checks(negations, aggregates)
        self.lines.append("def fire(e0, s0, rt, out):")
        self.emit("a0 = e0[3]")
        self.emit("t0 = e0[2]")
        self.emit_test(rule.terminator.where, {}, "return")
        self.emit("src = rt.sources")
        if self.checked_types:
            self.emit("consumed = rt.consumed")
        if self.effective_consumed:
            self.emit("marks = []")
        base = self.indent
        self.generate_level(0)
        self.indent = base
        if self.effective_consumed:
            self.emit("if marks:")
            self.emit("    rt.consume(t0, marks)")

    def generate_level(self, i: int) -> None:
        """Emit the checks ready once predicate ``i`` is bound, then what follows."""
        for kind, item in self.checks.get(i, ()):
            if kind == "where":
                self.emit_test((item,), {}, None)
            elif kind == "not":
                self.generate_negation(*item)
            else:
                self.generate_aggregate(*item)
        if i < len(self.rule.predicates):
            self.generate_predicate(i + 1)
        else:
            self.generate_output()

    def generate_predicate(self, i: int) -> None:
        pred = self.rule.predicates[i - 1]
        scope = self.pattern[pred.alias]
        var = scope.var
        conds = self.open_scope(var, scope.type.name, pred.alias, pred.scope, pred.where, scope.depth)
        self.emit(f"ev{var} = tl{var}.events")
        sel = pred.selection
        checks_consumed = scope.type.name in self.checked_types
        itself = self.anchor_itself(pred.scope, scope.type.name)
        if checks_consumed or pred.alias in self.effective_consumed:
            self.emit(f"sq{var} = tl{var}.seqs")
        if sel.kind != "each" and not conds and not checks_consumed and itself is None:
            # the n-th from either end, found without scanning
            if sel.kind == "last":
                self.emit(f"j{var} = hi{var} - {sel.n}")
                self.emit(f"if j{var} >= lo{var}:")
            else:
                self.emit(f"j{var} = lo{var} + {sel.n - 1}")
                self.emit(f"if j{var} < hi{var}:")
            self.indent += 1
            self.bind_candidate(var, pred.alias)
            self.generate_level(i)
            return
        counted = sel.kind != "each" and sel.n > 1
        if counted:
            self.emit(f"c{var} = 0")
        if sel.kind == "last":
            self.emit(f"for j{var} in range(hi{var} - 1, lo{var} - 1, -1):")
        else:
            self.emit(f"for j{var} in range(lo{var}, hi{var}):")
        self.indent += 1
        if checks_consumed:
            self.emit(f"if sq{var}[j{var}] in consumed:")
            self.emit("    continue")
        self.bind_candidate(var, pred.alias)
        if itself is not None:
            self.emit(f"if e{var} is e{itself}:")
            self.emit("    continue")
        self.emit_test(conds, {}, "continue")
        if counted:
            self.emit(f"c{var} += 1")
            self.emit(f"if c{var} < {sel.n}:")
            self.emit("    continue")
        level = self.indent
        self.generate_level(i)
        if sel.kind != "each":
            self.indent = level
            self.emit("break")

    def anchor_itself(self, scope: Scope, type: str) -> str | None:
        """The variable of the anchor event when ``scope`` is ``within 0`` of an event of
        the same type: that event is in its own time point, but never in its own scope."""
        if isinstance(scope, Within) and scope.duration == 0 and self.pattern[scope.of].type.name == type:
            return self.pattern[scope.of].var
        return None

    def bind_candidate(self, var: str, alias: str) -> None:
        self.bind(var, f"j{var}")
        if alias in self.effective_consumed:
            self.emit(f"s{var} = sq{var}[j{var}]")

    def generate_output(self) -> None:
        rule = self.rule
        starts = [f"e{self.pattern[a].var}[1]" for a in rule.aliases()]
        if len(starts) == 1:
            start = starts[0]
        elif len(starts) == 2:  # a conditional is cheaper than calling min()
            start = f"({starts[1]} if {starts[1]} < {starts[0]} else {starts[0]})"
        else:
            start = f"min({', '.join(starts)})"
        attrs = ", ".join(
            f"{self.const(name)}: {self.render_term(value, {}, False)}" for name, value in rule.outputs
        )
        if self.explain:  # what the event was built from, as plain tuples
            bound = ", ".join(f"({self.const(a)}, tuple(e{self.pattern[a].var}))" for a in rule.aliases())
            read = "".join(f"({self.const(agg.name)}, tuple(map(tuple, xs{self.aggregate_vars[agg.name][1:]}))), "
                           for agg in rule.aggregates)
            absent = "".join(f"{self.const(neg.alias)}, " for neg in rule.negations)
            attrs += f"{', ' if attrs else ''}{self.const(WHY)}: (({bound},), ({read}), ({absent}))"
        # tuple.__new__ builds the Event without the Python-level NamedTuple constructor
        self.emit(f"out.append(NEW(Event, ({self.const(rule.emits)}, {start}, t0, {{{attrs}}})))")
        if self.effective_consumed:
            seqs = ", ".join(f"s{self.pattern[a].var}" for a in self.effective_consumed)
            self.emit(f"marks.extend(({seqs},))")

    def generate_negation(self, neg: Negation, own: dict[str, _Scope]) -> None:
        """Emit the search for a negated event; what follows goes under ``if not found``."""
        scope = own[neg.alias]
        var = scope.var
        self.emit(f"found{var} = False")
        level = self.indent
        conds = self.open_scope(var, scope.type.name, neg.alias, neg.scope, neg.where, scope.depth)
        itself = self.anchor_itself(neg.scope, scope.type.name)
        if not conds and itself is None:
            self.emit(f"found{var} = hi{var} > lo{var}")
        else:
            self.emit(f"ev{var} = tl{var}.events")
            self.emit(f"for j{var} in range(lo{var}, hi{var}):")
            self.indent += 1
            self.bind(var, f"j{var}")
            if itself is not None:
                self.emit(f"if e{var} is e{itself}:")
                self.emit("    continue")
            self.emit_test(conds, own, None)
            self.emit(f"found{var} = True")
            self.emit("break")
        self.indent = level
        self.emit(f"if not found{var}:")
        self.indent += 1

    def generate_aggregate(self, agg: Aggregate, own: dict[str, _Scope]) -> None:
        """Emit the computation of ``g<m>`` over the aggregate's scope, in time order."""
        scope = own[agg.name]
        var = scope.var
        self.emit(f"vals{var} = []")
        if self.explain:
            self.emit(f"xs{var[1:]} = []")
        level = self.indent
        conds = self.open_scope(var, scope.type.name, agg.name, agg.scope, agg.where, scope.depth)
        if agg.attribute is None:
            value = "1"
        else:
            value = f"x[3][{self.const(agg.attribute)}]"
            if self.decode is not None:
                value = f"DEC({value})"
        itself = self.anchor_itself(agg.scope, scope.type.name)
        if not conds and itself is None and not self.explain:
            self.emit(f"vals{var} = [{value} for x in tl{var}.events[lo{var}:hi{var}]]")
        else:
            self.emit(f"for x in tl{var}.events[lo{var}:hi{var}]:")
            self.indent += 1
            if itself is not None:
                self.emit(f"if x is e{itself}:")
                self.emit("    continue")
            self.emit(f"e{var} = x")
            self.emit(f"a{var} = x[3]")
            self.emit(f"t{var} = x[2]")
            self.emit_test(conds, own, None)
            self.emit(f"vals{var}.append({value})")
            if self.explain:
                self.emit(f"xs{var[1:]}.append(x)")
        self.indent = level
        result = self.aggregate_vars[agg.name]
        func = agg.func
        if func == "count":
            self.emit(f"{result} = len(vals{var})")
        elif func == "sum":
            self.emit(f"{result} = NSUM(vals{var})")
        elif func == "avg":
            self.emit(f"{result} = NAVG(vals{var})")
        else:
            self.emit(f"{result} = {func}(vals{var}) if vals{var} else None")


def _aliases(cond: Compare) -> set[str]:
    return {t.alias for t in (cond.left, cond.right) if isinstance(t, (Attr, Start, End))}


def _scope_aliases(scope: Scope) -> set[str]:
    return {scope.of} if isinstance(scope, Within) else {scope.after, scope.before}
