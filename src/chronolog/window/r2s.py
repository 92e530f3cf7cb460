"""Relation-to-stream operators (CQL, RSP-QL): what an evaluation adds to the output
stream, given the query's answer now and at the previous evaluation (bags of solutions).

>>> from collections import Counter
>>> before, now = Counter(["a", "b"]), Counter(["b", "c"])
>>> [relation_to_stream(op, before, now) for op in (RSTREAM, ISTREAM, DSTREAM)]
[['b', 'c'], ['c'], ['a']]
"""
from __future__ import annotations

import enum
from collections import Counter
from typing import Hashable


class R2S(enum.Enum):
    RSTREAM = "the whole answer at every evaluation"
    ISTREAM = "what is in the answer now and was not at the previous evaluation"
    DSTREAM = "what was in the answer at the previous evaluation and is not now"


RSTREAM, ISTREAM, DSTREAM = R2S.RSTREAM, R2S.ISTREAM, R2S.DSTREAM


def relation_to_stream(op: R2S, previous: Counter, current: Counter) -> list[Hashable]:
    """The solutions ``op`` emits (bag semantics: a solution twice now, once before, is
    inserted once by ISTREAM)."""
    if op is RSTREAM:
        return list(current.elements())
    if op is ISTREAM:
        return list((current - previous).elements())
    return list((previous - current).elements())
