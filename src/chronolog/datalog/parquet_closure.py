"""A closure folder read back without Spark: the Parquet layout and its reader.

Layout of a closure folder::

    manifest.json          format, version, the relations and where they are
    dictionary/            id (long), term (its N-Triples text), one row per term
    lower/<k>/, upper/<k>/ one relation of one layer: long columns s, p, o or c0..cn

``lower`` holds the input facts and what the monotone strata derive, ``upper`` what the
strata with negation derive: the Reasoner's two background databases, so negation at a
time point can set ``upper`` aside exactly as it does after an in-process closure.

Spark writes these folders (:mod:`chronolog.spark.parquet`); reading one needs only
pyarrow, so the in-process host adopts a closure from here, below the Spark layer.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from chronolog.errors import ChronologError
from chronolog.formats import parse_terms
from chronolog.store import TRIPLE, Database, Layers
from chronolog.terms import TermDictionary

FORMAT = "chronolog-closure"
VERSION = 1
LOWER, UPPER = "lower", "upper"
TRIPLE_COLUMNS = ("s", "p", "o")


def columns(relation: str, arity: int) -> tuple[str, ...]:
    """Column names of a relation, on disk and in Spark's DataFrames: s, p, o for triples,
    c0..cn otherwise."""
    return TRIPLE_COLUMNS if relation == TRIPLE else tuple(f"c{i}" for i in range(arity))


@dataclass
class LoadedClosure:
    """A closure read back: its terms in ``dictionary``, its facts in the two layers."""

    dictionary: TermDictionary
    lower: Database
    upper: Database

    @property
    def view(self) -> Layers:
        """All facts, as the Reasoner's ``background_view`` shows them."""
        return Layers([self.lower, self.upper])


def load_closure(path: str | os.PathLike[str], dictionary: TermDictionary | None = None) -> LoadedClosure:
    """Read a closure folder into ``dictionary`` (a new one if None) and in-process stores.

    Stored ids are re-encoded through ``dictionary``, so it may already hold terms (a
    program's constants); with an empty one the ids stay as they were written.
    """
    root = Path(path)
    try:
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ChronologError(f"{root}: not a closure folder (no manifest.json)") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ChronologError(f"{root}: unsupported closure format {manifest.get('format')!r} "
                             f"version {manifest.get('version')!r}")
    dictionary = dictionary if dictionary is not None else TermDictionary()
    terms = pq.read_table(root / "dictionary").sort_by("id")
    ids = terms.column("id").to_numpy()
    mapping = np.full(int(ids[-1]) + 1 if len(ids) else 0, -1, dtype=np.int64)
    encode = dictionary.encode
    mapping[ids] = [encode(term) for term in parse_terms(terms.column("term").to_pylist())]
    loaded = LoadedClosure(dictionary, Database(), Database())
    for entry in manifest["relations"]:
        name, arity = entry["name"], entry["arity"]
        table = pq.read_table(root / entry["path"])
        cols = [mapping[table.column(c).to_numpy()].tolist() for c in columns(name, arity)]
        target = loaded.lower if entry["layer"] == LOWER else loaded.upper
        target.relation(name, arity).add_all(zip(*cols))
    return loaded
