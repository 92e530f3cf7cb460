"""Window contents straight from the definitions (RSEP-QL Definition 3; C-SPARQL's engine
timing as issue #13 states it), recomputed from the whole stream at each instant."""
from __future__ import annotations


def csparql_first(items: list[tuple[int, object]], step: int) -> int:
    """The first window: k = 0, or the step of the first item when it comes before 0."""
    return min(0, min(time for time, _ in items) // step) if items else 0


def csparql_content(items: list[tuple[int, object]], range_: int, step: int, t: int) -> list[object] | None:
    """At instant t: the last window closed at or before t, k*STEP <= time < k*STEP+RANGE."""
    ks = [k for k in range(csparql_first(items, step), t // step + 1) if k * step + range_ <= t]
    if not ks:
        return None
    k = max(ks)
    return [v for time, v in items if k * step <= time < k * step + range_ and time <= t]


def csparql_reports(items: list[tuple[int, object]], range_: int, step: int) -> list[tuple[int, list[object]]]:
    """Every window from the first that holds an item, at its close, in order."""
    last = max(time for time, _ in items)
    out = []
    for k in range(csparql_first(items, step), last // step + 1):
        content = [v for time, v in items if k * step <= time < k * step + range_]
        if content:
            out.append((k * step + range_, content))
    return out


def rsepql_content(items: list[tuple[int, object]], alpha: int, beta: int, t: int) -> list[object]:
    """W^τ(α, β) at t: t' = floor(t/β)·β, the items with t' − α < time ≤ t'."""
    top = t // beta * beta
    return [v for time, v in items if top - alpha < time <= top]


def landmark_content(items: list[tuple[int, object]], t0: int, t: int) -> list[object]:
    return [v for time, v in items if t0 <= time <= t]


def tuple_content(items: list[tuple[int, object]], n: int, t: int) -> list[object]:
    held = [v for time, v in items if time <= t]
    return held[-n:]
