"""Figure 14: the adaptive sweep against the full grid of the same spec.

Two judges. **Simulated at scale**: the ground truth is every point of a grid of five
collectives at p = 16 to 512 simulated in SimGrid on a 2:1 tapered fat tree (`collsweep
simulate`); the sweep's model is the contention-free price on the platform's link figures, so
it is wrong where contention matters; every measurement is drawn around the truth with this
host's launch-to-launch spread, measured by the real sweeps below (benchmarks.adaptive_truth).
**Real at p=2 here**: the same spec swept whole and adaptively into one store, the adaptive run
first (its calibration, made before its rounds, is then the full run's too, so neither's time
holds one), each judged by the full run's own measurements.

Per cell: is the adaptive answer (measured or inferred) the full grid's decided winner, and the
regret: how much slower the adaptive choice is than the full grid's answer (its winner, or
either of a tie's two; in the truth, at p=2 in the full run's medians), as a share of its time.
Measuring time: the rounds' cost against the full grid's (simulated: each point's cost under
the timing policy and its launches' starts; real: the sweeps' wall time, started to finished).
"""

from __future__ import annotations

import itertools
import math
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.adaptive_truth import (
    Judged,
    Noisy,
    Truth,
    adaptive,
    judged,
    noise_floor,
    regret,
)
from benchmarks.common import Check, Figure, JobFailed, log, run_command, table, venv_tool
from benchmarks.fig_simulate import simulate
from benchmarks.mode import Mode
from runners import store
from runners.domain.adaptive.estimates import Outcome, Where
from runners.domain.libraries.catalog import collective_of
from runners.domain.sweep.adaptive_spec import parse_budget
from runners.store import across_runs

SHARE_LIMIT, MEDIAN_LIMIT, WORST_LIMIT, WINNERS_LIMIT = 0.10, 0.02, 0.05, 0.95
BUDGET = "10%"
PLATFORM = "data/platforms/fat-tree-edr-2to1.toml"
GROUND_TRUTH = {  # collective -> its algorithms, simulated at every p and size
    "allreduce": "recursive_doubling,ring,rabenseifner,binomial_tree",
    "bcast": "bcast.binomial_tree,bcast.scatter_allgather,bcast.chain(segment=64K),"
    "bcast.two_tree(segment=64K)",
    "allgather": "allgather.ring,allgather.recursive_doubling,allgather.bruck",
    "reduce": "reduce.binomial_tree,reduce.rabenseifner,reduce.knomial(radix=4)",
    "reduce_scatter": "reduce_scatter.ring,reduce_scatter.recursive_halving,"
    "reduce_scatter.pairwise",
}
DEFAULT_SPREAD = 0.05  # only where no real sweep ran (never in a judged mode)


def run(mode: Mode) -> Figure:
    """The real p=2 comparison first (it measures the host's spread), then the simulated one."""
    figure = Figure(
        14,
        "Adaptive sweep",
        f"the full grid of the same spec; targets (budget {BUDGET}): measuring time <= "
        f"{SHARE_LIMIT:.0%} of the full grid's, median regret <= {MEDIAN_LIMIT:.0%}, worst <= "
        f"{WORST_LIMIT:.0%}, winners of decided cells >= {WINNERS_LIMIT:.0%}",
    )
    with tempfile.TemporaryDirectory(prefix="collsweep-adaptive-") as folder:
        real, spread = _real(mode, Path(folder), figure.notes)
    simulated, natural, floor = _simulated(mode, *spread)
    rows = [_row(f"simulated, seed {seed}", j) for seed, j in enumerate(simulated)]
    rows += [_row("simulated, budget 100%", natural)]
    rows += [["full grid vs truth", "", "", "", f"{floor[0]:.1%}", f"{floor[1]:.1%}", *[""] * 4]]
    rows += [_row(f"real p=2, pair {i + 1}", j) for i, j in enumerate(real)]
    figure.table = table(
        ["judged", "cells", "time share", "winners", "regret median", "worst", "crossovers",
         "rounds", "stopped", "points measured"],
        rows,
    )  # fmt: skip
    figure.checks += _checks("simulated (worst seed)", simulated, mode)
    figure.checks += _checks("real p=2 (worst pair)", real, mode)
    figure.notes += [
        f"this host's spread drawn into the simulated measurements, from the real full grid's "
        f"(launch, pass) medians: a point's own {spread[0]:.1%} (sd of its logs around its "
        f"median and the unit's shift, median over points) and a shift shared by a launch's "
        f"points {spread[1]:.1%} (sd over units; the pairing cancels it within a round)",
        *NOTES,
    ]
    return figure


