"""Terms made for the stream and the outputs do not pile up (DESIGN.md section 5): the
dictionary reclaims the recent terms no state refers to, between time points, and what a
program outputs is the same as without reclaiming."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import given, settings, strategies as st
from pyoxigraph import NamedNode

from chronolog.engine import Engine
from chronolog.lang.registry import compile_program
from chronolog.program.outputs import render
from chronolog.program import ProgramSpec
from chronolog.streams import read_jsonl
from chronolog.terms import ReclaimedTermError, TermDictionary
from golden import cases
from test_dotr_plan import ROOT, example_spec

SENSORS = 10
PROGRAM = """
PREFIX : <http://example.org/>
EVENT Warm AS SELECT ?o ?s WHERE { ?o :sensor ?s ; :temp ?v FILTER(?v > 20 && ?v <= 40) }
EVENT Hot AS SELECT ?o ?s ?v WHERE { ?o :sensor ?s ; :temp ?v FILTER(?v > 40) }
RULE :rising
  DEFINE { ?d a :Rising ; :sensor ?s ; :from ?w ; :to ?h ; :temp ?v . }
  FROM Hot AND LAST Warm WITHIN 1 s FROM Hot
  WHERE Warm.s = Hot.s
  WITH ?s = Hot.s, ?w = Warm.o, ?h = Hot.o, ?v = Hot.v
"""


def readings(count: int) -> Iterator[bytes]:
    """Sensor readings with fresh observation IRIs, one per 10 ms, warm and hot in turn."""
    for n in range(count):
        graph = (f"<http://example.org/obs/{n}> <http://example.org/sensor> <http://example.org/s{n % SENSORS}> ; "
                 f"<http://example.org/temp> {30 if (n // SENSORS) % 2 == 0 else 50} .")
        yield (json.dumps({"time": 10 * n, "graph": graph}) + "\n").encode()


def test_dictionary_stays_bounded_over_a_long_stream_of_fresh_iris() -> None:
    """75,000 fresh terms (an observation IRI per element, a detection IRI per other one);
    the dictionary holds at most twice the recent terms a reclaim pass waits for (16k)."""
    engine = Engine(PROGRAM, lang="dotr")
    sizes, detections = [], 0
    for output in engine.run(read_jsonl(readings(50_000), engine.dictionary)):
        detections += 1
        assert "Rising" in render(output, engine.dictionary)[1]  # each output decodes as it comes
        if detections % 5_000 == 0:
            sizes.append(len(engine.dictionary))
    assert detections == 25_000
    assert max(sizes) < 2 * (1 << 14) + 1_000, sizes


WINDOWED = {
    "csparql": """REGISTER QUERY hot AS PREFIX : <http://example.org/>
SELECT ?o ?s FROM STREAM <http://example.org/readings> [RANGE 1s STEP 1s]
WHERE { ?o :sensor ?s ; :temp ?v FILTER(?v > 40) }""",
    "epsparql": """PREFIX : <http://example.org/>
