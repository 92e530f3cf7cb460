"""The Spark streaming runner (issue 6): sustained throughput, end-to-end latency and scaling
of ``chronolog run --runner spark`` on ``local[2]``, side by side with the in-process engine
on the same input, in one run.

Workloads: DOTR section 5's synthetic scenario (``dotr_scenario.py``: 10 rules, 10k-triple
background, one-triple elements) and CityBench Q1/Q2 (``examples/citybench/q1``, ``q2``: the
example programs and backgrounds, with longer streams converted from
``../shared/data/citybench`` by ``chronolog.citybench``, one graph per second of stream time).

1. Throughput at full load: each workload is replayed as fast as possible (available-now
   trigger) with ``--max-elements-per-batch`` 100, 1000 and 10000 (5000 for CityBench). The
   first micro-batch of a query carries its start-up (planning, state store creation) and is
   left out: "steady" numbers cover batches 1.. (wall time between the sink callbacks of
   batch 0 and the last batch; CPU time of the whole process tree - this driver, the JVM and
   the Python workers it forks - read from /proc at the same callbacks). The in-process engine
   (``Engine.push`` over ``read_stream``, parsing included) is measured on exactly the same
   elements, element by element, in this process before Spark starts. Per-phase breakdown:
   Spark's progress reports (``durationMs``, the stateful operator's metrics) and its status
   store (per stage: the enrichment stage - source and ``mapInArrow`` - and the stateful
   stage - ``transformWithStateInPandas`` and the ``foreachBatch`` sink).
2. End-to-end latency: the replay source at a fixed rate (``rate=`` elements/s) with a
   processing-time trigger. Element i becomes available at start + i/rate (the replay clock,
   started by the source's first ``latestOffset`` call; start is recovered from the progress
   reports: each batch's end offset n_i pins the clock within its ``latestOffset`` call);
   a detection's latency is the time its sink callback ran minus the arrival of the last
   element of its time point. "Steady" latencies are those of the stream's second half: the
   first micro-batch carries start-up, and the next ones the backlog it left.
3. Scaling: ``partitions`` (enrichment tasks) 1, 2, 4, 8; ``spark.sql.shuffle.partitions``
   (keyed partitions of the temporal stage, one RocksDB store each) 1, 2, 4, 8; ``local[1]``
   against ``local[2]``.

Every Spark run gets its own temporary checkpoint. The SparkSession is shared within a
master, so each master runs in a child process (``--child``); each child first runs a short
warm-up query per workload (Python workers start and build the program once per process).

    nice env PYTHONPATH=src python benchmarks/bench_spark_stream.py [--quick] [--json OUT.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "citybench"
KEYED = 2  # keyed (shuffle) partitions unless a run says otherwise: chronolog's default on local[2]
PHASES = ("latestOffset", "walCommit", "getBatch", "queryPlanning", "addBatch", "commitOffsets", "triggerExecution")


# -- workloads --------------------------------------------------------------------------

@dataclass
class Workload:
    name: str
    program: str
    background: list[str]
    rules: list[str]
    streams: dict[int, str] = field(default_factory=dict)  # length -> stream file (prefixes of one stream)


def make_workloads(tmp: Path, names: list[str], lengths: dict[str, list[int]], data: Path) -> dict[str, Workload]:
    """Write each workload's stream and its prefixes (one file per length) under ``tmp``."""
    from chronolog.streams import read_stream, write_stream
    from chronolog.terms import TermDictionary

    out = {}
    for name in names:
        longest = max(lengths[name])
        d = TermDictionary()
        folder = tmp / name
        folder.mkdir(parents=True, exist_ok=True)
        if name == "synthetic":
            from dotr_scenario import write_example

            write_example(str(folder), 10_000, longest, 10)
            elements = list(read_stream(folder / "stream.trig", d))
            w = Workload(name, str(folder / "scenario.dotr"), [str(folder / "background.ttl")],
                         [str(folder / "scenario.dl")])
        else:
            from chronolog.citybench import convert, load_distances, load_repository

            query = name.split("-")[-1]  # citybench-q1 -> q1
            sensors = {"q1": ["AarhusTrafficData182955", "AarhusTrafficData158505"],
                       "q2": ["AarhusTrafficData158505", "AarhusWeatherData0"]}[query]
            example = ROOT / "examples" / "citybench" / query
            if (data / "streams").is_dir():
                elements = convert([data / "streams" / f"{s}.stream" for s in sensors],
                                   load_repository(data / "SensorRepository.n3"),
                                   load_distances(data / "trafficMetaData.csv"), d, rate=1, limit=longest)
            else:  # no CityBench data: the example's excerpt only
                elements = list(read_stream(example / "stream.trig", d))
            w = Workload(name, str(example / f"{query}.dotr"), [str(example / "background.ttl")], [])
        for n in sorted(set(lengths[name])):
            path = folder / f"stream-{n}.trig"
            write_stream(elements[:n], path, d)
            w.streams[n] = str(path)
        out[name] = w
    return out


