"""``chronolog run`` on Spark equals the in-process engine: every example, random programs
and streams, under different micro-batch sizes and partition counts; bad input in the
middle of a stream is reported and loses nothing; keyed state stays bounded."""
from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

from chronolog import cli
from chronolog.engine import Engine
from chronolog.lang.dotr.program import FeedbackLimitError
from chronolog.program import Options, ProgramSpec
from chronolog.spark.runner import run_spark
from chronolog.spark.sinks import CallbackSink, LateFileSink, OutputRecord
from test_dotr_differential import cases, render, ttl
from golden import Case, canonical, canonical_output
from golden import cases as golden_cases

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIRE = EXAMPLES / "fire"
def graph_key(time: int, rule: str, ntriples: str) -> tuple:
    """A detection, exactly: both runners name fresh IRIs and blank nodes alike."""
    return time, rule, tuple(sorted(line for line in ntriples.splitlines() if line))


def spark_detections(spec: ProgramSpec, stream: Path | str, **options) -> tuple[Counter, object]:
    got: dict[int, list[OutputRecord]] = {}
    summary = run_spark(spec, str(stream), CallbackSink(lambda b, d: got.setdefault(b, list(d))), **options)
    return Counter(graph_key(d.time, d.source, d.body) for ds in got.values() for d in ds), summary


def inprocess_detections(spec: ProgramSpec, stream: list[tuple[int, list]],
                         feedback_limit: int | None = None) -> Counter | None:
    """The detections of the stream and of its end (``flush``, as ``chronolog run`` and the
    Spark runner do: feedback still pending is processed); None when the program keeps
    feeding itself past ``feedback_limit`` time points without input."""
    engine = Engine(spec)
    if feedback_limit is not None:
        engine.program.feedback_limit = feedback_limit
    enc, dec = engine.dictionary.encode, engine.dictionary.decode
    out: Counter = Counter()
    graphs = [g for time, triples in stream for g in engine.push(time, [tuple(enc(x) for x in t) for t in triples])]
    try:
        graphs += engine.flush()
    except FeedbackLimitError:
        return None
    for g in graphs:
        text = "".join(f"{dec(s)} {dec(p)} {dec(o)} .\n" for s, p, o in g.triples)
        out[graph_key(g.time, g.rule, text)] += 1
    return out


@pytest.mark.parametrize("example, batch, partitions, keyed", [
    ("fire", 0, 0, 1),
    ("synthetic", 37, 3, 3),
    ("citybench/q1", 0, 1, 1),
    ("citybench/q2", 45, 2, 2),
])
def test_examples_on_spark_equal_inprocess(spark, tmp_path: Path, example: str, batch: int, partitions: int,
                                           keyed: int) -> None:
    """``batch`` elements per micro-batch (0: all), ``partitions`` enrichment tasks,
    ``keyed`` partitions of the temporal stage."""
    folder = EXAMPLES / example
    expected, got = tmp_path / "inprocess.trig", tmp_path / "spark.trig"
    assert cli.main(["run", str(folder), "--runner", "inprocess", "-o", str(expected)]) == 0
    options = ["--max-elements-per-batch", str(batch)] if batch else []
    options += ["--partitions", str(partitions)] if partitions else []
    options += ["--conf", f"spark.sql.shuffle.partitions={keyed}"]
    assert cli.main(["run", str(folder), "-o", str(got), *options]) == 0  # Spark is the default runner
    want = canonical(expected.read_bytes(), rename=False)
    assert want, "the example detects nothing: the comparison would be empty"
    assert canonical(got.read_bytes(), rename=False) == want  # fresh IRIs and blank nodes included


CASES = golden_cases()


SPLITS = [(0, 2, 2), (2, 2, 3), (1, 1, 2)]  # (elements per batch, 0: all, a bounded run; enrichment tasks; keyed partitions)


@pytest.mark.parametrize("case, split", [(c, SPLITS[n % len(SPLITS)]) for n, c in enumerate(CASES)],
                         ids=[c.id for c in CASES])
