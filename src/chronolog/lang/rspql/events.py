"""RSEP-QL's event patterns (section 3.3), as data: what ``MATCH ( E )`` holds.

A term is a variable (``"?x"``), an IRI (a ``str``) or a literal (a pyoxigraph ``Literal``);
the operators nest. The pattern is read by
:mod:`chronolog.lang.rspql.syntax`, evaluated by :mod:`chronolog.lang.rspql.matching`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeGuard, Union

from pyoxigraph import Literal

Term = Union[str, Literal]
Triple = tuple[Term, Term, Term]


class Selection(enum.Enum):
    """The selection policy of a SEQ (section 4.3)."""

    UNRESTRICTED = "SEQ"  # Eq. 7
    CHRONOLOGICAL = "SEQ_CHRONOLOGICAL"  # Eq. 10, SEQ^c
    RECENT = "SEQ_RECENT"  # Eq. 11, SEQ^r
    NAIVE = "SEQ_NAIVE"  # Eq. 9, C-SPARQL's timestamp()


class Consumption(enum.Enum):
    """The consumption policy of section 4.4 (P^u, P^c, P^r)."""

    UNRESTRICTED = "unrestricted"
    CHRONOLOGICAL = "chronological"
    RECENT = "recent"


@dataclass(frozen=True)
class Event:
    """``EVENT w { BGP }``: one event per element of window ``w`` and solution of the BGP."""

    window: str
    triples: tuple[Triple, ...]


@dataclass(frozen=True)
class Seq:
    first: "Pattern"
    then: "Pattern"
    selection: Selection


@dataclass(frozen=True)
class First:
    pattern: "Pattern"


@dataclass(frozen=True)
class Last:
    pattern: "Pattern"


Pattern = Union[Event, Seq, First, Last]


def is_variable(term: Term) -> TypeGuard[str]:
    return isinstance(term, str) and term.startswith("?")


def windows_of(pattern: Pattern) -> set[str]:
    """The windows that appear in ``pattern`` (w ∈̂ E)."""
    if isinstance(pattern, Event):
        return {pattern.window}
    if isinstance(pattern, Seq):
        return windows_of(pattern.first) | windows_of(pattern.then)
    return windows_of(pattern.pattern)


def variables_of(pattern: Pattern) -> list[str]:
    """The pattern's variables, in the order they first appear (without the ``?``)."""
    if isinstance(pattern, Event):
        found = [t[1:] for triple in pattern.triples for t in triple if is_variable(t)]
    elif isinstance(pattern, Seq):
        found = variables_of(pattern.first) + variables_of(pattern.then)
    else:
        found = variables_of(pattern.pattern)
    return list(dict.fromkeys(found))
