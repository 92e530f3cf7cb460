"""Atom streams (LARS, DESIGN.md section 3): reading and writing ``{"time": T, "atoms": [...]}``.

One element per line, ``{"time": 10, "atoms": ["p(a,b)", "q"]}``; an empty list marks a
time point without data. The atoms of an element keep their order (a tuple window counts
atoms in arrival order), a repeated atom counts once.

**Atoms.** ``pred(arg, ...)`` or ``pred`` (0-ary): the predicate is everything before the
first ``(``. A name is a constant: ``a``, ``x1``, ``42``, ``-3``, ``2.5``, or any text in
single quotes, ``'http://ex.org/p#a'`` (``\\'`` and ``\\\\`` escape a quote and a backslash).
A constant's identity is its value: ``'a'`` and ``a`` are one constant, ``'7'``, ``007``
and ``7`` the number 7. The normal form :func:`atom_text` writes a name bare when it is a
plain name (a lower-case letter then letters, digits, ``_``) or a number, otherwise quoted,
and no spaces: ``p(a,'Alice','http://ex/b',7)``. Readers and programs both go through it, so
equal atoms have equal texts.

**RDF streams** (``.trig``, or ``.jsonl`` with ``"graph"``) are read as atoms by one fixed
mapping: a triple ``s p o`` is the atom ``p(s,o)``, and ``s rdf:type C`` is ``C(s)``. An IRI
becomes the constant (or predicate) named by the IRI text, quoted as Laser writes it:
``<http://ex/p>`` is ``'http://ex/p'``. A blank node is ``'_:label'``. A literal becomes its
value: an integer or decimal literal the number, any other literal its lexical form
(``"hot"@en`` is ``hot``, ``"2020-01-01"^^xsd:date`` is ``'2020-01-01'``).
"""
from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import IO, Union

from pyoxigraph import BlankNode, Literal, NamedNode

from .errors import ChronologSyntaxError
from .formats import Source, encode_text, source_name
from .lateness import ErrorPolicy, LatePolicy
from .streams import LineError, StreamElement, apply_late_policy, handle_errors, jsonl_element, jsonl_time, read_stream
from .terms import TermDictionary

Value = Union[str, int, Decimal]  # a constant: a name (str) or a number
Atom = tuple[str, tuple[Value, ...]]  # (predicate name, arguments)

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
KEYWORDS = frozenset(("not", "and", "or", "diamond", "box", "time_win", "tuple_win", "predicate_win", "MATH", "COMP"))
_PLAIN = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?\Z")
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
_BARE = re.compile(r"[^\s'(),]+")
# the normal form with every name quoted and nothing escaped (Laser's IRIs): 'p'('a','b')
_ALL_QUOTED = re.compile(r"'([^'\\]*)'\('([^'\\]*(?:','[^'\\]*)*)'\)\Z")
_NUMERIC_TYPES = frozenset(f"http://www.w3.org/2001/XMLSchema#{t}" for t in (
    "integer", "decimal", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
    "nonPositiveInteger", "negativeInteger", "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte"))


class AtomError(ValueError):
    """An atom text that cannot be read; ``col`` is the 1-based column in the text."""

    def __init__(self, message: str, col: int) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


def number(text: str) -> int | Decimal:
    """The number a numeric name denotes (``7``, ``-3``, ``2.50`` -> 2.5)."""
    if "." in text:
        value = Decimal(text).normalize()
        return int(value) if value == value.to_integral_value() else value
    return int(text)


def constant(name: str) -> Value:
    """The constant an unquoted or unescaped name denotes: a number when it reads as one.

    >>> constant("7"), constant("x1"), constant("2.50")
    (7, 'x1', Decimal('2.5'))
    """
    return number(name) if _NUMBER.match(name) else name


@functools.lru_cache(maxsize=1 << 16, typed=True)  # outputs repeat their names from atom to atom
def value_text(value: Value) -> str:
    """A constant or predicate name in normal form: bare when plain, else quoted.

    >>> value_text("a"), value_text("Alice"), value_text(7), value_text("http://ex/b")
    ('a', "'Alice'", '7', "'http://ex/b'")
    """
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int):
        return str(value)
    if _PLAIN.match(value) and value not in KEYWORDS:
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def atom_text(atom: Atom) -> str:
    """The normal form of an atom.

    >>> atom_text(("p", ("a", 7))), atom_text(("q", ())), atom_text(("http://ex/p", ("Bob",)))
    ('p(a,7)', 'q', "'http://ex/p'('Bob')")
    """
    pred, args = atom
    if not args:
        return value_text(pred)
    return value_text(pred) + "(" + ",".join(map(value_text, args)) + ")"