def _row(label: str, j: Judged) -> list[object]:
    found, total = j.crossovers
    measured, points = j.points
    return [
        label, j.cells, f"{j.measured_share:.1%}", f"{j.winners_share:.1%}",
        f"{j.regret_median:.1%}", f"{j.regret_worst:.1%}", f"{found} of {total}", j.rounds,
        j.stop, f"{measured} of {points}",
    ]  # fmt: skip


def _checks(what: str, runs: Sequence[Judged], mode: Mode) -> list[Check]:
    """The four targets over every run of a kind, each at its worst run."""
    if not runs:
        return []
    judged_now = mode.judged
    share = max(j.measured_share for j in runs)
    median = max(j.regret_median for j in runs)
    worst = max(j.regret_worst for j in runs)
    winners = min(j.winners_share for j in runs)
    return [
        Check(f"{what}: measuring time", f"{share:.1%} of the full grid's",
              f"<= {SHARE_LIMIT:.0%}", share <= SHARE_LIMIT if judged_now else None),
        Check(f"{what}: median regret", f"{median:.1%}", f"<= {MEDIAN_LIMIT:.0%}",
              median <= MEDIAN_LIMIT if judged_now else None),
        Check(f"{what}: worst regret", f"{worst:.1%}", f"<= {WORST_LIMIT:.0%}",
              worst <= WORST_LIMIT if judged_now else None),
        Check(f"{what}: winners", f"{winners:.1%} of decided cells", f">= {WINNERS_LIMIT:.0%}",
              winners >= WINNERS_LIMIT if judged_now else None),
    ]  # fmt: skip


# --- simulated at scale ------------------------------------------------------------------------


def _simulated(
    mode: Mode, spread: float, shared: float
) -> tuple[list[Judged], Judged, tuple[float, float]]:
    """Each noise seed's adaptive sweep at the budget, and one at 100% (where it stops by
    itself), against the full grid on the simulated truth."""
    ranks = mode.pick("16,64,256,512", "64,256", "16")
    sizes = mode.pick(_doublings(8, 64 * 2**20), _doublings(64, 16 * 2**20, 4), "8,4K,1M")
    collectives = mode.pick(list(GROUND_TRUTH), ["allreduce", "bcast"], ["allreduce"])
    points = []
    for collective in collectives:
        log(f"figure 14: simulating the ground truth of {collective} at p={ranks}")
        words = ["--platform", PLATFORM, "--ranks", ranks, "--sizes", sizes]
        words += ["--collectives", collective, "--algorithms", GROUND_TRUTH[collective]]
        points += simulate(*words, timeout=3600)
    truth = Truth.of(points)
    grid = truth.grid()
    runs = []
    for seed in range(mode.pick(5, 3, 1)):
        noisy, full = Noisy(truth, spread, shared, seed), Noisy(truth, spread, shared, -1 - seed)
        runs.append(judged(noisy, full, grid, adaptive(noisy, grid, parse_budget(BUDGET))))
    noisy, full = Noisy(truth, spread, shared, 0), Noisy(truth, spread, shared, -1)
    natural = judged(noisy, full, grid, adaptive(noisy, grid, parse_budget("100%")))
    return runs, natural, noise_floor(Noisy(truth, spread, shared, -1), grid)