SELECT ?w ?h WHERE { { ?w :sensor ?s ; :temp 30 } SEQ { ?h :sensor ?s ; :temp 50 }
  FILTER(getDURATION() < "PT1S"^^xsd:duration) }""",
}


@pytest.mark.parametrize("lang", sorted(WINDOWED))
def test_programs_without_live_terms_are_reclaimed_through_their_snapshot(lang: str) -> None:
    """A program that cannot list its live terms is reclaimed through its snapshot (its state
    as text, then back): 20,000 fresh observation IRIs, and the dictionary stays small."""
    engine = Engine(WINDOWED[lang], lang=lang)
    assert engine.program.live_terms() is None
    engine.dictionary.reclaim_floor = 1_000
    sizes, outputs = [], 0
    for output in engine.run(read_jsonl(readings(20_000), engine.dictionary)):
        outputs += 1
        render(output, engine.dictionary)  # each output decodes as it comes
        sizes.append(engine.dictionary.recent)
    assert outputs > 100
    assert max(sizes) < 3_000, max(sizes)


def test_a_reclaimed_id_fails_loudly_and_its_term_comes_back_with_a_new_id() -> None:
    d = TermDictionary()
    kept = d.iri("http://e/kept")
    d.pin()
    a, b = d.iri("http://e/a"), d.iri("http://e/b")
    assert d.text(a) == "<http://e/a>"  # now cached: reclaiming must drop it with the term
    assert d.reclaim([b, kept]) == 1
    for reclaimed in (d.decode, d.text):
        with pytest.raises(ReclaimedTermError, match=f"term id {a} "):
            reclaimed(a)
    assert d.decode(kept) == NamedNode("http://e/kept") and d.decode(b) == NamedNode("http://e/b")
    again = d.iri("http://e/a")
    assert again not in (a, b, kept) and d.decode(again) == NamedNode("http://e/a")


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 20), st.lists(st.integers(0, 30), max_size=40), st.sets(st.integers(0, 60)))
def test_reclaim_keeps_the_permanent_and_the_live_terms_only(permanent: int, recent: list[int], live: set[int]) -> None:
    d = TermDictionary()
    pinned = {d.iri(f"http://e/p{n}"): n for n in range(permanent)}
    d.pin()
    ids = {d.iri(f"http://e/r{n}"): n for n in recent}
    d.reclaim(live)
    for tid, n in pinned.items():
        assert d.decode(tid) == NamedNode(f"http://e/p{n}") and d.lookup(NamedNode(f"http://e/p{n}")) == tid
    for tid, n in ids.items():
        if tid in live:
            assert d.decode(tid) == NamedNode(f"http://e/r{n}") and d.value(tid) == (0, None)
        else:
            assert d.lookup(NamedNode(f"http://e/r{n}")) is None
            with pytest.raises(ReclaimedTermError):
                d.decode(tid)
    assert d.recent == len(live & ids.keys())


def outputs_of(spec: ProgramSpec, streams: dict[str, Path], floor: int) -> list[tuple[int, str, tuple[str, ...]]]:
    program = compile_program(spec)
    program.dictionary.reclaim_floor = floor
    got = []
    for output in Engine(program).run_files({name: str(path) for name, path in streams.items()}):
        rule, body = render(output, program.dictionary)
        got.append((output.time, rule, tuple(sorted(body.splitlines() if isinstance(body, str) else body))))
    return got


RUNS = [(c.id, c.spec(), c.streams) for c in cases() if c.lang != "lars"] + [  # LARS holds atoms as text: no ids
    (f"examples/{name}", example_spec(name), {"": ROOT / "examples" / name / "stream.trig"})
    for name in ("fire", "synthetic")]


@pytest.mark.parametrize("spec, streams", [run[1:] for run in RUNS], ids=[run[0] for run in RUNS])
def test_reclaiming_as_often_as_possible_changes_no_output(spec: ProgramSpec, streams: dict[str, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    reclaimed: list[int] = []
    original = TermDictionary.reclaim
    monkeypatch.setattr(TermDictionary, "reclaim", lambda self, live: reclaimed.append(original(self, live)) or 0)
    got = outputs_of(spec, streams, 0)
    assert reclaimed, "never reclaimed: the comparison would prove nothing"
    monkeypatch.undo()
    assert got == outputs_of(spec, streams, 1 << 30)


def test_the_synthetic_example_reclaims_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above on the synthetic example runs with terms actually reclaimed."""
    dropped: list[int] = []
    original = TermDictionary.reclaim
    monkeypatch.setattr(TermDictionary, "reclaim", lambda self, live: dropped.append(original(self, live)) or 0)
    assert outputs_of(example_spec("synthetic"), {"": ROOT / "examples" / "synthetic" / "stream.trig"}, 0)
    assert sum(dropped) > 0
