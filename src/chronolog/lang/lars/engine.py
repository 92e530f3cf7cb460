"""Incremental evaluation of LARS programs (Laser's Algorithms 1 and 2), as a program of the
program contract.

Every fact lives in one :class:`~chronolog.datalog.annotated.AnnotatedStore`, annotated
with a consideration time and a horizon (time and count):

- a data atom at u: ``at`` u, considered at u, never expiring by itself (it is evicted once
  no window can reach it); its arrival number ``seq`` places it in tuple windows;
- a derived atom: ``at`` None (the head ``a``: it holds at every evaluation time in its
  annotation) or ``at`` T (the head ``@(T, a)``), considered when derived, with the
  horizon of the body instance that derived it (the smallest of its literals'). A head
  ``@(T, a)`` with T after t is outside the timeline at t: the body instance waits until T
  and derives the head then if its horizons still cover T (the body holds at T through
  its windows, with no new data needed).

Algorithm 2: a positive literal grounded on a fact holds at the current time t for as
long as the fact and the window allow: ``diamond`` and ``@`` over a time window of size m
on a fact at u until u + m, over a tuple window of size n until n more data atoms have
arrived after it (the count horizon), a plain atom only at t. ``box``, negation, and
``@`` over a fact of the current time point are decided anew at each time point (horizon
t). Algorithm 1 with sSNE: at t, a rule joins, for each positive literal, the facts
considered at t with all facts for the others (a combination of old facts was derived when
its newest fact was new, with a horizon that still covers t); rules with ``box`` or
negation are evaluated in full at each time point; strata bottom up; the output at t is
every atom of an intensional predicate that holds at t. Only atoms of the current time
point and ``@``-heads exist at other times than t (Definitions 5-6): a derived ``a``
holds at t, never in the past of a later time point.
"""
from __future__ import annotations

import pickle
from collections import deque
from itertools import filterfalse

from chronolog.atomstreams import Value, atom_text, parse_atom
from chronolog.datalog.annotated import INFINITY, AnnotatedStore, Fact
from chronolog.errors import ChronologError
from chronolog.lang.lars.builtins import arithmetic, compare
from chronolog.lang.lars.check import (
    AT, BOX, DIAMOND, PLAIN, CheckedProgram, CheckedRule, ExtLiteral, Pred, binding_order,
)
from chronolog.lang.lars.syntax import Comp, Const, Math, Term, Var
from chronolog.program.contract import ATOMS_IN, UNNAMED, Inputs, Program, ProgramSpec, UnknownStreamError
from chronolog.lang.lars.provenance import AtomOrigins
from chronolog.program.outputs import ATOMS, AtomsOutput, Output, explained
from chronolog.terms import TermDictionary

Binding = dict[str, Value]
# (binding, time horizon, count horizon): one way the body holds at t
Match = tuple[Binding, int, int]


class OrderError(ChronologError):
    """A time point pushed that is not later than the last one."""


def _value(term: Term, binding: Binding) -> Value:
    return binding[term.name] if isinstance(term, Var) else term.value  # type: ignore[union-attr]


# a term made ready for reading off a binding: (is it a variable, its name or value)
Source = tuple[bool, object]


def _source(term: Term) -> Source:
    return (True, term.name) if isinstance(term, Var) else (False, term.value)  # type: ignore[union-attr]


class _Step:
    """A positive literal at its place in a join order: which of its arguments are known
    when it is reached (the index key), which it binds, which must repeat an argument."""

    __slots__ = ("literal", "pred", "modality", "window", "positions", "key", "binds", "same", "time_bind",
                 "time_check")

    def __init__(self, literal: ExtLiteral, bound: set[str]) -> None:
        self.literal = literal
        self.pred = literal.pred
        self.modality = literal.modality
        self.window = literal.window
        positions, key, binds, same, first = [], [], [], [], {}
        for i, term in enumerate(literal.atom.args):
            if isinstance(term, Const) or term.name in bound:
                positions.append(i)
                key.append(_source(term))
            elif term.name in first:
                same.append((first[term.name], i))
            else:
                first[term.name] = i
                binds.append((i, term.name))
        self.positions, self.key, self.binds, self.same = tuple(positions), key, binds, same
        bound.update(first)
        self.time_bind: str | None = None  # the variable T of @(T, .) bound here
        self.time_check: Source | None = None  # else the T to compare with
        if literal.modality == AT:
            if isinstance(literal.time, Var) and literal.time.name not in bound:
                self.time_bind = literal.time.name
                bound.add(literal.time.name)
            else:
                self.time_check = _source(literal.time)  # type: ignore[arg-type]


