"""DOTR section 5's default synthetic scenario, as encoded triples (shared by benchmarks).

Background: ``:sensorS :equips :objectO``, ``:objectO :placed_in :roomR``, ``:roomR :number R``
(5 rooms, two objects per room, 10 sensors), plus filler triples of extra sensor attributes.
Rules: ``:is_in_room(?S,?R) :- :equips(?S,?O), :placed_in(?O,?R).`` and ``extra`` similar rules.
Elements: one triple ``:sensorK :read_valA v`` (20%) or ``:read_valB v``, one per second.
"""
from __future__ import annotations

import random

from pyoxigraph import Literal, NamedNode

from chronolog.terms import XSD, TermDictionary

EX = "http://example.org/"
XSD_INT = NamedNode(XSD + "integer")
CROSSED_TOP = 110  # stream values for thresholds="crossed": 10% above the lowest threshold


def rules(extra: int = 10, triggered: int = 0) -> str:
    """The scenario's rule text: is_in_room, ``extra`` background-only look-alikes, and
    ``triggered`` rules that fire on the stream's read_valA triples of one sensor each."""
    lines = [f"PREFIX : <{EX}>", ":is_in_room(?S, ?R) :- :equips(?S, ?O), :placed_in(?O, ?R)."]
    for i in range(extra):
        lines.append(f":rel{i}(?S, ?R) :- :equips(?S, ?O), :attr{i}(?O, ?R).")
    for i in range(triggered):
        lines.append(f":alert{i}(?S, ?R) :- :read{i}(?S, ?v), :is_in_room(?S, ?R), ?v > 10.")
    return "\n".join(lines) + "\n"


def background(d: TermDictionary, filler: int, extra: int = 10, seed: int = 1) -> list[tuple[int, int, int]]:
    rnd = random.Random(seed)
    iri = lambda name: d.iri(EX + name)  # noqa: E731
    out = []
    for room in range(1, 6):
        out.append((iri(f"room{room}"), iri("number"), d.encode(Literal(str(room), datatype=XSD_INT))))
        for k in range(2):
            obj = iri(f"object{room}_{k}")
            out.append((obj, iri("placed_in"), iri(f"room{room}")))
            for i in range(extra):
                out.append((obj, iri(f"attr{i}"), iri(f"value{i}_{room}")))
    for s in range(1, 11):
        out.append((iri(f"sensor{s}"), iri("equips"), iri(f"object{rnd.randint(1, 5)}_{rnd.randint(0, 1)}")))
    n = 0
    while len(out) < filler:
        out.append((iri(f"sensor{n % 10 + 1}"), iri(f"attribute{n // 10 % 50}"), d.encode(Literal(str(n), datatype=XSD_INT))))
        n += 1
    return out


def elements(d: TermDictionary, count: int, triggered: int = 0, seed: int = 2,
             top: int = 100) -> list[tuple[int, tuple[int, int, int]]]:
    """(time in ms, triple) per element, values 11..``top``; with ``triggered`` rules,
    read_valA goes to a random read<i>."""
    rnd = random.Random(seed)
    out = []
    for n in range(count):
        sensor = d.iri(f"{EX}sensor{rnd.randint(1, 10)}")
        if rnd.random() < 0.2:
            pred = d.iri(f"{EX}read{rnd.randrange(triggered)}") if triggered else d.iri(EX + "read_valA")
        else:
            pred = d.iri(EX + "read_valB")
        value = d.encode(Literal(str(rnd.randint(11, top)), datatype=XSD_INT))
        out.append((n * 1000, (sensor, pred, value)))
    return out


