"""Figure 2: each hand-written algorithm vs MPICH's own implementation of the same algorithm."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.common import (
    KIB,
    MIB,
    Check,
    Figure,
    log,
    median,
    run_python_job,
    table,
    us,
)
from benchmarks.mode import Mode
from runners.domain.collectives.schedule import critical_path
from runners.domain.libraries.catalog import ALGORITHMS, library_knobs
from runners.domain.sweep.launcher import is_oversubscribed
from runners.domain.units import format_bytes
from runners.host.machine import physical_cores

SIZES = (8, 64, 512, 4 * KIB, 32 * KIB, 256 * KIB, 1 * MIB, 4 * MIB, 16 * MIB)
RANKS = (2, 4)
SMOKE_SIZES = (8, 1 * MIB)  # one size of each check
SMALL_MAX = 4 * KIB
LARGE_MIN = 1 * MIB
MAX_RATIO_LARGE = 1.15
MAX_PER_ROUND_S = 3e-6
MAX_ITERATIONS = 5000
HEADERS = (
    *("algorithm", "p", "size", "ours us", "MPICH us", "ratio", "paired"),
    *("per-round us", "CI", "note"),
)


@dataclass(frozen=True)
class Pair:
    """A hand-written algorithm and MPICH's forced counterpart."""

    ours: str
    mpich: str

    def rounds(self, ranks: int) -> int:
        """Messages on the critical path of our schedule (the same rounds as MPICH's)."""
        return critical_path(ALGORITHMS[self.ours].schedule_at(4), ranks, ranks).messages


PAIRS = (
    Pair("recursive_doubling", "mpi:recursive_doubling"),
    Pair("rabenseifner", "mpi:reduce_scatter_allgather"),
    Pair("ring", "mpi:ring"),
    # the other collectives (MPICH has no ring reduce-scatter: its pairwise exchange is the
    # same p-1 steps of one block)
    Pair("reduce_scatter.pairwise", "reduce_scatter.mpi:pairwise"),
    Pair("reduce_scatter.recursive_halving", "reduce_scatter.mpi:recursive_halving"),
    Pair("allgather.ring", "allgather.mpi:ring"),
    Pair("allgather.bruck", "allgather.mpi:brucks"),
    Pair("bcast.binomial_tree", "bcast.mpi:binomial"),
    Pair("reduce.binomial_tree", "reduce.mpi:binomial"),
    # algorithms with parameters: MPICH's tree allreduce forced to the same shape
    Pair("knomial(radix=4)", "mpi:knomial(radix=4)"),
    Pair("chain(segment=64KiB)", "mpi:chain(segment=64KiB)"),
)
SMOKE_PAIRS = (PAIRS[2], PAIRS[5])  # allreduce's ring and the ring allgather


def time_pair(pair: Pair, ranks: int, budget_s: float, sizes: tuple[int, ...]) -> dict[int, dict]:
    """One job: ours and MPICH's in alternating iterations at every size, by size."""
    log(f"figure 2: {pair.ours} vs {pair.mpich}, p={ranks}")
    args = [pair.ours, pair.mpich, str(budget_s), str(MAX_ITERATIONS), *map(str, sizes)]
    knobs = library_knobs(pair.mpich)
    lines = run_python_job(ranks, "benchmarks.paired_worker", args, knobs, timeout=600)
    return {line["bytes"]: line for line in lines}


def pair_rows(
    pair: Pair, ranks: int, results: dict[int, dict], sizes: tuple[int, ...]
) -> list[list[object]]:
    """Table rows of one pair at one group size."""
    rows: list[list[object]] = []
    for nbytes in sizes:
        line = results.get(nbytes, {"skipped": "not timed"})
        head = [pair.ours, ranks, format_bytes(nbytes)]
        if "skipped" in line:
            note = "MPICH fell back" if "fell back" in line["skipped"] else line["skipped"][:40]
            rows.append([*head, "", "", "", "", "", "", f"skipped: {note}"])
            continue
        ours, mpich = line["a"]["median_s"], line["b"]["median_s"]
        extra_us = (ours - mpich) / pair.rounds(ranks) * 1e6
        per_round = f"{extra_us:+.2f}" if nbytes <= SMALL_MAX else ""
        ci = max(line["a"]["ci_rel"], line["b"]["ci_rel"])
        ratios = [f"{ours / mpich:.3f}", f"{line['paired_ratio']:.3f}"]
        rows.append([*head, us(ours), us(mpich), *ratios, per_round, f"{ci:.1%}", ""])
    return rows