class _Rule:
    """A checked rule made ready for joining."""

    def __init__(self, rule: CheckedRule, position: int) -> None:
        self.rule = rule
        self.position = position  # in the program, to name the rule in snapshots
        self.positives = [b for b in rule.body if isinstance(b, ExtLiteral) and b.positive]
        self.preds = [b.pred for b in self.positives]
        self.at_literals = [b.modality == AT for b in self.positives]
        # join orders, as steps: the body's, and for each positive literal one starting there
        self.plans: dict[int | None, list[_Step]] = {None: self._plan(self.positives)}
        for i, literal in enumerate(self.positives):
            self.plans[i] = self._plan([literal] + self.positives[:i] + self.positives[i + 1:])
        self.head_args = [_source(a) for a in rule.head.args]
        self.head_positions = tuple(range(len(rule.head.args)))
        self.tests = [b for b in binding_order(rule.body) if not (isinstance(b, ExtLiteral) and b.positive)]
        # evaluated in full at every time point: decided anew each time (box, negation)
        self.full = not self.positives or any(
            isinstance(b, ExtLiteral) and (not b.positive or b.modality == BOX) for b in rule.body)
        self.reads = {b.pred for b in rule.body if isinstance(b, ExtLiteral)}
        self.head_pred: Pred = (rule.head.pred, len(rule.head.args))

    @staticmethod
    def _plan(order: list[ExtLiteral]) -> list[_Step]:
        bound: set[str] = set()
        return [_Step(literal, bound) for literal in order]


