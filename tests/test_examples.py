"""Golden end-to-end tests of the citybench and synthetic examples, through the command
line, and unit tests of the CityBench converter (chronolog.citybench).

Each example directory's ``expected.txt`` holds the output graphs of
``python -m chronolog run DIR``, one line per graph: its time, then its triples (N-Triples,
sorted, a few namespaces abbreviated), with fresh ``urn:chronolog:RULE:N`` IRIs and blank
nodes renamed so that graphs compare up to that renaming; lines are sorted, so the graphs
compare as a multiset. ``CHRONOLOG_UPDATE_GOLDEN=1`` rewrites them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chronolog import citybench
from chronolog.citybench import CityBenchError, Conversion, compress, convert, load_distances, load_repository
from chronolog.streams import read_stream
from chronolog.terms import TermDictionary
from golden import canonical
from shared_data import shared_path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = ["citybench/q1", "citybench/q2", "synthetic"]
def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "chronolog", *args], cwd=ROOT, env=env,
                          capture_output=True, timeout=timeout)


@pytest.mark.parametrize("example", GOLDEN)
def test_golden_output(example: str, tmp_path: Path) -> None:
    out = tmp_path / "out.trig"
    done = run_cli("run", str(EXAMPLES / example), "--runner", "inprocess", "-o", str(out))
    assert done.returncode == 0, done.stderr.decode()
    got = canonical(out.read_bytes())
    expected_file = EXAMPLES / example / "expected.txt"
    if os.environ.get("CHRONOLOG_UPDATE_GOLDEN"):
        expected_file.write_text("".join(line + "\n" for line in got), encoding="utf-8")
    expected = expected_file.read_text(encoding="utf-8").splitlines()
    assert len(got) == len(expected)
    assert got == expected


def test_golden_files_are_not_trivial() -> None:
    for example in GOLDEN:
        lines = (EXAMPLES / example / "expected.txt").read_text(encoding="utf-8").splitlines()
        assert len(lines) > 50, example


def test_q1_pairs_are_all_pairs_within_3_s() -> None:
    """Q1's three rules together give each pair of road readings at most 3 s apart once."""
    q1 = EXAMPLES / "citybench" / "q1"
    d = TermDictionary()
    road = {d.iri(prop): sensor for sensor, props in load_repository(q1 / "background.ttl").items()
            for prop, kind in props if kind == "CongestionLevel"}
    observed_property = d.iri("http://purl.oclc.org/NET/ssnx/ssn#observedProperty")
    times: dict[str, list[int]] = {}
    for element in read_stream(q1 / "stream.trig", d):
        for s, p, o in element.triples:
            if p == observed_property and o in road:
                times.setdefault(road[o], []).append(element.time)
    assert len(times) == 2
    first, second = times.values()
    pairs = sum(1 for x in first for y in second if abs(x - y) <= 3000)
    assert pairs == len((q1 / "expected.txt").read_text(encoding="utf-8").splitlines())


# -- the converter -----------------------------------------------------------------------

CES = citybench.CES
REPO = f"""
@prefix ces: <{CES}> .
@prefix ssn: <http://purl.oclc.org/NET/ssnx/ssn#> .
@prefix ct: <http://www.insight-centre.org/citytraffic#> .
ces:AarhusTrafficData1 a ssn:Sensor ; ssn:observes ces:pSpeed, ces:pCount, ces:pTime, ces:pCong, ces:pEst, ces:pApi .
ces:AarhusTrafficData2 a ssn:Sensor ; ssn:observes ces:qCong .
ces:AarhusWeatherData0 a ssn:Sensor ; ssn:observes ces:wT, ces:wH, ces:wW .
ces:pSpeed a ct:AvgSpeed . ces:pCount a ct:VehicleCount . ces:pTime a ct:MeasureTime .
ces:pCong a ct:CongestionLevel . ces:pEst a ct:EstimatedTime . ces:pApi a ct:API .
ces:qCong a ct:CongestionLevel .
ces:wT a ct:Temperature . ces:wH a ct:Humidity . ces:wW a ct:WindSpeed .
"""
TRAFFIC = "status,avgMeasuredTime,avgSpeed,extID,medianMeasuredTime,TIMESTAMP,vehicleCount,_id,REPORT_ID\n"
WEATHER = "hum,tempm,wspdm,TIMESTAMP\n"
META = "REPORT_ID,DISTANCE_IN_METERS,_id\n1,2000,9\n2,500,10\n"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    (tmp_path / "repo.ttl").write_text(REPO)
    (tmp_path / "meta.csv").write_text(META)
    return tmp_path


