"""Checking a parsed LARS program: the plain-LARS shape of each literal, safety and
stratified negation, with positioned errors; the result is what both evaluators read.

A body literal is ``[not] [window] [diamond | box | @(T, .)] [not] atom`` (Laser's
fragment), or a ``MATH``/``COMP`` built-in; a head is ``atom`` or ``@(T, atom)``.
"""
from __future__ import annotations

from dataclasses import dataclass

from chronolog.lang.lars.syntax import (
    At, Atom, Box, Comp, Const, Diamond, Formula, LarsProgram, Math, Not, Rule, Term, TimeWin, TupleWin, Var,
)
from chronolog.timeunits import TIME_LIMIT, TimeFormatError, check_time

Pred = tuple[str, int]  # (name, arity)
PLAIN, DIAMOND, BOX, AT = "plain", "diamond", "box", "at"


@dataclass(frozen=True)
class Window:
    """A time window over [t - size, t] or a tuple window of the last ``size`` data atoms."""

    tuple: bool
    size: int


@dataclass(frozen=True)
class ExtLiteral:
    """``[not] [window] [modality] [not] atom``; ``time`` is the term of ``@``."""

    negated: bool
    window: Window | None
    modality: str
    time: Term | None
    inner_negated: bool
    atom: Atom
    pos: int

    @property
    def pred(self) -> Pred:
        return self.atom.pred, len(self.atom.args)

    @property
    def positive(self) -> bool:
        """Binds its variables (enumerated), rather than testing bound ones."""
        return not self.negated and not self.inner_negated


Builtin = Math | Comp
BodyItem = ExtLiteral | Math | Comp


@dataclass(frozen=True)
class CheckedRule:
    head: Atom
    head_time: Term | None  # the T of a head @(T, atom)
    body: tuple[BodyItem, ...]
    stratum: int
    rule: Rule

    @property
    def literals(self) -> tuple[ExtLiteral, ...]:
        return tuple(b for b in self.body if isinstance(b, ExtLiteral))


@dataclass(frozen=True)
class CheckedProgram:
    rules: tuple[CheckedRule, ...]
    intensional: frozenset[Pred]  # predicates heading a rule
    strata: int
    syntax: LarsProgram


def variables(term: Term | None) -> list[Var]:
    return [term] if isinstance(term, Var) else []


def item_variables(item: BodyItem) -> list[Var]:
    """Every variable occurrence of a body item, in order."""
    if isinstance(item, ExtLiteral):
        return variables(item.time) + [a for a in item.atom.args if isinstance(a, Var)]
    if isinstance(item, Math):
        return variables(item.result) + variables(item.left) + variables(item.right)
    return variables(item.left) + variables(item.right)


def binding_order(body: tuple[BodyItem, ...]) -> list[BodyItem]:
    """An order in which every item's inputs are bound when it is reached: positive
    literals in body order, then each built-in or test as soon as its inputs are bound
    (the checker has made sure that one exists)."""
    ordered = [b for b in body if isinstance(b, ExtLiteral) and b.positive]
    bound = {v.name for b in ordered for v in item_variables(b)}
    waiting = [b for b in body if not (isinstance(b, ExtLiteral) and b.positive)]
    while waiting:
        for item in waiting:
            if isinstance(item, Math):
                needs = variables(item.left) + variables(item.right)
            else:
                needs = item_variables(item)
            if all(v.name in bound for v in needs):
                ordered.append(item)
                bound.update(v.name for v in item_variables(item))
                waiting.remove(item)
                break
        else:
            break
    return ordered


def _literal(formula: Formula, program: LarsProgram) -> ExtLiteral:
    outside = ("is outside plain LARS as Laser evaluates it: a body literal is "
               "[not] [window] [diamond|box|@(T, .)] [not] atom")
    pos, f = formula.pos, formula
    negated = isinstance(f, Not)
    if isinstance(f, Not):
        f = f.inner
    window = None
    if isinstance(f, TimeWin):
        try:
            window, f = Window(False, check_time(f.size * f.unit, "the time window's size")), f.inner
        except TimeFormatError as error:
            raise program.error(str(error), f.pos) from None
    elif isinstance(f, TupleWin):
        if f.size >= TIME_LIMIT:
            raise program.error(f"a tuple window holds fewer than 2^53 = {TIME_LIMIT} atoms, not {f.size}", f.pos)
        window, f = Window(True, f.size), f.inner
    modality, time = PLAIN, None
    if isinstance(f, (Diamond, Box)):
        modality, f = (DIAMOND if isinstance(f, Diamond) else BOX), f.inner
    elif isinstance(f, At):
        modality, time, f = AT, f.time, f.inner
        if isinstance(time, Const) and not isinstance(time.value, int):
            raise program.error("the time of @ must be an integer time point or a variable", time.pos)
    inner_negated = isinstance(f, Not)
    if isinstance(f, Not):
        f = f.inner
    if not isinstance(f, Atom):
        raise program.error(f"this {type(f).__name__.lower()} {outside}", f.pos)
    if modality == PLAIN and inner_negated:
        if negated:
            raise program.error("not(... not(a)) is not supported: write a", pos)
        negated, inner_negated = True, False
    return ExtLiteral(negated, window, modality, time, inner_negated, f, pos)