class LarsEngine(Program):
    """A LARS program evaluated incrementally (see the module docstring)."""

    output_kind = ATOMS
    input_kind = ATOMS_IN

    def __init__(self, spec: ProgramSpec, program: CheckedProgram, dictionary: TermDictionary | None = None) -> None:
        self.spec = spec
        self.checked = program
        self.dictionary = dictionary or TermDictionary()
        self.warnings = []
        self.rules = [_Rule(r, i) for i, r in enumerate(program.rules)]
        self.explainer = AtomOrigins(self, _value) if spec.options.provenance else None
        self.intensional = program.intensional
        windows = [lit.window for r in program.rules for lit in r.literals]
        unbounded = any(lit.window is None and lit.modality != PLAIN for r in program.rules for lit in r.literals)
        self._time_reach = None if unbounded else max((w.size for w in windows if w and not w.tuple), default=0)
        self._tuple_reach = max((w.size for w in windows if w and w.tuple), default=0)
        self._reset()

    def _reset(self) -> None:
        self.store = AnnotatedStore()
        self.first: int | None = None  # t1, the first time point of the timeline
        self.last: int | None = None
        self.count = 0  # data atoms of extensional predicates so far
        self.arrivals: deque[int] = deque(maxlen=max(self._tuple_reach, 1))  # their times, the last ones
        self.counts: dict[int, int] = {}  # time point -> the count up to and including it
        self.data: deque[tuple[int, list[Fact]]] = deque()  # data facts by time point, for eviction
        self.now = 0  # the time point being evaluated
        # future time point -> matches of rules with a head @(T, a) there, T > now when found:
        # the head is derived at T if the body's horizons still cover T
        self.pending: dict[int, list[tuple[_Rule, Match]]] = {}
        # the output, kept up to date as facts come and go (most atoms hold on):
        self._holding: dict[tuple, int] = {}  # atom -> its alive facts holding at every time (at None)
        self._now_atoms: set[tuple] = set()  # atoms of facts about the current time point only
        self._touched: set[tuple] = set()  # atoms that may have come or gone since the last output
        self._texts: dict[tuple, str] = {}  # atom -> text, for the atoms of the last output
        self._sorted: list[str] = []  # the last output's texts, sorted

    # -- the program contract -------------------------------------------------------

    def push(self, time: int, inputs: Inputs) -> list[Output]:
        for name in inputs:
            if name != UNNAMED:
                raise UnknownStreamError(f"a LARS program reads one unnamed stream, not {name!r}")
        if self.last is not None and time <= self.last:
            raise OrderError(f"time point {time} pushed after {self.last}: time points must increase")
        outputs: list[Output] = []
        if self.last is not None:
            for empty in range(self.last + 1, time):
                outputs.append(self._output_at(empty, []))
        atoms: dict[tuple, None] = {}
        for element in inputs.get(UNNAMED, ()):
            for text in element:
                atoms.setdefault(parse_atom(text), None)
        outputs.append(self._output_at(time, list(atoms)))
        return outputs

    def _output_at(self, t: int, atoms: list[tuple]) -> Output:
        """Evaluate time point ``t``; its output, explained while what holds at t is known."""
        output = self._evaluate(t, atoms)
        return output if self.explainer is None else explained(output, self.explainer.record(output))

    def snapshot(self) -> bytes:
        facts = list(self.store)
        number = {f.serial: i for i, f in enumerate(facts)}
        data = [(time, [number[f.serial] for f in at_time]) for time, at_time in self.data]
        pending = {time: [(rule.position, match) for rule, match in due] for time, due in self.pending.items()}
        why = None if self.explainer is None else self.explainer.of(facts)
        return pickle.dumps((self.first, self.last, self.count, list(self.arrivals), self.counts,
                             [f.state() for f in facts], data, pending, why), protocol=5)

    def restore(self, data: bytes) -> None:
        first, last, count, arrivals, counts, facts, by_time, pending, why = pickle.loads(data)
        self._reset()
        self.pending = {time: [(self.rules[i], match) for i, match in due] for time, due in pending.items()}
        self.first, self.last, self.count, self.counts = first, last, count, dict(counts)
        self.arrivals.extend(arrivals)
        made = [Fact.from_state(state) for state in facts]
        self.now = last if last is not None else 0
        for fact in made:
            self._insert(fact)
        self._texts = {atom: atom_text(atom) for atom in [*self._holding, *self._now_atoms]}
        self._sorted = sorted(self._texts.values())
        self.data.extend((time, [made[i] for i in indexes]) for time, indexes in by_time)
        if self.explainer is not None:
            self.explainer.restore(made, why)

    def describe(self) -> list[str]:
        return [f"{len(self.rules)} rules in {self.checked.strata} strata"]

    def held(self) -> dict[str, int]:
        return {"atoms stored": len(self.store), "derivations pending": sum(map(len, self.pending.values()))}

    # -- one time point -------------------------------------------------------------

    def _evaluate(self, t: int, atoms: list[tuple]) -> AtomsOutput:
        if self.first is None:
            self.first = t
        self.last = t
        self.now = t
        self._touched = self._now_atoms
        self._now_atoms = set()
        new: list[Fact] = []
        for pred, args in atoms:
            key = (pred, len(args))
            if key in self.intensional:
                seq = 0
            else:
                self.count += 1
                seq = self.count
                self.arrivals.append(t)
            fact = Fact(key, args, t, t, seq=seq)
            self._insert(fact)
            new.append(fact)
        self.counts[t] = self.count
        if new:
            self.data.append((t, list(new)))
        holding, touched = self._holding, self._touched
        for fact in self.store.expire(t, self.count):
            if fact.at is None:
                atom = (fact.pred[0], fact.args)
                left = holding[atom] - 1
                if left:
                    holding[atom] = left
                else:
                    del holding[atom]
                    touched.add(atom)
        self._evict(t)
        due = [(rule, match) for rule, match in self.pending.pop(t, ()) if match[1] >= t and match[2] >= self.count]
        for stratum in range(self.checked.strata):
            rules = [r for r in self.rules if r.rule.stratum == stratum]
            new.extend(f for rule, match in due
                       if rule.rule.stratum == stratum and (f := self._derive(rule, match)) is not None)
            delta = new
            first_round = True
            while True:
                changed: dict[Pred, list[Fact]] = {}
                for f in delta:
                    changed.setdefault(f.pred, []).append(f)
                derived: list[tuple[_Rule, Match]] = []
                for rule in rules:
                    if rule.full:
                        if first_round or not rule.reads.isdisjoint(changed):
                            derived.extend((rule, m) for m in self._join(rule, None, None))
                        continue
                    for i, pred in enumerate(rule.preds):
                        if pred in changed or rule.at_literals[i] and first_round:
                            derived.extend((rule, m) for m in self._join(rule, i, changed.get(pred, [])))
                delta = [f for rule, match in derived if (f := self._derive(rule, match)) is not None]
                new.extend(delta)
                first_round = False
                if not delta:
                    break
        return AtomsOutput(t, self._output(t))

    def _evict(self, t: int) -> None:
        """Drop data atoms no window can reach any more, with their counts."""
        if self._time_reach is None:
            return
        keep = t - self._time_reach
        if self._tuple_reach:
            keep = min(keep, self._tuple_start(self._tuple_reach))
        while self.data and self.data[0][0] < keep:
            for fact in self.data.popleft()[1]:
                self.store.remove(fact)
        for time in [u for u in self.counts if u < keep]:
            del self.counts[time]

    def _tuple_start(self, n: int) -> int:
        """The earliest time point of the tuple window of size n now."""
        if self.count < n:
            return self.first  # type: ignore[return-value]
        return self.arrivals[-n]

    def _derive(self, rule: _Rule, match: Match) -> Fact | None:
        binding, horizon, count_horizon = match
        args = tuple([binding[v] if is_var else v for is_var, v in rule.head_args])
        at = None
        if rule.rule.head_time is not None:
            at = _value(rule.rule.head_time, binding)
            if not isinstance(at, int) or not self.first <= at:  # type: ignore[operator]
                return None
            if at > self.now:  # outside the timeline now; derived at ``at`` if the body holds then
                if horizon >= at:
                    self.pending.setdefault(at, []).append((rule, match))
                return None
        for fact in self.store.matching(rule.head_pred, rule.head_positions, args):
            if fact.at == at and fact.horizon >= horizon and fact.count_horizon >= count_horizon:
                return None
        fact = Fact(rule.head_pred, args, at, self.now, horizon=horizon, count_horizon=count_horizon)
        self._insert(fact)
        if self.explainer is not None:
            self.explainer.derived(fact, rule, binding)
        return fact

    def _insert(self, fact: Fact) -> None:
        """Store a fact, and note its atom for the output when it holds at now."""
        self.store.insert(fact)
        if fact.pred in self.intensional:
            atom = (fact.pred[0], fact.args)
            if fact.at is None:
                before = self._holding.get(atom, 0)
                self._holding[atom] = before + 1
                if not before:
                    self._touched.add(atom)
            elif fact.at == self.now:
                self._now_atoms.add(atom)
                self._touched.add(atom)

    def _output(self, t: int) -> tuple[str, ...]:
        """Every intensional atom holding at t: the last output, with the atoms touched
        since then that came or went."""
        holding, now_atoms, texts = self._holding, self._now_atoms, self._texts
        came, gone = [], set()
        for atom in self._touched:
            if atom in holding or atom in now_atoms:
                if atom not in texts:
                    texts[atom] = text = atom_text(atom)
                    came.append(text)
            elif atom in texts:
                gone.add(texts.pop(atom))
        self._touched = set()
        if gone:
            self._sorted = list(filterfalse(gone.__contains__, self._sorted))
        if came:
            came.sort()
            self._sorted.extend(came)
            self._sorted.sort()  # two sorted runs: merged in linear time
        return tuple(self._sorted)

    # -- joins ----------------------------------------------------------------------

    def _join(self, rule: _Rule, delta_at: int | None, delta: list[Fact] | None) -> list[Match]:
        """The body's matches at now; with ``delta_at``, those whose literal ``delta_at``
        is grounded on a fact of ``delta`` (or is new for another reason)."""
        steps = rule.plans[delta_at]
        last = len(steps)
        matches: list[Match] = []

        def extend(k: int, binding: Binding, horizon: int, count_horizon: int) -> None:
            if k == last:
                if rule.tests:
                    self._test(rule, binding, horizon, count_horizon, matches)
                else:
                    matches.append((binding, horizon, count_horizon))
                return
            only = delta if k == 0 else None
            for b, h, hc, is_new, _ in self._ground(steps[k], binding, only):
                if only is not None and not is_new:
                    continue
                extend(k + 1, b, horizon if horizon < h else h, count_horizon if count_horizon < hc else hc)

        extend(0, {}, INFINITY, INFINITY)
        return matches

    def _test(self, rule: _Rule, binding: Binding, horizon: int, count_horizon: int, matches: list[Match]) -> None:
        """Add the match when the rule's built-ins and tests hold (Math binds its result)."""
        binding = dict(binding)
        for item in rule.tests:
            if isinstance(item, Math):
                result = arithmetic(item.op, _value(item.left, binding), _value(item.right, binding))
                if result is None:
                    return
                if isinstance(item.result, Var) and item.result.name not in binding:
                    binding[item.result.name] = result
                elif _value(item.result, binding) != result:
                    return
            elif isinstance(item, Comp):
                if not compare(item.op, _value(item.left, binding), _value(item.right, binding)):
                    return
            else:
                if not self._holds(item, binding):
                    return
                horizon = min(horizon, self.now)
        matches.append((binding, horizon, count_horizon))

    def _ground(self, step: _Step, binding: Binding,
                only: list[Fact] | None) -> list[tuple[Binding, int, int, bool, Fact]]:
        """Algorithm 2 for one positive literal: its groundings on facts (of ``only`` when
        given), with how long each holds (time and count horizon), whether it is new at
        now, and the fact."""
        t = self.now
        positions = step.positions
        key = tuple([binding[v] if is_var else v for is_var, v in step.key])
        modality, window = step.modality, step.window
        if only is None:
            facts = self.store.matching(step.pred, positions, key)
        else:
            facts = [f for f in only if f.alive and (not positions or all(f.args[p] == k for p, k in zip(positions, key)))]
            if modality == AT:  # @ over a fact of the current time point is new at every t
                facts += [f for f in self.store.facts(step.pred) if f.at is None and f.consider < t
                          and all(f.args[p] == k for p, k in zip(positions, key))]
        time_size = window.size if window is not None and not window.tuple else None
        binds, same = step.binds, step.same
        found = []
        for fact in facts:
            fat = fact.at
            at = t if fat is None else fat
            if fact.seq is not None:  # data: true for ever, its horizons are the window's
                horizon = count_horizon = INFINITY
            else:
                horizon, count_horizon = fact.horizon, fact.count_horizon
            if window is not None and fat is not None:
                if time_size is not None:
                    if at < t - time_size:
                        continue
                    if at + time_size < horizon:
                        horizon = at + time_size
                else:
                    last = self._tuple_last(window.size, fact, at)
                    if last is None:
                        continue
                    if last < count_horizon:
                        count_horizon = last
            args = fact.args
            if same and any(args[i] != args[j] for i, j in same):
                continue
            extended = binding
            if binds:
                extended = dict(binding)
                for i, name in binds:
                    extended[name] = args[i]
            new = fact.consider == t
            if modality == PLAIN:
                if at != t:
                    continue
                if fat is not None:
                    horizon = t
            elif modality == BOX:
                if at != t or not self._holds(step.literal, extended):
                    continue
                horizon, new = t, True
            elif modality == AT:
                if fat is None:
                    horizon, new = t, True
                if step.time_bind is not None:
                    extended = {**extended, step.time_bind: at}
                else:
                    is_var, v = step.time_check  # type: ignore[misc]
                    if (extended[v] if is_var else v) != at:
                        continue
            found.append((extended, horizon, count_horizon, new, fact))
        return found

    def _tuple_last(self, size: int, fact: Fact, at: int) -> int | None:
        """The count of data atoms up to which a fact holding at ``at`` stays in a tuple
        window of ``size``; None if it is not in the window now."""
        if fact.seq:  # an atom of an extensional predicate: counted
            last = fact.seq + size - 1
        else:  # in the window while fewer than n atoms arrive after its time point
            upto = self.counts.get(at)
            if upto is None:  # evicted: before every tuple window
                return None
            last = upto + size - 1
        return None if last < self.count else last

    # -- the definitions, for what is decided anew at each time point ---------------

    def _holds(self, literal: ExtLiteral, binding: Binding) -> bool:
        """Whether a literal (variables bound) holds now, by Definitions 3-6."""
        t = self.now
        args = tuple(_value(a, binding) for a in literal.atom.args)
        window = literal.window
        lo, cut, cut_seq = self.first, None, 0
        if window is not None and not window.tuple:
            lo = max(self.first, t - window.size)  # type: ignore[type-var]
        elif window is not None and self.count >= window.size:
            lo = cut = self._tuple_start(window.size)
            cut_seq = self.count - window.size + 1
        times = set()
        for fact in self.store.matching(literal.pred, tuple(range(len(args))), args):
            at = t if fact.at is None else fact.at
            if at < lo or (at == cut and fact.seq and fact.seq < cut_seq):  # type: ignore[operator]
                continue
            times.add(at)
        if literal.modality == DIAMOND:
            found = len(times) < t - lo + 1 if literal.inner_negated else bool(times)  # type: ignore[operator]
        elif literal.modality == BOX:
            found = not times if literal.inner_negated else len(times) == t - lo + 1  # type: ignore[operator]
        elif literal.modality == AT:
            u = _value(literal.time, binding)  # type: ignore[arg-type]
            found = isinstance(u, int) and lo <= u <= t and (u in times) != literal.inner_negated  # type: ignore[operator]
        else:
            found = t in times
        return found != literal.negated
