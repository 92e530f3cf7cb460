"""The surface syntax of RSEP-QL's event patterns (the paper has none; issue #14's form):

    MATCH ( EVENT :w1 { ?x :p ?y } SEQ_CHRONOLOGICAL ( FIRST EVENT :w2 { ?y :q ?z } ) )

``SEQ``, ``SEQ_CHRONOLOGICAL``, ``SEQ_RECENT``, ``SEQ_NAIVE`` are binary and group to the
left; ``FIRST`` and ``LAST`` bind tighter; parentheses nest. A BEP's BGP is triples of
variables, IRIs, prefixed names, ``a`` and literals as Turtle writes them (``"a"``,
``"a"@en``, ``"1.5"^^xsd:decimal``, ``25``, ``2.5``, ``1e3``, ``true``), separated by ``.``.
"""
from __future__ import annotations

import re
from typing import Callable

from pyoxigraph import Literal, NamedNode

from chronolog.errors import SourceMap
from chronolog.lang.rspql.events import Event, First, Last, Pattern, Selection, Seq, Term
from chronolog.sparql.extension import read_iri
from chronolog.terms import XSD

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_SPACE = re.compile(r"(?:\s|#[^\n]*)*")
_WORD = re.compile(r"[A-Za-z_]+\b")
_VARIABLE = re.compile(r"[?$](\w+)")
_SEQ = {s.value: s for s in Selection}
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')
_LANGUAGE = re.compile(r"@([A-Za-z]+(?:-[A-Za-z0-9]+)*)")
_NUMBER = re.compile(r"[+-]?(?:(\d+\.\d*[eE][+-]?\d+|\.\d+[eE][+-]?\d+|\d+[eE][+-]?\d+)|(\d*\.\d+)|\d+)")
_BOOLEAN = re.compile(r"(true|false)\b")
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def parse_match(text: str, pos: int, smap: SourceMap, known: dict[str, str],
                windows: set[str]) -> tuple[Pattern, int]:
    """The pattern of ``( E )`` at ``pos`` (just past ``MATCH``) and where it ends."""
    at = [pos]

    def skip() -> int:
        at[0] = _SPACE.match(text, at[0]).end()  # type: ignore[union-attr]
        return at[0]

    def expect(char: str, what: str) -> None:
        if text[skip():skip() + 1] != char:
            raise smap.error(f"expected {char!r} {what}", at[0])
        at[0] += 1

    def word() -> str | None:
        m = _WORD.match(text, skip())
        return m.group(0).upper() if m else None

    def term() -> Term:
        pos = skip()
        if (m := _VARIABLE.match(text, pos)) is not None:
            at[0] = m.end()
            return "?" + m.group(1)
        if text.startswith("a", pos) and not re.match(r"a[\w:-]", text[pos:pos + 2]):
            at[0] = pos + 1
            return RDF_TYPE
        if (m := _NUMBER.match(text, pos)) is not None:
            at[0] = m.end()
            kind = "double" if m.group(1) else "decimal" if m.group(2) else "integer"
            return Literal(m.group(0), datatype=NamedNode(XSD + kind))
        if (m := _BOOLEAN.match(text, pos)) is not None:
            at[0] = m.end()
            return Literal(m.group(1), datatype=NamedNode(XSD + "boolean"))
        if (m := _STRING.match(text, pos)) is not None:
            return string(m)
        found = read_iri(text, pos, known)
        if found is None:
            raise smap.error("expected a variable, an IRI, a prefixed name with a declared prefix or a literal", pos)
        at[0] = found[1]
        return found[0]

    def string(m: re.Match) -> Literal:
        """A string literal, with its language tag or datatype if one follows."""
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        value = re.sub(r"\\(.)", lambda e: _ESCAPES.get(e.group(1), e.group(0)), raw)
        at[0] = m.end()
        if (tag := _LANGUAGE.match(text, at[0])) is not None:
            at[0] = tag.end()
            return Literal(value, language=tag.group(1))
        if text.startswith("^^", at[0]):
            found = read_iri(text, at[0] + 2, known)
            if found is None:
                raise smap.error("expected the datatype's IRI after '^^'", at[0] + 2)
            at[0] = found[1]
            return Literal(value, datatype=NamedNode(found[0]))
        return Literal(value)

    def event() -> Event:
        pos = skip()
        found = read_iri(text, pos, known)
        if found is None:
            raise smap.error("expected the window's name after EVENT", pos)
        if found[0] not in windows:
            raise smap.error(f"no window <{found[0]}> is declared (FROM NAMED WINDOW <{found[0]}> ON ...)", pos)
        at[0] = found[1]
        expect("{", "to open the event's basic graph pattern")
        triples = []
        while text[skip():skip() + 1] != "}":
            triples.append((term(), term(), term()))
            if text[skip():skip() + 1] == ".":
                at[0] += 1
            elif text[at[0]:at[0] + 1] != "}":
                raise smap.error("expected '.' or '}' after a triple pattern", at[0])
        at[0] += 1
        if not triples:
            raise smap.error("an EVENT pattern needs at least one triple pattern", pos)
        return Event(found[0], tuple(triples))

    def unary() -> Pattern:
        pos = skip()
        if text.startswith("(", pos):
            at[0] += 1
            inner = sequence()
            expect(")", "to close the parenthesis")
            return inner
        keyword = word()
        makers: dict[str, Callable[[], Pattern]] = {"FIRST": lambda: First(unary()), "LAST": lambda: Last(unary()),
                                                    "EVENT": event}
        if keyword not in makers:
            raise smap.error("expected an event pattern: EVENT w { ... }, FIRST, LAST or '('", pos)
        at[0] += len(keyword)  # type: ignore[arg-type]
        return makers[keyword]()  # type: ignore[index]

    def sequence() -> Pattern:
        left = unary()
        while (keyword := word()) in _SEQ:
            at[0] += len(keyword)  # type: ignore[arg-type]
            left = Seq(left, unary(), _SEQ[keyword])  # type: ignore[index]
        return left

    expect("(", "after MATCH")
    pattern = sequence()
    expect(")", "to close MATCH (a SEQ operator, or the end of the pattern)")
    return pattern, at[0]