# -- the in-process engine, element by element -------------------------------------------

@dataclass
class InProcess:
    build_wall: float
    build_cpu: float
    wall: array  # cumulative seconds after element i (index 0 = before the first)
    cpu: array
    detections: array  # cumulative detections
    times: list[int]  # element times

    def cost(self, a: int, b: int) -> tuple[float, float, int]:
        """Wall s, CPU s and detections of elements a..b-1."""
        b = min(b, len(self.times))
        return self.wall[b] - self.wall[a], self.cpu[b] - self.cpu[a], self.detections[b] - self.detections[a]


def run_inprocess(w: Workload) -> InProcess:
    from chronolog.engine import Engine
    from chronolog.streams import read_stream

    clock, cpu_clock = time.perf_counter, time.process_time
    t0, c0 = clock(), cpu_clock()
    engine = Engine.from_file(w.program, background=w.background, rules=w.rules)
    build_wall, build_cpu = clock() - t0, cpu_clock() - c0
    wall, cpu, dets = array("d", [0.0]), array("d", [0.0]), array("q", [0])
    times: list[int] = []
    total = 0
    t0, c0 = clock(), cpu_clock()
    for el in read_stream(w.streams[max(w.streams)], engine.dictionary):  # parsing is timed too
        total += len(engine.push(el.time, el.triples))
        wall.append(clock() - t0)
        cpu.append(cpu_clock() - c0)
        dets.append(total)
        times.append(el.time)
    return InProcess(build_wall, build_cpu, wall, cpu, dets, times)


# -- the Spark child -----------------------------------------------------------------------

def tree_cpu(root: int | None = None) -> float:
    """CPU seconds (user + system, reaped children included) of ``root`` and all its
    descendants: this driver, the JVM, the Python workers and the source's Python runner."""
    root = root or os.getpid()
    hz = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rindex(")") + 2:].split()
        pid = int(entry)
        children.setdefault(int(rest[1]), []).append(pid)
        ticks[pid] = sum(int(x) for x in rest[11:15])  # utime stime cutime cstime
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return total / hz


def _progress_slim(p) -> dict:
    j = json.loads(p.json)
    out = {k: j.get(k) for k in ("batchId", "timestamp", "numInputRows", "durationMs", "runId")}
    src = (j.get("sources") or [{}])[0]
    out["startOffset"], out["endOffset"] = src.get("startOffset"), src.get("endOffset")
    ops = []
    for s in j.get("stateOperators") or []:
        m = s.get("customMetrics") or {}
        ops.append({"numRowsTotal": s.get("numRowsTotal"), "allUpdatesTimeMs": s.get("allUpdatesTimeMs"),
                    "commitTimeMs": s.get("commitTimeMs"), "numShufflePartitions": s.get("numShufflePartitions"),
                    "fileSyncMs": m.get("rocksdbCommitFileSyncLatencyMs", 0),
                    "zipMs": m.get("rocksdbSaveZipFilesLatencyMs", 0),
                    "flushMs": m.get("rocksdbCommitFlushLatency", 0),
                    "checkpointMs": m.get("rocksdbCommitCheckpointLatency", 0)})
    out["state"] = ops
    return out


