"""SPARQL benchmarks (issue 3): one-shot queries side by side with pyoxigraph and rdflib,
standing queries per time point over growing backgrounds, and FILTER-merging.

    PYTHONPATH=src python benchmarks/bench_sparql.py [--quick] [--sizes 100000,1000000]
        [--rdflib-max 100000] [--points 2000]

Every number is wall-clock on this machine; ratios are other/chronolog (>1: chronolog faster).
"""
from __future__ import annotations

import argparse
import gc
import platform
import random
import statistics
import time

import pyoxigraph as ox

from chronolog.sparql import prepare
from chronolog.sparql.incremental import StandingQueries
from chronolog.store import Database, Layers
from chronolog.terms import TermDictionary

E = "http://e/"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"
PREFIX = "PREFIX : <http://e/> "


# ---- data ---------------------------------------------------------------------------------
def social(n_triples: int, seed: int = 1) -> list[tuple]:
    """People who know each other, with ages, cities and employers (~10 triples a person)."""
    rnd = random.Random(seed)
    people = max(10, n_triples // 10)
    out = []
    for i in range(people):
        p = f"p{i}"
        out.append((p, "type", ("o", "Person")))
        out.append((p, "age", ("i", rnd.randint(1, 99))))
        out.append((p, "city", ("o", f"c{rnd.randrange(100)}")))
        if rnd.random() < 0.5:
            out.append((p, "worksAt", ("o", f"org{rnd.randrange(people // 50 + 1)}")))
        for _ in range(6 if rnd.random() < 0.5 else 5):
            out.append((p, "knows", ("o", f"p{rnd.randrange(people)}")))
    for j in range(people // 50 + 1):
        out.append((f"org{j}", "partOf", ("o", f"org{j // 10}")))
    return out[:n_triples]


def term(x) -> ox.NamedNode | ox.Literal:
    if isinstance(x, str):
        return ox.NamedNode(E + x)
    kind, v = x
    return ox.Literal(str(v), datatype=ox.NamedNode(XSD_INT)) if kind == "i" else ox.NamedNode(E + v)


ONE_SHOT = {
    "bgp-join": "SELECT ?a ?c WHERE { ?a :worksAt ?o . ?b :worksAt ?o . ?a :city ?c . ?b :age 42 }",
    "filter": "SELECT ?a ?b WHERE { ?a :knows ?b . ?a :age ?x . ?b :age ?y FILTER(?x > 90 && ?y < 10) }",
    "optional": "SELECT ?a ?o WHERE { ?a :age 33 OPTIONAL { ?a :worksAt ?o } }",
    "aggregate": "SELECT ?c (COUNT(*) AS ?n) (AVG(?x) AS ?avg) WHERE { ?a :city ?c . ?a :age ?x } GROUP BY ?c",
    "path": "SELECT ?a ?top WHERE { ?a :age 7 . ?a :worksAt/:partOf+ ?top }",
}


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_one_shot(sizes: list[int], rdflib_max: int) -> list[str]:
    lines = ["### One-shot queries (best of 3, seconds; ratio = other / chronolog)", ""]
    lines.append("| triples | query | rows | chronolog | pyoxigraph | ratio | rdflib | ratio |")
    lines.append("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        data = social(n)
        d = TermDictionary()
        t0 = time.perf_counter()
        db = Database()
        enc = d.encode
        for s, p, o in data:
            db.triples.add((enc(term(s)), enc(term(p)), enc(term(o))))
        load_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        store = ox.Store()
        store.extend([ox.Quad(term(s), term(p), term(o)) for s, p, o in data])
        load_ox = time.perf_counter() - t0
        graph = None
        load_rdflib = None
        if n <= rdflib_max:
            import rdflib

            t0 = time.perf_counter()
            graph = rdflib.Graph()
            for s, p, o in data:
                graph.add((rdflib.URIRef(E + s), rdflib.URIRef(E + p),
                           rdflib.Literal(o[1]) if o[0] == "i" else rdflib.URIRef(E + o[1])))
            load_rdflib = time.perf_counter() - t0
        view = Layers([db])
        lines_n = []
        for name, q in ONE_SHOT.items():
            text = PREFIX + q
            pq = prepare(text, d)
            rows = sum(1 for _ in pq.execute(view))
            ours = timed(lambda: sum(1 for _ in prepare(text, d).execute(view)))
            theirs = timed(lambda: sum(1 for _ in store.query(text)))
            if graph is not None:
                rd = timed(lambda: sum(1 for _ in graph.query(text)), repeat=1)
                rd_s, rd_r = f"{rd:.3f}", f"{rd / ours:.2f}"
            else:
                rd_s, rd_r = "skipped", "-"
            lines_n.append(f"| {n:,} | {name} | {rows:,} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.2f} | {rd_s} | {rd_r} |")
            print(lines_n[-1], flush=True)
        lines.extend(lines_n)
        lines.append(f"| {n:,} | *load* | | {load_ours:.2f} | {load_ox:.2f} | {load_ox / load_ours:.2f} | "
                     f"{'skipped' if load_rdflib is None else f'{load_rdflib:.2f}'} | |")
        print(lines[-1], flush=True)
    return lines + [""]


# ---- standing queries ------------------------------------------------------------------------
def sensor_background(n_triples: int, d: TermDictionary, seed: int = 2) -> tuple[Database, list[int]]:
    """Sensors in rooms in floors in buildings with managers (4 triples a sensor + the rest)."""
    rnd = random.Random(seed)
    db = Database()
    iri = lambda x: d.iri(E + x)  # noqa: E731
    sensors = max(4, n_triples // 4)
    rooms = max(2, sensors // 4)
    floors = max(1, rooms // 8)
    ids = []
    for i in range(sensors):
        s = iri(f"s{i}")
        ids.append(s)
        db.triples.add((s, iri("type"), iri("Sensor")))
        db.triples.add((s, iri("locatedIn"), iri(f"room{rnd.randrange(rooms)}")))
        db.triples.add((s, iri("kind"), iri("Thermometer" if i % 2 else "SmokeDetector")))
        db.triples.add((s, iri("unit"), iri("Celsius")))
    for r in range(rooms):
        db.triples.add((iri(f"room{r}"), iri("partOf"), iri(f"floor{r % floors}")))
    for f in range(floors):
        db.triples.add((iri(f"floor{f}"), iri("inBuilding"), iri(f"b{f % 5}")))
        db.triples.add((iri(f"b{f % 5}"), iri("managedBy"), iri(f"m{f % 5}")))
    return db, ids


STANDING = {
    2: "SELECT ?s ?r WHERE { ?s :value ?v . ?s :locatedIn ?r FILTER(?v > 50) }",
    3: "SELECT ?s ?f WHERE { ?s :value ?v . ?s :locatedIn ?r . ?r :partOf ?f FILTER(?v > 50) }",
    4: "SELECT ?s ?b WHERE { ?s :value ?v . ?s :locatedIn ?r . ?r :partOf ?f . ?f :inBuilding ?b FILTER(?v > 50) }",
    5: "SELECT ?s ?m WHERE { ?s :value ?v . ?s :locatedIn ?r . ?r :partOf ?f . ?f :inBuilding ?b . ?b :managedBy ?m FILTER(?v > 50) }",
}


def bench_standing(sizes: list[int], points: int) -> list[str]:
    lines = ["### Standing queries, one-triple elements (microseconds per query per time point)", ""]
    lines.append("| background | patterns | median | p99 | events/point |")
    lines.append("|---:|---:|---:|---:|---:|")
    for n in sizes:
        d = TermDictionary()
        db, sensors = sensor_background(n, d)
        value = d.iri(E + "value")
        rnd = random.Random(3)
        elements = [[(rnd.choice(sensors), value, d.encode_value(rnd.randrange(100)))] for _ in range(points)]
        for k, q in STANDING.items():
            sq = StandingQueries(d, db)
            sq.register("q", PREFIX + q)
            times, events = [], 0
            step = sq.step
            for el in elements[:50]:
                step(el)
            gc.disable()
            for el in elements:
                t0 = time.perf_counter_ns()
                out = step(el)
                times.append(time.perf_counter_ns() - t0)
                events += len(out.get("q", ()))
            gc.enable()
            times.sort()
            med = statistics.median(times) / 1000
            p99 = times[int(len(times) * 0.99)] / 1000
            lines.append(f"| {len(db):,} | {k} | {med:.1f} | {p99:.1f} | {events / points:.2f} |")
            print(lines[-1], flush=True)
    return lines + [""]


def bench_sharing(counts: list[int], points: int, background: int) -> list[str]:
    lines = [f"### Queries differing only in FILTER ({background:,}-triple background, 3 patterns; "
             "milliseconds per time point, all queries)", ""]
    lines.append("| queries | shared | separate | speed-up |")
    lines.append("|---:|---:|---:|---:|")
    d = TermDictionary()
    db, sensors = sensor_background(background, d)
    value = d.iri(E + "value")
    rnd = random.Random(4)
    elements = [[(rnd.choice(sensors), value, d.encode_value(rnd.randrange(100)))] for _ in range(points)]
    body = PREFIX + "SELECT ?s ?f WHERE { ?s :value ?v . ?s :locatedIn ?r . ?r :partOf ?f FILTER(?v > %d) }"
    for count in counts:
        res = {}
        for share in (True, False):
            sq = StandingQueries(d, db, share=share)
            for i in range(count):
                sq.register(f"q{i}", body % (i % 100))
            n_pts = max(50, points // max(1, count // 10)) if not share else points
            pts = elements[:n_pts]
            for el in elements[-20:]:  # warm up
                sq.step(el)
            gc.disable()
            t0 = time.perf_counter()
            for el in pts:
                sq.step(el)
            res[share] = (time.perf_counter() - t0) / len(pts) * 1000
            gc.enable()
        lines.append(f"| {count:,} | {res[True]:.3f} | {res[False]:.3f} | {res[False] / res[True]:.1f}x |")
        print(lines[-1], flush=True)
    return lines + [""]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--rdflib-max", type=int, default=100_000)
    ap.add_argument("--points", type=int, default=2000)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    standing_sizes = [1_000, 10_000, 100_000, 1_000_000]
    counts = [1, 10, 100, 1000]
    if args.quick:
        sizes, standing_sizes, counts, args.points = [10_000], [1_000, 10_000], [1, 10, 100], 300
    print(f"# machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"pyoxigraph {ox.__version__ if hasattr(ox, '__version__') else '?'}", flush=True)
    out = []
    out += bench_one_shot(sizes, args.rdflib_max)
    out += bench_standing(standing_sizes, args.points)
    out += bench_sharing(counts, args.points, 100_000 if not args.quick else 10_000)
    print("\n".join(out))


if __name__ == "__main__":
    main()