def values(elements, d: TermDictionary) -> dict[tuple[int, str], float]:
    """(time, observed property local name) -> value."""
    out = {}
    for el in elements:
        by_ob: dict[int, dict[str, object]] = {}
        for s, p, o in el.triples:
            by_ob.setdefault(s, {})[d.decode(p).value.rsplit("/", 1)[-1].rsplit("#", 1)[-1]] = d.decode(o)
        for ob in by_ob.values():
            assert ob["type"].value.endswith("#Observation")
            out[(el.time, ob["observedProperty"].value[len(CES):])] = float(ob["hasValue"].value)
            assert ob["hasValue"].datatype.value.endswith("#double")
    return out


def test_mapping_values(data: Path) -> None:
    (data / "AarhusTrafficData1.stream").write_text(
        TRAFFIC + "OK,120,50,1,120,2014-08-01T07:50:00,10,100,1\nOK,130,0,1,130,2014-08-01T07:55:00,4,101,1\n")
    (data / "AarhusWeatherData0.stream").write_text(WEATHER + "56,18.5,7.4,2014-08-01T07:50:00\n")
    d = TermDictionary()
    els = convert([data / "AarhusTrafficData1.stream", data / "AarhusWeatherData0.stream"],
                  data / "repo.ttl", data / "meta.csv", d)
    t0 = 1406879400000  # 2014-08-01T07:50:00Z
    assert [e.time for e in els] == [t0, t0 + 300_000]
    got = values(els, d)
    assert got == {
        (t0, "pSpeed"): 50.0, (t0, "pCount"): 10.0, (t0, "pTime"): 120.0,
        (t0, "pCong"): 10 / 2000, (t0, "pEst"): 2000 / 50,
        (t0, "wT"): 18.5, (t0, "wH"): 56.0, (t0, "wW"): 7.4,
        (t0 + 300_000, "pSpeed"): 0.0, (t0 + 300_000, "pCount"): 4.0, (t0 + 300_000, "pTime"): 130.0,
        (t0 + 300_000, "pCong"): 4 / 2000, (t0 + 300_000, "pEst"): -1.0,
    }
    # four triples per observation, observedBy the row's sensor; ct:API gets none
    assert len(els[0].triples) == 4 * 8
    sensors = {d.decode(o).value for e in els for s, p, o in e.triples if d.decode(p).value.endswith("observedBy")}
    assert sensors == {CES + "AarhusTrafficData1", CES + "AarhusWeatherData0"}


def test_parking_rows_give_the_vacancy(data: Path) -> None:
    (data / "repo.ttl").write_text(REPO + "ces:AarhusParkingDataKALK ssn:observes ces:park . ces:park a ct:ParkingVacancy .\n")
    (data / "AarhusParkingDataKALK.stream").write_text(
        "vehiclecount,updatetime,_id,totalspaces,garagecode,streamtime\n"
        "115,2014-05-22 09:09:04.145,7,210,KALK,2014-11-03 16:18:44\n")
    d = TermDictionary()
    els = convert([data / "AarhusParkingDataKALK.stream"], data / "repo.ttl", None, d)
    assert [e.time for e in els] == [1400749744145]
    assert values(els, d) == {(1400749744145, "park"): 95.0}


def test_missing_weather_value_leaves_that_observation_out(data: Path) -> None:
    (data / "AarhusWeatherData0.stream").write_text(WEATHER + "56,,7.4,2014-08-01T07:50:00\n,,,2014-08-01T08:00:00\n")
    d = TermDictionary()
    els = convert([data / "AarhusWeatherData0.stream"], data / "repo.ttl", None, d)
    assert sorted(k[1] for k in values(els, d)) == ["wH", "wW"]
    assert [len(e.triples) for e in els] == [8, 0]


