"""The in-process host of any program (DESIGN.md section 2): it compiles a program through
the language registry, reads its streams, hands it one time point at a time, and flushes
it at the end of the stream. It knows nothing of any language.

>>> engine = Engine('''
... PREFIX : <http://example.org/>
... EVENT Hot AS SELECT ?s ?v WHERE { ?s :temp ?v FILTER(?v > 40) }
... EVENT Smoke AS SELECT ?s WHERE { ?s :smoke true }
... RULE :alarm
...   DEFINE { ?a a :Alarm ; :sensor ?s . }
...   FROM Smoke AND LAST Hot WITHIN 5 s FROM Smoke
...   WHERE Hot.s = Smoke.s
...   WITH ?s = Smoke.s
... ''', lang="dotr")
>>> from pyoxigraph import NamedNode, Literal
>>> enc = engine.dictionary.encode
>>> s1, temp, smoke = (enc(NamedNode("http://example.org/" + n)) for n in ("s1", "temp", "smoke"))
>>> engine.push(1000, [(s1, temp, enc(Literal(45)))])
[]
>>> [(g.time, len(g.triples)) for g in engine.push(3000, [(s1, smoke, enc(Literal(True)))])]
[(3000, 2)]
"""
from __future__ import annotations

import heapq
import os
from time import perf_counter
from typing import Iterable, Iterator, Mapping, Sequence, Union

from chronolog.errors import ChronologError
from chronolog.lang.registry import compile_program, language_for, load_spec
from chronolog.lateness import ErrorPolicy, LatePolicy
from chronolog.monitor import RunMonitor
from chronolog.program import ATOMS_IN, UNNAMED, Inputs, Options, Output, Program, ProgramSpec
from chronolog.program.contract import reclaim_terms, resolve_stream
from chronolog.streams import StreamElement, check_stream_file
from chronolog.terms import TermDictionary
from chronolog.timeunits import unit_ms

Streams = Union[Iterable[StreamElement], Mapping[str, Iterable[StreamElement]]]


