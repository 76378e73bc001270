"""Figure 9: collsweep's timing of Intel MPI's own MPI_Allreduce against IMB-MPI1's, the
benchmark the impi-rt wheel ships, on the same library, one job after the other, in rounds."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import (
    KIB,
    MIB,
    Check,
    Figure,
    JobFailed,
    checked_lines,
    log,
    median,
    run_command,
    table,
    us,
    worker_knobs,
)
from benchmarks.mode import Mode
from runners.domain.libraries.impi import LIBRARY as IMPI
from runners.domain.units import format_bytes
from runners.host import libraries
from runners.jobs import launch

RANKS = 2
ITERATIONS = {8: 1000, 4 * KIB: 1000, 64 * KIB: 250, 512 * KIB: 100, 4 * MIB: 30}
LARGE = 64 * KIB  # from here on both time bandwidth, not call overheads: a ratio target
RATIO_RANGE = (0.8, 1.25)  # harness median / IMB t_max with its barrier, median over rounds
WARMUP = 10
NOTES = [
    "IMB-MPI1 Allreduce by default times a loop of back-to-back calls (t_avg b2b): consecutive "
    "calls can overlap, so it may report less than one call costs. With "
    "`-imb_barrier on` it puts its own barrier before each call, as collsweep does (Barrier, "
    "then the call, the slowest rank's time, the median): t_max of that mode is the baseline. "
    f"Below {format_bytes(LARGE)} the barrier's own skew differs between the two: reported; "
    f"from {format_bytes(LARGE)} the ratio is held to {RATIO_RANGE[0]}..{RATIO_RANGE[1]}.",
    "Each round runs IMB-MPI1 twice and the harness, as separate Intel MPI jobs in an order "
    "that rotates, so the machine's slow and fast states hit all three; ratios are per round.",
]


def parse_imb(text: str) -> dict[int, dict[str, float]]:
    """IMB-MPI1's result table: per #bytes, t_min, t_max and t_avg in seconds."""
    out: dict[int, dict[str, float]] = {}
    in_table = False
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["#bytes"]:
            in_table = True
            continue
        if in_table and len(words) == 5 and all(w.replace(".", "", 1).isdigit() for w in words):
            nbytes, _, t_min, t_max, t_avg = words
            out[int(nbytes)] = {
                "t_min": float(t_min) * 1e-6,
                "t_max": float(t_max) * 1e-6,
                "t_avg": float(t_avg) * 1e-6,
            }
        elif in_table and not words:
            in_table = False
    return out


def imb_round(sizes: list[int], folder: Path, barrier: bool) -> dict[int, dict[str, float]]:
    """One IMB-MPI1 Allreduce job on Intel MPI over exactly `sizes` (a -msglen file), with
    IMB's own barrier before each call or back to back."""
    lengths = folder / "lengths"
    lengths.write_text("\n".join(map(str, sizes)) + "\n")
    argv = [
        str(libraries.mpiexec(IMPI)),
        "-n",
        str(RANKS),
        str(libraries.prefix(IMPI) / "bin" / "IMB-MPI1"),
    ]
    argv += ["Allreduce", "-npmin", str(RANKS), "-msglen", str(lengths), "-time", "10"]
    argv += ["-iter", str(max(ITERATIONS[s] for s in sizes)), "-zero_size", "0"]
    argv += ["-imb_barrier", "on" if barrier else "off"]
    result = run_command(argv, libraries.launch_env(IMPI), timeout=600)
    if result.returncode != 0 or result.timed_out:
        raise JobFailed(f"IMB-MPI1 exited with {result.returncode}: {result.stderr[-300:]}")
    found = parse_imb(result.stdout)
    missing = sorted(set(sizes) - set(found))
    if missing:
        raise JobFailed(f"IMB-MPI1 printed no line for {missing}")
    return found


def harness_round(sizes: list[int], plan: dict[int, int]) -> dict[int, float]:
    """One collsweep-harness job on Intel MPI: each size's median."""
    args = [str(WARMUP), *(f"{s}:{plan[s]}" for s in sizes)]
    job = launch.Job(RANKS, "benchmarks.impi_worker", args, worker_knobs(RANKS), library="impi")
    lines = checked_lines(launch.run(job, 600), "benchmarks.impi_worker on Intel MPI")
    return {line["bytes"]: line["median_s"] for line in lines}


def collect(rounds: int, plan: dict[int, int]) -> list[dict[str, dict]]:
    """Per round, IMB's tables (back to back, with its barrier) and the harness's medians,
    the three jobs in an order that rotates from round to round."""
    sizes = sorted(plan)
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        jobs = {
            "b2b": lambda: imb_round(sizes, Path(folder), barrier=False),
            "barrier": lambda: imb_round(sizes, Path(folder), barrier=True),
            "ours": lambda: harness_round(sizes, plan),
        }
        for index in range(rounds):
            log(f"figure 9: round {index + 1} of {rounds} (IMB-MPI1 twice and the harness)")
            order = list(jobs)[index % 3 :] + list(jobs)[: index % 3]
            out.append({name: jobs[name]() for name in order})
    return out


def run(mode: Mode) -> Figure:
    """Time Intel MPI's allreduce with IMB-MPI1 and with collsweep's harness, in rounds."""
    if not libraries.installed(IMPI):
        raise JobFailed(f"Intel MPI is not in {libraries.prefix(IMPI)}: run `make install`")
    rounds = mode.pick(10, 4, 1)
    plan = mode.pick(
        ITERATIONS, {s: ITERATIONS[s] for s in (8, 64 * KIB, 4 * MIB)}, {8: 20, 64 * KIB: 5}
    )
    results = collect(rounds, plan)
    figure = Figure(
        9,
        "Intel MPI vs IMB-MPI1",
        f"IMB-MPI1 Allreduce (the impi-rt wheel's) with -imb_barrier on, t_max, on the same "
        f"library, p={RANKS}, float32; {rounds} rounds of IMB back to back, IMB with its "
        "barrier and the harness (impi, as a sweep times it), the order rotating",
    )
    rows = []
    for nbytes in sorted(plan):
        b2b = [r["b2b"][nbytes]["t_avg"] for r in results]
        barrier = [r["barrier"][nbytes]["t_max"] for r in results]
        ours = [r["ours"][nbytes] for r in results]
        to_barrier = median(o / i for o, i in zip(ours, barrier, strict=True))
        to_b2b = median(o / i for o, i in zip(ours, b2b, strict=True))
        rows.append(
            [
                format_bytes(nbytes),
                us(median(b2b)),
                us(median(barrier)),
                us(median(ours)),
                f"{to_barrier:.2f}",
                f"{to_b2b:.2f}",
            ]
        )
        figure.checks.append(check_for(nbytes, to_barrier))
    headers = [
        "size",
        "IMB b2b t_avg us",
        "IMB barrier t_max us",
        "collsweep us",
        "/barrier",
        "/b2b",
    ]
    figure.table = table(headers, rows)
    figure.notes += NOTES
    return figure


def check_for(nbytes: int, ratio: float) -> Check:
    """A ratio target from LARGE up; below it, the number alone."""
    name = f"collsweep / IMB (barrier) t_max at {format_bytes(nbytes)}, p={RANKS}"
    if nbytes < LARGE:
        return Check(name, f"{ratio:.2f}x", "reported", None)
    low, high = RATIO_RANGE
    return Check(name, f"{ratio:.2f}x", f"{low}..{high}x", low <= ratio <= high)