def status_stages(spark) -> list:
    """The session's stages so far, from Spark's status store (JVM ``StageData`` objects)."""
    jvm = spark.sparkContext._jvm
    store = spark.sparkContext._jsc.sc().statusStore()
    stages = store.stageList(None, False, False, spark.sparkContext._gateway.new_array(jvm.double, 0),
                             jvm.java.util.ArrayList())
    return [stages.apply(i) for i in range(stages.size())]


def _stages(spark, run_ids: set[str]) -> list[dict]:
    """Per stage of this query (from Spark's status store): batch, kind, wall and task time."""
    import re

    out = []
    for st in status_stages(spark):
        desc = st.description().get() if st.description().isDefined() else ""
        run = re.search(r"runId = ([0-9a-f-]+)", desc)
        batch = re.search(r"batch = (\d+)", desc)
        if not run or run.group(1) not in run_ids or not batch or st.numTasks() == 0:
            continue
        sub, done = st.submissionTime(), st.completionTime()
        out.append({
            "batch": int(batch.group(1)),
            "kind": "stateful" if st.shuffleReadRecords() or st.name().startswith("call at") else "enrich",
            "tasks": st.numTasks(),
            "wall_ms": (done.get().getTime() - sub.get().getTime()) if sub.isDefined() and done.isDefined() else None,
            "task_ms": st.executorRunTime(), "gc_ms": st.jvmGcTime(),
            "records_in": st.inputRecords(), "shuffle_records": st.shuffleReadRecords() or st.shuffleWriteRecords(),
        })
    return out


def child_main(plan_path: str, result_path: str) -> None:
    from chronolog.program import Options, ProgramSpec
    from chronolog.spark.runner import run_spark
    from chronolog.spark.session import spark_session
    from chronolog.spark.sinks import CallbackSink

    plan = json.loads(Path(plan_path).read_text())
    master = plan["master"]
    results: list[dict] = []

    def save() -> None:
        Path(result_path).write_text(json.dumps({"master": master, "session_s": session_s, "runs": results}))

    t0 = time.time()
    spark = spark_session(master)
    session_s = time.time() - t0
    save()
    for run in plan["runs"]:
        w = run["workload"]
        spec = ProgramSpec("dotr", Path(w["program"]).read_text(encoding="utf-8"), w["program"],
                           Options(tuple(w["background"]), tuple(w["rules"])))
        callbacks: list[tuple[int, float, float, int]] = []
        detections: list[tuple[int, float]] = []
        expected = run.get("expected") or 0
        done = threading.Event()
        count = [0]

        def callback(batch_id: int, found: list, run: dict = run) -> None:
            now = time.time()
            callbacks.append((batch_id, now, tree_cpu(), len(found)))
            if run.get("record"):
                detections.extend((d.time, now) for d in found)
            count[0] += len(found)
            if run.get("stop_when_done") and expected and count[0] >= expected:
                done.set()

        def watcher() -> None:  # stops a rate-driven query once every detection came out
            if done.wait(run["timeout"]):
                for q in spark.streams.active:
                    q.stop()

        if run.get("stop_when_done"):
            threading.Thread(target=watcher, daemon=True).start()
        conf = {"spark.sql.shuffle.partitions": str(run.get("shuffle", KEYED))}
        load0 = os.getloadavg()[0]
        wall0, cpu0 = time.time(), tree_cpu()
        error = None
        summary = None
        try:
            summary = run_spark(spec, run["stream"], CallbackSink(callback), master=master, conf=conf,
                                trigger=run.get("trigger", "available-now"),
                                max_elements_per_batch=run.get("mpb", 0), partitions=run.get("partitions", 0),
                                rate=run.get("rate", 0.0), stop_after=run["timeout"],
                                report=lambda line: None)
        except Exception as exc:  # noqa: BLE001 - recorded, the next run goes on
            error = f"{type(exc).__name__}: {exc}"[:500]
        wall1, cpu1 = time.time(), tree_cpu()
        done.set()
        progress = [_progress_slim(p) for p in (summary.progress if summary else [])]
        try:
            stages = _stages(spark, {p["runId"] for p in progress})
        except Exception as exc:  # noqa: BLE001
            stages = []
            error = error or f"stages: {exc}"
        results.append({"run": run, "wall0": wall0, "wall1": wall1, "cpu0": cpu0, "cpu1": cpu1,
                        "load": (load0, os.getloadavg()[0]), "error": error,
                        "detections": count[0], "callbacks": callbacks, "progress": progress, "stages": stages,
                        "detection_times": detections})
        save()
        print(f"  [{master}] {run['label']}: {wall1 - wall0:.1f} s, {count[0]:,} detections"
              f"{' ERROR ' + error if error else ''}", file=sys.stderr, flush=True)


