"""A naive LARS evaluator, straight from Definitions 3-6 of the Laser paper, to check the
incremental engine (``chronolog.lang.lars.engine``).

For every time point t of the timeline [t1, tn] it computes the answer stream for the data
up to t from scratch: the interpretation starts as the data, and stratum by stratum every
rule is applied at t until nothing changes (the least model, which is the answer stream of
a stratified plain program). A rule's body is enumerated by matching its positive atoms
against every atom of the interpretation (any time) and a time variable against every time
point, then every literal is tested by the definitions:

- windows (Def. 3-4): a time window of size m is [max(t1, t - m), t]; a tuple window of
  size n holds the last n atoms of extensional predicates in arrival order (time, then
  list order), only some atoms of its earliest time point when it cuts through it, and
  every atom of an intensional predicate at its time points; fewer than n such atoms: the
  whole timeline;
- ``diamond``: some time point of the window; ``box``: every one; ``@(T, .)``: T is in the
  window and the formula holds at T; no modality: at t; no window: the whole timeline;
- ``not``: the negation of what it encloses.

A head ``@(T, a)`` adds a at T when T is in the timeline [t1, t]; otherwise nothing (a time
point outside the answer stream's timeline). The output at t is every atom of an
intensional predicate that holds at t (Def. 6). Nothing is indexed or kept between time
points.
"""
from __future__ import annotations

from itertools import groupby
from typing import Iterable, Iterator

from chronolog.atomstreams import Atom, Value, atom_text, parse_atom
from chronolog.lang.lars.builtins import arithmetic, compare
from chronolog.lang.lars.check import AT, BOX, DIAMOND, CheckedProgram, CheckedRule, ExtLiteral, check
from chronolog.lang.lars.syntax import Comp, Const, Math, Term, Var, parse

Binding = dict[str, Value]


class ReferenceLars:
    def __init__(self, text: str) -> None:
        self.program: CheckedProgram = check(parse(text))

    def output_stream(self, elements: Iterable[tuple[int, Iterable[str]]]) -> list[tuple[int, list[str]]]:
        """The output at every time point of the timeline, atoms sorted, for elements
        ``(time, atom texts)`` in time order."""
        data: dict[int, list[Atom]] = {}
        for time, group in groupby(elements, key=lambda e: e[0]):
            atoms = data.setdefault(time, [])
            for _, texts in group:
                for text in texts:
                    atom = parse_atom(text)
                    if atom not in atoms:
                        atoms.append(atom)
        if not data:
            return []
        t1, tn = min(data), max(data)
        return [(t, sorted(atom_text(a) for a in self.output(data, t1, t))) for t in range(t1, tn + 1)]

    def intensional(self, atom: Atom) -> bool:
        return (atom[0], len(atom[1])) in self.program.intensional

    def output(self, data: dict[int, list[Atom]], t1: int, t: int) -> set[Atom]:
        v = {u: set(data.get(u, ())) for u in range(t1, t + 1)}
        arrivals = [(u, a) for u in range(t1, t + 1) for a in data.get(u, ()) if not self.intensional(a)]
        for stratum in range(self.program.strata):
            rules = [r for r in self.program.rules if r.stratum == stratum]
            changed = True
            while changed:
                changed = False
                for rule in rules:
                    for binding in list(self.bindings(rule, v, arrivals, t1, t)):
                        head = (rule.head.pred, tuple(value(a, binding) for a in rule.head.args))
                        at = t if rule.head_time is None else value(rule.head_time, binding)
                        if isinstance(at, int) and t1 <= at <= t and head not in v[at]:
                            v[at].add(head)
                            changed = True
        return {a for a in v[t] if self.intensional(a)}

    def bindings(self, rule: CheckedRule, v: dict[int, set[Atom]], arrivals: list[tuple[int, Atom]],
                 t1: int, t: int) -> Iterator[Binding]:
        """Every binding of the rule's variables under which its body holds at t."""
        atoms = set().union(*v.values())
        positives = [b for b in rule.body if isinstance(b, ExtLiteral) and b.positive]

        def candidates(i: int, binding: Binding) -> Iterator[Binding]:
            if i == len(positives):
                yield from finish(binding)
                return
            literal = positives[i]
            for atom in atoms:
                matched = match(literal, atom, binding)
                if matched is None:
                    continue
                if isinstance(literal.time, Var) and literal.time.name not in matched:
                    for u in range(t1, t + 1):
                        yield from candidates(i + 1, {**matched, literal.time.name: u})
                else:
                    yield from candidates(i + 1, matched)

        def finish(binding: Binding) -> Iterator[Binding]:
            binding = dict(binding)
            pending = [b for b in rule.body if isinstance(b, Math)]
            while pending:  # MATH binds its result once its operands are bound
                ready = [m for m in pending if all(not isinstance(x, Var) or x.name in binding
                                                   for x in (m.left, m.right))]
                if not ready:
                    return
                for m in ready:
                    pending.remove(m)
                    result = arithmetic(m.op, value(m.left, binding), value(m.right, binding))
                    if result is None:
                        return
                    if isinstance(m.result, Var) and m.result.name not in binding:
                        binding[m.result.name] = result
                    elif value(m.result, binding) != result:
                        return
            for item in rule.body:
                if isinstance(item, Comp) and not compare(item.op, value(item.left, binding),
                                                          value(item.right, binding)):
                    return
                if isinstance(item, ExtLiteral) and not holds(item, binding, v, arrivals, self, t1, t):
                    return
            yield binding

        seen = []
        for binding in candidates(0, {}):
            if binding not in seen:
                seen.append(binding)
                yield binding


def value(term: Term, binding: Binding) -> Value:
    return binding[term.name] if isinstance(term, Var) else term.value  # type: ignore[union-attr]


def match(literal: ExtLiteral, atom: Atom, binding: Binding) -> Binding | None:
    pred, args = atom
    if pred != literal.atom.pred or len(args) != len(literal.atom.args):
        return None
    out = dict(binding)
    for term, arg in zip(literal.atom.args, args):
        if isinstance(term, Const):
            if term.value != arg:
                return None
        elif out.setdefault(term.name, arg) != arg:
            return None
    return out


def holds(literal: ExtLiteral, binding: Binding, v: dict[int, set[Atom]], arrivals: list[tuple[int, Atom]],
          ref: ReferenceLars, t1: int, t: int) -> bool:
    atom = (literal.atom.pred, tuple(value(a, binding) for a in literal.atom.args))
    lo, cut, selected = t1, None, set()
    window = literal.window
    if window is not None and not window.tuple:
        lo = max(t1, t - window.size)
    elif window is not None and len(arrivals) >= window.size:
        cut = arrivals[-window.size][0]
        lo = cut
        selected = {a for u, a in arrivals[-window.size:] if u == cut}

    def at(u: int) -> bool:
        inside = atom in v[u] and (u != cut or ref.intensional(atom) or atom in selected)
        return inside != literal.inner_negated

    if literal.modality == DIAMOND:
        result = any(at(u) for u in range(lo, t + 1))
    elif literal.modality == BOX:
        result = all(at(u) for u in range(lo, t + 1))
    elif literal.modality == AT:
        u = value(literal.time, binding)  # type: ignore[arg-type]
        result = isinstance(u, int) and lo <= u <= t and at(u)
    else:
        result = at(t)
    return result != literal.negated
