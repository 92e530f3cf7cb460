"""Provenance records as JSON Lines (docs/formats.md, "Provenance"): one line per output,
named like the output's element (``urn:chronolog:element:TIME:N``), and their text form
for ``chronolog explain``.
"""
from __future__ import annotations

import json
import os
from typing import IO, Iterable, Iterator

from chronolog.errors import ChronologError
from chronolog.streams import element_iri


class ProvenanceWriter:
    """Writes the record of each output, in output order, flushed line by line, to a path
    (opened and closed here) or a binary file (flushed only)."""

    def __init__(self, target: str | os.PathLike | IO[bytes]) -> None:
        self._owned = isinstance(target, (str, os.PathLike))
        self._out: IO[bytes] = open(target, "wb") if self._owned else target  # type: ignore[arg-type]
        self._time: int | None = None
        self._n = 0
        self.count = 0

    def write(self, time: int, record: dict | None) -> None:
        """The record of the next output (at ``time``); None when the output has none."""
        self._n = self._n + 1 if time == self._time else 0
        self._time = time
        if record is None:
            return
        line = json.dumps({"element": element_iri(time, self._n), **record}, ensure_ascii=False) + "\n"
        self._out.write(line.encode("utf-8"))
        self._out.flush()
        self.count += 1

    def close(self) -> None:
        if self._owned:
            self._out.close()


def read_records(path: str) -> Iterator[dict]:
    """The records of a provenance file; a line that is not one stops with FILE:LINE:COL."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ChronologError(f"{path}:{number}:{exc.colno}: not a provenance record: {exc.msg}: "
                                     f"{line.strip()[:80]}") from None
            if not isinstance(record, dict) or "element" not in record or not (
                    "events" in record or "solutions" in record or "atoms" in record):
                raise ChronologError(f"{path}:{number}:1: not a provenance record (no element, events or "
                                     f"solutions): {line.strip()[:80]}")
            yield record


def selected(records: Iterable[dict], which: Iterable[str]) -> Iterator[dict]:
    """The records an ``explain`` selector names: an element IRI, a firing (``12-0-1``,
    or the rule's fresh IRI ending in it) or a time; all of them when none is given."""
    wanted = [w.strip("<>") for w in which]
    for record in records:
        if not wanted or any(_names(record, w) for w in wanted):
            yield record


def _names(record: dict, wanted: str) -> bool:
    if wanted in (record["element"], record.get("firing")) or wanted == str(record.get("time")):
        return True
    firing = record.get("firing")
    return bool(firing) and wanted.endswith(":" + firing) and wanted.startswith("urn:chronolog:")


def explain_text(record: dict) -> str:
    """A record as an indented derivation tree."""
    if "atoms" in record:  # a LARS output: every atom it holds
        lines = [f"{record['element']} at {record['time']}: the atoms that hold ({record['at']})"]
        for fact in record["atoms"]:
            _fact(fact, 1, lines)
        return "\n".join(lines)
    if "solutions" in record:  # a window query's output
        lines = [f"{record['element']} at {record['time']}: query {record['query']} ({record['at']})"]
        if "note" in record:
            lines.append(f"  {record['note']}")
        for solution in record["solutions"]:
            bindings = " ".join(f"?{k}={v}" for k, v in solution["bindings"].items())
            interval = f" over [{solution['start']}, {solution['end']}]" if "start" in solution else ""
            lines.append(f"  solution{interval} {bindings}".rstrip())
            for fact in solution["facts"]:
                _fact(fact, 2, lines)
        return "\n".join(lines)
    lines = [f"{record['element']} at {record['time']}: rule <{record['rule']}> ({record['at']}), "
             f"firing {record['firing']}"]
    lines.extend("    " + line for line in record.get("graph", "").splitlines())
    _composite(record, 1, lines)
    return "\n".join(lines)


def _composite(record: dict, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    for event in record["events"]:
        _event(event, depth, lines)
    for aggregate in record.get("aggregates", ()):
        events = aggregate["events"]
        lines.append(f"{pad}{aggregate['name']} over {len(events)} event{'s' if len(events) != 1 else ''}:")
        for event in events:
            _event(event, depth + 1, lines)
    for alias in record.get("absent", ()):
        lines.append(f"{pad}no {alias} event in its scope")


def _event(event: dict, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    alias = f"{event['alias']}: " if event.get("alias") not in (None, event["type"]) else ""
    if "same_as" in event:
        lines.append(f"{pad}{event['type']} at {event['time']} (the {event['same_as']} above)")
        return
    if "rule" in event:  # a composite event another rule detected
        lines.append(f"{pad}{alias}{event['type']} at {event['time']}, detected by rule <{event['rule']}> ({event['at']})")
        _composite(event, depth + 1, lines)
        return
    if "query" not in event:
        lines.append(f"{pad}{alias}{event['type']} at {event['time']}: {event.get('note', '')}")
        return
    bindings = " ".join(f"?{k}={v}" for k, v in event["bindings"].items())
    lines.append(f"{pad}{alias}{event['type']} at {event['time']}, a solution of EVENT {event['query']} "
                 f"({event['at']}): {bindings}")
    for fact in event["facts"]:
        _fact(fact, depth + 1, lines)


def _fact(fact: dict, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    origin = fact["from"]
    window = f" in window {fact['window']}" if "window" in fact else ""
    if origin == "input":
        lines.append(f"{pad}{fact['fact']}  [input{window}: {_elements(fact['elements'])}]")
    elif origin == "rule":
        lines.append(f"{pad}{fact['fact']}  [rule {fact['rule']}{window}]")
        for premise in fact["premises"]:
            _fact(premise, depth + 1, lines)
        for absent in fact.get("absent", ()):
            lines.append(f"{pad}  not {absent}")
    elif origin == "background":
        lines.append(f"{pad}{fact['fact']}  [background]")
    else:
        lines.append(f"{pad}{fact['fact']}  [{fact.get('note', origin)}]")


def _elements(elements: list[dict]) -> str:
    """The elements an input fact came from: ``the stream at 10``, ``<http://s> at 12``."""
    return ", ".join(f"{'<' + e['stream'] + '>' if e['stream'] else 'the stream'} at {e['time']}" for e in elements)
