"""What happens to late and to malformed input: one policy object each, for stream
readers and the temporal engine, on both runners.

Nothing is dropped silently: a late policy either stops with a ``LateElementError`` that
names the late item, or counts it and hands it to a late-data sink (``--late
error|drop|FILE``); an error policy either stops at a malformed element, or counts it and
hands it to a quarantine sink and goes on (``--on-error stop|skip``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable

from chronolog.errors import ChronologError, LateElementError

Sink = Callable[[Any], object]


class LatePolicy(ABC):
    """Chosen when a reader or engine is built; ``late`` is called once per late item."""

    @abstractmethod
    def late(self, item: Any, describe: Callable[[], str]) -> None:
        """Handle one late item; ``describe()`` says what it is, where, and how late."""

    @staticmethod
    def reject() -> "RejectLate":
        """Stop with a LateElementError naming the item (the default everywhere)."""
        return RejectLate()

    @staticmethod
    def divert(sink: Sink | list) -> "DivertLate":
        """Count late items and hand each to ``sink`` (a callable, or a list to append to)."""
        return DivertLate(sink)

    @staticmethod
    def drop() -> "DivertLate":
        """Count late items and keep nothing else of them."""
        return DivertLate(lambda item: None)

    @staticmethod
    def named(name: str, sink: Sink | list | None = None) -> "LatePolicy":
        """The policy called ``name`` ("reject" or "divert"), e.g. from a command line."""
        if name == "reject":
            if sink is not None:
                raise ValueError("the 'reject' late policy takes no sink")
            return RejectLate()
        if name == "divert":
            if sink is None:
                raise ValueError("the 'divert' late policy needs a sink for the late elements")
            return DivertLate(sink)
        raise ValueError(f"unknown late policy {name!r}: expected 'reject' or 'divert'")


@dataclass(frozen=True)
class RejectLate(LatePolicy):
    def late(self, item: Any, describe: Callable[[], str]) -> None:
        raise LateElementError(describe() + " (late policy: reject)")


@dataclass(eq=False)
class DivertLate(LatePolicy):
    """Counts late items (``count``) and sends them to the sink."""

    sink: Sink | list
    count: int = field(default=0)

    def __post_init__(self) -> None:
        if isinstance(self.sink, list):
            self.sink = self.sink.append
        if not callable(self.sink):
            raise TypeError(f"a late-data sink must be a callable or a list, not {type(self.sink).__name__}")

    def late(self, item: Any, describe: Callable[[], str]) -> None:
        self.count += 1
        self.sink(item)  # type: ignore[operator]


class ErrorPolicy:
    """What a reader does with a malformed element: stop (raise its positioned error, the
    default) or skip (count it, hand the error to ``sink``, and go on)."""

    def __init__(self, sink: Callable[[ChronologError], object] | None = None) -> None:
        self.sink = sink
        self.count = 0

    @property
    def stops(self) -> bool:
        return self.sink is None

    def error(self, error: ChronologError) -> None:
        if self.sink is None:
            raise error
        self.count += 1
        self.sink(error)