def test_golden_cases_on_spark(spark, tmp_path: Path, case: Case, split: tuple[int, int, int]) -> None:
    """Every language's golden cases (tests/fixtures/<lang>/) on Spark: the expected output
    whatever the micro-batches (``batch`` elements each, 0: all), enrichment tasks and
    keyed partitions. Each case runs under one of the splits, in turn (a Spark run costs
    seconds): every language meets every split as its cases are added."""
    batch, partitions, keyed = split
    out = tmp_path / f"out{case.expected.suffix}"
    options = ["--max-elements-per-batch", str(batch)] if batch else []
    options += ["--partitions", str(partitions), "--conf", f"spark.sql.shuffle.partitions={keyed}"]
    assert cli.main([*case.arguments(out), *options]) == 0  # Spark is the default runner
    assert canonical_output(out) == canonical_output(case.expected)


DOTR_CASES = [c for c in CASES if c.lang == "dotr"]


@pytest.mark.parametrize("case", DOTR_CASES, ids=[c.id for c in DOTR_CASES])
def test_dotr_cases_on_spark_equal_inprocess_exactly(spark, tmp_path: Path, case: Case) -> None:
    """DOTR names a firing by its place in the stream: Spark's output is the in-process
    one, fresh IRIs and blank nodes included, not up to renaming."""
    expected, got = tmp_path / f"inprocess{case.expected.suffix}", tmp_path / f"spark{case.expected.suffix}"
    assert cli.main([*case.arguments(expected), "--runner", "inprocess"]) == 0
    assert cli.main([*case.arguments(got), "--partitions", "2", "--conf", "spark.sql.shuffle.partitions=2"]) == 0
    want = canonical_output(expected, rename=False)
    assert want and canonical_output(got, rename=False) == want


@pytest.mark.parametrize("example, batch", [("fire", 1), ("citybench/q1", 300)])
def test_provenance_on_spark_equals_in_process(spark, tmp_path: Path, example: str, batch: int) -> None:
    """Each detection's provenance record is the same on both runners (events shipped
    between the stages with their explanation, kept in the state store across
    micro-batches), and each names the element its graph was written under."""
    from chronolog.provenance.records import read_records

    folder = EXAMPLES / example
    records = {}
    for runner, extra in (("inprocess", ["--runner", "inprocess"]),
                          ("spark", ["--max-elements-per-batch", str(batch), "--conf", "spark.sql.shuffle.partitions=2"])):
        out, why = tmp_path / f"{runner}.trig", tmp_path / f"{runner}.jsonl"
        assert cli.main(["run", str(folder), "-o", str(out), "--provenance", str(why), *extra]) == 0
        records[runner] = list(read_records(str(why)))
        written = out.read_text()
        assert all(f"<{r['element']}> {{" in written for r in records[runner])
    same = lambda rs: sorted(json.dumps({k: v for k, v in r.items() if k != "element"}, sort_keys=True) for r in rs)  # noqa: E731
    assert records["inprocess"] and same(records["spark"]) == same(records["inprocess"])


@pytest.mark.parametrize("case", [c for c in golden_cases() if c.id in (
    "csparql/isin_fig4_dred", "rspql/paper_ex7_window_at_8", "rspql/rsepql_fig1_recent",
    "rspql/rsepql_mixed_aggregate_default_graph", "epsparql/downrated_rdfs", "lars/cooling")], ids=lambda c: c.id)
def test_provenance_of_the_other_languages_on_spark_equals_in_process(spark, tmp_path: Path, case: Case) -> None:
    """Their programs run whole under one key: the explanations their state keeps cross
    micro-batches in its snapshot."""
    from chronolog.provenance.records import read_records

    records = {}
    for runner in ("inprocess", "spark"):
        why = tmp_path / f"{runner}.jsonl"
        extra = ["--max-elements-per-batch", "2"] if runner == "spark" else []
        assert cli.main([*case.arguments(tmp_path / f"{runner}.out.jsonl"), "--runner", runner,
                         "--provenance", str(why), *extra]) == 0
        records[runner] = list(read_records(str(why)))
    assert records["inprocess"] and records["spark"] == records["inprocess"]


