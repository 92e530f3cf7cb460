"""Program keys in buckets: the keyed stage's Spark keys.

A program may split its state over many keys (DOTR: a rule group and a room), and a
micro-batch touches a few dozen of them. Each Spark key costs a fixed few milliseconds per
batch in ``transformWithStateInPandas`` (a state read and a state write, each a round trip
to the JVM's state server, and a pandas frame of outputs), whatever the program does with
it. So the stateless stage hashes each program key to one of a few buckets, and a bucket's
state value holds the state of every program key in it: one read, one write and one frame
per bucket and batch (benchmarks/RESULTS.md, issue 18 goal 3). For the same reason the
stateless stage ships a bucket's records of a batch packed in one row (:func:`pack`).

Bucket ids are ints chosen so that Spark's hash partitioning (Murmur3 of the grouping
column, seed 42, modulo the keyed partitions) spreads them evenly: every keyed partition
gets the same number of buckets, and program keys spread evenly over buckets. The ids are
fixed when a checkpoint is made and kept in its stamp, since a program key must find its
state in the same bucket when the run resumes.
"""
from __future__ import annotations

import pickle
import zlib
from operator import itemgetter
from typing import Iterable, Mapping, Sequence

from chronolog.plain import plain_loads
from chronolog.program import Plan, Record
from chronolog.program.outputs import Output

PASSTHROUGH_BUCKET = -1  # rows needing no state: outputs of the stateless stage, diagnostics
BUCKETS_PER_PARTITION = 4

_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def spark_partition(value: int, partitions: int) -> int:
    """The keyed partition Spark's hash partitioning gives an int grouping key:
    ``pmod(Murmur3_x86_32.hashInt(value, 42), partitions)``."""
    k1 = _rotl((value & _MASK) * 0xCC9E2D51 & _MASK, 15) * 0x1B873593 & _MASK
    h1 = (_rotl(42 ^ k1, 13) * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    signed = h1 - (1 << 32) if h1 & 0x80000000 else h1
    return signed % partitions


def bucket_ids(partitions: int, per_partition: int = BUCKETS_PER_PARTITION) -> list[int]:
    """``per_partition`` bucket ids for each of ``partitions`` keyed partitions, the
    smallest non-negative ints that hash there, in round-robin order of partitions."""
    found: list[list[int]] = [[] for _ in range(partitions)]
    value = 0
    while any(len(ids) < per_partition for ids in found):
        ids = found[spark_partition(value, partitions)]
        if len(ids) < per_partition:
            ids.append(value)
        value += 1
    return [found[p][i] for i in range(per_partition) for p in range(partitions)]


def bucket_of(key: str, ids: Sequence[int]) -> int:
    """The bucket of a program key: the same in every process (not Python's ``hash``)."""
    return ids[zlib.crc32(key.encode("utf-8")) % len(ids)]


Entries = dict[str, tuple[bytes, "int | None"]]  # program key -> (its state, when it expires)


def decode(blob: bytes | None) -> Entries:
    """A bucket's entries from its state value (none without one)."""
    return {} if blob is None else plain_loads(blob, "bucket state")  # type: ignore[return-value]


def encode(entries: Entries) -> bytes:
    return pickle.dumps(entries, protocol=5)


def pack(records: Iterable[Record]) -> bytes:
    """Records as one payload (plain data: :func:`unpack` runs no code)."""
    return pickle.dumps([tuple(r) for r in records], protocol=5)


def unpack(blob: bytes) -> list[Record]:
    return [Record(*r) for r in plain_loads(blob, "bucket's records")]  # type: ignore[union-attr]


_TIME_SEQ = itemgetter(1, 2)  # a Record's (time, seq)


def apply(plan: Plan, entries: Entries, records: Mapping[str, list[Record]],
          ended: Iterable[str]) -> list[tuple[str, list[Output]]]:
    """Apply each program key's records of a batch (any order; sorted here by time, then
    seq) to its entry, and finish the keys told the streams have ended: the outputs per key,
    keys in sorted order. An entry whose state comes back None is dropped."""
    ended = set(ended)
    out = []
    for key in sorted(records.keys() | ended):
        held = entries.get(key)
        state, outputs, expires = plan.process(key, held[0] if held else None,
                                               sorted(records.get(key, ()), key=_TIME_SEQ))
        if key in ended:
            outputs = outputs + plan.finish(key, state)
            state = None
        if state is None:
            entries.pop(key, None)
        else:
            entries[key] = (state, expires)
        out.append((key, outputs))
    return out


def evict(entries: Entries, watermark: int) -> None:
    """Drop the entries the watermark has passed the expiry of."""
    for key in [k for k, (_, expires) in entries.items() if expires is not None and watermark > expires]:
        del entries[key]


def due(entries: Entries) -> int | None:
    """The earliest expiry of the entries (None: none expires)."""
    return min((expires for _, expires in entries.values() if expires is not None), default=None)
