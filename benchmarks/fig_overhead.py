"""Figure 1: harness overhead, collsweep's harness vs a C timer on the same MPI_Allreduce."""

from __future__ import annotations

from benchmarks import ctimer
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
from runners.domain.units import format_bytes

# Iterations per round and side by size: short rounds, many of them, so that load from
# other processes, which comes and goes, hits both sides alike. --quick runs fewer rounds;
# --smoke few iterations of one size on each side of the targets' 64 KiB split.
ITERATIONS = {8: 1000, 64 * KIB: 250, 4 * MIB: 50}
SMOKE_ITERATIONS = {8: 20, 64 * KIB: 5}
RANKS = 2
MAX_ADDED_SMALL_S = 1e-6
MAX_RATIO_LARGE = 1.05


def collect(reps: int, plan: dict[int, int], warmup: int) -> dict[int, dict]:
    """One job: per size, each round's C and harness medians (rounds alternate the order)."""
    library = ctimer.build()
    log(f"figure 1: {reps} alternating rounds per size, C loop and harness in one job")
    args = [str(library), str(warmup), str(reps), *(f"{n}:{i}" for n, i in plan.items())]
    lines = run_python_job(RANKS, "benchmarks.overhead_worker", args, timeout=600)
    return {line["bytes"]: line for line in lines}


def check_for(nbytes: int, added_s: float, ratio: float) -> Check:
    """The target of one size: absolute at 8 B, a ratio from 64 KiB up."""
    name = f"harness vs C at {format_bytes(nbytes)}, p={RANKS}"
    if nbytes < 64 * KIB:
        return Check(name, f"{added_s * 1e6:+.2f} us", "<= +1.00 us", added_s <= MAX_ADDED_SMALL_S)
    return Check(name, f"{ratio:.3f}x", f"<= {MAX_RATIO_LARGE:.2f}x", ratio <= MAX_RATIO_LARGE)


def run(mode: Mode) -> Figure:
    """Time the C loop and the harness in alternating rounds; compare round by round."""
    reps, warmup = mode.pick((40, 10), (10, 5), (2, 1))
    plan = SMOKE_ITERATIONS if mode is Mode.SMOKE else ITERATIONS
    results = collect(reps, plan, warmup)
    figure = Figure(
        1,
        "Harness overhead",
        "MPI_Allreduce (float32, SUM) timed by a C loop built with the wheel's mpicc "
        f"(benchmarks/allreduce_timer.c); p={RANKS}, same process, buffers, Barrier before "
        f"each iteration, max over ranks, median; {'/'.join(map(str, plan.values()))} "
        f"iterations after {warmup} warm-ups per round, {reps} rounds alternating C and harness",
    )
    rows = []
    for nbytes in plan:
        c_runs, py_runs = results[nbytes]["c"], results[nbytes]["py"]
        ratios = [p / c for p, c in zip(py_runs, c_runs, strict=True)]
        added = median(p - c for p, c in zip(py_runs, c_runs, strict=True))
        ratio = median(ratios)
        rows.append(
            [
                format_bytes(nbytes),
                us(median(c_runs)),
                us(median(py_runs)),
                f"{added * 1e6:+.2f}",
                f"{ratio:.3f}",
                f"{min(ratios):.2f}..{max(ratios):.2f}",
            ]
        )
        figure.checks.append(check_for(nbytes, added, ratio))
    figure.table = table(["size", "C us", "harness us", "added us", "ratio", "ratio range"], rows)
    figure.notes += NOTES
    return figure


NOTES = [
    "added us and ratio: medians over rounds of (harness - C) and harness / C, each round "
    "timing both back to back on the same buffers",
    "the C loop runs inside the Python rank (ctypes) so that both sides use the same buffers: "
    "run as separate processes, memory placement (huge pages) alone moved 4 MiB times by "
    "+-20% from launch to launch, far more than the harness costs",
]