def measured(results: dict[int, dict]) -> dict[int, tuple[float, float]]:
    """(ours, MPICH's) median seconds by size, for the sizes both were timed at."""
    return {
        n: (line["a"]["median_s"], line["b"]["median_s"])
        for n, line in results.items()
        if "skipped" not in line
    }


def pair_checks(pair: Pair, ranks: int, results: dict[int, dict]) -> list[Check]:
    """Large-message ratio (worst size from 1 MiB up) and small-message per-round overhead."""
    times = measured(results)
    label = f"p={ranks} {pair.ours} / {pair.mpich.partition('mpi:')[2]}"
    checks = []
    large = [(ours / mpich, n) for n, (ours, mpich) in times.items() if n >= LARGE_MIN]
    if large:
        worst, at = max(large)
        ci = max(results[at]["a"]["ci_rel"], results[at]["b"]["ci_rel"])
        checks.append(
            Check(
                f"{label}: ratio >= 1 MiB (worst)",
                f"{worst:.3f}x at {format_bytes(at)}, CI {ci:.0%}",
                f"<= {MAX_RATIO_LARGE:.2f}x",
                worst <= MAX_RATIO_LARGE,
            )
        )
    rounds = pair.rounds(ranks)
    small = [(ours - mpich) / rounds for n, (ours, mpich) in times.items() if n <= SMALL_MAX]
    if small:
        typical = median(small)
        checks.append(
            Check(
                f"{label}: per-round us, 8 B..4 KiB (median)",
                f"{typical * 1e6:+.2f} us",
                "<= +3.00 us",
                typical <= MAX_PER_ROUND_S,
            )
        )
    return checks


def run(mode: Mode) -> Figure:
    """One job per (pair, p), the two algorithms alternating iteration by iteration."""
    budget_s = mode.pick(0.8, 0.25, 0.02)
    sizes, group_sizes = (SMOKE_SIZES, RANKS[:1]) if mode is Mode.SMOKE else (SIZES, RANKS)
    pairs = SMOKE_PAIRS if mode is Mode.SMOKE else PAIRS
    figure = Figure(
        2,
        "Hand-written vs library",
        "MPICH's own implementation of the same algorithm "
        "(MPIR_CVAR_<COLLECTIVE>_INTRA_ALGORITHM), in the same job, alternating iteration "
        "by iteration; float32 SUM (no op for allgather and bcast); sizes are the whole vector",
    )
    rows: list[list[object]] = []
    for ranks in group_sizes:
        for pair in pairs:
            results = time_pair(pair, ranks, budget_s, sizes)
            rows += pair_rows(pair, ranks, results, sizes)
            figure.checks += pair_checks(pair, ranks, results)
    figure.table = table(HEADERS, rows)
    figure.notes += notes(budget_s, group_sizes)
    return figure


def notes(budget_s: float, group_sizes: tuple[int, ...]) -> list[str]:
    """What the reader needs to know to read figure 2."""
    out = [
        "rounds (messages on the critical path, from each schedule): recursive_doubling "
        "log2 p, rabenseifner 2 log2 p, ring 2(p-1); reduce-scatter pairwise and allgather "
        "ring p-1, recursive halving, bruck and the binomial trees ceil(log2 p); "
        "knomial(radix=4) against MPICH's tree forced to it (knomial_2, KVAL 4), the critical "
        "path's messages; chain(segment=64KiB) against MPICH's tree as a chain in 64 KiB "
        "chunks, 2(p-2+s) messages for s segments (2(p-1) below one segment); per-round "
        "overhead = (t_ours - t_mpich) / rounds",
        "both run with MPIR_CVAR_DEVICE_COLLECTIVES=none (needed to force MPICH); ours uses "
        "only point-to-point calls, so the knob changes only the Barrier before each iteration",
        f"timing: runners.ranks.harness.measure, {budget_s} s per size for the pair (at most "
        f"{MAX_ITERATIONS} iterations each), Barrier before every iteration, max over ranks; "
        "CI = the wider of the two medians' 95% CI half-widths",
        "ratio = ours / MPICH's median (what the targets use); paired = median of the ratios of "
        "neighbouring iterations, which bursts of load from other processes hit alike: where "
        "the two differ, the ratio is noise-limited",
    ]
    for ranks in group_sizes:
        if is_oversubscribed(ranks, physical_cores()):
            out.append(
                f"p={ranks} is OVERSUBSCRIBED here ({ranks} ranks on {physical_cores()} physical "
                "cores): the runner sets MPIR_CVAR_DEVICE_COLLECTIVES=none and ranks share cores, "
                "so its times include descheduling and are far noisier than p=2"
            )
    return out