def test_merge_same_timestamp_one_time_point_sorted_and_deduplicated(data: Path) -> None:
    (data / "a.stream").write_text(TRAFFIC + "OK,1,1,1,1,2014-08-01T08:05:00,1,1,1\n"
                                   "OK,1,1,1,1,2014-08-01T08:00:00,2,2,1\n"
                                   "OK,1,1,1,1,2014-08-01T08:00:00,2,2,1\n")
    (data / "b.stream").write_text(TRAFFIC + "OK,1,1,1,1,2014-08-01T08:00:00,5,3,2\n"
                                   "OK,1,1,1,1,2014-08-01T08:10:00,5,4,2\n")
    d = TermDictionary()
    stats = Conversion()
    els = convert([data / "a.stream", data / "b.stream"], data / "repo.ttl", data / "meta.csv", d, stats=stats)
    t = 1406880000000
    assert [e.time for e in els] == [t, t + 300_000, t + 600_000]
    got = values(els, d)
    assert got[(t, "pCong")] == 2 / 2000 and got[(t, "qCong")] == 5 / 500  # both roads in one time point
    assert stats.duplicates[str(data / "a.stream")] == 1
    assert stats.out_of_order[str(data / "a.stream")] == 1
    assert stats.time_points == 3


def test_compression(data: Path) -> None:
    rows = "".join(f"OK,1,1,1,1,2014-08-01T{8 + i // 12:02d}:{5 * (i % 12):02d}:00,1,{i},1\n" for i in range(30))
    (data / "a.stream").write_text(TRAFFIC + rows)
    d = TermDictionary()
    plain = convert([data / "a.stream"], data / "repo.ttl", data / "meta.csv", d)
    fast = convert([data / "a.stream"], data / "repo.ttl", data / "meta.csv", d, rate=1000)
    slow = convert([data / "a.stream"], data / "repo.ttl", data / "meta.csv", d, rate=3, skip=5, limit=4)
    assert [e.time for e in fast] == [plain[0].time + i for i in range(30)]
    assert [e.triples for e in fast] == [e.triples for e in plain]
    assert [e.time - slow[0].time for e in slow] == [0, 333, 667, 1000]
    assert slow[0].time == plain[5].time and slow[0].triples == plain[5].triples
    assert compress([5, 9, 100], 2) == [5, 505, 1005]
    for bad in (0, -1, 1001):
        with pytest.raises(ValueError):
            compress([1, 2], bad)


@pytest.mark.parametrize("row, message", [
    ("OK,1,1,1,1,2014-08-01T08:00:00,1,1\n", "expected 9 fields, found 8"),
    ("OK,1,fast,1,1,2014-08-01T08:00:00,1,1,1\n", "avgSpeed is not a number: 'fast'"),
    ("OK,1,1,1,1,yesterday,1,1,1\n", "TIMESTAMP is not a date-time: 'yesterday'"),
    ("OK,1,1,1,1,2014-08-01T08:00:00,1,1,77\n", "REPORT_ID 77 is not in the traffic metadata"),
    ("OK,1,1,1,1,2014-08-01T08:00:00,1,1,x\n", "REPORT_ID is not a number: 'x'"),
])
def test_bad_rows_name_file_and_line(data: Path, row: str, message: str) -> None:
    path = data / "bad.stream"
    path.write_text(TRAFFIC + "OK,1,1,1,1,2014-08-01T07:55:00,1,1,1\n" + row)
    with pytest.raises(CityBenchError) as caught:
        convert([path], data / "repo.ttl", data / "meta.csv", TermDictionary())
    assert str(caught.value) == f"{path}:3: {message}"


def test_bad_header_and_unknown_sensor(data: Path) -> None:
    (data / "x.stream").write_text("a,b\n1,2\n")
    with pytest.raises(CityBenchError, match=r"x\.stream:1: not a CityBench"):
        convert([data / "x.stream"], data / "repo.ttl", data / "meta.csv", TermDictionary())
    (data / "meta.csv").write_text(META + "3,100,11\n")
    (data / "y.stream").write_text(TRAFFIC + "OK,1,1,1,1,2014-08-01T08:00:00,1,1,3\n")
    with pytest.raises(CityBenchError, match=r"y\.stream:2: sensor .*AarhusTrafficData3 is not in the repository"):
        convert([data / "y.stream"], data / "repo.ttl", data / "meta.csv", TermDictionary())


