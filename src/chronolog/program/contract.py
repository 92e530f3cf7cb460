"""The program contract (DESIGN.md section 2): what every compiled program offers the
in-process host (:class:`chronolog.engine.Engine`) and the Spark runner, so that a new
language touches neither of them.

A program is driven one time point at a time: ``push(time, inputs)`` gives it, per named
stream, the elements of that time point (``""`` names the unnamed stream of a program
that reads one), and returns its outputs in time order; ``flush()`` ends the stream.
``snapshot()`` and ``restore()`` move its whole state as bytes that do not depend on how
its dictionary numbered the terms (terms as text), so state taken in one process can be
restored in another.

For Spark a program also says how its work splits (:class:`Plan`): a stateless stage
that may run ahead in parallel per time point (``prepare``), whose records go, by key,
to keyed state (``process``); a key's state is bytes in Spark's state store between
micro-batches. :class:`GlobalPlan` is the split of a program that does not offer one:
nothing ahead, the whole program under one key.
"""
from __future__ import annotations

from itertools import chain
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Iterable, Mapping, NamedTuple, Sequence

from chronolog.datalog.program import Program as Rules
from chronolog.errors import ChronologError
from chronolog.formats import encode_text, graph_text
from chronolog.program.outputs import Output
from chronolog.terms import TermDictionary

RDF, ATOMS_IN = "rdf", "atoms"
UNNAMED = ""  # the stream of a program that reads one stream, given without a name

Element = tuple  # an element's content: encoded triples (RDF) or atom texts (LARS)
Inputs = Mapping[str, Sequence[Element]]  # stream name -> the elements of one time point


@dataclass(frozen=True)
class Options:
    """Run options that shape a compiled program (DESIGN.md section 3); a language takes
    those that apply to it and refuses the others (``Language.options``)."""

    background: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    time_unit: str = "ms"
    policy: str | None = None
    maintenance: str | None = None
    max_derived: int = 1_000_000  # facts that rules computing new terms may derive per saturation
    provenance: bool = False  # outputs say why they hold (chronolog.program.outputs.explanation)


@dataclass(frozen=True)
class ProgramSpec:
    """Everything needed to compile a program again in another process: picklable and
    hashable, so a Spark worker compiles each spec once."""

    language: str
    text: str
    filename: str | None = None
    options: Options = field(default_factory=Options)


@dataclass
class ProgramWarning:
    """A problem found while compiling that does not stop the program (``chronolog check``)."""

    filename: str | None
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.filename or '<program>'}:{self.line}:{self.column}: warning: {self.message}"


def rule_warnings(rules: Rules) -> list[ProgramWarning]:
    """The warnings about a program's Datalog rules (rules that may derive without end),
    each at its place in its rule file."""
    return [ProgramWarning(place.filename, place.line, place.column, message) for place, message in rules.warnings()]


class Record(NamedTuple):
    """What the stateless stage hands to keyed state: plain data the program made
    (builtins and decimals: records cross processes as a pickle that loads without running
    code, :mod:`chronolog.plain`), with the time point it belongs to and its order within it."""

    key: str
    time: int
    seq: int
    payload: object


class Prepared(NamedTuple):
    """The stateless stage's result for one time point."""

    records: list[Record]
    outputs: list[Output]  # outputs that need no state (they skip the keyed stage)


class Processed(NamedTuple):
    """A key's new state (None: nothing to keep), its outputs, and until when the state
    may still matter (None: for as long as the stream runs)."""

    state: bytes | None
    outputs: list[Output]
    expires: int | None


class Program(ABC):
    """A compiled program of some language (see the module docstring)."""

    output_kind: str  # chronolog.program.outputs: GRAPHS, SOLUTIONS or ATOMS
    input_kind: str = RDF  # RDF (encoded triples) or ATOMS_IN (atom texts)
    spec: ProgramSpec  # what it was compiled from
    dictionary: TermDictionary
    warnings: list[ProgramWarning]

    @property
    def streams(self) -> tuple[str, ...]:
        """The names of the streams the program reads; () for one unnamed stream."""
        return ()

    @abstractmethod
    def push(self, time: int, inputs: Inputs) -> list[Output]:
        """Process one time point (later than every time pushed before); outputs in time order."""

    def flush(self) -> list[Output]:
        """The end of the stream: what is still pending (windows to close, feedback)."""
        return []

    @abstractmethod
    def snapshot(self) -> bytes:
        """The whole state, independent of term numbering."""

    @abstractmethod
    def restore(self, data: bytes) -> None:
        """Replace the state with a snapshot of a program compiled from the same spec."""

    def describe(self) -> list[str]:
        """Lines for ``chronolog check`` after the ok line (groups, keys, feedback)."""
        return []

    def live_terms(self) -> Iterable[int] | None:
        """The ids of recent terms (:meth:`TermDictionary.reclaim`) that the program's state
        still refers to between time points: stored events, pending input. None (the
        default) when the program cannot tell: its host then reclaims through the snapshot,
        which names terms by their text (see ``reclaim_terms``)."""
        return None

    def term_text(self, tid: int | None) -> str:
        """A term id's N-Triples text ("" for None), cached by the dictionary: the wire and
        snapshot form of terms, and the key of a canonical order that does not depend on
        how terms happened to be numbered."""
        return "" if tid is None else self.dictionary.text(tid)

    def plan(self) -> "Plan":
        """How the program's work splits on Spark."""
        return GlobalPlan(self)

    def report(self) -> str | None:
        """Per-phase counters for ``--stats``, when the program keeps them."""
        return None

    def phases(self) -> Mapping[str, float] | None:
        """The seconds spent so far in each phase of processing (reasoning, queries,
        patterns, output), when the program keeps them: the live view's latency per phase."""
        return None

    def held(self) -> dict[str, int]:
        """How much state the program holds now, by what it is (stored events, window
        items, ...): the live view's state chart. Cheap enough to ask once a second."""
        return {}