def program(n_rules: int = 10, length: int = 2, selection: str = "last", window: str = "5 s",
            thresholds: str = "all") -> str:
    """The scenario's DOTR program: ``n_rules`` rules differing only in their FILTER value X,
    each with its two event queries over ``:read_valA`` / ``:read_valB``.

    ``thresholds="all"``: ``?v < X``, X = 101, 102, ...: stream values are 11..100, so every
    value passes every filter, with any number of rules (the constants stay positive because
    a negative one, ``-5``, is a unary minus to the SPARQL engine and is not merged).
    ``thresholds="crossed"``: ``?v > X``, X = 100, 101, ...: with stream values 11..``CROSSED_TOP``
    a reading matches only the rules whose threshold it crosses (none for 90% of readings,
    5.5 on average for the rest), the same few whatever the number of rules.

    A rule's pattern is a ``:read_valA`` reading (the terminator) preceded, within
    ``window``, by a ``:read_valB`` reading in the same room; ``length`` > 2 chains more
    ``:read_valB`` readings, each within ``window`` before the previous one (DOTR Fig. 6),
    all with ``selection`` (``last`` or ``each``).
    """
    sel = selection.upper()
    op, base = {"all": ("<", 101), "crossed": (">", 100)}[thresholds]
    out = [f"# DOTR section 5 default scenario: {n_rules} rules, pattern length {length}, {selection}.",
           f"PREFIX : <{EX}>", ""]
    for i in range(n_rules):
        x = base + i
        out.append(f"EVENT A{i} AS SELECT ?s ?room ?v WHERE {{ ?s :read_valA ?v ; :is_in_room ?room FILTER(?v {op} {x}) }}")
        out.append(f"EVENT B{i} AS SELECT ?s ?room ?v WHERE {{ ?s :read_valB ?v ; :is_in_room ?room FILTER(?v {op} {x}) }}")
    out.append("")
    for i in range(n_rules):
        items = [f"A{i}"]
        where = []
        previous = f"A{i}"
        for j in range(1, length):
            alias = f"B{j}"
            items.append(f"{sel} B{i} AS {alias} WITHIN {window} FROM {previous}")
            where.append(f"{alias}.room = A{i}.room")
            previous = alias
        out.append(f"RULE :alert{i}")
        out.append(f"  DEFINE {{ ?alert a :Alert ; :rule {i} ; :room ?room ; :sensor ?s ; :value ?v ; :before ?b . }}")
        out.append("  FROM " + " AND ".join(items))
        if where:
            out.append("  WHERE " + " AND ".join(where))
        out.append(f"  WITH ?room = A{i}.room, ?s = A{i}.s, ?v = A{i}.v, ?b = B1.v" if length > 1 else
                   f"  WITH ?room = A{i}.room, ?s = A{i}.s, ?v = A{i}.v")
        out.append("")
    return "\n".join(out)


def write_example(folder: str, filler: int = 10_000, points: int = 100, n_rules: int = 10, top: int = 100) -> None:
    """An example directory for ``chronolog run DIR``: scenario.dotr, background.ttl,
    scenario.dl and stream.trig (``points`` one-triple elements, one per second, values
    11..``top``)."""
    from pathlib import Path

    from pyoxigraph import RdfFormat, Triple, serialize

    from chronolog.streams import StreamElement, write_stream

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    d = TermDictionary()
    (out / "scenario.dotr").write_text(program(n_rules), encoding="utf-8")
    (out / "scenario.dl").write_text(rules(10), encoding="utf-8")
    dec = d.decode
    triples = [Triple(dec(s), dec(p), dec(o)) for s, p, o in background(d, filler, 10)]
    head = (f"# DOTR section 5 default scenario background (benchmarks/dotr_scenario.py): sensors, objects, "
            f"rooms and {len(triples):,} triples in all.\n").encode()
    (out / "background.ttl").write_bytes(head + serialize(triples, format=RdfFormat.TURTLE, prefixes={"": EX}))
    stream = [StreamElement(t, (triple,)) for t, triple in elements(d, points, top=top)]
    write_stream(stream, out / "stream.trig", d)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Write the default scenario as an example directory.")
    parser.add_argument("folder")
    parser.add_argument("--filler", type=int, default=10_000, help="background size (default 10k triples)")
    parser.add_argument("--points", type=int, default=100, help="stream elements, one per second")
    parser.add_argument("--rules", type=int, default=10)
    a = parser.parse_args()
    write_example(a.folder, a.filler, a.points, a.rules)