# -- analysis --------------------------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q
    f = int(k)
    return s[f] + (s[min(f + 1, len(s) - 1)] - s[f]) * (k - f)


def steady(result: dict, ip: InProcess) -> dict:
    """Steady-state numbers of an available-now run (batches after the first) and the
    in-process engine's on the same elements."""
    progress = {p["batchId"]: p for p in result["progress"]}
    cbs = {b: (t, c, n) for b, t, c, n in result["callbacks"]}
    data = sorted(b for b, p in progress.items() if p["numInputRows"] and b in cbs)
    out: dict = {"batches": len(data), "elements": sum(progress[b]["numInputRows"] for b in data)}
    out["whole_wall"] = result["wall1"] - result["wall0"]
    out["whole_cpu"] = result["cpu1"] - result["cpu0"]
    out["first_output_s"] = (cbs[data[0]][0] - result["wall0"]) if data else float("nan")
    measured = data[1:] if len(data) > 1 else data
    if not data:
        return out
    if len(data) > 1:
        first_n = progress[data[0]]["numInputRows"]
        wall = cbs[data[-1]][0] - cbs[data[0]][0]
        cpu = cbs[data[-1]][1] - cbs[data[0]][1]
    else:  # one batch: the whole run (start-up included)
        first_n = 0
        wall, cpu = out["whole_wall"], out["whole_cpu"]
    n = sum(progress[b]["numInputRows"] for b in measured)
    ip_wall, ip_cpu, _ = ip.cost(first_n, first_n + n)
    out.update(measured_batches=len(measured), measured_elements=n, wall=wall, cpu=cpu,
               ip_wall=ip_wall, ip_cpu=ip_cpu, only_one_batch=len(data) == 1)
    out["phases"] = {k: statistics.mean(progress[b]["durationMs"].get(k, 0) for b in measured) for k in PHASES}
    states = [progress[b]["state"][0] for b in measured if progress[b]["state"]]
    for key in ("allUpdatesTimeMs", "commitTimeMs", "fileSyncMs", "zipMs", "numRowsTotal"):
        out[key] = statistics.mean(s[key] or 0 for s in states) if states else 0.0
    for kind in ("enrich", "stateful"):
        st = [s for s in result["stages"] if s["kind"] == kind and s["batch"] in measured]
        out[f"{kind}_wall"] = sum(s["wall_ms"] or 0 for s in st) / len(measured)
        out[f"{kind}_task"] = sum(s["task_ms"] for s in st) / len(measured)
    ip_total = ip.detections[min(len(ip.times), sum(progress[b]["numInputRows"] for b in data))]
    out["detections_equal"] = result["detections"] == ip_total
    out["ip_detections"] = ip_total
    return out


