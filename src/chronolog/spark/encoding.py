"""Terms on Spark: int columns for facts, N-Triples text for terms, literal values on executors.

Facts travel as DataFrames of long columns. Terms cross process boundaries as their
N-Triples text (parsed back by pyoxigraph, exactly). Rule filters and assignments run on
executors against a :class:`LiteralTable`, the part of the driver's TermDictionary they can
read: IRIs and blank nodes have no value, so only the literals are shipped.
"""
from __future__ import annotations

import hashlib
from array import array
from typing import Iterable, Sequence

import pyarrow as pa
from pyoxigraph import Literal

from chronolog.formats import parse_terms
from chronolog.terms import V_NODE, Term, TermDictionary, Value, literal_of, literal_value


def arrow_facts(facts: Iterable[tuple[int, ...]], names: Sequence[str]) -> pa.Table:
    """An Arrow table of int64 columns from int tuples, without a Python object per cell."""
    cols = [array("q") for _ in names]
    for fact in facts:
        for col, value in zip(cols, fact):
            col.append(value)
    return pa.table({name: pa.array(col, type=pa.int64()) for name, col in zip(names, cols)})


def new_term_id(text: str) -> int:
    """The id an executor gives a term the driver's dictionary lacks: negative, and the
    same in every process (a hash of its N-Triples text), so joins and equality on it
    agree across executors until the driver assigns the real id."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return -1 - (int.from_bytes(digest, "big") >> 2)


def literal_payload(dictionary: TermDictionary) -> tuple[list[int], list[Literal]]:
    """The ids and terms of every literal of the dictionary: what executors need to read values."""
    ids: list[int] = []
    terms: list[Literal] = []
    decode = dictionary.decode
    for tid in range(len(dictionary)):
        term = decode(tid)
        if isinstance(term, Literal):
            ids.append(tid)
            terms.append(term)
    return ids, terms


class LiteralTable:
    """An executor's stand-in for the driver's TermDictionary inside compiled rule builtins.

    It answers ``value`` (the literal's value; IRIs and blank nodes have none) and
    ``encode_value`` (the id of a computed value's literal). A computed literal the driver
    has not seen gets :func:`new_term_id`; its text travels in a column next to the id and
    the driver encodes it after the round.
    """

    def __init__(self, ids: Sequence[int], terms: Sequence[Literal]) -> None:
        self._terms: dict[int, Term] = dict(zip(ids, terms))
        self._ids: dict[Term, int] = dict(zip(terms, ids))
        self._values: dict[int, Value] = {}

    def value(self, tid: int) -> Value:
        cached = self._values.get(tid)
        if cached is None:
            term = self._terms.get(tid)
            cached = literal_value(term) if isinstance(term, Literal) else (V_NODE, None)
            self._values[tid] = cached
        return cached

    def encode_value(self, value: object) -> int:
        return self.encode(literal_of(value))

    def encode(self, term: Term) -> int:
        tid = self._ids.get(term)
        if tid is None:
            tid = new_term_id(str(term))
            self._ids[term] = tid
            self._terms[tid] = term
        return tid

    def register(self, tid: int, text: str) -> None:
        """Learn a new term computed by an earlier step (maybe in another process)."""
        if tid not in self._terms:
            term = parse_terms([text])[0]
            self._terms[tid] = term
            self._ids[term] = tid

    def text(self, tid: int) -> str:
        """The N-Triples text of a term this table gave a new id."""
        return str(self._terms[tid])
