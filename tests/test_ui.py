"""The live view (``chronolog run --ui``): the monitor's counters and series, the server's
routes, and a run watched through it while its stream is still being written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from golden import cases

from chronolog.engine import Engine
from chronolog.errors import ChronologError
from chronolog.monitor import RunMonitor
from chronolog.ui.server import LiveView, parse_address

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


@pytest.mark.parametrize("text, address", [
    ("8050", ("127.0.0.1", 8050)), ("0", ("127.0.0.1", 0)), ("0.0.0.0:9000", ("0.0.0.0", 9000)),
    ("[::1]:7000", ("::1", 7000)), ("localhost:1", ("localhost", 1)),
])
def test_addresses(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["examples/fire", "70000", "host:", ""])
def test_bad_addresses_say_what_is_expected(text: str) -> None:
    with pytest.raises(ChronologError, match=r"expected \[HOST:\]PORT"):
        parse_address(text)


def test_monitor_counts_per_second_and_renders_only_what_it_shows() -> None:
    clock = Clock()
    monitor = RunMonitor("p.dotr", "inprocess", render_per_second=2, clock=clock)
    rendered = []

    def render(n: int):
        return lambda: rendered.append(n) or ("rule", f"output {n}")

    monitor.time_point(10, 3, 0.004)
    monitor.time_point(11, 1, 0.002)
    for n in range(5):
        monitor.output(11, render(n))
    clock.now = 1.5
    monitor.time_point(12, 2, 0.010)
    monitor.output(12, render(5), latency=0.01)
    state = monitor.snapshot()
    assert rendered == [0, 1, 5]  # two a second: the other outputs are counted, not rendered
    assert monitor.snapshot()["outputs"][0]["latency_ms"] == 2.0  # time point 11's processing time
    assert state["counters"] == {"elements": 6, "time_points": 3, "outputs": 6}
    assert [(b["second"], b["elements"], b["outputs"]) for b in state["seconds"]] == [(0, 4, 5), (1, 2, 1)]
    assert state["seconds"][0]["p50_ms"] == 4.0 and state["seconds"][1]["p99_ms"] == 10.0
    assert [o["text"] for o in monitor.snapshot(after=2)["outputs"]] == ["output 5"]
    assert state["outputs"][-1]["latency_ms"] == 10.0 and state["stream_time"] == 12
    skipped = [0]
    monitor.watch("skipped", lambda: skipped[0])
    skipped[0] = 4
    monitor.problem("s.jsonl:3:1: invalid JSON")
    monitor.finish("3 time points in 1.5 s")
    state = monitor.snapshot()
    assert state["counters"]["skipped"] == 4 and state["problems"] == ["s.jsonl:3:1: invalid JSON"]
    assert state["finished"] == "3 time points in 1.5 s"


def test_monitor_keeps_phases_state_and_late_elements_per_second() -> None:
    clock = Clock()
    monitor = RunMonitor("p.dotr", "inprocess", clock=clock)
    asked = []

    def held() -> dict[str, int]:
        asked.append(clock.now)
        return {"events stored": len(asked)}

    monitor.time_point(1, 1, 0.004, {"ingest": 0.001, "reasoning": 0.003}, held)
    monitor.time_point(2, 1, 0.002, {"ingest": 0.002, "reasoning": 0.001}, held)
    monitor.phase("write", 0.0005)
    clock.now = 1.2
    monitor.time_point(3, 1, 0.002, {"ingest": 0.0, "reasoning": 0.002}, held)
    monitor.late_element("s.jsonl:4: time 2, after time 3 was read")
    state = monitor.snapshot()
    assert asked == [0.0, 1.2]  # once a second
    first, second = state["seconds"]
    assert first["phases"] == {"ingest": {"p50_ms": 2.0, "p99_ms": 2.0}, "reasoning": {"p50_ms": 3.0, "p99_ms": 3.0},
                               "write": {"p50_ms": 0.5, "p99_ms": 0.5}}
    assert second["phases"]["reasoning"] == {"p50_ms": 2.0, "p99_ms": 2.0}  # the second under way, so far
    assert (first["held"], second["held"], state["held"]) == ({"events stored": 1}, {"events stored": 2},
                                                               {"events stored": 2})
    assert state["late"] == ["s.jsonl:4: time 2, after time 3 was read"]


def test_on_spark_a_batch_gives_its_phases_and_state() -> None:
    monitor = RunMonitor("p.dotr", "spark")
    monitor.batch({"batchId": 3, "numInputRows": 10, "durationMs": {"triggerExecution": 900, "addBatch": 700,
                                                                     "queryPlanning": 50},
                   "stateOperators": [{"numRowsTotal": 4, "memoryUsedBytes": 1000}, {"numRowsTotal": 1}]})
    state = monitor.snapshot()
    assert state["seconds"][0]["phases"] == {"addBatch": {"p50_ms": 700.0, "p99_ms": 700.0},
                                             "queryPlanning": {"p50_ms": 50.0, "p99_ms": 50.0}}
    assert state["held"] == {"state rows": 5, "state memory (bytes)": 1000}


@pytest.mark.parametrize("case", [c for c in cases() if c.id in (
    "dotr/fire", "lars/cooling", "epsparql/stock_drop", "csparql/select_window", "rspql/paper_ex7_q_matches_at_8")],
    ids=lambda c: c.id)
def test_every_language_says_what_state_it_holds_and_an_observed_run_its_phases(case) -> None:  # type: ignore[no-untyped-def]
    engine = Engine(case.spec())
    monitor = RunMonitor(str(case.program), "inprocess")
    seen: list[dict] = []
    monitor.time_point = lambda *args: seen.append({"phases": args[3], "held": args[4]()})  # type: ignore[method-assign]
    list(engine.run_files({name: str(path) for name, path in case.streams.items()}, observer=monitor))
    assert seen
    phases = set(seen[0]["phases"])
    assert "ingest" in phases
    assert phases == ({"ingest", "reasoning", "queries", "patterns", "output"} if case.lang == "dotr"
                      else {"ingest", "processing"})
    held = [h["held"] for h in seen]
    assert all(h["dictionary terms"] > 0 for h in held) if case.lang != "lars" else "dictionary terms" not in held[0]
    kinds = set(held[0]) - {"dictionary terms"}
    assert kinds and any(h[k] > 0 for h in held for k in kinds), held  # the state is really read


@pytest.mark.parametrize("module", ["uvicorn", "starlette.applications"])
def test_without_the_extra_the_message_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # an import of it fails
    with pytest.raises(ChronologError, match=r"pip install 'chronolog\[ui\]'"):
        LiveView(RunMonitor("p.dotr", "inprocess"), "127.0.0.1", 0)


def test_the_server_serves_the_page_its_assets_and_the_state() -> None:
    monitor = RunMonitor("p.dotr", "inprocess")
    view = LiveView(monitor, "127.0.0.1", 0)
    base = view.start()
    try:
        monitor.time_point(10, 1, 0.001)
        monitor.output(10, lambda: ("fire", "<urn:a> a <urn:Fire> ."))
        status, page = get(base)
        assert status == 200 and "/static/uPlot.iife.min.js" in page and "/static/app.js" in page
        for name in ("uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE", "app.js", "app.css"):
            assert get(base + "static/" + name)[0] == 200, name
        assert get(base + "static/../server.py")[0] == 404 and get(base + "static/other.js")[0] == 404
        state = json.loads(get(base + "api/state")[1])
        assert state["counters"]["outputs"] == 1 and state["outputs"][0]["name"] == "fire"
        assert json.loads(get(base + "api/state?after=1")[1])["outputs"] == []
        monitor.finish("done")
        with urllib.request.urlopen(base + "api/events", timeout=10) as events:  # ends once the run has
            lines = [line for line in events.read().decode().splitlines() if line.startswith("data: ")]
        assert json.loads(lines[-1][6:])["finished"] == "done"
    finally:
        view.stop()


def test_a_run_is_watched_while_its_stream_is_written(tmp_path: Path) -> None:
    """The fire example through a named pipe: the first graph is written, the page's state
    shows it processed and no detection; the second is written, the detection appears."""
    pipe = tmp_path / "stream.jsonl"
    os.mkfifo(pipe)
    out = tmp_path / "out.trig"
    fire = ROOT / "examples" / "fire"
    run = subprocess.Popen(
        [sys.executable, "-m", "chronolog", "run", str(fire / "fire.dotr"), "--background", str(fire / "background.ttl"),
         "--rules", str(fire / "rooms.dl"), "--stream", str(pipe), "--runner", "inprocess", "-o", str(out),
         "--ui", "127.0.0.1:0"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        line = run.stderr.readline()  # type: ignore[union-attr]
        assert line.startswith("chronolog: live view at http://127.0.0.1:"), line
        base = line.split(" at ", 1)[1].strip()
        ex = "http://example.org/"
        graphs = {10: f"<{ex}r1> a <{ex}TempReading> ; <{ex}sensor> <{ex}s1> ; <{ex}value> 65 . "
                      f"<{ex}s1> <{ex}is_at_location> <{ex}locA> .",
                  12: f"<{ex}r2> a <{ex}SmokeReading> ; <{ex}sensor> <{ex}s2> . <{ex}s2> <{ex}is_at_location> <{ex}locB> .",
                  20: f"<{ex}s3> <{ex}is_at_location> <{ex}locC> ."}
        with open(pipe, "w", encoding="utf-8") as writer:
            for t in (10, 12):  # a time point is processed once the next one begins
                writer.write(json.dumps({"time": t, "graph": graphs[t]}) + "\n")
            writer.flush()
            state = wait_for(base, lambda s: s["stream_time"] == 10)
            assert state["counters"]["outputs"] == 0 and state["finished"] is None
            writer.write(json.dumps({"time": 20, "graph": graphs[20]}) + "\n")
            writer.flush()
            state = wait_for(base, lambda s: s["counters"]["outputs"] >= 1)
            (shown,) = state["outputs"]
            assert shown["name"] == f"{ex}fire" and shown["time"] == 12 and f"<{ex}roomA>" in shown["text"]
            assert state["finished"] is None and state["counters"]["elements"] == 2
            assert shown["latency_ms"] > 0  # its time point's processing time
    finally:
        code = run.wait(timeout=60)
    assert code == 0, run.stderr.read()  # type: ignore[union-attr]
    assert "roomA" in out.read_text()


def wait_for(base: str, done) -> dict:  # type: ignore[no-untyped-def]
    """The run's state once ``done(state)`` holds."""
    deadline = time.monotonic() + 60
    last: dict = {}
    while time.monotonic() < deadline:
        last = json.loads(get(base + "api/state")[1])
        if done(last):
            return last
        time.sleep(0.05)
    raise AssertionError(f"the live view never showed it; last state: {last}")


