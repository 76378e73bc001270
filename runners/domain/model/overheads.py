"""The software overheads of each implementation family: which runs measure them, and the
per-call and per-round seconds those runs give (pure; the runs: runners.ranks.overheads).

collsweep's own algorithms pay Python per call and per round; the library's forced algorithms pay
its C code's per-call and per-round costs. Both are measured by whole allreduces at sizes no
sweep measures: collsweep's with zero elements (the same code path, nothing moved), the
library's with one element (MPICH returns at once for zero). At p = 2 recursive doubling takes
one round and ring two, so t_rd = call + round and t_ring = call + 2 round.
"""

from __future__ import annotations

from collections.abc import Iterable

from runners.domain.libraries.catalog import ALGORITHMS

HAND_WRITTEN, LIBRARY = "hand-written", "library"
# family -> (one-round run, two-round run) at p = 2
FAMILY_RUNS = {
    HAND_WRITTEN: ("recursive_doubling", "ring"),
    LIBRARY: ("mpi:recursive_doubling", "mpi:ring"),
}
# run -> elements (float32, sum)
RUN_ELEMENTS = {"recursive_doubling": 0, "ring": 0, "mpi:recursive_doubling": 1, "mpi:ring": 1}


def family_of(algorithm: str) -> str:
    """The implementation family whose overheads an algorithm pays."""
    return LIBRARY if ALGORITHMS[algorithm].library else HAND_WRITTEN


def family_overheads(runs: Iterable[dict]) -> dict[str, dict[str, float]]:
    """Per-call and per-round seconds of each family from its runs' medians: round = t_ring -
    t_rd and call = t_rd - round, each at least 0. A family without both runs is left out."""
    medians = {run["algorithm"]: run["median_s"] for run in runs}
    out = {}
    for family, (one, two) in FAMILY_RUNS.items():
        if one in medians and two in medians:
            round_s = max(0.0, medians[two] - medians[one])
            out[family] = {"call_s": max(0.0, medians[one] - round_s), "round_s": round_s}
    return out