def test_stateless_rule_groups_detect_in_the_enrichment_stage() -> None:
    """CityBench Q1's same-time rule (a bare terminator, keyed by an observation) keeps no
    state: its detections leave the enrichment stage under the one pass-through key, while
    the events of the two windowed rules go to their global key. The Spark run of Q1 above
    checks that the output is unchanged."""
    from chronolog.lang.registry import compile_program
    from chronolog.streams import read_stream

    folder = EXAMPLES / "citybench" / "q1"
    spec = ProgramSpec("dotr", (folder / "q1.dotr").read_text(), str(folder / "q1.dotr"),
                       Options(background=(str(folder / "background.ttl"),)))
    program = compile_program(spec)
    plan = program.plan()
    local = lambda names: tuple(name.rpartition("#")[2] for name in names)  # noqa: E731
    assert sorted(zip(plan.stateless, (local(g.rules) for g in plan.groups))) == [
        (False, ("pair_after_road1", "pair_after_road2")), (True, ("pair_same_time",))]
    expected = inprocess_detections(spec, [(e.time, [tuple(program.dictionary.decode(x) for x in t)
                                                       for t in e.triples])
                                           for e in read_stream(folder / "stream.trig", program.dictionary)])
    same_time = sum(n for (_, rule, _), n in expected.items() if rule.endswith("pair_same_time"))
    assert same_time > 0
    prepared = [plan.prepare(element.time, {"": [element.triples]})
                for element in read_stream(folder / "stream.trig", program.dictionary)]
    outputs = [o for p in prepared for o in p.outputs]
    assert {o.rule for o in outputs} == {"http://example.org/citybench#pair_same_time"} and len(outputs) == same_time
    assert {r.key for p in prepared for r in p.records} == {"0|"}  # the windowed rules' one global key


