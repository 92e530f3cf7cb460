"""FEEDBACK: a rule's output graphs are input again, d time units later (d = 1 unless
``FEEDBACK AFTER d``). The example examples/building through the command line, the
language's errors, and the engine's time-point order (``push``, ``flush``, ``run``).
The differential test (tests/test_dotr_differential.py) checks the same semantics
against the naive reference on random programs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyoxigraph
import pytest
from pyoxigraph import NamedNode

from chronolog.engine import Engine
from chronolog.lang.dotr.program import FeedbackLimitError
from chronolog.errors import ChronologSyntaxError
from chronolog.streams import read_stream

ROOT = Path(__file__).resolve().parents[1]
BUILDING = ROOT / "examples" / "building"
EX = "http://example.org/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def chronolog(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chronolog", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})


def output(trig: Path) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """(time, sorted triples) per output graph, fresh IRIs renamed in order of appearance."""
    times: dict[str, int] = {}
    graphs: dict[str, list] = {}
    for q in pyoxigraph.parse(path=str(trig), format=pyoxigraph.RdfFormat.TRIG):
        if isinstance(q.graph_name, pyoxigraph.DefaultGraph):
            times[q.subject.value] = int(q.object.value)
        else:
            graphs.setdefault(q.graph_name.value, []).append((q.subject, q.predicate, q.object))
    names: dict[str, str] = {}

    def text(term: object) -> str:
        value = term.value if isinstance(term, NamedNode) else str(term)
        if value.startswith("urn:chronolog:"):
            return names.setdefault(value, f"fresh{len(names) + 1}")
        return value.replace(EX, ":")

    out = []
    for g in sorted(graphs, key=lambda g: times[g]):
        out.append((times[g], sorted((text(s), text(p), text(o)) for s, p, o in
                                     sorted(graphs[g], key=lambda t: (t[1].value, str(t[2]))))))
    return out


def test_building_example_golden(tmp_path: Path) -> None:
    """Fires at 12 (:roomA), 30 (:roomC, the annex) and 50 (:roomB): fed back at 13, 31 and
    51, where the background places their rooms; the fires of :hq at 13 and 51 are 38 ms
    apart, so :hq is evacuated at 51, after the last input (run flushes the feedback)."""
    out = tmp_path / "out.trig"
    done = chronolog("run", "examples/building", "--runner", "inprocess", "-o", str(out), "--stats")
    assert done.returncode == 0, done.stderr
    fire = lambda n, room, temp: [(n, ":at_room", room), (n, ":max_temp", f'"{temp}"^^<http://www.w3.org/2001/XMLSchema#integer>'),  # noqa: E731
                                  (n, RDF_TYPE, ":Fire")]
    assert output(out) == [
        (12, fire("fresh1", ":roomA", 65)),
        (30, fire("fresh2", ":roomC", 80)),
        (50, fire("fresh3", ":roomB", 70)),
        (51, [("fresh4", ":after", "fresh3"), ("fresh4", ":building", ":hq"), ("fresh4", RDF_TYPE, ":Evacuation")]),
    ]
    assert "8 time points" in done.stderr and "3 output graphs fed back" in done.stderr


def test_check_names_the_feedback_rules() -> None:
    done = chronolog("check", "examples/building/building.dotr")
    assert done.returncode == 0, done.stderr
    assert "ok: 3 events, 2 rules" in done.stdout
    assert "feedback: the output graphs of http://example.org/fire are input again 1 time unit later" in done.stdout
    assert "feedback" not in chronolog("check", "examples/fire/fire.dotr").stdout


PROGRAM = (BUILDING / "building.dotr").read_text()


@pytest.mark.parametrize("new, where, message", [
    ("FEEDBACK FEEDBACK", "16:12", "FEEDBACK is given twice in this rule"),
    ("FEEDBACK AFTER 0 ms", "16:3", "a FEEDBACK delay must be positive"),
    ("FEEDBACK AFTER 5 parsecs", "16:20", "unknown time unit 'parsecs'"),
    ("FEEDBACK AFTER", "16:17", "expected a duration such as 5 min, 500 ms or PT5M, found the end of the rule"),
    ("FEEDBACK LATER", "16:12", "expected WHERE, WITH, CONSUMING, FEEDBACK"),
])
def test_feedback_errors_name_the_place(new: str, where: str, message: str) -> None:
    assert "\n  FEEDBACK\n" in PROGRAM
    with pytest.raises(ChronologSyntaxError) as info:
        Engine(PROGRAM.replace("\n  FEEDBACK\n", f"\n  {new}\n", 1), filename="building.dotr")
    shown = str(info.value)
    assert shown.startswith("building.dotr:" + where), shown
    assert message in shown


def _engine(**options: object) -> Engine:
    return Engine.from_file(BUILDING / "building.dotr", background=[str(BUILDING / "background.ttl")],
                            rules=[str(BUILDING / "rooms.dl")], **options)  # type: ignore[arg-type]


def test_feedback_rules_property() -> None:
    assert _engine().program.feedback_rules == {EX + "fire": 1}
    slow = Engine(PROGRAM.replace("\n  FEEDBACK\n", "\n  FEEDBACK AFTER 2 s\n"))
    assert slow.program.feedback_rules == {EX + "fire": 2000}
    assert Engine((ROOT / "examples" / "fire" / "fire.dotr").read_text()).program.feedback_rules == {}


def _points(engine: Engine) -> dict[int, list]:
    elements = list(read_stream(BUILDING / "stream.trig", engine.dictionary))
    return {e.time: list(e.triples) for e in elements}


def test_push_processes_feedback_before_later_input_and_flush_at_the_end() -> None:
    engine = _engine()
    points = _points(engine)
    assert [g.time for t in (10, 12) for g in engine.push(t, points[t])] == [12]
    assert engine.program.pending_feedback == [13]
    assert engine.push(20, points[20]) == [] and engine.program.pending_feedback == []  # 13 came first
    assert [g.time for g in engine.push(30, points[30])] == [30]
    assert [g.time for g in engine.push(50, points[50])] == [50]
    assert engine.program.flush(50) == [] and engine.program.pending_feedback == [51]
    (evacuation,) = engine.flush()
    assert evacuation.time == 51 and evacuation.rule == EX + "evacuate"
    assert engine.program.stats.time_points == 8 and engine.program.stats.feedback == 3


def test_fed_back_graph_joins_the_input_at_its_time() -> None:
    """An input element at 13 (the time the first Fire comes back) is one time point with
    it: a second Smoke in :roomA at 13 is no Fire (HighTemp was consumed), and the events
    of 13 are FireIn's and Smoke's together."""
    engine = _engine()
    points = _points(engine)
    engine.push(10, points[10])
    engine.push(12, points[12])
    smoke = [(s, p, o) for s, p, o in points[12]]
    before = engine.program.stats.events
    assert engine.push(13, smoke) == []
    assert engine.program.stats.events - before == 2 and engine.program.stats.time_points == 3


def test_self_feeding_program_stops_with_an_error_at_the_end_of_the_stream() -> None:
    program = """PREFIX : <http://example.org/>
EVENT Tick AS SELECT ?t WHERE { ?t a :Tick }
RULE :tick DEFINE { ?next a :Tick . } FROM Tick FEEDBACK AFTER 10 ms
"""
    engine = Engine(program)
    engine.program.feedback_limit = 5
    d = engine.dictionary
    tick = (d.encode(NamedNode(EX + "t0")), d.encode(NamedNode(RDF_TYPE)), d.encode(NamedNode(EX + "Tick")))
    assert [g.time for g in engine.push(0, [tick])] == [0]
    assert [g.time for g in engine.push(35, [])] == [10, 20, 30]  # a tick every 10 ms, input or not
    with pytest.raises(FeedbackLimitError, match="feedback does not stop: 5 time points processed") as info:
        engine.flush()
    assert [g.time for g in info.value.outputs] == [40, 50, 60, 70, 80]

