"""Barbieri et al. Fig. 7: maintenance time per window slide vs the share of the materialization that changes.

The paper's setting (section 5): trees of ``isIn`` triples from a generator (depth and
number of trees), the transitive rule R ``isIn(x, z) :- isIn(x, y), isIn(y, z)``, a pool of
the trees' triples of which a random subset is the background and the rest is streamed
through a sliding window; the time to bring the materialization up to date after a slide
is measured as the number of triples entering and leaving at each slide grows. The three
strategies of ``--maintenance`` (naive, DRed, expiration) run side by side in one process,
over the same background closure and the same slides.

The x-axis is the share of the materialization (background closure ∪ window content ∪
what R derives from both) that one slide adds or removes. chronolog's naive strategy
recomputes only the window's part (the background closure is computed once), which is
cheaper than the paper's naive, so the crossovers with naive come earlier than they
would against a full recomputation.

    chronolog bench barbieri-fig7 [--trees 20 --depth 7 --window 2000] [--plot fig7.png]
"""
from __future__ import annotations

import argparse
import math
import platform
import random
import statistics
import time
from dataclasses import dataclass

from chronolog.datalog import Reasoner, load_program
from chronolog.datalog.maintenance import STRATEGIES, Maintenance, maintenance
from chronolog.terms import TermDictionary

E = "http://example.org/"
RULE = f"PREFIX : <{E}>\n:isIn(?x, ?z) :- :isIn(?x, ?y), :isIn(?y, ?z)."
Triple = tuple[int, int, int]


@dataclass
class Setting:
    """The pool split into background and stream, and the closed background."""

    dictionary: TermDictionary
    base: Reasoner
    stream: list[Triple]

    def strategy(self, name: str) -> Maintenance:
        reasoner = Reasoner(self.base.program, self.dictionary)
        reasoner.adopt_closure(self.base.lower, self.base.upper)
        return maintenance(name, reasoner)

    @property
    def background_size(self) -> int:
        return self.base.background_view.size("triple")


def setting(trees: int, depth: int, branching: int, streamed: float, seed: int) -> Setting:
    """Trees of ``isIn`` (child isIn parent); a share ``streamed`` of the triples, drawn at
    random, is the stream, the rest the background."""
    d = TermDictionary()
    is_in = d.iri(E + "isIn")
    pool = []
    for tree in range(trees):
        level = [d.iri(f"{E}t{tree}")]
        for depth_now in range(1, depth + 1):
            below = []
            for i, parent in enumerate(level):
                for b in range(branching):
                    child = d.iri(f"{E}t{tree}/{depth_now}/{i * branching + b}")
                    pool.append((child, is_in, parent))
                    below.append(child)
            level = below
    rng = random.Random(seed)
    rng.shuffle(pool)
    cut = int(len(pool) * streamed)
    base = Reasoner(load_program([(RULE, "isIn.dl")], d), d)
    base.add_background(pool[cut:])
    base.close()
    return Setting(d, base, pool[:cut])


@dataclass
class Slides:
    """A sliding window of ``width`` instants with ``rate`` stream triples entering per
    instant (the stream replayed from its start when it runs out)."""

    stream: list[Triple]
    rate: int
    width: int

    def batch(self, instant: int) -> list[Triple]:
        n = len(self.stream)
        return [self.stream[(instant * self.rate + i) % n] for i in range(self.rate)]

    def run(self, keeper: Maintenance, slides: int) -> tuple[list[float], list[int], list[int]]:
        """Fill the window (untimed), then time ``slides`` slides: (seconds per slide,
        size of the window's part of the materialization after each, facts each slide
        added or removed)."""
        content = {t: i + self.width - 1 for i in range(self.width) for t in self.batch(i)}
        keeper.update(self.width - 1, content, [])
        before = set(keeper.overlay.triples)
        times, sizes, changes = [], [], []
        for now in range(self.width, self.width + slides):
            entered = {t: now + self.width - 1 for t in self.batch(now)}
            left = [t for t, last in content.items() if last < now and t not in entered]
            for t in left:
                del content[t]
            content.update(entered)
            start = time.perf_counter()
            keeper.update(now, entered, left)
            times.append(time.perf_counter() - start)
            after = set(keeper.overlay.triples)
            sizes.append(len(after))
            changes.append(len(before ^ after))
            before = after
        return times, sizes, changes


