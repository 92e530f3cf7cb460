"""Programs that never finish (issue 12, point 6): ``check`` warns about rules that can
create unboundedly many new terms, and at run time a bound on the facts such rules derive
per time point stops the run with an error naming the rule."""
from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal

from chronolog.datalog import Reasoner, load_program
from chronolog.datalog.reasoner import DerivationLimitError
from chronolog.lang.registry import compile_program
from chronolog.program import Options, ProgramSpec
from chronolog.terms import TermDictionary

RULES = """PREFIX : <http://e/>
[count] :n(?s, ?y) :- :n(?s, ?x), ?y = ?x + 1.
[copy] :m(?s, ?y) :- :n(?s, ?x), ?y = ?x.
[once] :k(?s, ?y) :- :n(?s, ?x), ?y = ?x * 2.
[a] :p(?s, ?y) :- :q(?s, ?x), ?y = ?x - 1.
[b] :q(?s, ?x) :- :p(?s, ?x).
"""


def test_rules_that_compute_a_head_term_and_depend_on_themselves_are_reported() -> None:
    program = load_program([(RULES, "r.dl")], TermDictionary())
    assert [r.label for r in program.unbounded] == ["count", "a"]
    (count, count_message), (a, _) = program.warnings()
    assert (str(count), str(a)) == ("r.dl:2:35", "r.dl:5:31")  # the computed variable, ?y = ...
    assert count_message.startswith("rule [count] may derive without end: its head's ?y is computed by arithmetic")


def test_check_shows_the_warning_of_a_dotr_programs_rules(tmp_path: Path) -> None:
    rules = tmp_path / "r.dl"
    rules.write_text(RULES, encoding="utf-8")
    text = "PREFIX : <http://e/>\nEVENT N AS SELECT ?s ?v WHERE { ?s :n ?v }\n"
    program = compile_program(ProgramSpec("dotr", text, "p.dotr", Options(rules=(str(rules),))))
    assert [str(w).split(": warning: ")[0] for w in program.warnings] == [f"{rules}:2:35", f"{rules}:5:31"]


def _reasoner(max_derived: int) -> tuple[Reasoner, TermDictionary]:
    d = TermDictionary()
    return Reasoner(load_program([(RULES, "r.dl")], d), d, max_derived=max_derived), d


def test_a_time_point_that_derives_without_end_stops_naming_the_rule() -> None:
    reasoner, d = _reasoner(500)
    zero = d.encode(Literal(0))
    with pytest.raises(DerivationLimitError, match=r"^r\.dl:2:35: rule \[count\] derived 501 new facts") as caught:
        reasoner.at([(d.iri("http://e/a"), d.iri("http://e/n"), zero)])
    assert "at most 500 facts per time point (max_derived)" in str(caught.value)
    assert str(caught.value).endswith("[count] :n(?s, ?y) :- :n(?s, ?x), ?y = ?x + 1.")


def test_a_background_closure_that_derives_without_end_stops_too() -> None:
    d = TermDictionary()
    program = load_program([(RULES + ":n(:a, 0).\n", "r.dl")], d)
    with pytest.raises(DerivationLimitError, match=r"rule \[count\] derived 301 new facts"):
        Reasoner(program, d, max_derived=300).close()


def test_a_bounded_recursion_under_the_limit_runs() -> None:
    d = TermDictionary()
    rules = "PREFIX : <http://e/>\n:n(:a, 0).\n[upto] :n(?s, ?y) :- :n(?s, ?x), ?y = ?x + 1, ?y < 100.\n"
    program = load_program([(rules, "r.dl")], d)
    assert [r.label for r in program.unbounded] == ["upto"]  # the analysis cannot see the bound: a warning only
    view = Reasoner(program, d, max_derived=100).close()
    assert view.size("triple") == 100


@pytest.mark.parametrize("runner", ["inprocess", pytest.param("spark", marks=pytest.mark.spark)])
def test_max_derived_stops_a_run_naming_the_rule(runner: str, tmp_path: Path, capsys, request) -> None:
    from chronolog import cli

    if runner == "spark":
        request.getfixturevalue("spark")
    rules = tmp_path / "r.dl"
    rules.write_text(RULES, encoding="utf-8")
    program = tmp_path / "p.dotr"
    program.write_text("PREFIX : <http://e/>\nEVENT N AS SELECT ?s ?v WHERE { ?s :n ?v }\n", encoding="utf-8")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"time": 1, "graph": "<http://e/a> <http://e/n> 1 ."}\n', encoding="utf-8")
    assert cli.main(["run", str(program), "--stream", str(stream), "--rules", str(rules), "--runner", runner,
                     "--max-derived", "200", "-o", str(tmp_path / "out.trig")]) == 2
    err = capsys.readouterr().err
    assert "[count]" in err and "200" in err and "Traceback" not in err, err
