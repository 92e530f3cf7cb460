"""Generated code shows its own lines in tracebacks: the CEP compiler's rules and the join
engine's nested loops are registered with linecache (chronolog.generated)."""
from __future__ import annotations

import traceback

import pytest

from chronolog.cep import Predicate, Rule, RuleEvaluationError, TemporalEngine, Terminator, Within
from chronolog.cep import attr, event, last, param, where
from chronolog.joins import CompiledJoin, Filter, Pattern
from chronolog.store import Database, Layers
from chronolog.terms import Var


def generated_frame(exc: BaseException, prefix: str) -> traceback.FrameSummary:
    """The innermost frame of ``exc``'s traceback in generated code named ``<prefix ...>``."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(f"<{prefix} ")]
    assert frames, f"no frame in generated {prefix} code"
    return frames[-1]


def failing_decode(value: object) -> object:
    if value == "bad":
        raise ValueError("cannot decode")
    return value


def test_a_rule_failing_in_its_generated_code_shows_the_generated_line() -> None:
    engine = TemporalEngine(decode=failing_decode)
    engine.declare("Smoke", ["area"])
    engine.declare("Temp", ["area", "value"])
    plan = engine.register(Rule(
        name="fire", emits="Fire", terminator=Terminator("S", "Smoke"),
        predicates=[Predicate("T", "Temp", last(), Within(300, of="S"),
                              where=[param("T.area", "S.area"), where("T.value", ">", 45)])],
        outputs={"area": attr("S.area")}))
    with pytest.raises(RuleEvaluationError) as info:
        engine.push_batch([event("Temp", 10, area="A", value="bad"), event("Smoke", 12, area="A")])
    cause = info.value.__cause__
    assert isinstance(cause, ValueError)
    frame = generated_frame(cause, "rule fire")
    assert frame.line and frame.line == plan.source.splitlines()[frame.lineno - 1].strip()
    assert frame.line in "".join(traceback.format_exception(cause))


def test_a_join_failing_in_its_generated_code_shows_the_generated_line() -> None:
    def test(x: int) -> bool:
        raise ValueError("filter failed")

    db = Database()
    db.triples.add((1, 2, 3))
    x = Var("x")
    join = CompiledJoin([Pattern("triple", (x, 2, 3)), Filter((x,), test)], [x])
    with pytest.raises(ValueError) as info:
        join.bind(Layers([db]))(None)
    frame = generated_frame(info.value, "join")
    assert frame.line and frame.line == join.source.splitlines()[frame.lineno - 1].strip()
    assert frame.line in "".join(traceback.format_exception(info.value))