def _name(text: str, pos: int) -> tuple[str, bool, int]:
    """The name starting at ``pos`` (spaces skipped): (its text, was it quoted, end)."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos < len(text) and text[pos] == "'":
        match = _QUOTED.match(text, pos)
        if match is None:
            raise AtomError("unterminated quoted name", pos + 1)
        return re.sub(r"\\(.)", r"\1", match.group(1)), True, match.end()
    match = _BARE.match(text, pos)
    if match is None:
        raise AtomError("expected a name", pos + 1)
    return match.group(), False, match.end()


def parse_atom(text: str) -> Atom:
    """The atom a text denotes (raises :class:`AtomError`).

    >>> parse_atom("p(a, 'b c', 3)")
    ('p', ('a', 'b c', 3))
    """
    if "'" not in text and " " not in text:  # the normal form: no quotes, no spaces
        pred, paren, rest = text.partition("(")
        if not paren:
            if pred and _BARE.fullmatch(pred):
                return pred, ()
        elif pred and rest.endswith(")") and _BARE.fullmatch(pred):
            args = rest[:-1].split(",")
            if all(args) and not any("(" in a or ")" in a for a in args):
                return pred, tuple(map(constant, args))
    elif (quoted := _ALL_QUOTED.match(text)) is not None:
        return quoted.group(1), tuple(map(constant, quoted.group(2).split("','")))
    pred, _, pos = _name(text, 0)
    args: list[Value] = []
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos < len(text) and text[pos] == "(":
        while True:
            name, quoted, pos = _name(text, pos + 1)
            args.append(constant(name) if not quoted or _NUMBER.match(name) else name)
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos < len(text) and text[pos] == ",":
                continue
            if pos < len(text) and text[pos] == ")":
                pos += 1
                break
            raise AtomError("expected ',' or ')' in the atom's arguments", pos + 1)
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if pos != len(text):
        raise AtomError(f"unexpected {text[pos]!r} after the atom", pos + 1)
    return pred, tuple(args)


def normal_atom(text: str) -> str:
    """An atom text in normal form (raises :class:`AtomError`).

    >>> normal_atom("p( a , 'b', 007)")
    'p(a,b,7)'
    """
    return atom_text(parse_atom(text))


def term_value(term: object) -> Value:
    """An RDF term as a constant (the mapping of the module docstring)."""
    if isinstance(term, NamedNode):
        return term.value
    if isinstance(term, BlankNode):
        return "_:" + term.value
    assert isinstance(term, Literal)
    if term.datatype.value in _NUMERIC_TYPES:
        try:
            return number(term.value.strip())
        except (ValueError, InvalidOperation):
            return term.value
    return term.value


def triple_atom(subject: object, predicate: NamedNode, obj: object) -> str:
    """One triple as an atom text: ``p(s,o)``, or ``C(s)`` for ``s rdf:type C``."""
    if predicate.value == RDF_TYPE and isinstance(obj, NamedNode):
        return atom_text((obj.value, (term_value(subject),)))
    return atom_text((predicate.value, (term_value(subject), term_value(obj))))


def read_atom_stream(
    source: Source,
    *,
    format: str | None = None,
    late: LatePolicy | None = None,
    lateness: int = 0,
    on_error: ErrorPolicy | None = None,
    ms_per_unit: int = 1,
) -> Iterator[StreamElement]:
    """The elements of an atom stream, each ``StreamElement(time, atom texts in normal form)``.

    ``format`` is "atoms" (JSON Lines with "atoms"), "trig" or "jsonl" (RDF streams, through
    the atom mapping); by default a .trig file is RDF and a JSON Lines file is read as atoms
    or as RDF by the key its first element has. Late elements go to ``late`` (default:
    rejected), ``lateness`` as for RDF streams (:func:`~chronolog.streams.apply_late_policy`);
    malformed lines are ``FILE:LINE:COL`` errors for ``on_error`` (default: raised).

    >>> import io
    >>> data = io.BytesIO(b'{"time": 1, "atoms": ["p( a ,b)", "q"]}\\n{"time": 3, "atoms": []}\\n')
    >>> [(e.time, e.triples) for e in read_atom_stream(data)]
    [(1, ('p(a,b)', 'q')), (3, ())]
    """
    chosen = format or _atom_format(source)
    if chosen in ("trig", "jsonl"):
        return _rdf_atoms(source, chosen, late, lateness, on_error, ms_per_unit)
    if chosen != "atoms":
        raise ValueError(f"unknown atom stream format {format!r}: expected 'atoms', 'trig' or 'jsonl'")
    located = handle_errors(_atom_lines(source, ms_per_unit), on_error or ErrorPolicy())
    return apply_late_policy(located, late or LatePolicy.reject(), lateness)


def _atom_format(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        if os.fspath(source).lower().endswith(".trig"):
            return "trig"
        with open(source, "rb") as file:
            for raw in file:
                if raw.strip():
                    return "jsonl" if b'"graph"' in raw and b'"atoms"' not in raw else "atoms"
    return "atoms"


def _rdf_atoms(source: Source, format: str, late: LatePolicy | None, lateness: int, on_error: ErrorPolicy | None,
               ms_per_unit: int) -> Iterator[StreamElement]:
    dictionary = TermDictionary()  # one per read: the atoms are text, the ids are not kept
    decode = dictionary.decode
    for element in read_stream(source, dictionary, format=format, late=late, lateness=lateness, on_error=on_error,
                               ms_per_unit=ms_per_unit):
        atoms = (triple_atom(decode(s), decode(p), decode(o)) for s, p, o in element.triples)  # type: ignore[arg-type]
        yield StreamElement(element.time, tuple(dict.fromkeys(atoms)))  # type: ignore[arg-type]


_KEYS = frozenset(("time", "atoms", "source"))  # "source": where a late element came from


def shipped_atoms(payload: str, syntax: str, ms_per_unit: int = 1) -> tuple[str, ...]:
    """The atoms of an element as the Spark source ships it: a JSON line (of an atom
    stream, or of an RDF stream through the atom mapping) or a graph as N-Triples
    (raises :class:`~chronolog.streams.LineError` for a malformed JSON line)."""
    if syntax == "jsonl":
        try:
            record = json.loads(payload)
        except json.JSONDecodeError:
            record = None  # atom_element says where
        if not isinstance(record, dict) or "graph" not in record or "atoms" in record:
            return atom_element(payload, ms_per_unit).triples  # type: ignore[return-value]
        dictionary = TermDictionary()
        triples = jsonl_element(payload, dictionary, None, ms_per_unit).triples
    else:
        dictionary = TermDictionary()
        triples = tuple(encode_text(payload, dictionary, format="nt"))
    decode = dictionary.decode
    return tuple(dict.fromkeys(triple_atom(decode(s), decode(p), decode(o)) for s, p, o in triples))  # type: ignore[arg-type]


def atom_element(line: str, ms_per_unit: int = 1) -> StreamElement:
    """One line of an atom stream (raises :class:`~chronolog.streams.LineError`)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise LineError(f"invalid JSON: {error.msg}", error.colno) from None
    if not isinstance(record, dict):
        raise LineError('an atom stream element must be a JSON object {"time": ..., "atoms": [...]}')
    if not _KEYS.issuperset(record):
        unknown = sorted(record.keys() - _KEYS)[0]
        raise LineError(f'unknown key {unknown!r} in an atom stream element (expected "time" and "atoms")')
    if "time" not in record:
        raise LineError('atom stream element has no "time"')
    time = jsonl_time(record["time"], ms_per_unit, line.find('"time"') + 1)
    atoms = record.get("atoms")
    col = line.find('"atoms"') + 1
    if not isinstance(atoms, list):
        what = "no" if atoms is None else f"a {type(atoms).__name__} as"
        raise LineError(f'atom stream element at time {time} has {what} "atoms"; expected a list of atom texts', col or 1)
    texts: list[str] = []
    for i, text in enumerate(atoms):
        if not isinstance(text, str):
            raise LineError(f'atom {i + 1} at time {time} is {json.dumps(text)}, not an atom text', col)
        try:
            texts.append(normal_atom(text))
        except AtomError as error:
            found = line.find(json.dumps(text, ensure_ascii=False)[1:-1], col)
            where = found + error.col if found >= 0 else col
            raise LineError(f"atom {i + 1} at time {time}, {text!r}: {error.message}", where) from None
    return StreamElement(time, tuple(dict.fromkeys(texts)))  # type: ignore[arg-type]


def _atom_lines(source: Source, ms_per_unit: int) -> Iterator[tuple[StreamElement, str] | ChronologSyntaxError]:
    """Each line's element with its place, or its positioned error (reading goes on)."""
    name = source_name(source) or "<stream>"
    lines: IO[bytes] = open(source, "rb") if isinstance(source, (str, os.PathLike)) else source  # type: ignore[assignment]
    try:
        for lineno, raw in enumerate(lines, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                col = len(raw[: error.start].decode("utf-8", "replace")) + 1
                yield ChronologSyntaxError("invalid UTF-8", name, lineno, col, None)
                continue
            if not line.strip():
                continue
            try:
                element = atom_element(line, ms_per_unit)
            except LineError as error:
                yield ChronologSyntaxError(error.message, name, lineno, error.col, line)
                continue
            yield element, f"{name}:{lineno}"
    finally:
        if lines is not source:
            lines.close()
