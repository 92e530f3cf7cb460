"""DOTR's Spark split (``DotrPlan``), driven in this process as the Spark runner drives it,
outputs exactly what the in-process program does: fresh IRIs and blank nodes included,
since both name a firing by its place in the stream. The Spark runs themselves are in
tests/spark/test_run.py."""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from chronolog.engine import Engine
from chronolog.lang.registry import compile_program, load_spec
from chronolog.program import Options, Output, ProgramSpec, Record
from chronolog.program.contract import element_from_text, element_text
from chronolog.program.outputs import render
from golden import Case, cases

ROOT = Path(__file__).resolve().parents[1]
DOTR_CASES = [c for c in cases() if c.lang == "dotr"]
Rendered = tuple[int, str, tuple[str, ...]]


def example_spec(name: str) -> ProgramSpec:
    """The spec of examples/NAME: its program, background.ttl and Datalog rules."""
    folder = ROOT / "examples" / name
    (program,) = folder.glob("*.dotr")
    return load_spec(str(program), "dotr", Options((str(folder / "background.ttl"),),
                                                   tuple(str(p) for p in sorted(folder.glob("*.dl")))))


def rendered(outputs: list[Output], program) -> list[Rendered]:
    out = []
    for output in outputs:
        rule, body = render(output, program.dictionary)
        out.append((output.time, rule, tuple(sorted(body.splitlines()))))
    return out


def both_runs(spec: ProgramSpec, streams: dict[str, Path]) -> tuple[list[Rendered], list[Rendered]]:
    """The in-process outputs, and those of the plan: each time point's inputs, as text,
    prepared by one program, and each key's records processed by another (of the keyed
    spec), one micro-batch per time point, the key's state kept as bytes in between."""
    inprocess = compile_program(spec)
    prepare_side = compile_program(spec)
    plan = prepare_side.plan()
    keyed = compile_program(plan.keyed_spec(spec))
    keyed_plan = keyed.plan()
    push = inprocess.push
    states: dict[str, bytes | None] = {}
    split: list[Rendered] = []

    def pushed(time: int, inputs: dict) -> list[Output]:
        shipped = {name: [element_from_text(element_text(e, "rdf", inprocess.dictionary), "rdf",
                                            prepare_side.dictionary) for e in elements]
                   for name, elements in inputs.items()}
        prepared = plan.prepare(time, shipped)
        split.extend(rendered(prepared.outputs, prepare_side))
        by_key: dict[str, list[Record]] = {}
        for record in pickle.loads(pickle.dumps(prepared.records)):
            by_key.setdefault(record.key, []).append(record)
        for key, records in by_key.items():
            processed = keyed_plan.process(key, states.get(key), sorted(records, key=lambda r: (r.time, r.seq)))
            states[key] = processed.state
            split.extend(rendered(processed.outputs, keyed))
        return push(time, inputs)

    inprocess.push = pushed  # type: ignore[method-assign]
    engine = Engine(inprocess)
    outputs = list(engine.run_files({name: str(path) for name, path in streams.items()}))
    return sorted(rendered(outputs, inprocess)), sorted(split)


@pytest.mark.parametrize("case", DOTR_CASES, ids=[c.id for c in DOTR_CASES])
def test_plan_equals_inprocess_exactly_on_the_golden_cases(case: Case) -> None:
    got, split = both_runs(case.spec(), case.streams)
    assert got, "the case detects nothing: the comparison would be empty"
    assert split == got


@pytest.mark.parametrize("example", ["fire", "synthetic"])
def test_plan_equals_inprocess_exactly_on_the_examples(example: str) -> None:
    got, split = both_runs(example_spec(example), {"": ROOT / "examples" / example / "stream.trig"})
    assert got and split == got
    assert all("urn:chronolog:" in " ".join(lines) for _, _, lines in got)  # fresh IRIs are compared too