@pytest.mark.spark
def test_on_spark_the_monitor_hears_of_batches_outputs_and_skipped_elements(spark, tmp_path: Path) -> None:
    """The Spark runner reports every micro-batch's progress (Spark's own report: its
    phases and state too), every output its sink receives with its explanation, and a
    skipped element's positioned error."""
    from chronolog.program import Options, ProgramSpec
    from chronolog.spark.runner import run_spark
    from chronolog.spark.sinks import CallbackSink, QuarantineFileSink

    fire = ROOT / "examples" / "fire"
    spec = ProgramSpec("dotr", (fire / "fire.dotr").read_text(), str(fire / "fire.dotr"),
                       Options((str(fire / "background.ttl"),), (str(fire / "rooms.dl"),), provenance=True))
    ex = "http://example.org/"
    stream = tmp_path / "stream.jsonl"
    stream.write_text("\n".join([
        json.dumps({"time": 10, "graph": f"<{ex}r1> a <{ex}TempReading> ; <{ex}sensor> <{ex}s1> ; <{ex}value> 65 . "
                                         f"<{ex}s1> <{ex}is_at_location> <{ex}locA> ."}),
        "not json",
        json.dumps({"time": 12, "graph": f"<{ex}r2> a <{ex}SmokeReading> ; <{ex}sensor> <{ex}s2> . "
                                         f"<{ex}s2> <{ex}is_at_location> <{ex}locB> ."})]) + "\n")
    monitor = RunMonitor("fire.dotr", "spark")
    delivered: list = []
    run_spark(spec, str(stream), CallbackSink(lambda b, records: delivered.extend(records)), on_error="skip",
              quarantine=QuarantineFileSink(str(tmp_path / "bad.jsonl")), report=lambda line: None, monitor=monitor)
    state = monitor.snapshot()
    assert state["counters"]["elements"] == sum(b["input_rows"] for b in state["batches"]) >= 2
    assert state["counters"]["batches"] == len(state["batches"]) >= 1
    assert all(b["duration_ms"] > 0 for b in state["batches"])
    assert state["counters"]["outputs"] == len(delivered) == 1
    (shown,) = state["outputs"]
    assert shown["time"] == 12 and shown["name"] == f"{ex}fire" and f"<{ex}roomA>" in shown["text"]
    assert [(e["alias"], e["time"]) for e in shown["why"]["events"]] == [("Smoke", 12), ("HighTemp", 10)]
    assert "addBatch" in state["seconds"][-1]["phases"] and "state rows" in state["held"]
    assert state["counters"]["skipped"] == 1 and state["problems"][0].startswith(f"{stream}:2:1:")


