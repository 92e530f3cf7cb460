"""Golden files (DESIGN.md section 7): one loader for ``tests/fixtures/<lang>/<case>/``,
and the canonical form outputs are compared in.

A case folder holds one program (any registered extension), its input (``stream.*``, or
the files ``options.json`` names under ``"streams"``: stream IRI -> file), optionally
``options.json`` (``"background"``, ``"rules"``: files of the folder; ``"time_unit"``;
``"maintenance"``; ``"policy"``) and
the expected output ``expected.trig`` or ``expected.jsonl``. Adding a language's fixtures
puts it under every test that iterates :func:`cases` (in-process and Spark runs).

Outputs compare up to the renaming of fresh IRIs and blank nodes (golden files written
before DOTR named firings by their place in the stream hold other names), graphs as sets
of triples, atoms and solutions as sets per line; ``rename=False`` compares them exactly,
names included (two runners of one program name every firing alike).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph
from pyoxigraph import DefaultGraph, RdfFormat

from chronolog import cli
from chronolog.lang.registry import languages, load_spec
from chronolog.program import ProgramSpec

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PREFIXES = {
    "http://www.insight-centre.org/dataset/SampleEventService#": "ces:",
    "http://example.org/citybench#": "cb:",
    "http://example.org/": "ex:",
    "http://www.w3.org/2001/XMLSchema#": "xsd:",
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf:",
}
_IRI = re.compile(r"<(" + "|".join(re.escape(ns) for ns in PREFIXES) + r")([^>]*)>")
_FRESH = re.compile(r"<urn:chronolog:([^:>]+):(?:-?[0-9]+-[0-9]+-[0-9]+|[0-9A-Za-z]+)(-[^>]*)?>")
_BLANK = re.compile(r"_:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?")  # a whole label, dots and dashes inside


def canonical(trig: bytes, rename: bool = True) -> list[str]:
    """Sorted lines ``time<TAB>graph`` of a TriG output stream, fresh names renamed unless
    ``rename`` is False; a graph is its triples sorted, grouped by subject (``s p o ; p o . s2 p o``)."""
    times: dict[str, int] = {}
    graphs: dict[str, list[tuple[str, str]]] = {}
    for quad in pyoxigraph.parse(trig, RdfFormat.TRIG):
        if quad.graph_name == DefaultGraph():
            times[quad.subject.value] = int(quad.object.value)
            continue
        terms = []
        for term in (quad.subject, quad.predicate, quad.object):
            text = str(term)
            if rename:
                text = _BLANK.sub("_:b", _FRESH.sub(lambda m: f"<urn:chronolog:{m.group(1)}:*{m.group(2) or ''}>", text))
            terms.append(_IRI.sub(lambda m: PREFIXES[m.group(1)] + m.group(2), text))
        graphs.setdefault(quad.graph_name.value, []).append((terms[0], f"{terms[1]} {terms[2]}"))
    lines = []
    for g, triples in graphs.items():
        by_subject: dict[str, list[str]] = {}
        for subject, rest in sorted(triples):
            by_subject.setdefault(subject, []).append(rest)
        lines.append(f"{times[g]}\t" + " . ".join(f"{s} " + " ; ".join(r) for s, r in by_subject.items()))
    return sorted(lines)




def _graph_line(time: int, ntriples: str, rename: bool) -> str:
    """A JSON Lines graph in the form :func:`canonical` gives a TriG one."""
    trig = f"<urn:g> <http://www.w3.org/ns/prov#generatedAtTime> {time} .\n<urn:g> {{ {ntriples} }}\n"
    return canonical(trig.encode("utf-8"), rename)[0] if ntriples.strip() else f"{time}\t"


def canonical_output(path: Path, rename: bool = True) -> list[str]:
    """The sorted canonical lines of an output file of any kind (``rename``: as for :func:`canonical`)."""
    if path.suffix == ".trig":
        return canonical(path.read_bytes(), rename)
    lines = []
    for record in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        if "graph" in record:
            lines.append(_graph_line(record["time"], record["graph"], rename))
        elif "atoms" in record:
            lines.append(f"{record['time']}\t" + " ".join(sorted(record["atoms"])))
        else:
            solutions = sorted(json.dumps(s, sort_keys=True) for s in record["solutions"])
            lines.append(f"{record['time']}\t" + " ".join(solutions))
    return sorted(lines)


@dataclass(frozen=True)
class Case:
    """One golden case: how to run it and what it must output."""

    lang: str
    name: str
    folder: Path
    program: Path
    streams: dict[str, Path]  # "" for the unnamed stream
    options: tuple[str, ...]  # command-line options besides --stream and the runner
    expected: Path

    @property
    def id(self) -> str:
        return f"{self.lang}/{self.name}"

    def spec(self) -> ProgramSpec:
        """The compiled program's spec, read from the case's arguments as ``chronolog run`` reads them."""
        args = cli.build_parser().parse_args(self.arguments(Path("out")))
        return load_spec(args.program, args.lang, cli._options(args))

    def arguments(self, output: Path) -> list[str]:
        """``chronolog run`` arguments (the runner is the caller's)."""
        streams = [f"{name}={path}" if name else str(path) for name, path in self.streams.items()]
        return ["run", str(self.program), *(a for s in streams for a in ("--stream", s)), *self.options,
                "-o", str(output)]


def cases() -> list[Case]:
    """Every case under tests/fixtures/<lang>/ for a registered language."""
    found = []
    for lang in sorted(languages()):
        extensions = languages()[lang].extensions
        for folder in sorted(p for p in (FIXTURES / lang).glob("*") if p.is_dir()):
            options = json.loads((folder / "options.json").read_text()) if (folder / "options.json").exists() else {}
            (program,) = [p for p in folder.iterdir() if p.suffix in extensions]
            named = options.get("streams")
            streams = ({name: folder / file for name, file in named.items()} if named
                       else {"": next(p for p in folder.glob("stream.*"))})
            args: list[str] = []
            for path in options.get("background", []):
                args += ["--background", str(folder / path)]
            for path in options.get("rules", []):  # a file of the folder, or a built-in rule set
                args += ["--rules", str(folder / path) if (folder / path).exists() else path]
            if "time_unit" in options:
                args += ["--time-unit", options["time_unit"]]
            if "maintenance" in options:
                args += ["--maintenance", options["maintenance"]]
            if "policy" in options:
                args += ["--policy", options["policy"]]
            (expected,) = folder.glob("expected.*")
            found.append(Case(lang, folder.name, folder, program, streams, tuple(args), expected))
    return found
