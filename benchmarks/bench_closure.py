"""Background closure benchmark: chronolog's rdfs and owl-rl rule sets vs owlrl and reasonable.

    PYTHONPATH=src python benchmarks/bench_closure.py [--sizes 10000,100000,1000000] [--owlrl-timeout 600]

Inputs: the CityBench background (SensorRepository.n3 + ssn.owl + city.n3) and synthetic
KBs of the given sizes (tests/ontology_gen.py: kb). Each engine reasons over the same
triples; times exclude parsing (chronolog: encoding + close() timed separately; owlrl: the
rdflib graph is built first, with the same blank node labels; reasonable: load_file() first). owlrl and reasonable run in a
child process so a timeout can stop them. Closure sizes are compared as sets of N-Triples
terms; owlrl's closure is compared after removing the triples it adds by design choices we
do not share (eq-ref, dt-type2, datatype disjointness: see tests/test_rulesets.py).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import tempfile
import time
from pathlib import Path

import pyoxigraph
from pyoxigraph import RdfFormat, Triple

from chronolog.datalog import Reasoner, load_program
from chronolog.rulesets import ruleset_source
from chronolog.terms import TermDictionary
from from_tests import load

ontology_gen = load("ontology_gen.py")
ROOT = Path(__file__).resolve().parent.parent
CITYBENCH = ROOT.parent / "shared" / "data" / "citybench"
OWL = "http://www.w3.org/2002/07/owl#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
COMPARE_LIMIT = 400_000  # compare closures triple by triple up to this input size


def citybench() -> list[Triple]:
    files = [("SensorRepository.n3", RdfFormat.TURTLE), ("ontology/ssn.owl", RdfFormat.RDF_XML),
             ("ontology/city.n3", RdfFormat.TURTLE)]
    return [Triple(q.subject, q.predicate, q.object) for f, fmt in files
            for q in pyoxigraph.parse(path=str(CITYBENCH / f), format=fmt)]


def ours(triples: list[Triple], name: str, keep: bool) -> dict:
    d = TermDictionary()
    program = load_program([ruleset_source(name)], d)
    r = Reasoner(program, d)
    t0 = time.perf_counter()
    enc = d.encode
    r.add_background((enc(t.subject), enc(t.predicate), enc(t.object)) for t in triples)
    t1 = time.perf_counter()
    view = r.close()
    t2 = time.perf_counter()
    out = {"load": t1 - t0, "reason": t2 - t1, "size": view.size("triple"),
           "diagnostics": len(r.diagnostics(view))}
    if keep:
        dec = d.decode
        out["triples"] = {(str(dec(s)), str(dec(p)), str(dec(o))) for s, p, o in view.scan("triple")}
    return out


def _nt(term) -> str:
    import rdflib

    if isinstance(term, rdflib.URIRef):
        return f"<{term}>"
    if isinstance(term, rdflib.BNode):
        return f"_:{term}"
    if term.language:
        return str(pyoxigraph.Literal(str(term), language=term.language))
    dt = str(term.datatype or "http://www.w3.org/2001/XMLSchema#string")
    return str(pyoxigraph.Literal(str(term), datatype=pyoxigraph.NamedNode(dt)))


_INPUT: list[Triple] = []  # the current input, inherited by the forked children


def _rdflib_term(term):
    import rdflib

    if isinstance(term, pyoxigraph.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, pyoxigraph.BlankNode):
        return rdflib.BNode(term.value)  # same labels as ours, so closures compare exactly
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))


def _owlrl_child(name: str, keep: bool, queue) -> None:
    import owlrl
    import rdflib

    g = rdflib.Graph()
    for t in _INPUT:
        g.add((_rdflib_term(t.subject), _rdflib_term(t.predicate), _rdflib_term(t.object)))
    t0 = time.perf_counter()
    owlrl.DeductiveClosure(owlrl.RDFS_Semantics if name == "rdfs" else owlrl.OWLRL_Semantics).expand(g)
    t1 = time.perf_counter()
    result = {"reason": t1 - t0, "size": len(g)}
    if keep:
        # owlrl's error reports are triples on fresh blank nodes: leave them out
        errors = set(g.subjects(rdflib.RDF.type, rdflib.URIRef("http://www.daml.org/2002/03/agents/agent-ont#ErrorMessage")))
        result["triples"] = {(_nt(s), _nt(p), _nt(o)) for s, p, o in g if s not in errors}
    queue.put(result)


def _reasonable_child(path: str, keep: bool, queue) -> None:
    import reasonable

    r = reasonable.PyReasoner()
    r.load_file(path)
    t0 = time.perf_counter()
    out = r.reason()
    t1 = time.perf_counter()
    result = {"reason": t1 - t0, "size": len(out)}
    if keep:
        # load_file renames blank nodes: compare the triples without them
        result["triples"] = {(_nt(s), _nt(p), _nt(o)) for s, p, o in out if not _has_bnode((s, p, o))}
    queue.put(result)


def _has_bnode(t) -> bool:
    import rdflib

    return any(isinstance(x, rdflib.BNode) for x in t)


def in_child(target, args: tuple, timeout: float) -> dict | None:
    """Run ``target(*args, queue)`` in a child process; None if it runs out of time."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    try:
        result = queue.get(timeout=timeout)
    except Exception:
        result = None
    proc.join(timeout=5)
    if proc.is_alive():
        proc.kill()
        proc.join()
    return result


def owlrl_by_design(t: tuple[str, str, str]) -> bool:
    """Triples owlrl adds that we leave out on purpose (eq-ref, dt-type2, datatype disjointness)."""
    s, p, o = t
    if p == f"<{OWL}sameAs>" and s == o:
        return True
    if s.startswith('"') and p == RDF_TYPE:
        return True
    if p == f"<{OWL}disjointWith>" and s.startswith("<http://www.w3.org/2001/XMLSchema#"):
        return True
    return False