def slide_count(rate: int, window: int) -> int:
    """Enough slides to average over, few when each recomputes a large window."""
    return max(3, min(12, 4 * window // max(rate, 1)))


def measure(s: Setting, slides: Slides, count: int) -> dict:
    """Median ms per slide of each strategy over the same slides (their materializations
    checked equal), and the share of the materialization a slide changes."""
    row: dict = {}
    for name in STRATEGIES:
        times, sizes, changes = slides.run(s.strategy(name), count)
        if row and sizes != row["sizes"]:
            raise AssertionError(f"{name} keeps a different materialization: {sizes} != {row['sizes']}")
        row.update(sizes=sizes, delta=statistics.fmean(changes), total=s.background_size + round(statistics.fmean(sizes)))
        row[name] = 1000 * statistics.median(times)
    row["share"] = 100 * row["delta"] / row["total"]
    return row


def curve(s: Setting, window: int, rates: list[int]) -> list[dict]:
    rows = []
    for rate in rates:
        slides = Slides(s.stream, rate, max(1, window // rate))
        row = measure(s, slides, slide_count(rate, window))
        rows.append(row)
        print(f"| {rate:,} | {slides.width:,} | {row['share']:.3g} | {row['delta']:,.0f} | {row['total']:,} | "
              + " | ".join(f"{row[n]:.3g}" for n in STRATEGIES)
              + f" | {row['dred'] / row['expiration']:.1f} | {row['naive'] / row['expiration']:.1f} |", flush=True)
    return rows


def crossover(rows: list[dict], slow: str, fast: str, factor: float = 1.0) -> str:
    """The share of change where ``fast`` stops being ``factor`` times faster than
    ``slow`` (log-log interpolation between the measured points that change something)."""
    rows = [r for r in rows if r["share"] > 0]
    if not rows:
        return "no slide changed anything"
    ratio = [math.log(r[slow] / r[fast] / factor) for r in rows]
    if ratio[0] <= 0:
        return f"never (below {factor:g}x already at {rows[0]['share']:.3g}%)"
    for (a, ra), (b, rb) in zip(zip(rows, ratio), zip(rows[1:], ratio[1:])):
        if rb <= 0:
            x = math.log(a["share"]) + (math.log(b["share"]) - math.log(a["share"])) * ra / (ra - rb)
            return f"{math.exp(x):.3g}%"
    return f"beyond {rows[-1]['share']:.3g}% (the largest share measured)"


def flat(s: Setting, rate: int, windows: list[int]) -> None:
    print(f"\n## Slide cost as the window grows ({rate} triples enter and leave per slide)\n")
    print("| window triples | instants | facts changed | " + " | ".join(f"{n} ms" for n in STRATEGIES)
          + " | expiration µs per fact changed |")
    print("|---|---|---|" + "---|" * (len(STRATEGIES) + 1))
    for window in windows:
        slides = Slides(s.stream, rate, max(1, window // rate))
        row = measure(s, slides, 12)
        print(f"| {window:,} | {slides.width:,} | {row['delta']:,.0f} | " + " | ".join(f"{row[n]:.3g}" for n in STRATEGIES)
              + f" | {1000 * row['expiration'] / max(row['delta'], 1):.1f} |", flush=True)


def plot(rows: list[dict], path: str) -> None:
    try:
        import matplotlib
    except ImportError:
        print(f"\nPlot skipped: matplotlib is not installed (pip install 'chronolog[bench]'); {path} not written.")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, label in (("naive", "naive"), ("dred", "DRed (incremental-volz)"), ("expiration", "expiration (incremental-stream)")):
        ax.plot([r["share"] for r in rows], [r[name] for r in rows], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("share of the materialization changed by a slide (%)")
    ax.set_ylabel("maintenance time per slide (ms)")
    ax.set_title("Barbieri et al. Fig. 7 (transitive isIn), chronolog")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nPlot written to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=20, help="trees of isIn triples in the pool")
    parser.add_argument("--depth", type=int, default=7, help="depth of each tree")
    parser.add_argument("--branching", type=int, default=3, help="children per node")
    parser.add_argument("--streamed", type=float, default=0.1, help="share of the pool that is streamed")
    parser.add_argument("--window", type=int, default=2_000, help="stream triples in the window")
    parser.add_argument("--rates", default="1,2,5,10,20,50,100,200,500,1000,2000",
                        help="triples entering (and leaving) per slide, comma-separated")
    parser.add_argument("--flat-rate", type=int, default=20, help="triples per slide as the window grows 10x")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--plot", metavar="FILE", help="write the curve as a PNG (needs matplotlib)")
    args = parser.parse_args()
    rates = [r for r in map(int, args.rates.split(",")) if r <= args.window]
    s = setting(args.trees, args.depth, args.branching, args.streamed, args.seed)
    print(f"Python {platform.python_version()}; pool {len(s.stream) + s.base.lower.triples.__len__():,} isIn triples "
          f"({args.trees} trees, depth {args.depth}, branching {args.branching}); background closure "
          f"{s.background_size:,} triples; {len(s.stream):,} streamed; window {args.window:,} triples\n")
    print("## Fig. 7: time per slide (ms, median) vs share of the materialization changed\n")
    print("| triples per slide | window instants | changed % | facts changed | materialization | "
          + " | ".join(f"{n} ms" for n in STRATEGIES) + " | DRed / expiration | naive / expiration |")
    print("|---|---|---|---|---|" + "---|" * (len(STRATEGIES) + 2))
    rows = curve(s, args.window, rates)
    print("\n## Crossovers (share of the materialization changed per slide)\n")
    print("| comparison | paper | measured |")
    print("|---|---|---|")
    print(f"| DRed faster than naive up to | 2.5% | {crossover(rows, 'naive', 'dred')} |")
    print(f"| expiration 10x faster than DRed up to | 0.1% | {crossover(rows, 'dred', 'expiration', 10)} |")
    print(f"| expiration 100x faster than DRed up to | 2.5% | {crossover(rows, 'dred', 'expiration', 100)} |")
    print(f"| expiration faster than naive up to | 13% | {crossover(rows, 'naive', 'expiration')} |")
    flat(s, min(args.flat_rate, args.window // 10 or 1), [args.window // 10 or 1, args.window])
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
