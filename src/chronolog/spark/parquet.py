"""The closure on disk: Parquet that the streaming runner loads without Spark.

Layout of a closure folder::

    manifest.json          format, version, the relations and where they are
    dictionary/            id (long), term (its N-Triples text), one row per term
    lower/<k>/, upper/<k>/ one relation of one layer: long columns s, p, o or c0..cn

``lower`` holds the input facts and what the monotone strata derive, ``upper`` what the
strata with negation derive: the Reasoner's two background databases, so negation at a
time point can set ``upper`` aside exactly as it does after an in-process closure.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from chronolog.errors import ChronologError
from chronolog.spark.closure import LOWER, UPPER, Closure
from chronolog.formats import parse_terms
from chronolog.spark.encoding import columns
from chronolog.store import Database, Layers
from chronolog.terms import TermDictionary

FORMAT = "chronolog-closure"
VERSION = 1


def write_closure(closure: Closure, path: str | os.PathLike[str]) -> None:
    """Write ``closure`` under the folder ``path`` (replaced if it exists).

    Relations are written by Spark's executors; the dictionary lives on the driver and is
    sent to Spark once to be written the same way. ``path`` must be visible to the driver
    and to every executor (a local folder in local mode, a shared one on a cluster).
    """
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    relations = []
    for layer, frames in ((LOWER, closure.lower), (UPPER, closure.upper)):
        for k, (name, frame) in enumerate(sorted(frames.items())):
            if not closure.sizes.get(name):
                continue
            folder = f"{layer}/{k}"
            frame.write.mode("overwrite").parquet(str(root / folder))
            relations.append({"name": name, "arity": len(frame.columns), "layer": layer, "path": folder})
    dictionary = closure.dictionary
    terms = pa.table({"id": pa.array(range(len(dictionary)), type=pa.int64()),
                      "term": pa.array([str(dictionary.decode(i)) for i in range(len(dictionary))], type=pa.string())})
    closure.triples.sparkSession.createDataFrame(terms).write.mode("overwrite").parquet(str(root / "dictionary"))
    manifest = {"format": FORMAT, "version": VERSION, "terms": len(dictionary), "rounds": closure.rounds,
                "relations": relations}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


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
