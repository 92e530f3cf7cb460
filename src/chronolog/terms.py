"""Dictionary encoding of RDF terms: every term becomes an int once, at ingestion.

Hot loops (joins, filters, temporal patterns) compare ints. Literal values used by
comparisons and arithmetic are decoded once per term and cached, tagged with a value
class so that only comparable values are compared (SPARQL's operator mapping).
"""
from __future__ import annotations

import datetime as _dt
import math
import struct
from functools import lru_cache
from decimal import Decimal, InvalidOperation
from typing import Callable, Iterable, Union

from pyoxigraph import BlankNode, Literal, NamedNode

from chronolog.errors import ChronologError

Term = Union[NamedNode, BlankNode, Literal]


class Var(str):
    """A variable name (without ``?``): what a pattern holds where it holds no term, in
    rule bodies and SPARQL queries alike, so it lives below both."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "?" + self

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"

XSD_STRING = NamedNode(XSD + "string")
XSD_INTEGER = NamedNode(XSD + "integer")
XSD_DECIMAL = NamedNode(XSD + "decimal")
XSD_DOUBLE = NamedNode(XSD + "double")
XSD_FLOAT = NamedNode(XSD + "float")
XSD_BOOLEAN = NamedNode(XSD + "boolean")
XSD_DATETIME = NamedNode(XSD + "dateTime")
RDF_LANGSTRING = RDF + "langString"

# Value classes: values compare by order only within one class.
V_NODE = 0  # IRI or blank node: no literal value
V_NUMERIC = 1
V_STRING = 2  # simple literal or xsd:string
V_BOOLEAN = 3
V_DATETIME = 4  # value: epoch microseconds (UTC; no timezone read as UTC)
V_LANGSTRING = 5  # value: (lexical, language)
V_OTHER = 6  # other datatypes and ill-typed literals: identity only

Value = tuple[int, object]

_INTEGER_TYPES = frozenset(
    XSD + t
    for t in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger", "nonPositiveInteger",
        "positiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort",
        "unsignedByte",
    )
)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class Float32(float):
    """The value of an xsd:float: a single-precision number held in a Python float.

    Its own type lets arithmetic keep xsd:float apart from xsd:double, and its rounding
    lets it compare with a double as XPath says (0.1 as a float is not 0.1 as a double)."""

    __slots__ = ()


def to_float32(value: float) -> Float32:
    """``value`` rounded to single precision (beyond its range: an infinity)."""
    try:
        return Float32(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return Float32(math.copysign(math.inf, value))


def float32_repr(value: float) -> str:
    """The shortest decimal text that reads back as the single-precision ``value``."""
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if to_float32(float(text)) == value:
            return text
    return repr(value)


_SPECIAL_FLOATS = {"INF": math.inf, "+INF": math.inf, "-INF": -math.inf, "NaN": math.nan}


def parse_datetime_us(lexical: str) -> int:
    """Epoch microseconds of an xsd:dateTime lexical form (no timezone is read as UTC)."""
    text = lexical.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    moment = _dt.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@lru_cache(maxsize=1 << 16)
def literal_value(term: Literal) -> Value:
    """The value class and Python value of a literal; ill-typed literals are V_OTHER.

    Cached: expression evaluators on decoded terms ask for the same literals again and again."""
    dtype = term.datatype.value
    lexical = term.value
    try:
        if dtype == XSD + "string":
            return (V_STRING, lexical)
        if dtype == RDF_LANGSTRING:
            return (V_LANGSTRING, (lexical, (term.language or "").lower()))
        if dtype in _INTEGER_TYPES:
            return (V_NUMERIC, int(lexical.strip()))
        if dtype == XSD + "decimal":
            text = lexical.strip()
            if not text or any(c in text for c in "eEnNiI"):
                raise ValueError(lexical)
            return (V_NUMERIC, Decimal(text))
        if dtype == XSD + "double" or dtype == XSD + "float":
            text = lexical.strip()
            number = _SPECIAL_FLOATS[text] if text in _SPECIAL_FLOATS else float(text)
            return (V_NUMERIC, number if dtype == XSD + "double" else to_float32(number))
        if dtype == XSD + "boolean":
            text = lexical.strip()
            if text in ("true", "1"):
                return (V_BOOLEAN, True)
            if text in ("false", "0"):
                return (V_BOOLEAN, False)
            raise ValueError(lexical)
        if dtype == XSD + "dateTime":
            return (V_DATETIME, parse_datetime_us(lexical))
    except (ValueError, InvalidOperation, KeyError):
        return (V_OTHER, None)
    return (V_OTHER, None)


def literal_of(value: object) -> Literal:
    """The canonical literal for a Python value produced by arithmetic or aggregation."""
    if isinstance(value, bool):
        return Literal("true" if value else "false", datatype=XSD_BOOLEAN)
    if isinstance(value, int):
        return Literal(str(value), datatype=XSD_INTEGER)
    if isinstance(value, Decimal):
        text = format(value.normalize() if value else Decimal(0), "f")  # canonical: no trailing zeros, no exponent
        if "." not in text:
            text += ".0"
        return Literal(text, datatype=XSD_DECIMAL)
    if isinstance(value, float):
        datatype = XSD_FLOAT if isinstance(value, Float32) else XSD_DOUBLE
        if math.isnan(value):
            return Literal("NaN", datatype=datatype)
        if math.isinf(value):
            return Literal("INF" if value > 0 else "-INF", datatype=datatype)
        text = float32_repr(value) if datatype is XSD_FLOAT else repr(value)
        return Literal(text.replace("e+", "E").replace("e", "E"), datatype=datatype)
    if isinstance(value, str):
        return Literal(value)
    raise TypeError(f"no RDF literal for {type(value).__name__} value {value!r}")


class ReclaimedTermError(ChronologError):
    """A term id used after its term was reclaimed (see ``TermDictionary.reclaim``)."""


class TermDictionary:
    """Bidirectional map between RDF terms and int ids.

    One dictionary serves one engine: the background, the stream and the programs are
    all encoded with it, so equal terms are equal ints everywhere.

    Memory must not grow with the stream (DESIGN.md section 5), so the dictionary has two
    parts. ``pin()`` makes every term encoded so far permanent: a program pins its
    constants and the background closure once compiled. Terms encoded later (the stream's,
    the outputs') are recent, and ``reclaim(live)`` forgets every recent term not in
    ``live``: its host calls it between time points with the ids that its state still
    holds. Ids are never reused, so an id kept anywhere by mistake fails loudly
    (``ReclaimedTermError``) instead of naming another term; a term seen again after it
    was reclaimed gets a new id.

    >>> d = TermDictionary()
    >>> p = d.iri("http://e/p"); d.pin()
    >>> a, b = d.iri("http://e/a"), d.iri("http://e/b")
    >>> d.reclaim([b]), len(d), d.decode(b).value
    (1, 2, 'http://e/b')
    >>> d.iri("http://e/a") == a
    False
    """

    __slots__ = ("_ids", "_permanent", "_recent", "_values", "_texts", "_next", "_listeners", "reclaim_floor",
                 "_kept")

    def __init__(self) -> None:
        self._ids: dict[Term, int] = {}
        self._permanent: list[Term | None] = []  # ids 0 .. len - 1
        self._recent: dict[int, Term] = {}  # ids from len(_permanent) on, those not reclaimed
        self._values: dict[int, Value] = {}
        self._texts: dict[int, str] = {}
        self._next = 0
        self._listeners: list[Callable[[], None]] = []
        self.reclaim_floor = 1 << 14  # recent terms below which reclaiming is never due
        self._kept = 0  # recent terms the last reclaim kept

    def __len__(self) -> int:
        """How many ids were ever assigned, reclaimed ones included after a ``pin``."""
        return len(self._permanent) + len(self._recent)

    @property
    def recent(self) -> int:
        """How many terms are recent (encoded since the last ``pin``, not reclaimed)."""
        return len(self._recent)

    def encode(self, term: Term) -> int:
        """The id of ``term``, assigning the next id on first sight."""
        tid = self._ids.get(term)
        if tid is None:
            tid = self._next
            self._next = tid + 1
            self._ids[term] = tid
            self._recent[tid] = term
        return tid

    def iri(self, iri: str) -> int:
        """The id of the IRI ``iri``."""
        return self.encode(NamedNode(iri))

    def lookup(self, term: Term) -> int | None:
        """The id of ``term`` if it is known, else None (never assigns)."""
        return self._ids.get(term)

    def decode(self, tid: int) -> Term:
        """The term behind id ``tid``."""
        permanent = self._permanent
        term = permanent[tid] if tid < len(permanent) else self._recent.get(tid)
        if term is None:
            raise ReclaimedTermError(f"term id {tid} is not in the dictionary: it was reclaimed (an id "
                                     "kept past the time points its term was live in)")
        return term

    def value(self, tid: int) -> Value:
        """(value class, Python value) of the term ``tid``, cached after the first call."""
        cached = self._values.get(tid)
        if cached is None:
            term = self.decode(tid)
            cached = literal_value(term) if isinstance(term, Literal) else (V_NODE, None)
            self._values[tid] = cached
        return cached

    def text(self, tid: int) -> str:
        """The N-Triples text of the term ``tid``, cached after the first call: outputs
        cross processes and snapshots leave them as text, the same terms again and again."""
        cached = self._texts.get(tid)
        if cached is None:
            cached = self._texts[tid] = str(self.decode(tid))
        return cached

    def encode_value(self, value: object) -> int:
        """The id of the canonical literal of a Python value (see ``literal_of``)."""
        return self.encode(literal_of(value))

    def is_literal(self, tid: int) -> bool:
        return isinstance(self.decode(tid), Literal)

    def is_iri(self, tid: int) -> bool:
        return isinstance(self.decode(tid), NamedNode)

    def is_blank(self, tid: int) -> bool:
        return isinstance(self.decode(tid), BlankNode)

    # -- the permanent and the recent part ---------------------------------------------

    def pin(self) -> None:
        """Make every term encoded so far permanent (never reclaimed)."""
        permanent = self._permanent
        for tid in range(len(permanent), self._next):
            permanent.append(self._recent.pop(tid, None))  # None: reclaimed before the pin, never used again
        self._kept = 0

    @property
    def reclaim_due(self) -> bool:
        """Whether enough recent terms piled up for ``reclaim`` to be worth its pass: at
        least ``reclaim_floor``, and twice as many as the last pass kept (so the work of
        reclaiming, proportional to the recent terms, is constant per term encoded)."""
        return len(self._recent) >= max(self.reclaim_floor, 2 * self._kept)

    def reclaim(self, live: Iterable[int]) -> int:
        """Forget every recent term whose id is not in ``live``; how many were forgotten.

        ``live`` must hold every id of a recent term that anything will use again: the
        caller's state, and what it has encoded but not processed yet."""
        recent, ids, values, texts = self._recent, self._ids, self._values, self._texts
        kept = {tid: recent[tid] for tid in set(live) if tid in recent}
        for tid, term in recent.items():
            if tid not in kept:
                del ids[term]
                values.pop(tid, None)
                texts.pop(tid, None)
        dropped = len(recent) - len(kept)
        self._recent = kept
        self._kept = len(kept)
        for listener in self._listeners:
            listener()
        return dropped

    def on_reclaim(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after each ``reclaim``: for a cache that maps something to ids."""
        self._listeners.append(listener)
