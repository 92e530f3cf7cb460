"""The seam every language plugs into: the language registry, the program contract's
defaults (stream names, the global Spark plan), the output writers by kind, and the
command line's --lang, --stream NAME=SOURCE and --time-unit."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from chronolog import cli
from chronolog.engine import Engine
from chronolog.errors import ChronologError
from chronolog.lang.registry import PLANNED, compile_program, language_for, language_named, languages
from chronolog.program import (
    ATOMS, GRAPHS, SOLUTIONS, UNNAMED, AtomsOutput, GlobalPlan, GraphOutput, Options, Program, ProgramSpec, Solution,
    SolutionsOutput,
)
from chronolog.program.contract import UnknownStreamError, resolve_stream
from chronolog.program.outputs import render
from chronolog.program.writers import open_output_writer, output_format
from chronolog.streams import StreamElement
from chronolog.terms import TermDictionary
from pyoxigraph import BlankNode, Literal, NamedNode

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LARS = "a(X) :- tuple_win(3, diamond(p(X)))\nb :- time_win(2, 0, 1, diamond(q))\n"


def test_languages_are_found_by_name_and_extension() -> None:
    assert {"dotr", "lars"} <= set(languages())
    assert language_for("x.dotr").name == "dotr" and language_for("x.lars").name == "lars"
    assert language_for("x.txt", "lars").name == "lars"  # --lang wins over the extension


@pytest.mark.parametrize("call, message", [
    (lambda: language_for("rules.foo"), "rules.foo: cannot tell the language from .foo (give --lang; known languages: "),
    (lambda: language_for("rules"), "cannot tell the language from no extension"),
    (lambda: language_named("prolog"), "unknown language 'prolog' (known languages: "),
])
def test_unknown_and_unbuilt_languages_are_one_line_errors(call, message: str) -> None:
    with pytest.raises(ChronologError) as info:
        call()
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("name", sorted(PLANNED))
def test_a_language_not_built_yet_says_so(name: str) -> None:
    title, ext = PLANNED[name]
    for call in (lambda: language_named(name), lambda: language_for(f"program{ext}")):
        with pytest.raises(ChronologError, match=f"the {title} language \\(--lang {name}, \\{ext}\\) is not built yet"):
            call()


def test_the_unknown_language_error_lists_every_language_and_extension() -> None:
    with pytest.raises(ChronologError) as info:
        language_named("prolog")
    for name in ("csparql", "dotr", "epsparql", "lars", "rspql", ".dotr", ".lars", ".eps", ".csparql", ".rspql"):
        assert name in str(info.value)


@pytest.mark.parametrize("language, text, options, flag", [
    ("dotr", "PREFIX : <http://e/>\n", Options(policy="recent"), "--policy"),
    ("dotr", "PREFIX : <http://e/>\n", Options(maintenance="dred"), "--maintenance"),
    ("lars", LARS, Options(background=("b.ttl",)), "--background"),
])
def test_a_language_refuses_options_it_has_no_use_for(language: str, text: str, options: Options, flag: str) -> None:
    with pytest.raises(ChronologError, match=f"{flag} does not apply to"):
        compile_program(ProgramSpec(language, text, None, options))


class Named(Program):
    """A program reading two named streams: it outputs, per time point, what came from which."""

    output_kind = ATOMS

    def __init__(self) -> None:
        self.spec = ProgramSpec("test", "")
        self.dictionary = TermDictionary()
        self.warnings = []
        self.seen: list = []

    @property
    def streams(self) -> tuple[str, ...]:
        return ("http://e/a", "http://e/b")

    def push(self, time, inputs):
        return [AtomsOutput(time, tuple(f"{name.rsplit('/', 1)[1]}({len(e)})" for name in sorted(inputs)
                                        for e in inputs[name]))]

    def snapshot(self) -> bytes:
        return b""

    def restore(self, data: bytes) -> None:
        pass


def test_stream_names_resolve_against_the_streams_a_program_reads() -> None:
    program = Named()
    assert resolve_stream(program, "http://e/a") == "http://e/a"
    with pytest.raises(UnknownStreamError, match="reads no stream 'http://e/c' \\(it reads http://e/a, http://e/b\\)"):
        resolve_stream(program, "http://e/c")
    with pytest.raises(UnknownStreamError, match="reads 2 streams .*name each one, --stream NAME=SOURCE"):
        resolve_stream(program, UNNAMED)
    lars = compile_program(ProgramSpec("lars", LARS))
    assert resolve_stream(lars, UNNAMED) == UNNAMED  # a program that declares none takes its sources as named


def test_the_host_merges_named_streams_into_time_points_in_time_order() -> None:
    engine = Engine(Named())
    a = [StreamElement(1, (1,)), StreamElement(3, (1, 2)), StreamElement(3, (3,))]
    b = [StreamElement(2, (1,)), StreamElement(3, ())]
    out = list(engine.run({"http://e/a": a, "http://e/b": b}))
    assert out == [AtomsOutput(1, ("a(1)",)), AtomsOutput(2, ("b(1)",)), AtomsOutput(3, ("a(2)", "a(1)", "b(0)"))]


def test_the_global_plan_runs_a_program_under_one_key_as_pushing_it_does() -> None:
    stream = [(1, ("p(x)", "p(y)")), (2, ("q", "p(z)")), (4, ("p(w)",)), (5, ())]
    direct = compile_program(ProgramSpec("lars", LARS))
    want = [o for t, atoms in stream for o in direct.push(t, {UNNAMED: [atoms]})]
    prepare = compile_program(ProgramSpec("lars", LARS))  # two processes: one prepares, one holds the state
    keyed = GlobalPlan(compile_program(ProgramSpec("lars", LARS)))
    state, got = None, []
    for time, atoms in stream:  # one micro-batch per time point, the state as bytes in between
        records = GlobalPlan(prepare).prepare(time, {UNNAMED: [atoms]}).records
        state, outputs, expires = keyed.process(records[0].key, state, records)
        assert expires is None and isinstance(state, bytes)
        got.extend(outputs)
    assert got == want and want


@pytest.mark.parametrize("kind, format", [(GRAPHS, "trig"), (GRAPHS, "jsonl"), (SOLUTIONS, "jsonl"), (ATOMS, "jsonl")])
def test_a_rendered_output_is_written_as_the_output_is(kind: str, format: str) -> None:
    """A Spark sink writes each output from the text ``render`` made of it on an executor,
    with no dictionary: the bytes must be those the in-process runner writes."""
    d = TermDictionary()
    a, p, five = d.encode(NamedNode("http://e/a")), d.encode(NamedNode("http://e/p")), d.encode(Literal(5))
    text, blank = d.encode(Literal('say "é"\n', language="fr")), d.encode(BlankNode("c1-0-1xb"))
    outputs = {
        GRAPHS: [GraphOutput(3, "http://e/r", ((a, p, five), (blank, p, text))), GraphOutput(3, "http://e/r", ()),
                 GraphOutput(4, "http://e/r", ((a, p, blank),))],
        SOLUTIONS: [SolutionsOutput(4, "q", (Solution({"x": a, "v": text}, 1, 4), Solution({"x": a, "y": None}))),
                    SolutionsOutput(5, "q", ())],
        ATOMS: [AtomsOutput(5, ("p(a)", 'q("é")')), AtomsOutput(6, ())],
    }[kind]
    written, rendered = io.BytesIO(), io.BytesIO()
    with open_output_writer(written, kind, d, format=format) as writer:
        for output in outputs:
            writer.write(output)
    with open_output_writer(rendered, kind, TermDictionary(), format=format) as writer:
        for output in outputs:
            writer.write_rendered(output.time, render(output, d)[1])
    assert rendered.getvalue() == written.getvalue()


def test_writers_write_each_kind_in_its_format() -> None:
    d = TermDictionary()
    a, five = d.encode(NamedNode("http://e/a")), d.encode(Literal(5))
    out = io.BytesIO()
    with open_output_writer(out, SOLUTIONS, d, format="jsonl") as writer:
        writer.write(SolutionsOutput(4, "q", (Solution({"x": a, "v": five}, 1, 4), Solution({"x": a, "y": None}))))
    assert json.loads(out.getvalue()) == {"time": 4, "solutions": [
        {"x": "<http://e/a>", "v": '"5"^^<http://www.w3.org/2001/XMLSchema#integer>', "@start": 1, "@end": 4},
        {"x": "<http://e/a>"}]}
    out = io.BytesIO()
    with open_output_writer(out, ATOMS, d, format="jsonl") as writer:
        writer.write(AtomsOutput(2, ("p(a)",)))
        writer.write(AtomsOutput(3, ()))
    assert out.getvalue() == b'{"time": 2, "atoms": ["p(a)"]}\n{"time": 3, "atoms": []}\n'


@pytest.mark.parametrize("kind, path, given, fallback, expected", [
    (GRAPHS, "out.trig", None, "jsonl", "trig"),
    (GRAPHS, None, None, "jsonl", "jsonl"),  # stdout: the input's format
    (GRAPHS, None, None, None, "trig"),
    (SOLUTIONS, "out.jsonl", None, "trig", "jsonl"),
    (SOLUTIONS, None, None, "trig", "jsonl"),
    (ATOMS, "-", None, None, "jsonl"),
])
def test_the_output_format_comes_from_o_then_the_input(kind, path, given, fallback, expected) -> None:
    assert output_format(kind, path, given, fallback) == expected


@pytest.mark.parametrize("kind, path, given, message", [
    (SOLUTIONS, "out.trig", None, "SELECT solutions are written as jsonl, not trig"),
    (ATOMS, None, "trig", "atoms are written as jsonl, not trig"),
    (GRAPHS, "out.txt", None, "out.txt: cannot tell the output format from its extension (expected .trig or .jsonl)"),
])
def test_an_output_format_a_kind_cannot_take_is_refused(kind, path, given, message) -> None:
    with pytest.raises(ChronologError, match=message.replace("(", r"\(").replace(")", r"\)")):
        output_format(kind, path, given)


def test_cli_named_streams_and_time_units(tmp_path: Path, capsys) -> None:
    case = FIXTURES / "dotr" / "seconds"
    out = tmp_path / "out.jsonl"
    args = ["run", str(case / "alarm.dotr"), "--stream", str(case / "stream.jsonl"), "--runner", "inprocess"]
    assert cli.main([*args, "--time-unit", "s", "-o", str(out)]) == 0
    assert [json.loads(line)["time"] for line in out.read_text().splitlines()] == [1704067290]
    assert cli.main([*args, "--time-unit", "min", "-o", str(out)]) == 2  # 00:01:30 is no whole minute
    assert "is not a whole number of time units (60000 ms each)" in capsys.readouterr().err
    assert cli.main([*args, "-o", str(out)]) == 0  # milliseconds: the same alarm at the same instant
    assert [json.loads(line)["time"] for line in out.read_text().splitlines()] == [1704067290000]


@pytest.mark.parametrize("args, message", [
    (["check", "x.foo"], "chronolog: x.foo: cannot tell the language from .foo (give --lang; known languages: "),
    (["check", "missing.dotr"], "chronolog: missing.dotr: no such program file"),
    (["run", "prog.dotr", "--lang", "sql", "--stream", "s.jsonl"], "chronolog: unknown language 'sql'"),
    (["run", str(FIXTURES / "lars" / "cooling" / "cooling.lars"), "--runner", "inprocess"],
     "chronolog: run needs --stream [NAME=]SOURCE (or an example directory)"),
    (["run", str(FIXTURES / "lars" / "cooling" / "cooling.lars"), "--runner", "inprocess",
      "--stream", "http://e/s=" + str(FIXTURES / "lars" / "cooling" / "stream.jsonl")],
     "chronolog: a LARS program reads one unnamed stream, not 'http://e/s'"),
    (["run", str(FIXTURES / "lars" / "cooling" / "cooling.lars"), "--runner", "inprocess", "--policy", "recent",
      "--stream", str(FIXTURES / "lars" / "cooling" / "stream.jsonl")], "chronolog: --policy does not apply to LARS"),
    (["run", str(FIXTURES / "lars" / "cooling" / "cooling.lars"), "--runner", "inprocess", "-o", "x.trig",
      "--stream", str(FIXTURES / "lars" / "cooling" / "stream.jsonl")], "chronolog: atoms are written as jsonl"),
])
def test_cli_errors_are_one_line(args: list[str], message: str, capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


def test_check_describes_any_language(capsys) -> None:
    assert cli.main(["check", str(FIXTURES / "lars" / "cooling" / "cooling.lars")]) == 0
    assert capsys.readouterr().out.startswith(f"{FIXTURES / 'lars' / 'cooling' / 'cooling.lars'}: ok: 9 rules")
