"""Figure 13: algorithms with knobs at scale: does the model pick the segment size the
simulator finds best, and what does the best pipeline save over the binomial tree?

Every pipelined family is simulated in SimGrid at each segment size of a grid, p and payload
(`collsweep simulate`, a crossbar of its default alpha, beta and gamma: an actor per rank at
p <= 64, a real test of the round model; at larger p the rounds mode, which on a crossbar is
the contention-free price, so agreement there holds by construction and is not judged). Per
(family, p, size) the model's pick is the member of least predicted time; its regret is how
much slower it simulates than the simulated best member.
"""

from __future__ import annotations

from collections import defaultdict

from benchmarks.common import Check, Figure, log, table
from benchmarks.fig_simulate import simulate
from benchmarks.mode import Mode
from runners.domain.algorithms.parameters import split_name
from runners.domain.algorithms.segments import SEGMENT
from runners.domain.units import format_bytes

FAMILIES = {
    "bcast": ("bcast.chain", "bcast.binary", "bcast.two_tree"),
    "allreduce": ("chain", "two_tree"),
}
BASELINES = {"bcast": "bcast.binomial_tree", "allreduce": "ring"}
REGRET_LIMIT = 0.02  # the model's pick at most 2% slower than the simulated best member
PICK_SHARE = 0.90  # of the (family, p, size) cells simulated by actors


def run(mode: Mode) -> Figure:
    """The model's pick against the simulator's best per family, p and size."""
    figure = Figure(
        13,
        "Knobs at scale",
        "the simulated best member of the same family at the same p and size (regret), and "
        f"the binomial tree (bcast) or ring (allreduce); targets: the pick within "
        f"{REGRET_LIMIT:.0%} of the best in {PICK_SHARE:.0%} of the cells an actor per rank "
        "simulates",
    )
    ranks = mode.pick((64, 256), (64,), (8,))
    sizes = mode.pick(("1M", "16M"), ("1M", "16M"), ("64K",))
    segments = mode.pick("16K,32K,64K,128K,256K", "16K,64K,256K", "16K,64K")
    cells = []
    for collective, families in FAMILIES.items():
        for p in ranks:
            log(f"figure 13: {collective} at p={p}")
            algorithms = ",".join((*families, BASELINES[collective]))
            words = ["--collectives", collective, "--ranks", str(p), "--sizes", ",".join(sizes)]
            points = simulate(*words, "--algorithms", algorithms, "--segment-sizes", segments)
            cells += _cells(points, families, BASELINES[collective])
    figure.table = table(
        ["family", "p", "size", "mode", "model's pick", "simulated best", "regret", "best / base"],
        [c.row() for c in cells],
    )
    judged = [c for c in cells if c.mode == "actors"]
    good = sum(c.regret <= REGRET_LIMIT for c in judged)
    share = good / len(judged) if judged else 0.0
    figure.checks.append(
        Check(
            f"model's segment within {REGRET_LIMIT:.0%} of the simulated best (actors)",
            f"{good} of {len(judged)} cells ({share:.0%}); worst regret "
            f"{max((c.regret for c in judged), default=0):.1%}",
            f">= {PICK_SHARE:.0%}",
            share >= PICK_SHARE if mode is not Mode.SMOKE else None,
        )
    )
    figure.notes += NOTES
    return figure


class Cell:
    """One family at one p and size: its members' simulated and predicted times."""

    def __init__(self, family: str, point: dict, base_s: float) -> None:
        self.family, self.p, self.nbytes = family, point["ranks"], point["bytes"]
        self.mode = point["mode"]  # the command's, the same for every member
        self.simulated: dict[str, float] = {}
        self.predicted: dict[str, float] = {}
        self.base_s = base_s

    def add(self, point: dict) -> None:
        """One member's simulated point."""
        self.simulated[point["algorithm"]] = point["simulated_s"]
        self.predicted[point["algorithm"]] = point["predicted_s"]

    @property
    def pick(self) -> str:
        """The member the model prices fastest."""
        return min(self.predicted, key=self.predicted.__getitem__)

    @property
    def best(self) -> str:
        """The member the simulator runs fastest."""
        return min(self.simulated, key=self.simulated.__getitem__)

    @property
    def regret(self) -> float:
        """How much slower the model's pick simulates than the simulated best."""
        return self.simulated[self.pick] / self.simulated[self.best] - 1

    def row(self) -> list[object]:
        """Its table row."""
        speedup = self.base_s / self.simulated[self.best]
        return [
            self.family, self.p, format_bytes(self.nbytes), self.mode, _member(self.pick),
            _member(self.best), f"{self.regret:.1%}", f"{speedup:.2f}x",
        ]  # fmt: skip


def _cells(points: list[dict], families: tuple[str, ...], baseline: str) -> list[Cell]:
    """The points grouped by family, p and size, each with the baseline's time there."""
    base = {
        (p["ranks"], p["bytes"]): p["simulated_s"] for p in points if p["algorithm"] == baseline
    }
    cells: dict[tuple[str, int, int], Cell] = {}
    for point in points:
        family = split_name(point["algorithm"])[0]
        if family not in families:
            continue
        key = (family, point["ranks"], point["bytes"])
        if key not in cells:
            cells[key] = Cell(family, point, base[key[1:]])
        cells[key].add(point)
    grouped: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells.values():
        grouped[cell.family].append(cell)
    return [c for family in families for c in grouped[family]]


def _member(name: str) -> str:
    """A member's segment as the table shows it (the family's default where its name leaves
    it out)."""
    return split_name(name)[1].get("segment", SEGMENT.default)


NOTES = [
    "best / base: the binomial tree's (bcast) or the ring's (allreduce) simulated time over the "
    "family's best member's",
    "a crossbar of link 2 us and 12.5 GB/s, gamma 1 ns/B (collsweep simulate's defaults)",
]