def write_jsonl(path: Path, stream: list[tuple[int, list]]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for time, triples in stream:
            out.write(json.dumps({"time": time, "graph": ttl(triples)}) + "\n")


@pytest.mark.parametrize("batch", [3, 0])
@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(cases())
def test_random_programs_on_spark_equal_inprocess(spark, batch: int, case) -> None:
    """Micro-batches of 3 elements (a streaming query), or none (a bounded run's batch job)."""
    program, background, strata, stream = case
    from reference.datalog import render as render_datalog
    from test_dotr_differential import EX

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bg = folder / "background.nt"
        bg.write_text(ttl(background), encoding="utf-8")
        rules: tuple[str, ...] = ()
        if strata and any(strata):
            (folder / "rules.dl").write_text(render_datalog(strata, EX), encoding="utf-8")
            rules = (str(folder / "rules.dl"),)
        spec = ProgramSpec("dotr", render(program), None, Options((str(bg),), rules))
        write_jsonl(folder / "stream.jsonl", stream)
        expected = inprocess_detections(spec, stream, feedback_limit=50)
        assume(expected is not None)  # feedback that does not stop: test_feedback.py covers the limit
        assume(sum(expected.values()) > 0)  # Spark runs cost seconds: spend them where there is something to see
        got, _ = spark_detections(spec, folder / "stream.jsonl", max_elements_per_batch=batch, partitions=2,
                                  conf={"spark.sql.shuffle.partitions": "2"})
        assert got == expected, spec.text


def fire_spec() -> ProgramSpec:
    return ProgramSpec("dotr", (FIRE / "fire.dotr").read_text(), str(FIRE / "fire.dotr"),
                       Options((str(FIRE / "background.ttl"),), (str(FIRE / "rooms.dl"),)))


def reading(time: int, n: int, room: str, kind: str, value: int | None = None) -> str:
    """A JSON Lines element: one reading of a sensor placed in ``room``'s location."""
    body = f":r{n} a :{kind} ; :sensor :x{n} . :x{n} :is_in_room :{room} ."
    if value is not None:
        body += f" :r{n} :value {value} ."
    return json.dumps({"time": time, "graph": f"@prefix : <http://example.org/> . {body}"})


@pytest.mark.parametrize("batch", [2, 0])
def test_bad_and_late_elements_are_reported_and_lose_nothing(spark, tmp_path: Path, batch: int) -> None:
    """In micro-batches of 2 (a streaming query) or in a bounded run's batch job."""
    good = [reading(10, 1, "roomA", "TempReading", 70), reading(20, 2, "roomA", "SmokeReading"),
            reading(30, 3, "roomB", "TempReading", 80), reading(40, 4, "roomB", "SmokeReading")]
    lines = [good[0], good[1], "this is not json", reading(5, 9, "roomB", "TempReading", 99),
             good[2], '{"time": 35, "graph": "<a> <b> ."}', good[3]]
    stream = tmp_path / "stream.jsonl"
    stream.write_text("\n".join(lines) + "\n")
    late = LateFileSink(tmp_path / "late.jsonl", "jsonl")
    reports: list[str] = []
    got, summary = spark_detections(fire_spec(), stream, late=late, report=reports.append,
                                    max_elements_per_batch=batch, on_error="skip")
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\n".join(good) + "\n")
    want, _ = spark_detections(fire_spec(), clean)
    assert sum(want.values()) == 2 and got == want
    assert summary.late == 1
    late_lines = (tmp_path / "late.jsonl").read_text().splitlines()
    assert [json.loads(line)["time"] for line in late_lines] == [5]
    assert len(summary.errors) == 2
    assert summary.errors[0].startswith(f"{stream}:3:1: invalid JSON")
    assert [line.strip() for line in summary.errors[0].splitlines()[1:]] == ["this is not json", "^"]
    assert summary.errors[1].startswith(f"{stream}:6:")
    assert "invalid Turtle" in summary.errors[1]
    assert any(":3:" in r for r in reports) and any(":6:" in r for r in reports)


def test_out_of_order_elements_within_the_allowed_lateness_are_put_back(spark, tmp_path: Path) -> None:
    ordered = [reading(10, 1, "roomA", "TempReading", 70), reading(20, 2, "roomA", "SmokeReading")]
    stream = tmp_path / "stream.jsonl"
    stream.write_text("\n".join(reversed(ordered)) + "\n")
    got, summary = spark_detections(fire_spec(), stream, lateness=15)
    assert summary.late == 0 and sum(got.values()) == 1


def test_bounded_input_runs_as_one_batch_job(spark, tmp_path: Path, monkeypatch) -> None:
    """Files under the available-now trigger, small and with no checkpoint: one batch job,
    no streaming query (no progress reports), the detections of a streaming query; a
    checkpoint, or input over the bound, makes it a streaming query."""
    from chronolog.spark import bounded

    stream = FIRE / "stream.trig"
    got, summary = spark_detections(fire_spec(), stream, partitions=2)
    assert summary.progress == [] and summary.batches == 1 and summary.input_rows == 2
    streamed, streamed_summary = spark_detections(fire_spec(), stream, checkpoint=str(tmp_path / "checkpoint"))
    assert streamed_summary.progress
    assert sum(got.values()) == 1 and got == streamed
    monkeypatch.setattr(bounded, "BOUNDED_BYTES", stream.stat().st_size - 1)
    assert not bounded.is_bounded({"": str(stream)})
    over, over_summary = spark_detections(fire_spec(), stream)
    assert over_summary.progress and over == got


@pytest.mark.parametrize("batch", [100, 0])
def test_a_program_failing_on_an_executor_stops_the_run_with_its_reason(spark, tmp_path: Path, batch: int) -> None:
    """A program that feeds itself forever fails at the end of the stream, in the keyed
    stage: the run stops with the program's own message (a streaming query, or a bounded
    run's batch job)."""
    from chronolog.errors import ChronologError

    program = """PREFIX : <http://example.org/>
EVENT Tick AS SELECT ?t WHERE { ?t a :Tick }
RULE :tick DEFINE { ?next a :Tick . } FROM Tick FEEDBACK AFTER 10 ms
"""
    stream = tmp_path / "stream.jsonl"
    stream.write_text(json.dumps({"time": 0, "graph": "<http://example.org/t0> a <http://example.org/Tick> ."}) + "\n")
    failed = "the Spark (query|job) failed: feedback does not stop: 10,000 time points processed"
    with pytest.raises(ChronologError, match=failed):
        spark_detections(ProgramSpec("dotr", program, None, Options()), stream, max_elements_per_batch=batch)


def test_only_small_files_are_bounded(tmp_path: Path, monkeypatch) -> None:
    from chronolog.spark import bounded

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "1.jsonl").write_text("x" * 10)
    (inbox / "2.jsonl").write_text("x" * 10)
    (inbox / ".3.jsonl.partial").write_text("x" * 100)  # not a stream file yet
    monkeypatch.setattr(bounded, "BOUNDED_BYTES", 20)
    assert bounded.is_bounded({"": str(inbox)})
    assert not bounded.is_bounded({"": str(inbox), "s": str(inbox / "1.jsonl")})
    assert not bounded.is_bounded({"": "tcp://127.0.0.1:9"})


