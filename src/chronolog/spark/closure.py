"""Semi-naive Datalog as DataFrame joins: the closure of a large background on Spark.

Every relation is a DataFrame of long columns (``s, p, o`` for triples, ``c0..cn`` for local
relations) over the driver's TermDictionary ids. Strata are evaluated in groups: all monotone
strata together first (negation cannot see them change), then the non-monotone strata,
consecutive ones merged while no negated atom reads a head of the group. That is the split
the in-process Reasoner makes (``lower``/``upper``), kept here so the streaming runner can
install the result as the Reasoner's background.

In each round of a group, every rule runs once per positive atom that the last round's new
facts can match (the first round runs every rule once over everything): a chain of joins on
the shared variables, constants and repeated variables as filters, negated atoms as left-anti
joins, comparisons and assignments in ``mapInPandas`` with the rule's own compiled builtin.
Rules that cannot fire (an atom's constant predicate or class has no facts) are skipped from
per-predicate statistics gathered with each round. New facts are the derived ones, distinct,
minus everything known (left-anti). Each round's new facts are ``localCheckpoint``-ed:
lineage stays one round deep, and no reliable checkpoint folder is needed (a lost executor
fails the batch job, which is re-run from the input).
"""
from __future__ import annotations

import io
import pickle
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import numpy as np
from pyspark import Broadcast
from pyspark.cloudpickle.cloudpickle import Pickler
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from chronolog.datalog.parquet_closure import LOWER, UPPER, columns
from chronolog.datalog.program import CONSTRAINT_PREFIX, Program, Rule
from chronolog.formats import parse_terms
from chronolog.joins import Assign, Filter, Pattern, Step, order
from chronolog.spark.encoding import LiteralTable, arrow_facts, literal_payload
from chronolog.store import TRIPLE
from chronolog.terms import RDF, TermDictionary, Var

if TYPE_CHECKING:
    import pandas as pd

# Joins broadcast an atom's facts when they are few and the other side is many; otherwise
# both sides are shuffled. Spark's own choice is switched off (see session.py): with no
# statistics on checkpointed data it either broadcasts everything (one job per broadcast,
# which dominates rounds on small data) or nothing (a shuffle of the big side per join).
BROADCAST_MAX_ROWS = 200_000
BROADCAST_MIN_OTHER = 100_000
_COMPACT_AFTER = 4  # checkpointed chunks per relation before they are merged into one


@dataclass(frozen=True)
class RoundReport:
    """What one round did, for progress lines and benchmarks."""

    group: int  # 1-based
    groups: int
    strata: tuple[int, int]  # first and last stratum of the group
    round: int  # within the group, from 1
    total_rounds: int
    rules_run: int
    new: int  # new facts, all relations
    seconds: float


class _Stats:
    """Fact counts per relation, per triple predicate and per rdf:type class: what says a
    rule cannot fire, and what orders its joins."""

    def __init__(self) -> None:
        self.sizes: Counter[str] = Counter()
        self.preds: Counter[int] = Counter()
        self.classes: Counter[int] = Counter()

    def add(self, other: "_Stats") -> None:
        self.sizes.update(other.sizes)
        self.preds.update(other.preds)
        self.classes.update(other.classes)

    def total(self) -> int:
        return sum(self.sizes.values())

    def matching(self, atom: Pattern, rdf_type: int) -> int:
        """An upper bound on the facts ``atom`` can match."""
        if atom.relation != TRIPLE:
            return self.sizes[atom.relation]
        pred = atom.args[1]
        if isinstance(pred, Var):
            return self.sizes[TRIPLE]
        obj = atom.args[2]
        if pred == rdf_type and not isinstance(obj, Var):
            return self.classes[obj]
        return self.preds[pred]


@dataclass
class Closure:
    """The closure on Spark: checkpointed DataFrames per relation, split like the Reasoner's
    background (``lower``: input facts and monotone strata; ``upper``: the rest)."""

    dictionary: TermDictionary
    program: Program
    lower: dict[str, DataFrame]
    upper: dict[str, DataFrame]
    sizes: dict[str, int]
    rounds: int

    def relation(self, name: str) -> DataFrame:
        """All facts of ``name`` (both layers)."""
        return self.lower[name].union(self.upper[name])

    @property
    def triples(self) -> DataFrame:
        return self.relation(TRIPLE)

    def facts(self, name: str) -> Iterator[tuple[int, ...]]:
        """The facts of ``name`` on the driver, one partition at a time."""
        return (tuple(row) for row in self.relation(name).toLocalIterator())

    def diagnostics(self) -> list[tuple[str, tuple[int, ...]]]:
        """Constraint violations, as ``Reasoner.diagnostics`` gives them."""
        out = []
        for name in self.program.arities:
            if name.startswith(CONSTRAINT_PREFIX) and self.sizes.get(name):
                label = name[len(CONSTRAINT_PREFIX):]
                out.extend((label, tuple(row)) for row in self.relation(name).collect())
        return out