def fmt_rate(n: int, seconds: float | None) -> str:
    return "-" if not seconds else f"{n / seconds:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--owlrl-timeout", type=float, default=600.0)
    ap.add_argument("--reasonable-timeout", type=float, default=600.0)
    ap.add_argument("--no-citybench", action="store_true")
    args = ap.parse_args()
    inputs: list[tuple[str, object]] = []
    if not args.no_citybench and CITYBENCH.exists():
        inputs.append(("citybench", citybench))
    for n in (int(x) for x in args.sizes.split(",") if x):
        inputs.append((f"kb-{n}", lambda n=n: list(ontology_gen.kb(n))))
    print(f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"# command: PYTHONPATH=src python benchmarks/bench_closure.py --sizes {args.sizes} "
          f"--owlrl-timeout {args.owlrl_timeout:g}")
    header = ("| input | triples | engine | closure | reason s | input triples/s | owlrl / ours | ours / reasonable |"
              "\n|---|---:|---|---:|---:|---:|---:|---:|")
    rows = []
    notes = []
    for label, make in inputs:
        global _INPUT
        triples = _INPUT = make()
        n = len(triples)
        keep = n <= COMPARE_LIMIT
        with tempfile.TemporaryDirectory() as tmp:
            ttl = os.path.join(tmp, "input.ttl")  # reasonable's load_file reads Turtle and N3 only
            pyoxigraph.serialize(triples, output=ttl, format=RdfFormat.TURTLE)
            res_rdfs = ours(triples, "rdfs", keep=False)
            res_owl = ours(triples, "owl-rl", keep=keep)
            reas = in_child(_reasonable_child, (ttl, keep), args.reasonable_timeout)
            theirs = in_child(_owlrl_child, ("owl-rl", keep), args.owlrl_timeout)
            theirs_rdfs = in_child(_owlrl_child, ("rdfs", False), args.owlrl_timeout)
        del triples
        _INPUT = []

        def timing(res):
            return f"{res['reason']:.2f}" if res else f">{args.owlrl_timeout:g}"

        ratio_owlrl = (f"{theirs['reason'] / res_owl['reason']:.1f}x" if theirs
                       else f">{args.owlrl_timeout / res_owl['reason']:.1f}x")
        ratio_rdfs = (f"{theirs_rdfs['reason'] / res_rdfs['reason']:.1f}x" if theirs_rdfs
                      else f">{args.owlrl_timeout / res_rdfs['reason']:.1f}x")
        ratio_reas = f"{res_owl['reason'] / reas['reason']:.2f}" if reas else "-"
        rows.append(f"| {label} | {n:,} | chronolog rdfs | {res_rdfs['size']:,} | {res_rdfs['reason']:.2f} | "
                    f"{fmt_rate(n, res_rdfs['reason'])} | {ratio_rdfs} | |")
        rows.append(f"| {label} | {n:,} | owlrl RDFS | {theirs_rdfs['size']:,} | {theirs_rdfs['reason']:.2f} | "
                    f"{fmt_rate(n, theirs_rdfs['reason'])} | | |" if theirs_rdfs
                    else f"| {label} | {n:,} | owlrl RDFS | - | {timing(None)} | - | | |")
        rows.append(f"| {label} | {n:,} | chronolog owl-rl | {res_owl['size']:,} | {res_owl['reason']:.2f} | "
                    f"{fmt_rate(n, res_owl['reason'])} | {ratio_owlrl} | {ratio_reas} |")
        rows.append(f"| {label} | {n:,} | owlrl OWL RL | {theirs['size']:,} | {theirs['reason']:.2f} | "
                    f"{fmt_rate(n, theirs['reason'])} | | |" if theirs
                    else f"| {label} | {n:,} | owlrl OWL RL | - | {timing(None)} | - | | |")
        rows.append(f"| {label} | {n:,} | reasonable | {reas['size']:,} | {reas['reason']:.2f} | "
                    f"{fmt_rate(n, reas['reason'])} | | |" if reas else f"| {label} | {n:,} | reasonable | - | - | - | | |")
        note = (f"{label}: chronolog encode+load {res_owl['load']:.2f} s (not in 'reason s'), "
                f"{res_owl['diagnostics']} owl-rl diagnostics")
        if keep and theirs:
            a, b = res_owl["triples"], {t for t in theirs["triples"] if not owlrl_by_design(t)}
            note += (f"; vs owlrl (after removing eq-ref/dt-type2/datatype-disjointness triples): "
                     f"{len(a - b)} only ours, {len(b - a)} only owlrl")
            extra = sorted(a - b)[:3] + sorted(b - a)[:3]
            if extra:
                note += " e.g. " + "; ".join(" ".join(t) for t in extra)
        if keep and reas:
            a = {t for t in res_owl["triples"] if not any(x.startswith("_:") for x in t)}
            b = reas["triples"]
            by_pred: dict[str, int] = {}
            for t in b - a:
                by_pred[t[1]] = by_pred.get(t[1], 0) + 1
            top = ", ".join(f"{p} {c}" for p, c in sorted(by_pred.items(), key=lambda x: -x[1])[:4])
            note += f"; vs reasonable (triples without blank nodes): {len(a - b)} only ours, {len(b - a)} only reasonable ({top})"
        notes.append(note)
        print("\n".join(rows[-5:]), flush=True)
        print("  " + note, flush=True)
    print()
    print(header)
    print("\n".join(rows))
    print()
    for note in notes:
        print("- " + note)


if __name__ == "__main__":
    main()