def test_command_line_writes_a_readable_stream(data: Path) -> None:
    (data / "AarhusTrafficData1.stream").write_text(
        TRAFFIC + "OK,120,50,1,120,2014-08-01T07:50:00,10,100,1\nOK,130,40,1,130,2014-08-01T07:55:00,4,101,1\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for ext in ("trig", "jsonl"):
        out = data / f"s.{ext}"
        done = subprocess.run([sys.executable, "-m", "chronolog.citybench", str(data / "AarhusTrafficData1.stream"),
                               "--repository", str(data / "repo.ttl"), "--metadata", str(data / "meta.csv"),
                               "--rate", "2", "-o", str(out)], env=env, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode()
        d = TermDictionary()
        els = list(read_stream(out, d))
        assert [e.time for e in els] == [1406879400000, 1406879400500]
        assert values(els, d)[(1406879400500, "pEst")] == 2000 / 40
    bad = subprocess.run([sys.executable, "-m", "chronolog.citybench", str(data / "AarhusTrafficData1.stream"),
                          "--repository", str(data / "repo.ttl"), "--metadata", str(data / "meta.csv"),
                          "--rate", "5000"], env=env, capture_output=True, timeout=60)
    assert bad.returncode == 2 and b"rate must be in" in bad.stderr


def test_real_data_first_rows() -> None:
    citybench = shared_path("data", "citybench")
    repo = load_repository(citybench / "SensorRepository.n3")
    assert [k for _, k in repo[CES + "AarhusWeatherData0"]] == ["Humidity", "Temperature", "WindSpeed"]
    assert sorted(k for _, k in repo[CES + "AarhusTrafficData158505"]) == [
        "AvgSpeed", "CongestionLevel", "EstimatedTime", "MeasureTime", "VehicleCount"]
    distances = load_distances(citybench / "trafficMetaData.csv")
    assert distances["158505"] == 2065
    d = TermDictionary()
    els = convert([citybench / "streams" / "AarhusTrafficData158505.stream"], repo, distances, d, limit=1)
    got = {k[1]: v for k, v in values(els, d).items()}
    cong = next(p for p, k in repo[CES + "AarhusTrafficData158505"] if k == "CongestionLevel")[len(CES):]
    est = next(p for p, k in repo[CES + "AarhusTrafficData158505"] if k == "EstimatedTime")[len(CES):]
    # first row: OK,141,52,616,141,2014-08-01T07:50:00,1,20746168,158505
    assert got[cong] == 1 / 2065 and got[est] == 2065 / 52
    assert els[0].time == 1406879400000


def test_excerpts_match_the_converter() -> None:
    """The committed q1 stream is what the converter makes of the shared data."""
    citybench = shared_path("data", "citybench")
    d1, d2 = TermDictionary(), TermDictionary()
    committed = list(read_stream(EXAMPLES / "citybench" / "q1" / "stream.trig", d1))
    fresh = convert([citybench / "streams" / "AarhusTrafficData182955.stream",
                     citybench / "streams" / "AarhusTrafficData158505.stream"],
                    citybench / "SensorRepository.n3", citybench / "trafficMetaData.csv", d2, rate=1, limit=80)

    def dec(els, d):
        return [(e.time, sorted(tuple(str(d.decode(t)) for t in tr) for tr in e.triples)) for e in els]

    assert dec(committed, d1) == dec(fresh, d2)
    assert json.dumps(len(committed)) == "80"


# -- CityBench's C-SPARQL query over two named streams (examples/citybench-csparql) -----------

CSPARQL = EXAMPLES / "citybench-csparql"
TRAFFIC_STREAM, PARKING_STREAM = CES + "AarhusTrafficData158505", CES + "AarhusParkingDataKALKVAERKSVEJ"


def solutions_by_time(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(time, the solutions as sorted JSON) per output line: solutions compare as a multiset,
    doubles by value (pyoxigraph writes "95.0" as "95")."""
    def term(text: str) -> object:
        lexical, _, datatype = text.rpartition("^^")
        return float(lexical.strip('"')) if datatype.endswith("#double>") else text

    return [(d["time"], sorted(json.dumps({k: term(v) for k, v in s.items()}, sort_keys=True) for s in d["solutions"]))
            for d in map(json.loads, lines)]


def test_citybench_csparql_runs_unchanged(tmp_path: Path) -> None:
    """CityBench's traffic_parking_1 query, as its authors wrote it, over the two streams."""
    out = tmp_path / "out.jsonl"
    done = run_cli("run", str(CSPARQL / "traffic_parking_1.csparql"), "--stream", f"{TRAFFIC_STREAM}={CSPARQL / 'traffic.trig'}",
                   "--stream", f"{PARKING_STREAM}={CSPARQL / 'parking.trig'}", "--background", str(CSPARQL / "background.ttl"),
                   "--runner", "inprocess", "-o", str(out))
    assert done.returncode == 0, done.stderr.decode()
    expected = (CSPARQL / "expected.jsonl").read_text(encoding="utf-8").splitlines()
    assert solutions_by_time(out.read_text(encoding="utf-8").splitlines()) == solutions_by_time(expected)


def test_citybench_csparql_expected_from_the_definitions() -> None:
    """expected.jsonl worked out without chronolog's windows or SPARQL: at every window close
    (traffic [RANGE 3000ms STEP 1500ms], parking [RANGE 20s STEP 10s]) each window's content
    from the reference definitions, and the query's WHERE over it and the background by
    pyoxigraph; an instant with no solution is not reported."""
    import pyoxigraph

    from reference.windows import csparql_content

    def elements(name: str) -> list[tuple[int, pyoxigraph.Triple]]:
        """(time, triple) of a stream file, read by pyoxigraph: the default graph gives each
        element graph its time (prov:generatedAtTime)."""
        quads = list(pyoxigraph.parse(path=str(CSPARQL / f"{name}.trig"), format=pyoxigraph.RdfFormat.TRIG))
        times = {q.subject: int(q.object.value) for q in quads if q.graph_name == pyoxigraph.DefaultGraph()}
        return [(times[q.graph_name], q.triple) for q in quads if q.graph_name != pyoxigraph.DefaultGraph()]

    streams = {name: elements(name) for name in ("traffic", "parking")}
    windows = {"traffic": (3000, 1500), "parking": (20000, 10000)}
    text = (CSPARQL / "traffic_parking_1.csparql").read_text(encoding="utf-8")
    sparql = "\n".join(line for line in text.splitlines() if not line.strip().lower().startswith("from"))
    last = max(time for items in streams.values() for time, _ in items)
    closes = sorted({k * step + range_ for range_, step in windows.values() for k in range(last // step + 1)})
    background = list(pyoxigraph.parse(path=str(CSPARQL / "background.ttl"), format=pyoxigraph.RdfFormat.TURTLE))
    worked_out = []
    for close in closes:
        store = pyoxigraph.Store()
        store.extend(pyoxigraph.Quad(t.subject, t.predicate, t.object) for t in background)
        for name, (range_, step) in windows.items():
            for t in csparql_content(streams[name], range_, step, close) or []:
                store.add(pyoxigraph.Quad(t.subject, t.predicate, t.object))
        result = store.query(sparql)
        rows = [{str(v)[1:]: str(row[v]) for v in result.variables if row[v] is not None} for row in result]
        if rows:
            worked_out.append(json.dumps({"time": close, "solutions": rows}))
    expected = (CSPARQL / "expected.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(expected) > 5
    assert solutions_by_time(worked_out) == solutions_by_time(expected)


def test_a_bare_query_is_named_after_its_file_and_a_network_graph_needs_background() -> None:
    from chronolog.engine import Engine
    from chronolog.errors import ChronologError

    text = (CSPARQL / "traffic_parking_1.csparql").read_text(encoding="utf-8")
    engine = Engine(text, filename=str(CSPARQL / "traffic_parking_1.csparql"), background=[str(CSPARQL / "background.ttl")])
    assert [r.query.name for r in engine.program.running] == ["traffic_parking_1"]  # type: ignore[attr-defined]
    with pytest.raises(ChronologError, match="give other background data with --background"):
        Engine(text, filename=str(CSPARQL / "traffic_parking_1.csparql"))