def spark_closure(spark: SparkSession, program: Program, dictionary: TermDictionary,
                  triples: DataFrame, on_round: Callable[[RoundReport], None] | None = None) -> Closure:
    """The closure of ``triples`` (a DataFrame of long ``s, p, o``) under ``program``.

    ``program`` and the ids of ``triples`` come from ``dictionary``; assignments that compute
    new literals add them to it.
    """
    return _Evaluation(spark, program, dictionary, on_round).run(triples)


def triples_frame(spark: SparkSession, triples: Sequence[tuple[int, int, int]] | Iterator[tuple[int, int, int]]) -> DataFrame:
    """A DataFrame of encoded triples parsed on the driver (through Arrow, not Row objects)."""
    return spark.createDataFrame(arrow_facts(triples, columns(TRIPLE, 3)))


# -- builtins on executors ---------------------------------------------------------------

_Key = tuple[int, int]  # (rule index, body index) of a Filter or Assign step


class _DictionaryPickler(Pickler):
    """cloudpickle, leaving out the TermDictionary the compiled builtins close over."""

    def __init__(self, file: io.BytesIO, dictionary: TermDictionary) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._dictionary = dictionary

    def persistent_id(self, obj: object) -> str | None:
        return "dictionary" if obj is self._dictionary else None


class _TableUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, table: LiteralTable) -> None:
        super().__init__(file)
        self._table = table

    def persistent_load(self, pid: object) -> LiteralTable:
        return self._table


@dataclass(frozen=True)
class _Handle:
    """What a mapInPandas task needs to run builtins: broadcast once, loaded once per worker."""

    version: str
    steps: Broadcast[bytes]
    literals: Broadcast[tuple[list[int], list]]


_WORKER_STATE: dict[str, tuple[LiteralTable, dict[_Key, Callable[..., object]]]] = {}


def _worker_builtins(handle: _Handle) -> tuple[LiteralTable, dict[_Key, Callable[..., object]]]:
    """The builtins bound to this worker's literal table (unpickled once per version)."""
    state = _WORKER_STATE.get(handle.version)
    if state is None:
        _WORKER_STATE.clear()
        table = LiteralTable(*handle.literals.value)
        functions = _TableUnpickler(io.BytesIO(handle.steps.value), table).load()
        state = _WORKER_STATE[handle.version] = (table, functions)
    return state


def _register(table: LiteralTable, pdf: "pd.DataFrame", texts: Sequence[tuple[str, str]]) -> None:
    for value_col, text_col in texts:
        for tid, text in zip(pdf[value_col].tolist(), pdf[text_col].tolist()):
            if isinstance(text, str):
                table.register(tid, text)


