"""The closure on disk, written by Spark: see :mod:`chronolog.datalog.parquet_closure`
for the layout and for the reader, which needs no Spark.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa

from chronolog.datalog.parquet_closure import FORMAT, LOWER, UPPER, VERSION
from chronolog.spark.closure import Closure


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