def _head(formula: Formula, program: LarsProgram) -> tuple[Atom, Term | None]:
    if isinstance(formula, Atom):
        return formula, None
    if isinstance(formula, At) and isinstance(formula.inner, Atom):
        time = formula.time
        if isinstance(time, Const) and not isinstance(time.value, int):
            raise program.error("the time of @ must be an integer time point or a variable", time.pos)
        return formula.inner, time
    raise program.error("a rule head is an atom or @(T, atom)", formula.pos)


def _check_safety(head: Atom, head_time: Term | None, body: tuple[BodyItem, ...], program: LarsProgram) -> None:
    ordered = binding_order(body)
    bound = set()
    for item in ordered:
        bound.update(v.name for v in item_variables(item))
    for item in body:
        if item not in ordered:
            needs = variables(item.left) + variables(item.right) if isinstance(item, Math) else item_variables(item)
            for var in needs:
                if var.name not in bound:
                    raise program.error(
                        f"unsafe rule: the variable {var.name} is not bound by a positive body literal", var.pos)
    for var in variables(head_time) + [a for a in head.args if isinstance(a, Var)]:
        if var.name not in bound:
            raise program.error(f"unsafe rule: the head variable {var.name} is not bound by the body", var.pos)


def _strata(rules: list[tuple[Atom, Term | None, tuple[BodyItem, ...], Rule]],
            program: LarsProgram) -> dict[Pred, int]:
    edges: dict[Pred, list[tuple[Pred, bool, ExtLiteral]]] = {}
    for head, _, body, _ in rules:
        hp = (head.pred, len(head.args))
        for item in body:
            if isinstance(item, ExtLiteral):
                edges.setdefault(hp, []).append((item.pred, not item.positive, item))

    def reaches(start: Pred, goal: Pred) -> bool:
        seen, todo = {start}, [start]
        while todo:
            for nxt, _, _ in edges.get(todo.pop(), []):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    for hp, out in edges.items():
        for q, negative, literal in out:
            if negative and (q == hp or reaches(q, hp)):
                raise program.error(
                    f"negation is not stratified: {hp[0]}/{hp[1]} depends negatively on {q[0]}/{q[1]}, "
                    f"which depends on {hp[0]}/{hp[1]}", literal.pos)
    stratum: dict[Pred, int] = {}
    changed = True
    while changed:
        changed = False
        for hp, out in edges.items():
            level = max(stratum.get(q, 0) + (1 if negative else 0) for q, negative, _ in out)
            if level > stratum.get(hp, 0):
                stratum[hp] = level
                changed = True
    return stratum


def check(program: LarsProgram) -> CheckedProgram:
    """The checked program (positioned errors for what is not plain, safe, stratified LARS).

    >>> from chronolog.lang.lars.syntax import parse
    >>> checked = check(parse("a :- b\\nc :- not(a)"))
    >>> [r.stratum for r in checked.rules], sorted(checked.intensional)
    ([0, 1], [('a', 0), ('c', 0)])
    """
    shaped = []
    for rule in program.rules:
        head, head_time = _head(rule.head, program)
        body: list[BodyItem] = []
        for item in rule.body:
            body.append(item if isinstance(item, (Math, Comp)) else _literal(item, program))
        _check_safety(head, head_time, tuple(body), program)
        shaped.append((head, head_time, tuple(body), rule))
    stratum = _strata(shaped, program)
    rules = tuple(CheckedRule(head, time, body, stratum.get((head.pred, len(head.args)), 0), rule)
                  for head, time, body, rule in shaped)
    intensional = frozenset((r.head.pred, len(r.head.args)) for r in rules)
    return CheckedProgram(rules, intensional, 1 + max((r.stratum for r in rules), default=0), program)
