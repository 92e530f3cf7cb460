"""From files to reasoning: rule specifications, background files, the closure."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterable, Sequence

from chronolog.datalog.program import Program, load_program
from chronolog.datalog.reasoner import MAX_DERIVED, Reasoner
from chronolog.errors import ChronologError
from chronolog.formats import iter_encoded_triples
from chronolog.progress import Progress
from chronolog.rulesets import ruleset_source
from chronolog.store import Layers
from chronolog.terms import TermDictionary


def rule_sources(specs: Iterable[str]) -> list[tuple[str, str]]:
    """(text, filename) per rule spec: a built-in rule set name or a path to a .dl file."""
    out = []
    for spec in specs:
        path = Path(spec)
        if path.is_file():
            out.append((path.read_text(encoding="utf-8"), str(path)))
        elif spec.endswith(".dl"):
            raise ChronologError(f"--rules {spec}: no such file")
        else:
            out.append(ruleset_source(spec))
    return out


def load_rules(specs: Iterable[str], dictionary: TermDictionary) -> Program:
    """One program from built-in rule sets and rule files."""
    return load_program(rule_sources(specs), dictionary)


def reasoner_for(paths: Sequence[str], rules: Iterable[str], dictionary: TermDictionary,
                 progress: Progress | None = None, max_derived: int = MAX_DERIVED) -> Reasoner:
    """A reasoner with the background files loaded and closed.

    A path may be a closure folder written by ``materialize --runner spark --parquet``:
    alone, it is adopted as the closure (computed with the same rules) without reasoning
    again; with other files, its facts are loaded like theirs and everything is closed.
    """
    progress = progress or Progress(enabled=False)
    reasoner = Reasoner(load_rules(rules, dictionary), dictionary, max_derived)
    start = time.monotonic()
    closures = [path for path in paths if Path(path, "manifest.json").is_file()]
    if closures:
        from chronolog.datalog.parquet_closure import load_closure  # pyarrow: only for a closure folder

        loaded = [load_closure(path, dictionary) for path in closures]
        if len(paths) == 1:
            reasoner.adopt_closure(loaded[0].lower, loaded[0].upper)
            progress.done(f"closure {reasoner.background_view.size('triple'):,} triples loaded from {paths[0]} "
                          f"in {time.monotonic() - start:.1f} s")
            return reasoner
        for closure in loaded:
            reasoner.add_background(closure.view.scan("triple"))
    count = 0
    for path in paths:
        if path in closures:
            continue
        for triple in iter_encoded_triples(path, dictionary):
            reasoner.add_background((triple,))
            count += 1
            if not count & 0x3FFF:
                rate = count / max(1e-9, time.monotonic() - start)
                progress.update(f"loading {path}: {count:,} triples ({rate:,.0f}/s)")
    loaded = time.monotonic()
    progress.update(f"reasoning over {count:,} triples ...", force=True)
    reasoner.close()
    size = reasoner.background_view.size("triple")
    progress.done(f"{count:,} triples loaded in {loaded - start:.1f} s; closure {size:,} triples "
                  f"in {time.monotonic() - loaded:.1f} s")
    return reasoner


def materialize(paths: Sequence[str], rules: Iterable[str], dictionary: TermDictionary,
                progress: Progress | None = None) -> Layers:
    """The closure of the RDF files ``paths`` under ``rules`` (names or .dl paths), as a view."""
    return reasoner_for(paths, rules, dictionary, progress).background_view
