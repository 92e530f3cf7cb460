"""DOTR end to end (issue 5): seed 000 section 5 side by side with a naive baseline.

- Table 1: the default synthetic scenario (10 rules, 10 + 1 Datalog rules, 10k background
  triples, one-triple elements, one per second): mean time per input graph, split by phase.
- Fig. 4: CityBench Q1 (each) and Q2 (last) on the real data with the full
  SensorRepository.n3 as background, timestamps compressed to 1..1000 graphs/s.
- Fig. 5: Datalog rules 1..100k; Fig. 6: pattern length 2..8 (last, each);
  Fig. 7: rules 1..1k with and without query sharing (FILTER merging).
- Naive baseline: per time point, a fresh reasoner closure of background + graph and a fresh
  one-shot evaluation of every event query (the temporal engine is the same), on a subset;
  its detections are checked against the engine's.

    PYTHONPATH=src python benchmarks/bench_dotr.py [--quick] [--data ../shared/data/citybench]

Times are wall-clock around ``Engine.push`` (it includes everything DOTR's figure
includes: store update, reasoning, querying, temporal reasoning, output graphs), after a
warm-up, with what ``chronolog run`` adds around it (the compiled program frozen out of the
garbage collector's walks, terms reclaimed between time points); per-phase splits come from
``Engine.stats``.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import platform
import tempfile
import time
from pathlib import Path

import dotr_scenario
from dotr_scenario import CROSSED_TOP, program, write_example

import chronolog.lang.dotr.program as engine_module
from chronolog import cep
from chronolog.citybench import convert, load_distances, load_repository
from chronolog.datalog import Reasoner
from chronolog.datalog.loading import load_rules
from chronolog.engine import Engine
from chronolog.lang.dotr.program import Stats
from chronolog.formats import iter_encoded_triples
from chronolog.heap import freeze_compiled
from chronolog.program.contract import reclaim_terms
from chronolog.sparql import prepare
from chronolog.sparql.incremental import StandingQueries
from chronolog.streams import StreamElement, read_stream

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("reasoning", "querying", "temporal", "translation")


def timed_run(engine: Engine, elements: list[StreamElement], warmup: int = 0) -> dict[str, float]:
    """Push ``elements``; per-graph wall time and phase split over those after ``warmup``.

    As ``chronolog run`` does: the compiled program is frozen out of the garbage
    collector's walks (``freeze_compiled``), and the terms no longer referred to are
    reclaimed between time points (``Engine.run``); the reclaiming is timed with the rest."""
    clock = time.perf_counter
    freeze_compiled()
    program = engine.program
    for el in elements[:warmup]:
        engine.push(el.time, el.triples)
        reclaim_terms(program)
    engine.program.stats = Stats()
    detections = 0
    start = clock()
    for el in elements[warmup:]:
        detections += len(engine.push(el.time, el.triples))
        reclaim_terms(program)
    wall = clock() - start
    n = max(1, len(elements) - warmup)
    s = engine.program.stats
    out = {"points": n, "ms": 1e3 * wall / n, "detections": detections,
           "events": s.events, "span_s": (elements[-1].time - elements[warmup].time) / 1000 if n > 1 else 0}
    for phase in PHASES:
        out[phase] = 1e3 * getattr(s, phase) / n
    return out


@contextlib.contextmanager
def sharing(share: bool):
    """Engines built inside use StandingQueries(share=share) (the Engine has no switch)."""
    original = engine_module.StandingQueries
    engine_module.StandingQueries = functools.partial(StandingQueries, share=share)  # type: ignore[misc]
    try:
        yield
    finally:
        engine_module.StandingQueries = original  # type: ignore[misc]


def scenario_dir(root: Path, name: str, filler: int, points: int, n_rules: int = 10, length: int = 2,
                 selection: str = "last", extra_rules: int = 10, thresholds: str = "all") -> Path:
    folder = root / name
    write_example(str(folder), filler, points, n_rules, top=CROSSED_TOP if thresholds == "crossed" else 100)
    (folder / "scenario.dotr").write_text(program(n_rules, length, selection, thresholds=thresholds),
                                          encoding="utf-8")
    (folder / "scenario.dl").write_text(dotr_scenario.rules(extra_rules), encoding="utf-8")
    return folder


def engine_for(folder: Path, background: list[str] | None = None) -> tuple[Engine, list[StreamElement]]:
    dotr = next(folder.glob("*.dotr"))
    engine = Engine.from_file(dotr, background=background or [str(p) for p in folder.glob("background.*")],
                              rules=[str(p) for p in folder.glob("*.dl")])
    stream = list(read_stream(folder / "stream.trig", engine.dictionary))
    return engine, stream


# -- the naive baseline ------------------------------------------------------------------

def naive_run(engine: Engine, background: list[str], rules: list[str], elements: list[StreamElement]) -> dict:
    """Per time point: fresh closure of background + graph, fresh evaluation of every query;
    events go to ``engine``'s (fresh) temporal engine, graphs built by the engine's code."""
    d = engine.dictionary
    program_rules = load_rules(rules, d)
    bg = [t for path in background for t in iter_encoded_triples(path, d)]
    prologue = engine.program.tree.prologue
    queries = [(ev.name, prepare(f"{prologue}\n{ev.query.text}" if prologue else ev.query.text, d))
               for ev in engine.program.tree.events]
    attributes = engine.program.attributes
    enc = d.encode
    detections = 0
    start = time.perf_counter()
    for el in elements:
        reasoner = Reasoner(program_rules, d)
        reasoner.add_background(bg)
        reasoner.add_background(el.triples)
        view = reasoner.close()
        events = []
        for name, pq in queries:
            attrs = attributes[name]
            for row in pq.execute(view):
                values = [None if t is None else enc(t) for t in row]
                events.append(cep.Event(name, el.time, el.time, dict(zip(attrs, values))))
        # background-only answers are not events (the engine subtracts them); none of these
        # programs has a query that can match the background alone.
        composites = engine.program.temporal.push_batch(events) if events else []
        detections += len([engine.program.graph(c, str(i)) for i, c in enumerate(composites)])
    wall = time.perf_counter() - start
    return {"ms": 1e3 * wall / len(elements), "detections": detections}


def compare_naive(label: str, folder_engine, background: list[str], rules: list[str],
                  elements: list[StreamElement]) -> tuple[float, float, int, int]:
    fast_engine = folder_engine()
    fast = timed_run(fast_engine, elements)
    naive = naive_run(folder_engine(), background, rules, elements)
    return fast["ms"], naive["ms"], fast["detections"], naive["detections"]


# -- the experiments ---------------------------------------------------------------------

def table1(tmp: Path, points: int, naive_points: int) -> None:
    folder = scenario_dir(tmp, "default", 10_000, points)
    engine, stream = engine_for(folder)
    m = timed_run(engine, stream, warmup=min(1000, points // 10))
    total = sum(m[p] for p in PHASES)
    print("## Table 1: default scenario (10 rules, 11 Datalog rules, 10k background, 1 triple per graph)\n")
    print(f"{m['points']:,} graphs after a warm-up, {m['events']:,} events, {m['detections']:,} detections.\n")
    print("| phase | ms per graph | share | DOTR (paper) |")
    print("|---|---:|---:|---|")
    paper = {"reasoning": "~80% (reasoning + querying in RDFox)", "querying": "",
             "temporal": "~16%", "translation": "~3%"}
    for p in PHASES:
        print(f"| {p} | {m[p]:.4f} | {100 * m[p] / total:.0f}% | {paper[p]} |")
    print(f"| **total (wall, per graph)** | **{m['ms']:.4f}** | | **12.09 ms** |")
    bg = [str(folder / "background.ttl")]
    rules = [str(folder / "scenario.dl")]
    subset = stream[:naive_points]
    fast_ms, naive_ms, fd, nd = compare_naive("default", lambda: engine_for(folder)[0], bg, rules, subset)
    print(f"\nNaive baseline on the first {len(subset):,} graphs: {naive_ms:.2f} ms per graph vs "
          f"{fast_ms:.4f} ms ({naive_ms / fast_ms:,.0f}x); detections {nd} (naive) vs {fd} (engine)"
          f"{'' if nd == fd else '  MISMATCH'}.\n", flush=True)


def fig4(tmp: Path, data: Path, points: int, naive_points: int, rates: list[int],
         queries: list[str] = ["q1", "q2"], q1_high: int = 200) -> None:
    repo = load_repository(data / "SensorRepository.n3")
    distances = load_distances(data / "trafficMetaData.csv")
    background = [str(data / "SensorRepository.n3")]
    streams = {"q1": ["AarhusTrafficData182955", "AarhusTrafficData158505"],
               "q2": ["AarhusTrafficData158505", "AarhusWeatherData0"]}
    streams = {q: s for q, s in streams.items() if q in queries}
    print("## Fig. 4: CityBench Q1 (each) and Q2 (last), full SensorRepository.n3 background\n")
    print("Time per input graph after the first 3 s of stream (the window filling up).\n")
    print("| query | rate (graphs/s) | graphs | ms per graph | reasoning | querying | temporal | translation "
          "| outputs per graph | outputs per s | DOTR (paper) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    paper = {"q1": "< 4 ms (up to 7 ms at high rates)", "q2": "< 3 ms"}
    naive_rows = []
    for query, sensors in streams.items():
        dotr = ROOT / "examples" / "citybench" / query / f"{query}.dotr"
        for rate in rates:
            warm = 3 * rate
            n = warm + (points if query == "q2" or rate < 1000 else q1_high)
            engine = Engine.from_file(dotr, background=background)
            paths = [data / "streams" / f"{s}.stream" for s in sensors]
            elements = convert(paths, repo, distances, engine.dictionary, rate=rate, limit=n)
            m = timed_run(engine, elements, warmup=warm)
            outputs_per_s = m["detections"] / m["span_s"] if m["span_s"] else 0.0
            print(f"| {query} | {rate:,} | {m['points']:,} | {m['ms']:.4f} | {m['reasoning']:.4f} | "
                  f"{m['querying']:.4f} | {m['temporal']:.4f} | {m['translation']:.4f} | "
                  f"{m['detections'] / m['points']:,.1f} | {outputs_per_s:,.0f} | {paper[query]} |", flush=True)

        def make(dotr: Path = dotr) -> Engine:
            return Engine.from_file(dotr, background=background)

        probe = make()
        subset = convert([data / "streams" / f"{s}.stream" for s in sensors], repo, distances, probe.dictionary,
                         rate=100, skip=30, limit=naive_points)
        fast = timed_run(probe, subset)
        naive_engine = make()
        subset2 = convert([data / "streams" / f"{s}.stream" for s in sensors], repo, distances,
                          naive_engine.dictionary, rate=100, skip=30, limit=naive_points)
        naive = naive_run(naive_engine, background, [], subset2)
        naive_rows.append((query, len(subset), fast["ms"], naive["ms"], fast["detections"], naive["detections"]))
    print("\nNaive baseline (fresh closure of the 100k+-triple background + graph, fresh queries), at 100 graphs/s,\n"
          "from the 31st time point (the weather stream starts 8 hours before the traffic streams):\n")
    print("| query | graphs | engine ms | naive ms | ratio | detections engine / naive |")
    print("|---|---:|---:|---:|---:|---|")
    for query, n, fast_ms, naive_ms, fd, nd in naive_rows:
        print(f"| {query} | {n} | {fast_ms:.4f} | {naive_ms:.1f} | {naive_ms / fast_ms:,.0f}x | {fd} / {nd}"
              f"{'' if fd == nd else ' MISMATCH'} |")
    print(flush=True)


def fig5(tmp: Path, points: int, counts: list[int]) -> None:
    print("## Fig. 5: number of Datalog rules (default scenario otherwise)\n")
    print("| Datalog rules | setup s | ms per graph | reasoning | querying | temporal | translation |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in counts:
        t0 = time.perf_counter()
        folder = scenario_dir(tmp, f"rules{n}", 10_000, points, extra_rules=n - 1)
        engine, stream = engine_for(folder)
        setup = time.perf_counter() - t0
        m = timed_run(engine, stream, warmup=points // 10)
        print(f"| {n:,} | {setup:.1f} | {m['ms']:.4f} | {m['reasoning']:.4f} | {m['querying']:.4f} | "
              f"{m['temporal']:.4f} | {m['translation']:.4f} |", flush=True)
    print()


def fig6(tmp: Path, points: int, lengths: list[int]) -> None:
    print("## Fig. 6: pattern length (temporal operators per rule)\n")
    print("| length | selection | ms per graph | temporal | detections per graph |")
    print("|---:|---|---:|---:|---:|")
    for length in lengths:
        for selection in ("last", "each"):
            folder = scenario_dir(tmp, f"len{length}{selection}", 10_000, points, length=length, selection=selection)
            engine, stream = engine_for(folder)
            m = timed_run(engine, stream, warmup=points // 10)
            print(f"| {length} | {selection} | {m['ms']:.4f} | {m['temporal']:.4f} | "
                  f"{m['detections'] / m['points']:.2f} |", flush=True)
    print()


def fig7(tmp: Path, points: int, counts: list[int], shares: tuple[bool, ...] = (True, False),
         settings: tuple[str, ...] = ("crossed", "all")) -> None:
    print("## Fig. 7: number of DOTR rules (2 queries each), with and without query sharing\n")
    print("Thresholds `crossed`: a reading matches the rules whose threshold it crosses (the paper's setting);\n"
          "`all`: every reading matches every rule.\n")
    print("| thresholds | rules | sharing | ms per graph | querying | temporal | translation | events per graph "
          "| detections per graph |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for setting in settings:
        for n in counts:
            folder = scenario_dir(tmp, f"dotr{n}{setting}", 10_000, points, n_rules=n, thresholds=setting)
            for share in shares:
                with sharing(share):
                    engine, stream = engine_for(folder)
                m = timed_run(engine, stream, warmup=points // 10)
                print(f"| {setting} | {n:,} | {'on' if share else 'off'} | {m['ms']:.4f} | {m['querying']:.4f} | "
                      f"{m['temporal']:.4f} | {m['translation']:.4f} | {m['events'] / m['points']:.1f} | "
                      f"{m['detections'] / m['points']:.1f} |", flush=True)
    print()


def _ints(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "citybench"),
                        help="the CityBench data folder")
    parser.add_argument("--only", choices=["table1", "fig4", "fig5", "fig6", "fig7"], action="append")
    parser.add_argument("--points", type=int, help="graphs per measurement (default: per experiment)")
    parser.add_argument("--rates", type=_ints, help="fig4: input rates, graphs/s (e.g. 1,10,100,1000)")
    parser.add_argument("--queries", type=lambda t: t.split(","), default=["q1", "q2"], help="fig4: q1,q2")
    parser.add_argument("--q1-high-rate-points", type=int, default=200,
                        help="fig4: graphs measured for Q1 at 1000 graphs/s and more (its outputs grow with the "
                             "square of the rate)")
    parser.add_argument("--datalog-rules", type=_ints, help="fig5: numbers of Datalog rules (e.g. 1,10,100)")
    parser.add_argument("--lengths", type=_ints, help="fig6: pattern lengths (e.g. 2,3,4)")
    parser.add_argument("--rules", type=_ints, help="fig7: numbers of DOTR rules (e.g. 1,10,100,1000)")
    parser.add_argument("--sharing", choices=["on", "off", "both"], default="both", help="fig7: query sharing")
    parser.add_argument("--thresholds", choices=["crossed", "all", "both"], default="both",
                        help="fig7: a reading matches the rules whose threshold it crosses, or every rule")
    args = parser.parse_args()
    q = args.quick
    only = set(args.only or ["table1", "fig4", "fig5", "fig6", "fig7"])
    points = args.points
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.system()}; "
          f"{'quick' if q else 'full'} run\n", flush=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if "table1" in only:
            table1(tmp, points or (5_000 if q else 30_000), 50 if q else 200)
        if "fig4" in only:
            fig4(tmp, Path(args.data), points or (500 if q else 3_000), 10 if q else 30,
                 args.rates or ([1, 10, 100] if q else [1, 10, 100, 1000]), args.queries, args.q1_high_rate_points)
        if "fig5" in only:
            fig5(tmp, points or (2_000 if q else 5_000),
                 args.datalog_rules or ([1, 10, 100, 1_000] if q else [1, 10, 100, 1_000, 10_000, 100_000]))
        if "fig6" in only:
            fig6(tmp, points or (2_000 if q else 5_000), args.lengths or ([2, 4] if q else [2, 3, 4, 5, 6, 7, 8]))
        if "fig7" in only:
            shares = {"on": (True,), "off": (False,), "both": (True, False)}[args.sharing]
            settings = ("crossed", "all") if args.thresholds == "both" else (args.thresholds,)
            fig7(tmp, points or (1_000 if q else 3_000), args.rules or ([1, 10, 100] if q else [1, 10, 100, 1_000]),
                 shares, settings)


if __name__ == "__main__":
    main()