@pytest.mark.spark
def test_ui_on_the_spark_runner_prints_its_address(spark, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from chronolog import cli

    out = tmp_path / "out.trig"
    assert cli.main(["run", str(ROOT / "examples" / "fire"), "--runner", "spark", "--ui", "127.0.0.1:0",
                     "-o", str(out)]) == 0
    assert "chronolog: live view at http://127.0.0.1:" in capsys.readouterr().err
    assert "roomA" in out.read_text()


def test_a_recorded_run_makes_a_self_contained_report(tmp_path: Path) -> None:
    """``run --record DIR`` keeps the final state; ``report DIR`` inlines the page's scripts,
    styles and data into one file that needs no server (nothing is fetched from /static)."""
    from chronolog import cli

    record = tmp_path / "run"
    assert cli.main(["run", str(ROOT / "examples" / "fire"), "--runner", "inprocess", "--record", str(record),
                     "-o", str(tmp_path / "out.trig")]) == 0
    state = json.loads((record / "run.json").read_text())
    assert state["finished"] and state["counters"]["outputs"] == 1 and state["counters"]["time_points"] == 2
    assert cli.main(["report", str(record)]) == 0
    page = (record / "report.html").read_text()
    assert "/static/" not in page and "uPlot" in page and "MIT License" in page
    data = page[page.index("const RUN = ") + len("const RUN = "):page.index(";\n$(\"filters\")")]
    assert json.loads(data.replace("<\\/", "</"))["outputs"][0]["text"] == state["outputs"][0]["text"]
    assert cli.main(["report", str(tmp_path / "nothing")]) == 2


def test_a_report_cannot_be_broken_by_an_outputs_text() -> None:
    """An output's text ends up inside a script element: ``</script>`` in it is escaped."""
    from chronolog.ui.report import _page

    monitor = RunMonitor("p.dotr", "inprocess")
    monitor.output(1, lambda: ("q", '"</script><b>x</b>"'))
    monitor.finish("done")
    page = _page(monitor.snapshot())
    assert page.count("</script>") == page.count("<script>") and "<\\/script><b>" in page


def _browser():  # type: ignore[no-untyped-def]
    """Headless Chromium through Selenium (Debian's chromium and chromium-driver, which
    .ci/run installs); the test is skipped, saying why, where they are missing."""
    import shutil

    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    driver, browser = shutil.which("chromedriver"), shutil.which("chromium")
    if driver is None or browser is None:
        pytest.skip("needs Debian's chromium and chromium-driver (.ci/run installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1300"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)


def _rows(browser) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """The output table's rows as texts, read in one script (the page redraws the table
    every half second, so element handles go stale)."""
    return browser.execute_script(
        "return [...document.querySelectorAll('#outputs tbody tr.output')]"
        ".map(r => [...r.cells].map(c => c.textContent))")


def _legend(browser, chart: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The series names of a chart's legend."""
    return browser.execute_script(f"return [...document.querySelectorAll('#{chart} .u-legend .u-label')]"
                                  ".map(e => e.textContent)")


def _open_first(browser) -> None:  # type: ignore[no-untyped-def]
    """Click the first output that has an explanation (in a script: see ``_rows``)."""
    browser.execute_script("document.querySelector('#outputs tr.output.explained').click()")


def _why(browser) -> str | None:  # type: ignore[no-untyped-def]
    """The text of the open explanation, if one is open."""
    return browser.execute_script("return document.querySelector('#outputs tr.why')?.textContent ?? null")


def _artefact(browser, name: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A screenshot: into docs/ with CHRONOLOG_UPDATE_DOCS=1 (docs/ui.md shows them), else a
    test artefact beside the test's files."""
    folder = ROOT / "docs" if os.environ.get("CHRONOLOG_UPDATE_DOCS") else tmp_path
    browser.save_screenshot(str(folder / name))


def test_the_live_page_in_a_real_browser(tmp_path: Path) -> None:
    """Headless Chromium opens the live view of a run fed through a named pipe: the counters,
    both charts and the table update as the stream is written, and the detection appears,
    filterable by its rule, and opens its derivation on a click; then the report of the
    same run opens from its file, with the derivation too."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser = _browser()
    pipe = tmp_path / "stream.jsonl"
    os.mkfifo(pipe)
    fire = ROOT / "examples" / "fire"
    run = subprocess.Popen(
        [sys.executable, "-m", "chronolog", "run", str(fire / "fire.dotr"), "--background", str(fire / "background.ttl"),
         "--rules", str(fire / "rooms.dl"), "--stream", str(pipe), "--runner", "inprocess",
         "-o", str(tmp_path / "out.trig"), "--ui", "127.0.0.1:0", "--record", str(tmp_path / "run"),
         "--provenance", str(tmp_path / "why.jsonl"), "--late", "drop"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    ex = "http://example.org/"
    try:
        base = run.stderr.readline().split(" at ", 1)[1].strip()  # type: ignore[union-attr]
        browser.get(base)
        wait = WebDriverWait(browser, 30)
        with open(pipe, "w", encoding="utf-8") as writer:
            for t, graph in ((10, f"<{ex}r1> a <{ex}TempReading> ; <{ex}sensor> <{ex}s1> ; <{ex}value> 65 . "
                                  f"<{ex}s1> <{ex}is_at_location> <{ex}locA> ."),
                             (12, f"<{ex}r2> a <{ex}SmokeReading> ; <{ex}sensor> <{ex}s2> . "
                                  f"<{ex}s2> <{ex}is_at_location> <{ex}locB> ."),
                             (20, f"<{ex}s3> <{ex}is_at_location> <{ex}locC> ."),
                             (15, f"<{ex}s4> <{ex}is_at_location> <{ex}locC> .")):  # late
                writer.write(json.dumps({"time": t, "graph": graph}) + "\n")
                writer.flush()
            wait.until(lambda b: _rows(b))
            (row,) = _rows(browser)
            assert row[0] == "12" and row[1] == f"{ex}fire" and "roomA" in row[3]
            assert "running for" in browser.find_element(By.ID, "status").text
            counters = browser.find_element(By.ID, "counters").text
            assert "outputs" in counters and "time points" in counters
            assert "events stored" in counters and "dictionary terms" in counters
            wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, ".uplot canvas")) == 4)
            assert {"ingest", "reasoning", "queries", "patterns", "output", "write"} <= set(_legend(browser, "phases"))
            assert {"events stored", "feedback time points", "dictionary terms"} <= set(_legend(browser, "held"))
            late = wait.until(lambda b: b.execute_script("return [...document.querySelectorAll('#late li')].map(li => li.textContent)"))
            assert len(late) == 1 and "time 15, after time 20 was read" in late[0]
            Select(browser.find_element(By.ID, "name")).select_by_value(f"{ex}fire")
            assert len(_rows(browser)) == 1
            browser.find_element(By.ID, "from").send_keys("13")
            assert not _rows(browser)
            browser.find_element(By.ID, "from").clear()
            wait.until(lambda b: _rows(b))
            browser.execute_script("window.scrollTo(0, 0)")
            _artefact(browser, "ui-live.png", tmp_path)
            _open_first(browser)
            why = wait.until(_why)
            assert f"rule <{ex}fire>" in why and "firing 12-0-1" in why
            assert "Smoke at 12" in why and "HighTemp at 10" in why and "?max = max(HighTemp.val)" in why
            assert f"<{ex}s1> <{ex}is_in_room> <{ex}roomA> .  [rule " in why and "rooms.dl:3:1" in why
            assert f"<{ex}locA> <{ex}is_in_room> <{ex}roomA> .  [background]" in why
            assert f"<{ex}s1> <{ex}is_at_location> <{ex}locA> .  [input: the stream at 10]" in why
            browser.execute_script("document.querySelector('#outputs tr.output.explained').scrollIntoView()")
            _artefact(browser, "ui-why.png", tmp_path)
            _open_first(browser)
            assert _why(browser) is None
        wait.until(lambda b: "finished" in b.find_element(By.ID, "status").text)
        assert run.wait(timeout=60) == 0
        from chronolog.ui.report import write_report

        browser.get((write_report(str(tmp_path / "run"))).as_uri())
        assert "finished" in browser.find_element(By.ID, "status").text
        assert [row[0] for row in _rows(browser)] == ["12"] and "roomA" in _rows(browser)[0][3]
        _open_first(browser)
        assert "[background]" in _why(browser)
        assert len(browser.find_elements(By.CSS_SELECTOR, ".uplot canvas")) == 4
        _artefact(browser, "ui-report.png", tmp_path)
    finally:
        browser.quit()
        if run.poll() is None:
            run.kill()


def test_the_server_stops_once_open_pages_have_the_final_state() -> None:
    """A page following the events counts as open until it has been sent the finished
    state; stopping waits for that (a run that ends at once still shows as finished)."""
    import threading

    monitor = RunMonitor("p.dotr", "inprocess")
    view = LiveView(monitor, "127.0.0.1", 0)
    base = view.start()
    got: list[dict] = []

    def follow() -> None:
        with urllib.request.urlopen(base + "api/events", timeout=10) as events:
            for line in events:
                if line.startswith(b"data: "):
                    got.append(json.loads(line[6:]))

    reader = threading.Thread(target=follow)
    reader.start()
    deadline = time.monotonic() + 10
    while not got and time.monotonic() < deadline:
        time.sleep(0.02)
    assert got and view._streams.open == 1
    monitor.finish("done")
    view.stop()
    reader.join(10)
    assert got[-1]["finished"] == "done" and view._streams.open == 0
