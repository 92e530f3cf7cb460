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


def elements(d: TermDictionary, count: int, triggered: int = 0, seed: int = 2) -> list[tuple[int, tuple[int, int, int]]]:
    """(time in ms, triple) per element; with ``triggered`` rules, read_valA goes to a random read<i>."""
    rnd = random.Random(seed)
    out = []
    for n in range(count):
        sensor = d.iri(f"{EX}sensor{rnd.randint(1, 10)}")
        if rnd.random() < 0.2:
            pred = d.iri(f"{EX}read{rnd.randrange(triggered)}") if triggered else d.iri(EX + "read_valA")
        else:
            pred = d.iri(EX + "read_valB")
        value = d.encode(Literal(str(rnd.randint(11, 100)), datatype=XSD_INT))
        out.append((n * 1000, (sensor, pred, value)))
    return out