def test_keyed_state_stays_bounded(spark, tmp_path: Path) -> None:
    """Rooms come and go: each key's state is dropped by its bucket's timer once the
    watermark passes the rules' horizon (5 min), so the keys held do not grow with the
    stream (read from the checkpoint's state after every batch)."""
    lines = []
    rooms = 24
    for i in range(rooms):
        t = i * 400_000  # each room's readings are out of every earlier room's scope
        lines += [reading(t + 1, 2 * i, f"room{i}", "TempReading", 70),
                  reading(t + 2, 2 * i + 1, f"room{i}", "SmokeReading")]
    stream = tmp_path / "stream.jsonl"
    stream.write_text("\n".join(lines) + "\n")
    checkpoint = tmp_path / "checkpoint"
    got, summary = spark_detections(fire_spec(), stream, max_elements_per_batch=8, checkpoint=str(checkpoint))
    assert sum(got.values()) == rooms
    assert summary.batches >= rooms * 2 // 8
    held = [held_keys(spark, checkpoint, batch) for batch in range(summary.batches)]
    assert max(len(keys) for keys in held) <= 6, held  # 4 rooms arrive per batch
    assert len(set().union(*held)) == rooms  # every room was held at some point
    assert summary.max_state_rows <= 8 + 2 * 8  # a value and a timer per bucket at most (+ its index)


def held_keys(spark, checkpoint: Path, batch: int) -> set[str]:
    """The program keys the keyed stage's buckets hold after ``batch``."""
    from chronolog.spark import buckets

    frame = spark.read.format("statestore").option("path", str(checkpoint)).option("stateVarName", "bucket") \
        .option("batchId", batch).load()
    return {key for row in frame.collect() for key in buckets.decode(row.value.entries)}


def test_key_groups_reported_by_check(capsys) -> None:
    assert cli.main(["check", str(FIRE / "fire.dotr")]) == 0
    out = capsys.readouterr().out
    assert "rules fire: key Smoke.room, HighTemp.room" in out