def _filter_batches(handle: _Handle, key: _Key, inputs: Sequence[str],
                    texts: Sequence[tuple[str, str]]) -> Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]]:
    def run(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        table, functions = _worker_builtins(handle)
        test = functions[key]
        for pdf in batches:
            _register(table, pdf, texts)
            rows = zip(*(pdf[c].tolist() for c in inputs)) if inputs else [()] * len(pdf)
            yield pdf[np.fromiter((bool(test(*row)) for row in rows), dtype=bool, count=len(pdf))]

    return run


def _assign_batches(handle: _Handle, key: _Key, inputs: Sequence[str], texts: Sequence[tuple[str, str]],
                    value_col: str, text_col: str) -> Callable[[Iterator["pd.DataFrame"]], Iterator["pd.DataFrame"]]:
    def run(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        table, functions = _worker_builtins(handle)
        compute = functions[key]
        for pdf in batches:
            _register(table, pdf, texts)
            rows = zip(*(pdf[c].tolist() for c in inputs)) if inputs else [()] * len(pdf)
            ids = [compute(*row) for row in rows]
            out = pdf[np.fromiter((i is not None for i in ids), dtype=bool, count=len(pdf))].copy()
            kept = [i for i in ids if i is not None]
            out[value_col] = np.array(kept, dtype=np.int64)
            out[text_col] = [table.text(i) if i < 0 else None for i in kept]
            yield out

    return run


class _Builtins:
    """The program's compiled filters and assignments, shipped to executors.

    The closures are pickled once (cloudpickle) with the TermDictionary left out; executors
    bind them to a :class:`LiteralTable` built from a broadcast of the dictionary's literals,
    re-broadcast only when the driver's dictionary has grown (an assignment made a literal).
    """

    def __init__(self, spark: SparkSession, program: Program, dictionary: TermDictionary) -> None:
        self._context = spark.sparkContext
        self._dictionary = dictionary
        functions = {(rule.index, k): (step.test if isinstance(step, Filter) else step.compute)
                     for rule in program.rules for k, step in enumerate(rule.body)
                     if isinstance(step, (Filter, Assign))}
        buffer = io.BytesIO()
        _DictionaryPickler(buffer, dictionary).dump(functions)
        self._payload = buffer.getvalue()
        self._steps: Broadcast[bytes] | None = None
        self._handle: _Handle | None = None
        self._size = -1

    def handle(self) -> _Handle:
        if self._handle is None or self._size != len(self._dictionary):
            if self._steps is None:
                self._steps = self._context.broadcast(self._payload)
            if self._handle is not None:
                self._handle.literals.destroy()  # every frame that used it is checkpointed
            self._size = len(self._dictionary)
            literals = self._context.broadcast(literal_payload(self._dictionary))
            self._handle = _Handle(uuid.uuid4().hex, self._steps, literals)
        return self._handle


# -- evaluation --------------------------------------------------------------------------


def _v(var: Var) -> str:
    return "v_" + var


def _t(var: Var) -> str:
    return "t_" + var


def _unifies(head: Pattern, atom: Pattern) -> bool:
    return head.relation == atom.relation and all(
        isinstance(a, Var) or isinstance(b, Var) or a == b for a, b in zip(head.args, atom.args))


def evaluation_groups(program: Program) -> list[tuple[list[int], str]]:
    """Strata evaluated together, in order, with the layer their facts go to.

    >>> from chronolog.datalog import load_program
    >>> text = '''PREFIX : <http://e/>
    ... :q(?x) :- :p(?x).
    ... :r(?x) :- :p(?x), not :q(?x).
    ... :s(?x) :- :r(?x).
    ... :t(?x) :- :p(?x), not :s(?x).'''
    >>> evaluation_groups(load_program([(text, None)], TermDictionary()))
    [([0], 'lower'), ([1, 2], 'upper'), ([3], 'upper')]
    """
    monotone = [s for s in range(len(program.strata)) if s not in program.nonmonotone]
    groups: list[tuple[list[int], str]] = [(monotone, LOWER)] if monotone else []
    heads: list[Pattern] = []
    for s in sorted(program.nonmonotone):
        rules = program.strata[s]
        negated = [atom for rule in rules for atom in rule.negatives]
        stratum_heads = [rule.head for rule in rules]
        if not groups or groups[-1][1] == LOWER or any(
                _unifies(h, atom) for h in heads + stratum_heads for atom in negated):
            groups.append(([s], UPPER))
            heads = []
        else:
            groups[-1][0].append(s)
        heads.extend(stratum_heads)
    return groups


class _Evaluation:
    def __init__(self, spark: SparkSession, program: Program, dictionary: TermDictionary,
                 on_round: Callable[[RoundReport], None] | None) -> None:
        self.spark = spark
        self.program = program
        self.dictionary = dictionary
        self.on_round = on_round
        self.rdf_type = dictionary.iri(RDF + "type")
        self.schemas = {name: StructType([StructField(c, LongType(), False) for c in columns(name, arity)])
                        for name, arity in program.arities.items()}
        self.chunks: dict[str, dict[str, list[DataFrame]]] = {
            LOWER: {name: [] for name in program.arities}, UPPER: {name: [] for name in program.arities}}
        self.known = _Stats()
        self.builtins = _Builtins(spark, program, dictionary) if any(
            isinstance(step, (Filter, Assign)) for rule in program.rules for step in rule.body) else None
        self.full: dict[str, DataFrame] = {}
        self.empties: dict[str, DataFrame] = {}
        self.delta_stats = _Stats()
        self.encoding = threading.Lock()

    # facts ---------------------------------------------------------------------------

    def empty(self, name: str) -> DataFrame:
        frame = self.empties.get(name)
        if frame is None:
            frame = self.empties[name] = self.spark.createDataFrame([], self.schemas[name])
        return frame

    def snapshot(self) -> dict[str, DataFrame]:
        """Every relation as one DataFrame over its chunks (taken before a round changes them)."""
        out = {}
        for name in self.program.arities:
            parts = self.chunks[LOWER][name] + self.chunks[UPPER][name]
            out[name] = reduce(lambda a, b: a.union(b), parts) if parts else self.empty(name)
        return out

    def stats(self, name: str, frame: DataFrame) -> _Stats:
        """Counts of a checkpointed frame: one small aggregation job."""
        stats = _Stats()
        if name != TRIPLE:
            stats.sizes[name] = frame.count()
            return stats
        cls = F.when(F.col("p") == F.lit(self.rdf_type), F.col("o")).alias("c")
        for row in frame.groupBy("p", cls).count().collect():
            stats.sizes[TRIPLE] += row["count"]
            stats.preds[row["p"]] += row["count"]
            if row["c"] is not None:
                stats.classes[row["c"]] += row["count"]
        return stats

    def add(self, layer: str, name: str, frame: DataFrame, stats: _Stats) -> None:
        chunks = self.chunks[layer][name]
        chunks.append(frame)
        if len(chunks) > _COMPACT_AFTER:
            merged = reduce(lambda a, b: a.union(b), chunks).coalesce(self.spark.sparkContext.defaultParallelism)
            chunks[:] = [merged.localCheckpoint()]
        self.known.add(stats)

    # plans ---------------------------------------------------------------------------

    def atom_frame(self, source: DataFrame, atom: Pattern) -> DataFrame:
        """The bindings of ``atom``'s variables (columns ``v_<var>``) over ``source``'s facts.

        Built from SQL expression strings: one JVM call each, where Column objects cost one
        per operator (plans are rebuilt every round, so this is the driver's hot path).
        """
        first: dict[Var, str] = {}
        conditions = []
        for col, arg in zip(columns(atom.relation, len(atom.args)), atom.args):
            if not isinstance(arg, Var):
                conditions.append(f"{col} = {arg}")
            elif arg in first:
                conditions.append(f"{col} = {first[arg]}")
            else:
                first[arg] = col
        if conditions:
            source = source.where(" AND ".join(conditions))
        return source.selectExpr(*[f"{col} AS {_v(var)}" for var, col in first.items()])

    def estimate(self, atom: Pattern, mask: tuple[int, ...]) -> float:
        facts = self.known.matching(atom, self.rdf_type)
        if not facts:
            return 0.0
        if len(mask) == len(atom.args):
            return 1.0
        bound_vars = sum(1 for i in mask if isinstance(atom.args[i], Var))
        return facts / 100.0 ** bound_vars

    def plan(self, rule: Rule, first: int | None, delta: dict[str, DataFrame]) -> tuple[DataFrame, set[Var]]:
        """The rule's head facts as a DataFrame, with ``body[first]`` read from ``delta``;
        and the head variables bound by assignments (their ``t_`` text columns are kept)."""
        steps = order(rule.body, self.estimate, first=first)
        binding: DataFrame | None = None
        rows = 0  # a rough size of ``binding``, for the broadcast choice
        bound: list[Var] = []
        assigned: set[Var] = set()
        for n, step in enumerate(steps):
            if binding is None and not (isinstance(step, Pattern) and not step.negated):
                binding = self.spark.range(1).select()  # one empty solution
            if isinstance(step, Pattern):
                source = delta[step.relation] if n == 0 and first is not None else self.full[step.relation]
                frame = self.atom_frame(source, step)
                shared = [_v(v) for v in bound if v in step.vars]
                if step.negated:
                    if not shared:
                        frame = frame.selectExpr("1 AS _any")
                        binding = binding.selectExpr("*", "1 AS _any").join(frame, "_any", "left_anti").drop("_any")
                    else:
                        binding = binding.join(frame, shared, "left_anti")
                elif binding is None:
                    binding = frame
                    rows = (self.delta_stats if n == 0 and first is not None else self.known).matching(step, self.rdf_type)
                    bound.extend(v for v in dict.fromkeys(a for a in step.args if isinstance(a, Var)))
                else:
                    facts = self.known.matching(step, self.rdf_type)
                    if facts <= BROADCAST_MAX_ROWS and rows >= BROADCAST_MIN_OTHER:
                        frame = F.broadcast(frame)
                    rows = max(rows, facts)
                    binding = binding.join(frame, shared, "inner") if shared else binding.crossJoin(frame)
                    bound.extend(v for v in dict.fromkeys(a for a in step.args if isinstance(a, Var)) if v not in bound)
            else:
                binding = self.builtin(binding, rule, step, assigned)
                if isinstance(step, Assign):
                    bound.append(step.var)
                    assigned.add(step.var)
        assert binding is not None
        head_vars = {a for a in rule.head.args if isinstance(a, Var)} & assigned
        names = columns(rule.head.relation, len(rule.head.args))
        outputs = [f"{_v(arg) if isinstance(arg, Var) else f'CAST({arg} AS BIGINT)'} AS {col}"
                   for col, arg in zip(names, rule.head.args)]
        if head_vars:
            outputs += [f"{_t(arg) if isinstance(arg, Var) and arg in assigned else 'CAST(NULL AS STRING)'} AS t_{col}"
                        for col, arg in zip(names, rule.head.args)]
        return binding.selectExpr(*outputs), head_vars

    def builtin(self, binding: DataFrame, rule: Rule, step: Step, assigned: set[Var]) -> DataFrame:
        assert self.builtins is not None and isinstance(step, (Filter, Assign))
        handle = self.builtins.handle()
        key = (rule.index, next(k for k, s in enumerate(rule.body) if s is step))  # equal filters differ
        inputs = [_v(v) for v in step.vars]
        texts = [(_v(v), _t(v)) for v in dict.fromkeys(step.vars) if v in assigned]
        if isinstance(step, Filter):
            return binding.mapInPandas(_filter_batches(handle, key, inputs, texts), binding.schema)
        schema = StructType(binding.schema.fields + [StructField(_v(step.var), LongType(), False),
                                                     StructField(_t(step.var), StringType(), True)])
        return binding.mapInPandas(_assign_batches(handle, key, inputs, texts, _v(step.var), _t(step.var)), schema)

    # rounds --------------------------------------------------------------------------

    def tasks(self, rules: list[Rule], delta: dict[str, _Stats] | None) -> list[tuple[Rule, int | None]]:
        """(rule, delta atom) pairs that can derive something this round."""
        out: list[tuple[Rule, int | None]] = []
        known = self.known
        for rule in rules:
            positives = rule.positives
            if any(not known.matching(rule.body[i], self.rdf_type) for i in positives):  # type: ignore[arg-type]
                continue
            if delta is None:
                out.append((rule, None))
                continue
            for i in positives:
                atom = rule.body[i]
                stats = delta.get(atom.relation)  # type: ignore[union-attr]
                if stats is not None and stats.matching(atom, self.rdf_type):  # type: ignore[arg-type]
                    out.append((rule, i))
        return out

    def new_facts(self, name: str, derived: DataFrame, texts: bool) -> tuple[DataFrame, _Stats]:
        """Derived minus known, distinct, checkpointed; with assignment-made terms encoded."""
        cols = list(columns(name, self.program.arities[name]))
        if texts:
            derived = self.encode_new_terms(derived.localCheckpoint(), cols)
        new = derived.distinct().join(self.full[name], cols, "left_anti").localCheckpoint()
        return new, self.stats(name, new)

    def encode_new_terms(self, derived: DataFrame, cols: list[str]) -> DataFrame:
        """Replace the executors' provisional (negative) ids by the driver's ids."""
        pairs = reduce(lambda a, b: a.union(b), [
            derived.where(F.col(c) < 0).select(F.col(c).alias("id"), F.col("t_" + c).alias("text")) for c in cols])
        found = pairs.distinct().collect()
        derived = derived.select(*cols)
        if not found:
            return derived
        terms = parse_terms([row["text"] for row in found])
        with self.encoding:  # relations are checkpointed from several threads
            mapping = [(row["id"], self.dictionary.encode(term)) for row, term in zip(found, terms)]
        ids = self.spark.createDataFrame(arrow_facts(mapping, ("from", "to")))
        for c in cols:
            renamed = F.broadcast(ids.toDF("_from", "_to"))
            derived = (derived.join(renamed, derived[c] == renamed["_from"], "left")
                       .withColumn(c, F.coalesce(F.col("_to"), F.col(c))).drop("_from", "_to"))
        return derived.localCheckpoint()

    def load(self, triples: DataFrame) -> None:
        """The input triples and the program's facts, distinct, as the first chunks."""
        facts: dict[str, list[tuple[int, ...]]] = {}
        for name, fact in self.program.facts:
            facts.setdefault(name, []).append(fact)
        for name, arity in self.program.arities.items():
            parts = [self.spark.createDataFrame(arrow_facts(facts[name], columns(name, arity)))] if name in facts else []
            if name == TRIPLE:
                parts.append(triples.selectExpr(*[f"CAST({c} AS BIGINT) AS {c}" for c in columns(TRIPLE, 3)]))
            if parts:
                frame = reduce(lambda a, b: a.union(b), parts).distinct().localCheckpoint()
                self.add(LOWER, name, frame, self.stats(name, frame))

    def round(self, rules: list[Rule], delta: dict[str, tuple[DataFrame, _Stats]] | None,
              pool: ThreadPoolExecutor) -> tuple[int, dict[str, tuple[DataFrame, _Stats]]]:
        """One semi-naive round: how many rule plans ran, and the new facts per relation.

        The relations' jobs are submitted from threads: a round's cost on small data is
        Spark's per-job latency, which concurrent jobs overlap.
        """
        self.full = self.snapshot()
        tasks = self.tasks(rules, None if delta is None else {k: v[1] for k, v in delta.items()})
        frames = {} if delta is None else {k: v[0] for k, v in delta.items()}
        self.delta_stats = _Stats()
        for _, stats in (delta or {}).values():
            self.delta_stats.add(stats)
        derived: dict[str, list[tuple[DataFrame, bool]]] = {}
        for rule, first in tasks:
            frame, texts = self.plan(rule, first, frames)
            derived.setdefault(rule.head.relation, []).append((frame, bool(texts)))

        def new_facts(name: str) -> tuple[DataFrame, _Stats]:
            parts = derived[name]
            texts = any(t for _, t in parts)
            union = reduce(lambda a, b: a.union(b), [self.with_texts(f, name) if texts and not t else f for f, t in parts])
            return self.new_facts(name, union, texts)

        found = dict(zip(derived, pool.map(new_facts, derived)))
        return len(tasks), {name: result for name, result in found.items() if result[1].total()}

    def run(self, triples: DataFrame) -> Closure:
        self.load(triples)
        groups = evaluation_groups(self.program)
        total_rounds = 0
        with ThreadPoolExecutor(max_workers=4) as pool:
            for g, (strata, layer) in enumerate(groups, 1):
                rules = [rule for s in strata for rule in self.program.strata[s]]
                delta: dict[str, tuple[DataFrame, _Stats]] | None = None
                r = 0
                while True:
                    start = time.monotonic()
                    ran, found = self.round(rules, delta, pool)
                    if not ran:
                        break
                    for name, (new, stats) in found.items():
                        self.add(layer, name, new, stats)
                    r += 1
                    total_rounds += 1
                    if self.on_round is not None:
                        self.on_round(RoundReport(g, len(groups), (strata[0], strata[-1]), r, total_rounds, ran,
                                                  sum(s.total() for _, s in found.values()), time.monotonic() - start))
                    if not found:
                        break
                    delta = found
        return self.result(total_rounds)

    def with_texts(self, frame: DataFrame, name: str) -> DataFrame:
        """``frame`` with the (empty) text columns the relation's assignment plans carry."""
        cols = columns(name, self.program.arities[name])
        return frame.selectExpr(*cols, *[f"CAST(NULL AS STRING) AS t_{c}" for c in cols])

    def result(self, rounds: int) -> Closure:
        layers = {}
        for layer in (LOWER, UPPER):
            merged = {}
            for name, chunks in self.chunks[layer].items():
                if len(chunks) > 1:
                    merged[name] = reduce(lambda a, b: a.union(b), chunks).localCheckpoint()
                else:
                    merged[name] = chunks[0] if chunks else self.empty(name)
            layers[layer] = merged
        return Closure(self.dictionary, self.program, layers[LOWER], layers[UPPER],
                       dict(self.known.sizes), rounds)
