"""The keyed stage's buckets: ids that Spark's hash partitioning spreads evenly, program
keys applied, finished and evicted within a bucket's entries as they were one Spark key
each."""
from __future__ import annotations

import pickle
from collections import Counter
from typing import Sequence

import pytest

from chronolog.plain import SnapshotError
from chronolog.program import Plan, Record
from chronolog.program.contract import Prepared, Processed
from chronolog.spark import buckets
from chronolog.spark.buckets import bucket_ids, bucket_of, spark_partition


@pytest.mark.spark
def test_spark_partition_is_the_partition_spark_hashes_an_int_key_to(spark) -> None:
    rows = spark.range(-500, 1500).selectExpr(
        "cast(id as int) as v", "pmod(hash(cast(id as int)), 3) as p3", "pmod(hash(cast(id as int)), 8) as p8",
    ).collect()
    assert [(spark_partition(r.v, 3), spark_partition(r.v, 8)) for r in rows] == [(r.p3, r.p8) for r in rows]


@pytest.mark.parametrize("partitions", [1, 2, 3, 4, 8, 200])
def test_every_keyed_partition_gets_as_many_buckets(partitions: int) -> None:
    ids = bucket_ids(partitions)
    assert len(set(ids)) == len(ids) == partitions * buckets.BUCKETS_PER_PARTITION
    assert Counter(spark_partition(i, partitions) for i in ids) == {p: buckets.BUCKETS_PER_PARTITION
                                                                   for p in range(partitions)}
    assert buckets.PASSTHROUGH_BUCKET not in ids


def test_program_keys_spread_over_the_buckets_the_same_in_every_process() -> None:
    ids = bucket_ids(2)
    keys = [f"fire|room{i}" for i in range(800)]
    spread = Counter(bucket_of(k, ids) for k in keys)
    assert set(spread) == set(ids)
    assert max(spread.values()) < 2 * min(spread.values())
    # pinned: a checkpoint's state is found again only if a key keeps its bucket across versions
    assert ids == [2, 0, 4, 1, 5, 3, 10, 6]
    assert [ids.index(bucket_of(k, ids)) for k in ["fire|room7", "*", "q|x"]] == [1, 3, 1]


class CountingPlan(Plan):
    """A plan whose state is the list of payloads a key saw, expiring at its last time + 10;
    a key whose records include b"drop" keeps nothing."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[tuple[int, int]]]] = []

    def prepare(self, time, inputs) -> Prepared:
        raise AssertionError("not used")

    def process(self, key: str, state: bytes | None, records: Sequence[Record]) -> Processed:
        self.seen.append((key, [(r.time, r.seq) for r in records]))
        held = pickle.loads(state) if state else []
        held += [r.payload for r in records]
        if b"drop" in held:
            return Processed(None, [f"{key} dropped"], None)  # type: ignore[list-item]
        last = max((r.time for r in records), default=None)
        return Processed(pickle.dumps(held), [f"{key}:{p!r}" for p in held], None if last is None else last + 10)

    def finish(self, key: str, state: bytes | None) -> list:
        return [f"{key} finished with {len(pickle.loads(state)) if state else 0}"]


def test_a_bucket_applies_each_key_in_time_order_and_keeps_each_state_apart() -> None:
    plan = CountingPlan()
    entries: buckets.Entries = {}
    out = buckets.apply(plan, entries, {"b": [Record("b", 5, 1, b"y"), Record("b", 2, 0, b"x")],
                                        "a": [Record("a", 1, 0, b"z")]}, [])
    assert plan.seen == [("a", [(1, 0)]), ("b", [(2, 0), (5, 1)])]
    assert out == [("a", ["a:b'z'"]), ("b", ["b:b'x'", "b:b'y'"])]
    assert {k: (pickle.loads(s), e) for k, (s, e) in entries.items()} == {"a": ([b"z"], 11), "b": ([b"x", b"y"], 15)}
    entries = buckets.decode(buckets.encode(entries))
    out = buckets.apply(plan, entries, {"a": [Record("a", 7, 0, b"drop")]}, ["b"])
    assert out == [("a", ["a dropped"]), ("b", ["b:b'x'", "b:b'y'", "b finished with 2"])]
    assert entries == {}


def test_the_timer_drops_only_the_keys_the_watermark_passed() -> None:
    entries: buckets.Entries = {"old": (b"1", 10), "new": (b"2", 30), "always": (b"3", None)}
    assert buckets.due(entries) == 10
    buckets.evict(entries, 10)
    assert set(entries) == {"old", "new", "always"}
    buckets.evict(entries, 11)
    assert set(entries) == {"new", "always"} and buckets.due(entries) == 30
    buckets.evict(entries, 10**9)
    assert set(entries) == {"always"} and buckets.due(entries) is None


def test_bucket_state_that_is_not_plain_data_is_refused() -> None:
    with pytest.raises(SnapshotError, match="not a bucket state|only plain data"):
        buckets.decode(pickle.dumps(Counter()))


def test_a_buckets_records_travel_packed_in_one_payload() -> None:
    records = [Record("fire|a", 3, 1, b"\x00x"), Record("fire|b", 2, 0, b"")]
    assert buckets.unpack(buckets.pack(records)) == records
    with pytest.raises(SnapshotError):
        buckets.unpack(pickle.dumps([Counter()]))