class Engine:
    """Runs one compiled program in this process.

    ``program`` is the program's text (its language from ``lang``, else from
    ``filename``'s extension, else DOTR), a :class:`ProgramSpec`, or a compiled
    :class:`Program`. The options are those of ``chronolog run``.
    """

    def __init__(self, program: str | ProgramSpec | Program, *, filename: str | None = None,
                 lang: str | None = None, background: Sequence[str] = (), rules: Sequence[str] = (),
                 time_unit: str = "ms", policy: str | None = None, maintenance: str | None = None,
                 dictionary: TermDictionary | None = None) -> None:
        if isinstance(program, Program):
            self.program = program
        else:
            if isinstance(program, str):
                name = lang or (language_for(filename).name if filename and os.path.splitext(filename)[1] else "dotr")
                options = Options(tuple(background), tuple(rules), time_unit, policy, maintenance)
                program = ProgramSpec(name, program, filename, options)
            self.program = compile_program(program, dictionary)
        self._ingest = 0.0  # seconds spent reading the elements of the time point under way (observed runs)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, lang: str | None = None, background: Sequence[str] = (),
                  rules: Sequence[str] = (), time_unit: str = "ms", policy: str | None = None,
                  maintenance: str | None = None) -> "Engine":
        options = Options(tuple(background), tuple(rules), time_unit, policy, maintenance)
        return cls(load_spec(str(path), lang, options))

    @property
    def dictionary(self) -> TermDictionary:
        return self.program.dictionary

    @property
    def warnings(self) -> list:
        return self.program.warnings

    @property
    def ms_per_unit(self):  # int, or a Decimal for microseconds
        return unit_ms(self.program.spec.options.time_unit)

    def push(self, time: int, inputs: Inputs | Iterable[tuple]) -> list[Output]:
        """Process one time point: ``inputs`` by stream name, or, for a program that reads
        one stream, the content of one element (its triples or atoms)."""
        if not isinstance(inputs, Mapping):
            inputs = {UNNAMED: [inputs if isinstance(inputs, (tuple, list)) else tuple(inputs)]}
        return self.program.push(time, inputs)

    def flush(self) -> list[Output]:
        """The end of the stream."""
        return self.program.flush()

    def read(self, source: str | os.PathLike[str], *, late: LatePolicy | None = None, lateness: int = 0,
             on_error: ErrorPolicy | None = None) -> Iterator[StreamElement]:
        """The elements of a stream file, read as the program's input kind, with the late
        and error policies of ``chronolog run`` (defaults: both stop the run)."""
        if self.program.input_kind == ATOMS_IN:
            from chronolog.atomstreams import read_atom_stream

            return read_atom_stream(source, late=late, lateness=lateness, on_error=on_error,
                                    ms_per_unit=self.ms_per_unit)
        from chronolog.streams import read_stream

        return read_stream(source, self.dictionary, late=late, lateness=lateness, on_error=on_error,
                           ms_per_unit=self.ms_per_unit)

    def run(self, streams: Streams, observer: RunMonitor | None = None) -> Iterator[Output]:
        """Outputs for whole streams: one (an iterable of elements) or several (by name),
        merged in time order and grouped into time points; then the flush.

        When reading fails (a malformed or late element), the time point read so far is
        still processed and its outputs yielded before the error propagates: nothing
        accepted before the bad element is lost.

        Between time points, the terms no longer referred to are reclaimed (a program that
        says which it still holds, ``Program.live_terms``): an output's term ids are
        valid until the next output of a later time point is asked for, so write or decode
        each output as it comes. ``observer`` hears of each time point pushed (the live view).
        """
        named = streams if isinstance(streams, Mapping) else {UNNAMED: streams}
        ahead: dict[int, StreamElement] = {}  # each stream's last element read: maybe not pushed yet
        tagged = [_tagged(n, resolve_stream(self.program, name), elements, ahead)
                  for n, (name, elements) in enumerate(named.items())]
        source = heapq.merge(*tagged, key=lambda item: (item[0], item[1])) if len(tagged) > 1 else tagged[0]
        current: int | None = None
        inputs: dict[str, list[tuple]] = {}
        if observer is not None:
            source = self._timed(source)
        while True:
            try:
                time, _, name, element = next(source)
            except StopIteration:
                break
            except (ChronologError, OSError, ValueError):
                if current is not None:
                    yield from self._push(current, inputs, observer)
                raise
            if current is not None and time != current:
                yield from self._push(current, inputs, observer)
                inputs = {}
                if self.program.input_kind != ATOMS_IN:
                    reclaim_terms(self.program, (tid for e in ahead.values() for triple in e.triples for tid in triple))
            current = time
            inputs.setdefault(name, []).append(element.triples)
        if current is not None:
            yield from self._push(current, inputs, observer)
        yield from self.program.flush()

    def _timed(self, source: Iterator[tuple]) -> Iterator[tuple]:
        """``source``, the seconds spent reading each element added to ``self._ingest``."""
        while True:
            start = perf_counter()
            try:
                item = next(source)
            except StopIteration:
                return
            finally:
                self._ingest += perf_counter() - start
            yield item

    def _push(self, time: int, inputs: dict[str, list[tuple]], observer: RunMonitor | None) -> list[Output]:
        """Push one time point; with an observer, tell it how long it took, by phase: reading
        its elements (``ingest``), then the program's own phases, or all of it in one."""
        if observer is None:
            return self.program.push(time, inputs)
        program = self.program
        before = program.phases()
        start = perf_counter()
        outputs = program.push(time, inputs)
        seconds = perf_counter() - start
        after = program.phases()
        phases = {"ingest": self._ingest}
        if before is None or after is None:
            phases["processing"] = seconds
        else:
            phases.update((name, after[name] - before.get(name, 0.0)) for name in after)
        self._ingest = 0.0
        observer.time_point(time, sum(map(len, inputs.values())), seconds, phases, self._held)
        return outputs

    def _held(self) -> dict[str, int]:
        """The state the program holds, and the terms its dictionary knows (a program over
        atoms holds them as text)."""
        held = self.program.held()
        if self.program.input_kind != ATOMS_IN:
            held["dictionary terms"] = len(self.program.dictionary)
        return held

    def run_files(self, sources: Mapping[str, str | os.PathLike[str]], *, late: LatePolicy | None = None,
                  lateness: int = 0, on_error: ErrorPolicy | None = None,
                  observer: RunMonitor | None = None) -> Iterator[Output]:
        """``run`` over stream files, by stream name (``""``: the unnamed stream)."""
        for source in sources.values():
            check_stream_file(source)
        return self.run({name: self.read(source, late=late, lateness=lateness, on_error=on_error)
                         for name, source in sources.items()}, observer)


def _tagged(n: int, name: str, elements: Iterable[StreamElement],
            ahead: dict[int, StreamElement]) -> Iterator[tuple[int, int, str, StreamElement]]:
    """A stream's elements as (time, stream order, stream name, element), for the merge;
    ``ahead[n]`` is the last one read (the merge may hold it, unpushed)."""
    for element in elements:
        ahead[n] = element
        yield element.time, n, name, element