def test_parse_error_in_the_program_is_reported_before_spark_starts(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.dotr"
    bad.write_text("PREFIX : <http://example.org/>\nEVENT A AS SELECT ?x WHERE { ?x :p ?y }\nRULE :r FROM B\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text(reading(1, 1, "roomA", "SmokeReading") + "\n")
    assert cli.main(["run", str(bad), "--stream", str(stream), "--runner", "spark"]) == 2
    assert f"{bad}:3:" in capsys.readouterr().err


def test_unreadable_ntriples_payload_is_an_error_row(spark, tmp_path: Path) -> None:
    trig = tmp_path / "s.trig"
    trig.write_text((FIRE / "stream.trig").read_text() + "\n:g13 { :r3 a :SmokeReading\n")
    got, summary = spark_detections(fire_spec(), trig, on_error="skip")
    assert sum(got.values()) == 1
    assert len(summary.errors) == 1 and "the rest of" in summary.errors[0]
    assert str(trig) in summary.errors[0]


def test_run_loads_a_parquet_closure_from_materialize(spark, tmp_path: Path) -> None:
    """Background at scale: the closure computed on Spark, written as Parquet, is what
    ``run`` reasons over (adopted as is, not derived again), on either runner."""
    closure = tmp_path / "closure"
    assert cli.main(["materialize", str(FIRE / "background.ttl"), "--rules", str(FIRE / "rooms.dl"),
                     "--runner", "spark", "--parquet", str(closure)]) == 0
    outputs = {}
    for runner, background in (("inprocess", FIRE / "background.ttl"), ("inprocess", closure), ("spark", closure)):
        out = tmp_path / f"{runner}-{background.name}.trig"
        assert cli.main(["run", str(FIRE / "fire.dotr"), "--stream", str(FIRE / "stream.trig"), "--background",
                         str(background), "--rules", str(FIRE / "rooms.dl"), "--runner", runner, "-o", str(out)]) == 0
        outputs[runner, background.name] = canonical(out.read_bytes())
    assert len(outputs[("inprocess", "background.ttl")]) == 1
    assert len(set(map(tuple, outputs.values()))) == 1, outputs


def test_socket_source(spark, tmp_path: Path) -> None:
    """JSON Lines over TCP: the stream ends when the sender closes the connection."""
    import socket
    import threading

    lines = [reading(10, 1, "roomA", "TempReading", 70), reading(20, 2, "roomA", "SmokeReading"),
             reading(30, 3, "roomB", "TempReading", 80), "not json", reading(40, 4, "roomB", "SmokeReading")]
    payload = ("\n".join(lines) + "\n").encode()
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        with server:
            while True:
                try:
                    connection, _ = server.accept()
                except OSError:
                    return
                with connection:
                    connection.sendall(payload)

    threading.Thread(target=serve, daemon=True).start()
    try:
        got, summary = spark_detections(fire_spec(), f"tcp://127.0.0.1:{port}", report=lambda line: None,
                                        on_error="skip")
    finally:
        server.close()
    assert sum(got.values()) == 2
    assert len(summary.errors) == 1 and summary.errors[0].startswith(f"tcp://127.0.0.1:{port}:4:1: invalid JSON")


def test_directory_source_takes_files_as_they_land(spark, tmp_path: Path) -> None:
    """A time point is complete only once a later one arrives: the detection at 20 waits
    for the second file, and the last time point waits for the end of the stream."""
    import os
    import threading
    import time

    inbox = tmp_path / "inbox"
    inbox.mkdir()

    def land(name: str, lines: list[str]) -> None:
        partial = inbox / f".{name}.partial"
        partial.write_text("\n".join(lines) + "\n")
        os.replace(partial, inbox / name)  # atomically, as the source requires

    land("001.jsonl", [reading(10, 1, "roomA", "TempReading", 70), reading(20, 2, "roomA", "SmokeReading")])
    seen: list[int] = []
    first_batch = threading.Event()

    def deliver(batch: int, detections: list[OutputRecord]) -> None:
        seen.extend(d.time for d in detections)
        first_batch.set()

    def later() -> None:
        first_batch.wait(240)
        time.sleep(2)
        land("002.jsonl", [reading(30, 3, "roomB", "TempReading", 80), reading(40, 4, "roomB", "SmokeReading")])

    threading.Thread(target=later, daemon=True).start()
    summary = run_spark(fire_spec(), str(inbox), CallbackSink(deliver), trigger="1 second",
                        until=lambda s: 20 in seen, stop_after=240)
    assert seen == [20]  # 40 is the newest time point: not complete while the stream goes on
    assert summary.batches >= 2


def test_feedback_programs_run_on_spark_as_in_process(spark, tmp_path: Path) -> None:
    """The building example (fires fed back as input) on Spark, under one key, in three
    micro-batches: the same graphs as in-process, fed-back time points included."""
    outputs = {}
    for runner in ("inprocess", "spark"):
        outputs[runner] = tmp_path / f"{runner}.trig"
        extra = ["--max-elements-per-batch", "3"] if runner == "spark" else []
        assert cli.main(["run", str(EXAMPLES / "building"), "--runner", runner, "-o", str(outputs[runner]),
                         *extra]) == 0
    spark_text = outputs["spark"].read_text()
    assert spark_text == outputs["inprocess"].read_text() and ":Evacuation" in spark_text.replace(
        "<http://example.org/Evacuation>", ":Evacuation")
