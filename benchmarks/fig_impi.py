"""Figure 9: collsweep's timing of Intel MPI's own MPI_Allreduce against IMB-MPI1's, the
benchmark the impi-rt wheel ships, on the same library, one job after the other, in rounds."""

from __future__ import annotations

import tempfile
from pathlib import Path

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
from runners.jobs import launch

RANKS = 2
ITERATIONS = {8: 1000, 4 * KIB: 1000, 64 * KIB: 250, 512 * KIB: 100, 4 * MIB: 30}
LARGE = 64 * KIB  # from here on both time bandwidth, not call overheads: a ratio target
RATIO_RANGE = (0.8, 1.25)  # harness median / IMB t_avg, median over rounds
WARMUP = 10
NOTES = [
    "IMB-MPI1 Allreduce times a loop of back-to-back calls and reports per call t_min, t_max "
    "and t_avg over ranks; collsweep puts a Barrier before every call and keeps the slowest "
    "rank's time of each, its median. Small calls therefore differ by design (IMB's pipelined "
    "calls overlap; collsweep's each pay the Barrier's skew): reported, not judged. From "
    f"{format_bytes(LARGE)} both measure the transfer, and the ratio is held to "
    f"{RATIO_RANGE[0]}..{RATIO_RANGE[1]}.",
    "Each round runs IMB-MPI1 and the harness as separate Intel MPI jobs, the order "
    "alternating, so the machine's slow and fast states hit both; ratios are per round.",
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


def imb_round(sizes: list[int], folder: Path) -> dict[int, dict[str, float]]:
    """One IMB-MPI1 Allreduce job on Intel MPI over exactly `sizes` (a -msglen file)."""
    lengths = folder / "lengths"
    lengths.write_text("\n".join(map(str, sizes)) + "\n")
    argv = [str(IMPI.mpiexec()), "-n", str(RANKS), str(IMPI.prefix() / "bin" / "IMB-MPI1")]
    argv += ["Allreduce", "-npmin", str(RANKS), "-msglen", str(lengths), "-time", "10"]
    argv += ["-iter", str(max(ITERATIONS[s] for s in sizes)), "-zero_size", "0"]
    result = run_command(argv, IMPI.launch_env(), timeout=600)
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


def collect(rounds: int, plan: dict[int, int]) -> list[tuple[dict, dict]]:
    """Per round, IMB's table and the harness's medians (the order alternating)."""
    sizes = sorted(plan)
    out = []
    with tempfile.TemporaryDirectory() as folder:
        for index in range(rounds):
            log(f"figure 9: round {index + 1} of {rounds} (IMB-MPI1 and the harness)")
            if index % 2 == 0:
                imb, ours = imb_round(sizes, Path(folder)), harness_round(sizes, plan)
            else:
                ours, imb = harness_round(sizes, plan), imb_round(sizes, Path(folder))
            out.append((imb, ours))
    return out


def run(mode: Mode) -> Figure:
    """Time Intel MPI's allreduce with IMB-MPI1 and with collsweep's harness, in rounds."""
    if not IMPI.installed():
        raise JobFailed(f"Intel MPI is not in {IMPI.prefix()}: run `make install`")
    rounds = mode.pick(10, 4, 1)
    plan = mode.pick(
        ITERATIONS, {s: ITERATIONS[s] for s in (8, 64 * KIB, 4 * MIB)}, {8: 20, 64 * KIB: 5}
    )
    results = collect(rounds, plan)
    figure = Figure(
        9,
        "Intel MPI vs IMB-MPI1",
        f"IMB-MPI1 Allreduce (the impi-rt wheel's) on the same library, p={RANKS}, float32, "
        f"{rounds} rounds alternating IMB and the harness (impi, as a sweep times it)",
    )
    rows = []
    for nbytes in sorted(plan):
        imb = [r[0][nbytes] for r in results]
        ours = [r[1][nbytes] for r in results]
        to_avg = median(o / i["t_avg"] for o, i in zip(ours, imb, strict=True))
        to_max = median(o / i["t_max"] for o, i in zip(ours, imb, strict=True))
        rows.append(
            [
                format_bytes(nbytes),
                us(median(i["t_avg"] for i in imb)),
                us(median(i["t_max"] for i in imb)),
                us(median(ours)),
                f"{to_avg:.2f}",
                f"{to_max:.2f}",
            ]
        )
        figure.checks.append(check_for(nbytes, to_avg))
    headers = ["size", "IMB t_avg us", "IMB t_max us", "collsweep us", "/t_avg", "/t_max"]
    figure.table = table(headers, rows)
    figure.notes += NOTES
    return figure


def check_for(nbytes: int, ratio: float) -> Check:
    """A ratio target from LARGE up; below it, the number alone."""
    name = f"collsweep / IMB t_avg at {format_bytes(nbytes)}, p={RANKS}"
    if nbytes < LARGE:
        return Check(name, f"{ratio:.2f}x", "reported", None)
    low, high = RATIO_RANGE
    return Check(name, f"{ratio:.2f}x", f"{low}..{high}x", low <= ratio <= high)