def _doublings(first: int, last: int, factor: int = 2) -> str:
    sizes = [first]
    while sizes[-1] * factor <= last:
        sizes.append(sizes[-1] * factor)
    return ",".join(map(str, sizes))


# --- real at p=2 ------------------------------------------------------------------------------


def _real(mode: Mode, folder: Path, notes: list[str]) -> tuple[list[Judged], tuple[float, float]]:
    """Adaptive then full sweeps of the same spec at p=2 into one store, in pairs; each pair
    judged, and the host's spread from the full runs' launches."""
    path = folder / "adaptive.duckdb"
    spec, extra = mode.pick(
        ("data/standard.toml", ["--ranks", "2"]),
        ("data/quick.toml", ["--ranks", "2", "--sizes", "8:4M"]),
        ("data/quick.toml", ["--ranks", "2", "--sizes", "8,4K", "--launches", "1",
                             "--budget-s", "0.02"]),
    )  # fmt: skip
    pairs, spreads = [], []
    for pair in range(mode.pick(2, 1, 1)):
        log(f"figure 14: real p=2, pair {pair + 1}: {spec} adaptively, then whole")
        budget = mode.pick(BUDGET, BUDGET, "100%")  # a smoke grid of 2 sizes: round 0 is all
        adaptive_id = _adaptive_sweep(path, [spec, *extra], budget, notes)
        full_id = _sweep(path, [spec, *extra])
        pairs.append(_judged_real(path, adaptive_id, full_id))
        spreads.append(_spread(path, full_id))
    own = statistics.median(s[0] for s in spreads) if spreads else DEFAULT_SPREAD
    shared = statistics.median(s[1] for s in spreads) if spreads else 0.0
    return pairs, (own if math.isfinite(own) and own > 0 else DEFAULT_SPREAD, shared)


def _adaptive_sweep(path: Path, words: list[str], budget: str, notes: list[str]) -> str:
    """An adaptive sweep at `budget`; where that budget does not cover round 0 (a small grid's
    launch starts), at 100% instead (it stops when every cell is decided), said."""
    try:
        return _sweep(path, [*words, "--adaptive", "--adaptive-budget", budget])
    except JobFailed as exc:
        if "does not cover the first cell" not in str(exc):
            raise
        why = str(exc).split("error: ")[-1]
    note = (
        f"real p=2: a budget of {budget} did not cover round 0 on this grid ({why}); the "
        "adaptive runs had 100% and stopped when every cell was decided"
    )
    notes += [note] if note not in notes else []
    return _sweep(path, [*words, "--adaptive", "--adaptive-budget", "100%"])


def _sweep(path: Path, words: list[str]) -> str:
    """One `collsweep sweep` into the store; the new run's id."""
    before = set(_run_ids(path))
    argv = [venv_tool("collsweep"), "sweep", *words, "--store", str(path)]
    result = run_command(argv, timeout=3600)
    if result.timed_out or result.returncode != 0:
        raise JobFailed(f"collsweep sweep {' '.join(words)}: {result.stderr.strip()[-400:]}")
    (run_id,) = set(_run_ids(path)) - before
    return run_id


def _run_ids(path: Path) -> list[str]:
    return across_runs.run_ids(path) if path.exists() else []


def _judged_real(path: Path, adaptive_id: str, full_id: str) -> Judged:
    """The adaptive run against the full run, by the full run's medians."""
    full = {_where(r): _outcome(r) for r in store.verdict_inputs(path, full_id)["winners"]}
    mine = store.verdict_inputs(path, adaptive_id)
    answer = {_where(r): r["winner"] for r in [*mine["winners"], *mine["inferred"]]}
    medians = {
        ((collective_of(a), p, dtype, op), n, a): seconds
        for (p, dtype, op, n, a), seconds in store.point_medians(path, full_id).items()
    }
    regrets = [regret(medians, w, answer[w], full[w]) for w in full if w in answer]
    decided = [w for w, o in full.items() if o.decided]
    same = sum(answer.get(w) == full[w].winner for w in decided)
    rounds: dict[str, Any] = (store.get_run(path, adaptive_id) or {}).get("adaptive") or {}
    return Judged(
        len(full),
        rounds["spent_s"] / _measuring_s(path, full_id),
        same / len(decided) if decided else 1.0,
        statistics.median(regrets) if regrets else 0.0,
        max(regrets, default=0.0),
        _crossovers(full, answer),
        rounds["rounds"],
        rounds["stop"],
        (rounds["measured"], rounds["grid_points"]),
    )