class Plan(ABC):
    """The Spark split of a program (see the module docstring)."""

    @abstractmethod
    def prepare(self, time: int, inputs: Inputs) -> Prepared:
        """The stateless, parallel work of one time point."""

    @abstractmethod
    def process(self, key: str, state: bytes | None, records: Sequence[Record]) -> Processed:
        """Apply one key's records of a micro-batch (sorted by time, then seq) to its state."""

    def keyed_spec(self, spec: ProgramSpec) -> ProgramSpec:
        """The spec the keyed stage's processes compile (the same one, unless the stateless
        stage needs something the keyed one does not)."""
        return spec

    def end_keys(self) -> list[str]:
        """The keys whose state must hear that the stream has ended (``finish``)."""
        return []

    def finish(self, key: str, state: bytes | None) -> list[Output]:
        """The end of the stream for one of ``end_keys``: what its state still holds."""
        return []


GLOBAL_KEY = "*"


def element_text(element: Element, input_kind: str, dictionary: TermDictionary) -> object:
    """An element as plain data that any process can read back (:func:`element_from_text`):
    atom texts, or a graph as N-Triples."""
    if input_kind == ATOMS_IN:
        return tuple(element)
    return graph_text(element, dictionary)


def element_from_text(data: object, input_kind: str, dictionary: TermDictionary) -> Element:
    """The element :func:`element_text` wrote, in this process's dictionary."""
    if input_kind == ATOMS_IN:
        return tuple(data)  # type: ignore[arg-type]
    return tuple(encode_text(data, dictionary, format="nt"))  # type: ignore[arg-type]


class GlobalPlan(Plan):
    """One key holds the whole program: its state is the program's snapshot, and each
    time point's inputs are shipped to it as text."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.initial = program.snapshot()  # before any input: the state of a new key

    def prepare(self, time: int, inputs: Inputs) -> Prepared:
        kind, dictionary = self.program.input_kind, self.program.dictionary
        shipped = {name: [element_text(e, kind, dictionary) for e in elements] for name, elements in inputs.items()}
        return Prepared([Record(GLOBAL_KEY, time, 0, shipped)], [])

    def process(self, key: str, state: bytes | None, records: Sequence[Record]) -> Processed:
        program = self.program
        program.restore(self.initial if state is None else state)
        kind, dictionary = program.input_kind, program.dictionary
        outputs: list[Output] = []
        for record in records:
            inputs = {name: [element_from_text(e, kind, dictionary) for e in elements]
                      for name, elements in record.payload.items()}  # type: ignore[attr-defined]
            outputs.extend(program.push(record.time, inputs))
        return Processed(program.snapshot(), outputs, None)

    def end_keys(self) -> list[str]:
        return [GLOBAL_KEY]

    def finish(self, key: str, state: bytes | None) -> list[Output]:
        self.program.restore(self.initial if state is None else state)
        return self.program.flush()



def reclaim_terms(program: Program, unread: Iterable[int] = ()) -> None:
    """Between time points: forget the recent terms of the program's dictionary that
    neither its state nor ``unread`` (ids of input encoded but not pushed yet) refers to,
    once enough have piled up (``TermDictionary.reclaim_due``). Outputs already returned
    must have been decoded: their ids may be gone."""
    dictionary = program.dictionary
    if dictionary.reclaim_due:
        live = program.live_terms()
        if live is not None:
            dictionary.reclaim(chain(live, unread))
        else:  # the state as text, every recent term but the unread forgotten, the state back
            state = program.snapshot()
            dictionary.reclaim(unread)
            program.restore(state)


class UnknownStreamError(ChronologError):
    """Input for a stream the program does not read."""


def resolve_stream(program: Program, name: str) -> str:
    """The program's name for a stream given on the command line as ``name`` (``""``:
    unnamed): a program that reads one stream takes an unnamed source; a program that
    declares no streams takes every source as it is named; otherwise a clear error for a
    stream the program does not read."""
    declared = program.streams
    if not declared:
        return name
    if name == UNNAMED:
        if len(declared) == 1:
            return declared[0]
        raise UnknownStreamError(f"the program reads {len(declared)} streams ({', '.join(declared)}): "
                             "name each one, --stream NAME=SOURCE")
    if name not in declared:
        raise UnknownStreamError(f"the program reads no stream {name!r} (it reads {', '.join(declared)})")
    return name