def latency(result: dict, ip: InProcess) -> dict:
    """Latency of a rate-driven run: output callback minus arrival of the element."""
    run = result["run"]
    rate, total = run["rate"], run["length"]
    progress = [p for p in result["progress"] if p.get("endOffset") and "addBatch" in p["durationMs"]]
    from datetime import datetime

    def ts(p: dict) -> float:
        return datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()

    lo, hi = float("-inf"), float("inf")
    for p in progress:
        n = p["endOffset"]["n"]
        n = sum(n.values()) if isinstance(n, dict) else n  # elements seen, per stream
        if n >= total:
            continue
        called_from, called_to = ts(p) - 0.001, ts(p) + p["durationMs"].get("latestOffset", 0) / 1000 + 0.001
        lo = max(lo, called_from - n / rate)
        hi = min(hi, called_to - (n - 1) / rate)
    first = min(progress, key=lambda p: p["batchId"]) if progress else None
    if first is not None:
        lo = max(lo, ts(first) - 0.001)
        hi = min(hi, ts(first) + first["durationMs"].get("latestOffset", 0) / 1000 + 0.001)
    if lo > hi or first is None:  # inconsistent: fall back on the first call
        start, width = (ts(first) if first else result["wall0"]), float("nan")
    else:
        start, width = (lo + hi) / 2, hi - lo
    last_index: dict[int, int] = {}
    for i, t in enumerate(ip.times[:total]):
        last_index[t] = i
    half = start + total / rate / 2  # steady: the second half of the stream, long past start-up's backlog
    all_lat, steady_lat = [], []
    for t, out_time in result["detection_times"]:
        arrival = start + last_index[t] / rate
        all_lat.append(out_time - arrival)
        if arrival >= half:
            steady_lat.append(out_time - arrival)
    batches = [p for p in progress if p["numInputRows"]]
    trig = [p["durationMs"]["triggerExecution"] for p in batches[1:]] or [0]
    return {"rate": rate, "trigger": run["trigger"], "elements": total, "detections": result["detections"],
            "expected": ip.detections[min(total, len(ip.times))], "start_uncertainty_ms": 1000 * width,
            "median": percentile(all_lat, 0.5), "p99": percentile(all_lat, 0.99), "max": max(all_lat, default=float("nan")),
            "steady_n": len(steady_lat), "steady_median": percentile(steady_lat, 0.5),
            "steady_p99": percentile(steady_lat, 0.99), "batches": len(batches),
            "mean_batch_ms": statistics.mean(trig), "mean_batch_rows": statistics.mean(p["numInputRows"] for p in batches[1:]) if len(batches) > 1 else 0}


def trigger_seconds(trigger: str) -> float:
    number, _, unit = trigger.partition(" ")
    return float(number) * (60 if unit.startswith("min") else 0.001 if unit.startswith("milli") else 1)


# -- plan and report ----------------------------------------------------------------------

def run_child(master: str, runs: list[dict], tmp: Path, timeout: float) -> dict:
    plan = tmp / f"plan-{master}.json"
    result = tmp / f"result-{master}.json"
    plan.write_text(json.dumps({"master": master, "runs": runs}))
    env = dict(os.environ)
    # a PYTHONPATH given (another commit's src, for a before and after) wins over this checkout's
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(ROOT / "src")]))
    try:
        subprocess.run([sys.executable, __file__, "--child", str(plan), str(result)], env=env, timeout=timeout,
                       check=False)
    except subprocess.TimeoutExpired:
        print(f"chronolog bench: the {master} child timed out after {timeout:.0f} s", file=sys.stderr)
    if not result.exists():
        return {"master": master, "session_s": float("nan"), "runs": []}
    return json.loads(result.read_text())