def _where(row: Mapping[str, Any]) -> Where:
    group = (row.get("collective") or "allreduce", int(row["ranks"]), row["dtype"], row["op"])
    return group, int(row["bytes"])


def _outcome(row: Mapping[str, Any]) -> Outcome:
    return Outcome(row["winner"], row["runner_up"], bool(row["decided"]))


def _crossovers(full: Mapping[Where, Outcome], answer: Mapping[Where, str]) -> tuple[int, int]:
    """The full run's crossovers (adjacent decided sizes, winners differing) that the
    adaptive answer puts between the same two sizes."""
    found = total = 0
    cells = sorted(w for w, o in full.items() if o.decided)
    for below, above in itertools.pairwise(cells):
        if below[0] != above[0] or full[below].winner == full[above].winner:
            continue
        total += 1
        found += answer.get(below) == full[below].winner and answer.get(above) == full[above].winner
    return found, total


def _measuring_s(path: Path, run_id: str) -> float:
    """A run's wall time from its start to its end (before its analysis)."""
    run: dict[str, Any] = dict(store.get_run(path, run_id) or {})
    return (run["finished_at"] - run["started_at"]).total_seconds()


def _spread(path: Path, run_id: str) -> tuple[float, float]:
    """The run's spread as two numbers: a point's own (the sd of its (launch, pass) medians'
    logs around its median, less the unit's shift; median over points) and the shift a
    (launch, pass) gives all its points alike (the sd of the units' median deviations)."""
    frame = store.unit_medians(path, run_id)
    frame = frame[frame.median_s > 0].assign(log=lambda f: f.median_s.map(math.log))
    frame["dev"] = frame.log - frame.groupby("point_id").log.transform("median")
    units = frame.groupby(["launch", "pass"]).dev.transform("median")
    frame["own"] = frame.dev - units
    shifts = frame.groupby(["launch", "pass"]).dev.median()
    own = frame.groupby("point_id").own.apply(lambda v: math.sqrt(float((v**2).mean())))
    shared = float(shifts.std()) if len(shifts) > 1 else 0.0
    return (float(own.median()) if len(own) else DEFAULT_SPREAD), shared


NOTES = [
    "time share: the adaptive rounds' cost over the full grid's (simulated: each point's cost "
    "under the timing policy, the least calls in every launch and pass up to the budget, and "
    "every launch's start; real: wall seconds of the rounds' sweeps over the full sweep's)",
    "winners: of the full grid's decided cells, those whose adaptive answer (measured, or "
    "inferred and said so) is the same algorithm; regret, every cell: the adaptive choice's "
    "time over the full grid's answer's, less 1 (its decided winner; for a tie, 0 where the "
    "choice is either of the two it could not tell apart, else against the faster of them), "
    "in the truth (simulated) or the full run's medians (real: noisy, so it can be below 0)",
    "full grid vs truth: the full grid's own winner by median against the truly fastest, every "
    "cell (seed 0's draws): what this noise costs even a grid that measures everything",
    "crossovers: the full grid's changes of decided winner between adjacent sizes that the "
    "adaptive answer puts between the same sizes",
    "the simulator prices a byte alike whatever its datatype, so the simulated grid holds one "
    "datatype (a spec of three would triple both grids' points, not their launches)",
    f"ground truth: {PLATFORM} in SimGrid (an actor per rank up to p=64, rounds above)",
]
