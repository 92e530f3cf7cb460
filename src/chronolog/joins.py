"""Compiled conjunctive joins over the store: the one join engine of chronolog.

A conjunctive body (relation patterns, negated patterns, filters, assignments) is ordered
greedily from index statistics, then compiled to a Python function of nested loops over
index lookups (generated source, compiled once). Datalog rule bodies and SPARQL basic graph
patterns both run on it; semi-naive evaluation starts a plan from a delta of new facts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence, Union

from chronolog.generated import compile_generated
from chronolog.store import EMPTY, Fact, Layers, Mask
from chronolog.terms import Var


Arg = Union[Var, int]  # a variable or an encoded constant


@dataclass(frozen=True)
class Pattern:
    """A relation atom; negated means 'no such fact' (all its variables bound before it)."""

    relation: str
    args: tuple[Arg, ...]
    negated: bool = False

    @property
    def vars(self) -> frozenset[Var]:
        return frozenset(a for a in self.args if isinstance(a, Var))


@dataclass(frozen=True)
class Filter:
    """A test over bound variables: ``test(*values)`` true keeps the solution."""

    vars: tuple[Var, ...]
    test: Callable[..., bool] = field(compare=False)


@dataclass(frozen=True)
class Assign:
    """Binds ``var`` to ``compute(*values)``; a None result drops the solution."""

    var: Var
    vars: tuple[Var, ...]
    compute: Callable[..., int | None] = field(compare=False)


Step = Union[Pattern, Filter, Assign]
Estimate = Callable[[Pattern, Mask], float]


class PlanError(ValueError):
    """A body that cannot be ordered: some step needs a variable nothing binds."""


def order(
    body: Sequence[Step],
    estimate: Estimate,
    first: int | None = None,
    bound: Iterable[Var] = (),
) -> list[Step]:
    """A join order: ``body[first]`` first if given, then greedily the cheapest pattern.

    Filters, assignments and negations run as soon as their variables are bound.
    """
    known = set(bound)
    todo = list(range(len(body)))
    out: list[Step] = []

    def take(i: int) -> None:
        todo.remove(i)
        step = body[i]
        out.append(step)
        if isinstance(step, Pattern) and not step.negated:
            known.update(step.vars)
        elif isinstance(step, Assign):
            known.add(step.var)

    def flush_ready() -> None:
        progress = True
        while progress:
            progress = False
            for i in list(todo):
                step = body[i]
                if isinstance(step, (Filter, Assign)) and set(step.vars) <= known:
                    take(i)
                    progress = True
                elif isinstance(step, Pattern) and step.negated and step.vars <= known:
                    take(i)
                    progress = True

    if first is not None:
        take(first)
    flush_ready()
    while todo:
        positives = [i for i in todo if isinstance(body[i], Pattern) and not body[i].negated]
        if not positives:
            raise PlanError(f"cannot bind the variables of {[body[i] for i in todo]!r}")
        best = min(positives, key=lambda i: (_cost(body[i], known, estimate), i))
        take(best)
        flush_ready()
    return out


def _cost(p: Pattern, known: set[Var], estimate: Estimate) -> float:
    mask = tuple(i for i, a in enumerate(p.args) if not isinstance(a, Var) or a in known)
    return estimate(p, mask)


class CompiledJoin:
    """An ordered body compiled to a function; ``bind(view)`` gives a runnable closure.

    The runnable is ``run(source, *inputs) -> list[tuple]`` where ``source`` is an iterable
    of facts for the first pattern (a delta) or None to look the first pattern up in the
    view, ``inputs`` are the values of the pre-bound variables, and each output tuple holds
    the ``outputs`` (variables' values or constants) of one solution.
    """

    def __init__(self, steps: Sequence[Step], outputs: Sequence[Arg], inputs: Sequence[Var] = ()) -> None:
        self.steps = tuple(steps)
        self.outputs = tuple(outputs)
        self.inputs = tuple(inputs)
        self.source, self._consts = _generate(self.steps, self.outputs, self.inputs)
        factory = _FACTORIES.get(self.source)
        if factory is None:
            namespace: dict[str, object] = {"EMPTY": EMPTY}
            exec(compile_generated(self.source, "join"), namespace)
            factory = _FACTORIES[self.source] = namespace["make"]
        self._factory = factory

    def bind(self, view: Layers) -> Callable[..., list[tuple]]:
        """Resolve the index lookups of every step against ``view``."""
        args: list[object] = []
        for kind, step, mask in self._consts:
            if kind == "value":
                args.append(step)
            elif kind == "lookup":
                args.append(view.lookup(step.relation, mask))
            elif kind == "scan":
                args.append(_scanner(view, step.relation))
            elif kind == "contains":
                args.append(view.contains(step.relation))
            else:
                args.append(step.test if isinstance(step, Filter) else step.compute)
        return self._factory(*args)


# generated source -> factory: bodies of the same shape compile once
_FACTORIES: dict[str, Callable[..., Callable[..., list[tuple]]]] = {}


def _scanner(view: Layers, relation: str) -> Callable[[], Iterable[Fact]]:
    return lambda: view.scan(relation)


def _generate(steps: Sequence[Step], outputs: Sequence[Arg], inputs: Sequence[Var]) -> tuple[str, list]:
    """Python source of the nested loops, and the objects the factory must receive."""
    consts: list[tuple[str, object, Mask]] = []
    names: dict[Var, str] = {}
    params: list[str] = []
    constants: dict[int, str] = {}  # constants are parameters, so same-shaped bodies share code

    def new_const(kind: str, step: object, mask: Mask = ()) -> str:
        consts.append((kind, step, mask))
        params.append(f"c{len(consts) - 1}")
        return params[-1]

    def val(a: Arg) -> str:
        if isinstance(a, Var):
            return names[a]
        if a not in constants:
            constants[a] = new_const("value", a)  # type: ignore[arg-type]
        return constants[a]

    for i, v in enumerate(inputs):
        names[v] = f"i{i}"
    body: list[str] = []
    depth = 2
    counter = 0

    def emit(line: str) -> None:
        body.append("    " * depth + line)

    for n, step in enumerate(steps):
        if isinstance(step, Filter):
            fn = new_const("fn", step)
            emit(f"if not {fn}({', '.join(val(v) for v in step.vars)}): continue" if depth > 2 else
                 f"if not {fn}({', '.join(val(v) for v in step.vars)}): return out")
            continue
        if isinstance(step, Assign):
            fn = new_const("fn", step)
            target = f"v{counter}"
            counter += 1
            emit(f"{target} = {fn}({', '.join(val(v) for v in step.vars)})")
            emit("if " + target + " is None: " + ("continue" if depth > 2 else "return out"))
            names[step.var] = target
            continue
        if step.negated:
            fn = new_const("contains", step)
            fact = "(" + ", ".join(val(a) for a in step.args) + ("," if len(step.args) == 1 else "") + ")"
            emit(f"if {fn}({fact}): " + ("continue" if depth > 2 else "return out"))
            continue
        mask = tuple(i for i, a in enumerate(step.args) if not isinstance(a, Var) or a in names)
        fvar = f"f{n}"
        if n == 0:
            if len(mask) == len(step.args) and mask:
                src = new_const("contains", step)
                fact = "(" + ", ".join(val(a) for a in step.args) + ("," if len(step.args) == 1 else "") + ")"
                emit(f"it = source if source is not None else (({fact},) if {src}({fact}) else EMPTY)")
            elif mask:
                src = new_const("lookup", step, mask)
                key = _key_expr(step, mask, val)
                emit(f"it = source if source is not None else {src}({key}, EMPTY)")
            else:
                src = new_const("scan", step)
                emit(f"it = source if source is not None else {src}()")
            emit(f"for {fvar} in it:")
            depth += 1
            # a delta source is not pre-filtered: check every bound position
            for i in mask:
                emit(f"if {fvar}[{i}] != {val(step.args[i])}: continue")
        elif len(mask) == len(step.args):
            src = new_const("contains", step)
            fact = "(" + ", ".join(val(a) for a in step.args) + ("," if len(step.args) == 1 else "") + ")"
            emit(f"if not {src}({fact}): " + ("continue" if depth > 2 else "return out"))
            continue
        else:
            if mask:
                src = new_const("lookup", step, mask)
                emit(f"for {fvar} in {src}({_key_expr(step, mask, val)}, EMPTY):")
            else:
                src = new_const("scan", step)
                emit(f"for {fvar} in {src}():")
            depth += 1
        seen_here: dict[Var, str] = {}
        for i, a in enumerate(step.args):
            if i in mask:
                continue
            if a in seen_here:
                emit(f"if {fvar}[{i}] != {seen_here[a]}: continue")
                continue
            target = f"v{counter}"
            counter += 1
            emit(f"{target} = {fvar}[{i}]")
            seen_here[a] = target
            names[a] = target
    out_expr = "(" + ", ".join(val(a) for a in outputs) + ("," if len(outputs) == 1 else "") + ")"
    emit(f"append({out_expr})")
    header = [
        f"def make({', '.join(params)}):",
        f"    def run(source{''.join(', ' + names[v] for v in inputs)}):",
        "        out = []",
        "        append = out.append",
    ]
    return "\n".join(header + body + ["        return out", "    return run"]) + "\n", consts


def _key_expr(step: Pattern, mask: Mask, val: Callable[[Arg], str]) -> str:
    if len(mask) == 1:
        return val(step.args[mask[0]])
    return "(" + ", ".join(val(step.args[i]) for i in mask) + ")"