def fmt(x: float, digits: int = 1) -> str:
    if x != x:  # nan
        return "-"
    return f"{x:,.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams and fewer variants (a few minutes)")
    parser.add_argument("--data", default=str(DATA), help="the CityBench data folder")
    parser.add_argument("--workloads", default="synthetic,citybench-q1,citybench-q2")
    parser.add_argument("--only", default="throughput,latency,scaling", help="comma-separated sections")
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--rate", type=float, help="latency: replay rate, elements/s, for every workload "
                                                   "(default 20 synthetic, 10 CityBench)")
    parser.add_argument("--triggers", help="latency: processing-time trigger intervals, comma-separated "
                                           "(e.g. '100 milliseconds,1 second'; default 1 second, and 5 seconds "
                                           "for synthetic in a full run)")
    parser.add_argument("--child", nargs=2, metavar=("PLAN", "RESULT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(*args.child)
        return
    q = args.quick
    names = args.workloads.split(",")
    only = set(args.only.split(","))
    # batch size -> number of batches (the first one is start-up and not measured)
    sizes = {"synthetic": {100: 4, 1000: 3} if q else {100: 8, 1000: 5, 10000: 2}}
    for name in ("citybench-q1", "citybench-q2"):
        sizes[name] = {100: 4, 1000: 2} if q else {100: 8, 1000: 4, 5000: 2}
    rates = {"synthetic": 20.0, "citybench-q1": 10.0, "citybench-q2": 10.0}
    if args.rate:
        rates = dict.fromkeys(rates, args.rate)
    replay_s = 20 if q else 40
    if args.triggers:
        latency_runs = [(n, t.strip()) for t in args.triggers.split(",") for n in names]
    else:
        latency_runs = [(n, "1 second") for n in names] + ([] if q else [("synthetic", "5 seconds")])
    scale_w, scale_mpb = "synthetic", 1000
    scale_len = scale_mpb * sizes["synthetic"][scale_mpb]
    partitions = [1, 4] if q else [1, 2, 4, 8]
    shuffles = [1, 8] if q else [1, 2, 4, 8]
    warm_len = 200
    lengths = {n: [warm_len] + [b * k for b, k in sizes[n].items()] for n in names}
    for n in names:
        lengths[n].append(int(rates[n] * replay_s))
    if "scaling" in only and scale_w in names:
        lengths[scale_w].append(scale_len)

    started = time.time()
    print(f"Python {platform.python_version()} on {platform.machine()} {platform.system()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; niceness {os.nice(0)}; "
          f"{'quick' if q else 'full'} run", flush=True)
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        import pyspark

        print(f"PySpark {pyspark.__version__}, {java}\n", flush=True)
    except (OSError, IndexError, ImportError):
        pass

    with tempfile.TemporaryDirectory(prefix="chronolog-bench-") as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.time()
        workloads = make_workloads(tmp, names, lengths, Path(args.data))
        print(f"streams written in {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
        inproc: dict[str, InProcess] = {}
        for name, w in workloads.items():
            inproc[name] = ip = run_inprocess(w)
            n = len(ip.times)
            print(f"in-process {name}: {n:,} elements, {ip.wall[n]:.1f} s wall, {1e3 * ip.cpu[n] / n:.3f} ms CPU "
                  f"per element, {ip.detections[n]:,} detections", file=sys.stderr, flush=True)

        def spark_run(label: str, name: str, length: int, **options) -> dict:
            w = workloads[name]
            run = {"label": label, "name": name, "workload": asdict(w), "stream": w.streams[length],
                   "length": length, "timeout": 900.0}
            run.update(options)
            return run

        def warmups() -> list[dict]:
            return [spark_run(f"warm-up {n}", n, warm_len, kind="warmup") for n in names]

        runs2 = warmups()
        if "throughput" in only:
            for n in names:
                for b, k in sizes[n].items():
                    runs2.append(spark_run(f"{n} mpb {b}", n, b * k, kind="throughput", mpb=b))
        if "latency" in only:
            for n, trig in latency_runs:
                length = int(rates[n] * replay_s)
                runs2.append(spark_run(f"{n} rate {rates[n]:g}/s trigger {trig}", n, length, kind="latency",
                                       rate=rates[n], trigger=trig, record=True, stop_when_done=True,
                                       expected=inproc[n].detections[min(length, len(inproc[n].times))],
                                       timeout=90.0 + 3 * replay_s))
        if "scaling" in only and scale_w in names:
            for p in partitions:
                if p != 2 or "throughput" not in only:
                    runs2.append(spark_run(f"scaling partitions {p}", scale_w, scale_len, kind="scaling",
                                           mpb=scale_mpb, partitions=p, shuffle=KEYED))
            for s in shuffles:
                if s != KEYED:
                    runs2.append(spark_run(f"scaling shuffle {s}", scale_w, scale_len, kind="scaling",
                                           mpb=scale_mpb, partitions=2, shuffle=s))
        results = {"local[2]": run_child("local[2]", runs2, tmp, 3600)}
        if "scaling" in only and scale_w in names:
            runs1 = [spark_run(f"warm-up {scale_w}", scale_w, warm_len, kind="warmup"),
                     spark_run(f"local[1] {scale_w} mpb {scale_mpb}", scale_w, scale_len, kind="scaling",
                               mpb=scale_mpb, shuffle=KEYED)]
            results["local[1]"] = run_child("local[1]", runs1, tmp, 1800)
        if args.json:
            Path(args.json).write_text(json.dumps({"results": results, "inprocess": {
                k: {"build_wall": v.build_wall, "build_cpu": v.build_cpu, "elements": len(v.times),
                    "wall": v.wall[len(v.times)], "cpu": v.cpu[len(v.times)],
                    "detections": v.detections[len(v.times)]} for k, v in inproc.items()}}))
        report(results, inproc, workloads, only, scale_w, scale_mpb)
    print(f"\nTotal benchmark time {time.time() - started:.0f} s; load average at the end "
          f"{os.getloadavg()[0]:.1f}.")


def report(results: dict, inproc: dict, workloads: dict, only: set, scale_w: str, scale_mpb: int) -> None:
    r2 = results["local[2]"]
    runs = r2["runs"]
    print(f"SparkSession start-up (local[2]): {r2['session_s']:.1f} s\n")
    print("### First query of a fresh session (warm-up, 200 elements, cold Python workers)\n")
    print("| workload | whole run s | first output s | in-process build + run s |")
    print("|---|---:|---:|---:|")
    for r in runs:
        if r["run"]["kind"] != "warmup":
            continue
        ip = inproc[r["run"]["name"]]
        s = steady(r, ip)
        print(f"| {r['run']['name']} | {fmt(s['whole_wall'])} | {fmt(s['first_output_s'])} | "
              f"{fmt(ip.build_wall + ip.wall[min(200, len(ip.times))], 2)} |")
    print()

    def table(kind: str, rows: list[dict], label_key) -> None:
        print("| run | elements (measured) | batches | Spark el/s | in-process el/s | wall ratio | "
              "Spark CPU ms/el | in-process CPU ms/el | CPU ratio | whole run s | start-up to 1st output s | "
              "detections = in-process | load |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for r in rows:
            ip = inproc[r["run"]["name"]]
            s = steady(r, ip)
            if r["error"] or not s.get("measured_elements"):
                print(f"| {label_key(r)} | failed: {r['error'] or 'no batches'} |||||||||||")
                continue
            n = s["measured_elements"]
            sp_rate, ip_rate = n / s["wall"], n / s["ip_wall"]
            flag = " (1 batch: start-up included)" if s["only_one_batch"] else ""
            print(f"| {label_key(r)}{flag} | {n:,} | {s['measured_batches']} | {fmt(sp_rate, 0)} | {fmt(ip_rate, 0)} | "
                  f"{fmt(s['wall'] / s['ip_wall'])}x | {fmt(1e3 * s['cpu'] / n, 3)} | {fmt(1e3 * s['ip_cpu'] / n, 3)} | "
                  f"{fmt(s['cpu'] / s['ip_cpu'])}x | {fmt(s['whole_wall'])} | {fmt(s['first_output_s'])} | "
                  f"{'yes' if s['detections_equal'] else 'NO: %d vs %d' % (r['detections'], s['ip_detections'])} | "
                  f"{r['load'][0]:.1f}-{r['load'][1]:.1f} |")
        print()

    def phases(rows: list[dict], label_key) -> None:
        print("Mean per measured batch, ms (durationMs from the progress reports; state: the stateful "
              "operator's time summed over its partitions, with RocksDB's commit file sync; stages: wall time "
              "of the enrichment and the stateful stage, task time summed over tasks in brackets):\n")
        print("| run | rows | trigger | latestOffset | walCommit | getBatch | queryPlanning | addBatch | commitOffsets | "
              "enrich stage | stateful stage | state updates | state commit (fsync) | state rows | ms per element |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            s = steady(r, inproc[r["run"]["name"]])
            if r["error"] or not s.get("measured_elements"):
                continue
            ph = s["phases"]
            per_batch = s["measured_elements"] / s["measured_batches"]
            print(f"| {label_key(r)} | {per_batch:,.0f} | {ph['triggerExecution']:,.0f} | {ph['latestOffset']:,.0f} | "
                  f"{ph['walCommit']:,.0f} | {ph['getBatch']:,.0f} | {ph['queryPlanning']:,.0f} | {ph['addBatch']:,.0f} | "
                  f"{ph['commitOffsets']:,.0f} | {s['enrich_wall']:,.0f} ({s['enrich_task']:,.0f}) | "
                  f"{s['stateful_wall']:,.0f} ({s['stateful_task']:,.0f}) | {s['allUpdatesTimeMs']:,.0f} | "
                  f"{s['commitTimeMs']:,.0f} ({s['fileSyncMs']:,.0f}) | {s['numRowsTotal']:,.0f} | "
                  f"{ph['triggerExecution'] / per_batch:,.2f} |")
        print()

    thr = [r for r in runs if r["run"]["kind"] == "throughput"]
    if "throughput" in only and thr:
        print("### Sustained throughput at full load, local[2] (available-now, batches after the first)\n")
        table("throughput", thr, lambda r: r["run"]["label"])
        phases(thr, lambda r: r["run"]["label"])
    lat = [r for r in runs if r["run"]["kind"] == "latency"]
    if "latency" in only and lat:
        print("### End-to-end latency, local[2] (replay at a fixed rate, processing-time trigger)\n")
        print("| run | elements | detections (expected) | median s | p99 s | max s | steady n | steady median s | "
              "steady p99 s | trigger s | p99 / trigger | mean batch ms (rows) | clock start +-ms |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in lat:
            if r["error"] or not r["detection_times"]:
                print(f"| {r['run']['label']} | failed: {r['error'] or 'no detections'} ||||||||||||")
                continue
            m = latency(r, inproc[r["run"]["name"]])
            trig = trigger_seconds(m["trigger"])
            print(f"| {r['run']['label']} | {m['elements']:,} | {m['detections']:,} ({m['expected']:,}) | "
                  f"{fmt(m['median'], 2)} | {fmt(m['p99'], 2)} | {fmt(m['max'], 2)} | {m['steady_n']:,} | "
                  f"{fmt(m['steady_median'], 2)} | {fmt(m['steady_p99'], 2)} | {trig:g} | "
                  f"{fmt(m['steady_p99'] / trig)}x | {m['mean_batch_ms']:,.0f} ({m['mean_batch_rows']:,.0f}) | "
                  f"{fmt(m['start_uncertainty_ms'] / 2, 0)} |")
        print()
    scal = [r for r in runs if r["run"]["kind"] == "scaling"]
    base = [r for r in thr if r["run"]["name"] == scale_w and r["run"].get("mpb") == scale_mpb]
    one = [r for r in results.get("local[1]", {}).get("runs", []) if r["run"]["kind"] == "scaling"]
    if "scaling" in only and (scal or one):
        print(f"### Scaling, {scale_w}, {scale_mpb} elements per batch\n")
        if "local[1]" in results:
            print(f"SparkSession start-up (local[1]): {results['local[1]']['session_s']:.1f} s\n")

        def label(r: dict) -> str:
            run = r["run"]
            master = "local[1]" if r in one else "local[2]"
            p = run.get("partitions") or ("default: 1" if r in one else "default: 2")
            return f"{master}, partitions {p}, shuffle {run.get('shuffle', KEYED)}"

        rows = sorted(base + scal, key=lambda r: (r["run"].get("partitions") or 2, r["run"].get("shuffle", KEYED))) + one
        table("scaling", rows, label)
        phases(rows, label)


if __name__ == "__main__":
    main()
