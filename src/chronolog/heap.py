"""The cyclic garbage collector in a long run.

A compiled program holds its background, its dictionary and its plans for the whole run:
hundreds of thousands of objects the collector can track (CityBench's background alone is
129k). Python's full collections walk every one of them, and a stream that makes many
outputs triggers a full collection every few seconds: on CityBench Q1 at 100 graphs/s they
took a third of the time (benchmarks/RESULTS.md, issue 18). A process that runs one program
moves what is alive once the program is compiled into the permanent generation, which the
collector no longer walks; everything made later is collected as before.
"""
from __future__ import annotations

import gc


def freeze_compiled() -> None:
    """Collect, then leave everything alive now out of every later collection. For a
    process that keeps what it compiled until it exits (objects frozen are never freed)."""
    gc.collect()
    gc.freeze()
