"""Background at scale (issue 6): the closure on Spark ``local[2]`` next to the in-process
Reasoner, in one run, on the same parsed input and the same rules.

Cases: the CityBench background (SensorRepository.n3 + ssn.owl + city.n3) under rdfs and
owl-rl, and generated knowledge bases of 100k and 1M triples under rdfs (a class and
property hierarchy with typed instances linked by properties that have domains and ranges).
Parsing is shared and not timed; Spark's start-up is timed once, apart.

    PYTHONPATH=src python benchmarks/bench_spark_closure.py [--quick] [--master local[2]]
"""
from __future__ import annotations

import argparse
import platform
import random
import time
from pathlib import Path

from chronolog.datalog import Reasoner, load_rules
from chronolog.formats import load_graph
from chronolog.spark.closure import spark_closure, triples_frame
from chronolog.spark.session import spark_session
from chronolog.terms import RDF, RDFS, TermDictionary

CITYBENCH = Path(__file__).resolve().parents[2] / "shared/data/citybench"
EX = "http://example.org/kb/"


def generated_kb(d: TermDictionary, size: int, seed: int = 7) -> list[tuple[int, int, int]]:
    """``size`` triples: 4-ary class tree of depth 3, 40 properties in sub-property chains of 3
    with domains and ranges, and instances typed with leaf classes and linked by properties."""
    rnd = random.Random(seed)
    iri = lambda name: d.iri(EX + name)  # noqa: E731
    sub_class, sub_prop, rdf_type = d.iri(RDFS + "subClassOf"), d.iri(RDFS + "subPropertyOf"), d.iri(RDF + "type")
    domain, range_ = d.iri(RDFS + "domain"), d.iri(RDFS + "range")
    out: list[tuple[int, int, int]] = []
    level = ["C"]
    leaves: list[str] = []
    for _ in range(3):
        children = [f"{c}{k}" for c in level for k in range(4)]
        out.extend((iri(c), sub_class, iri(c[:-1])) for c in children)
        level = leaves = children
    props = [f"p{k}" for k in range(40)]
    for k, p in enumerate(props):
        if k % 3:
            out.append((iri(p), sub_prop, iri(props[k - 1])))
        out.append((iri(p), domain, iri(rnd.choice(leaves))))
        out.append((iri(p), range_, iri(rnd.choice(leaves))))
    people = max(1, size // 10)
    while len(out) < size:
        x = rnd.randrange(people)
        if rnd.random() < 0.2:
            out.append((iri(f"i{x}"), rdf_type, iri(rnd.choice(leaves))))
        else:
            out.append((iri(f"i{x}"), iri(rnd.choice(props)), iri(f"i{rnd.randrange(people)}")))
    return out


def run_case(spark, name: str, rules: str, load) -> str:
    d = TermDictionary()
    program = load_rules([rules], d)
    triples = load(d)
    start = time.perf_counter()
    reasoner = Reasoner(program, d)
    reasoner.add_background(triples)
    reasoner.close()
    inprocess = time.perf_counter() - start
    size = reasoner.background_view.size("triple")
    del reasoner
    start = time.perf_counter()
    closure = spark_closure(spark, program, d, triples_frame(spark, triples))
    on_spark = time.perf_counter() - start
    got = closure.sizes.get("triple", 0)
    assert got == size, f"{name} {rules}: Spark closure has {got} triples, in-process {size}"
    return (f"| {name} | {rules} | {len(set(triples)):,} | {size:,} | {inprocess:.1f} | {size / inprocess:,.0f} "
            f"| {on_spark:.1f} | {closure.rounds} | {size / on_spark:,.0f} | {on_spark / inprocess:.1f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CityBench under rdfs and the 100k KB only")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    start = time.perf_counter()
    spark = spark_session(args.master, {"spark.driver.memory": "8g"})
    spark.range(1).count()
    startup = time.perf_counter() - start
    city = [str(CITYBENCH / "SensorRepository.n3"), str(CITYBENCH / "ontology/ssn.owl"),
            str(CITYBENCH / "ontology/city.n3")]
    cases = [("CityBench background", "rdfs", lambda d: load_graph(city, d)),
             ("CityBench background", "owl-rl", lambda d: load_graph(city, d)),
             ("generated KB 100k", "rdfs", lambda d: generated_kb(d, 100_000)),
             ("generated KB 1M", "rdfs", lambda d: generated_kb(d, 1_000_000))]
    if args.quick:
        cases = [cases[0], cases[2]]
    print(f"## Spark background closure ({args.master}; {platform.machine()}, "
          f"Python {platform.python_version()}, Spark {spark.version}); SparkSession start-up {startup:.1f} s")
    print("| input | rules | input triples | closure triples | in-process s | in-process triples/s "
          "| Spark s | rounds | Spark triples/s | Spark / in-process |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, rules, load in cases:
        print(run_case(spark, name, rules, load), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
