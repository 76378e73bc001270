"""Figure 10: what `collsweep record`'s call recorder adds to each MPI_Allreduce call.

A C loop of back-to-back 8-byte MPI_Allreduce calls (benchmarks/record_timer.c, built with the
wheel's mpicc at bench time) runs as separate launches with and without the recorder preloaded
as `collsweep record` preloads it (LD_PRELOAD, a folder to record into), the two taking turns
round by round (the order alternating); every recorded launch is checked to have recorded each
of its calls. At p=1 MPI_Allreduce is nearly free, so the difference is the recorder's own cost
per call; at p=2 it sits inside a real exchange.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import (
    BUILD,
    ROOT,
    Check,
    Figure,
    JobFailed,
    checked_lines,
    log,
    median,
    run_command,
    table,
    venv_tool,
)
from benchmarks.mode import Mode
from runners.domain.libraries import DEFAULT
from runners.domain.workload.recording import read_records
from runners.jobs.recorder_build import recorder
from runners.jobs.recording import program_env, search_path

SOURCE = ROOT / "benchmarks" / "record_timer.c"
PROGRAM = BUILD / "record_timer"
WARMUP = 100  # untimed calls record_timer makes first
RANKS = (1, 2)
MAX_ADDED_S = 100e-9  # at p=1: the recorder's own cost per call


def build() -> Path:
    """Compile record_timer unless it is newer than its source."""
    BUILD.mkdir(parents=True, exist_ok=True)
    if not PROGRAM.exists() or PROGRAM.stat().st_mtime < SOURCE.stat().st_mtime:
        argv = [venv_tool("mpicc"), "-O2", "-Wall", "-o", str(PROGRAM), str(SOURCE)]
        checked_lines(run_command(argv, timeout=120), f"mpicc {SOURCE.name}")
    return PROGRAM


def launch(ranks: int, calls: int, repeats: int, recorded: bool) -> float:
    """One launch's median seconds per call; a recorded launch must have recorded them all."""
    argv = [venv_tool("mpiexec"), "-n", str(ranks), str(PROGRAM), str(calls), str(repeats)]
    with tempfile.TemporaryDirectory(prefix="collsweep-bench-record-") as folder:
        env = (
            program_env(DEFAULT, recorder(DEFAULT), Path(folder))
            if recorded
            else {"PATH": search_path()}
        )
        [line] = checked_lines(run_command(argv, env, timeout=300), f"record_timer p={ranks}")
        if recorded:
            zero = read_records(Path(folder))[0]
            made = {call.nbytes: call.calls for call in zero.calls if call.op == "sum"}
            if made != {8: WARMUP + calls * repeats}:
                raise JobFailed(f"the recorder saw {made} of {WARMUP + calls * repeats} calls")
    return median(line["seconds_per_call"])


def run(mode: Mode) -> Figure:
    """Plain and recorded launches in alternating rounds, per group size."""
    calls, repeats, rounds = mode.pick((20000, 5, 8), (20000, 3, 3), (200, 1, 1))
    build()
    log(f"figure 10: {rounds} rounds of plain and recorded launches at p={RANKS}")
    figure = Figure(
        10,
        "Recorder overhead",
        "the same C loop of back-to-back MPI_Allreduce calls (8 B float32 SUM, "
        f"benchmarks/record_timer.c) without the recorder; {calls} calls x {repeats} repeats "
        f"per launch, {rounds} rounds alternating which goes first",
    )
    rows = []
    for ranks in RANKS:
        pairs = []
        for number in range(rounds):
            sides = (False, True) if number % 2 == 0 else (True, False)
            times = {side: launch(ranks, calls, repeats, side) for side in sides}
            pairs.append((times[False], times[True]))
        added = median(rec - plain for plain, rec in pairs)
        ratio = median(rec / plain for plain, rec in pairs)
        plain_ns, rec_ns = (median(p[i] for p in pairs) * 1e9 for i in (0, 1))
        rows.append(
            [ranks, f"{plain_ns:.1f}", f"{rec_ns:.1f}", f"{added * 1e9:+.1f}", f"{ratio:.3f}"]
        )
        name = f"recorder added per call, p={ranks}"
        if ranks == 1:
            figure.checks.append(
                Check(
                    name,
                    f"{added * 1e9:+.1f} ns",
                    f"<= +{MAX_ADDED_S * 1e9:.0f} ns",
                    added <= MAX_ADDED_S,
                )
            )
        else:
            figure.checks.append(Check(name, f"{added * 1e9:+.1f} ns ({ratio:.3f}x)", "none", None))
    figure.table = table(["p", "plain ns/call", "recorded ns/call", "added ns", "ratio"], rows)
    figure.notes += NOTES
    return figure


NOTES = [
    "added ns and ratio: medians over rounds of (recorded - plain) and recorded / plain, each "
    "launch's value the median of its repeats (max over ranks)",
    "at p=1 the call is nearly free inside MPICH, so the difference is the recorder's own work "
    "per call (a lock, a hash look-up, the order's run); at p=2 it hides inside the exchange and "
    "the machine's noise",
]
