"""Figure 3: time to precision, the quick preset's adaptive policy vs fixed OSU-style counts,
and which factor makes the two policies' medians differ (benchmarks.fig_factors).

Both run through `collsweep sweep` on the quick preset's grid, into temporary stores. The
OSU-style policy is approximated with spec overrides, as a spec cannot vary counts by size:
one sweep of the sizes up to 8 KiB with 1000 iterations after 100 warm-ups, one of the larger
sizes with 100 after 10; a fixed count (an unreachable CI target, a budget that never binds),
one pass, one launch (one mpiexec, as OSU runs).
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks import fig_factors
from benchmarks.common import Check, Figure, JobFailed, log, run_command, table
from benchmarks.fig_factors import by_size, osu_policy
from benchmarks.mode import Mode, write_spec
from runners.domain.sweep.spec import SweepSpec
from runners.store import across_runs


@dataclass
class PolicyResult:
    """What one policy cost and got on the grid."""

    name: str
    wall_s: float = 0.0
    span_s: float = 0.0
    points: int = 0
    precise: int = 0
    iterations: int = 0
    medians: dict[tuple, float] | None = None
    by_ranks: dict[int, tuple[int, int]] | None = None  # ranks -> (within CI, points)


def sweep(spec: Path, store_path: Path, overrides: list[str]) -> float:
    """Run `collsweep sweep` on the spec file with overrides; its wall time in seconds."""
    argv = [sys.executable, "-m", "runners.cli", "sweep", str(spec), "--store", str(store_path)]
    started = time.monotonic()
    result = run_command([*argv, *overrides], timeout=900)
    if result.returncode != 0 or result.timed_out:
        tail = " | ".join(result.stderr.strip().splitlines()[-3:])
        raise JobFailed(f"collsweep sweep {' '.join(overrides)} failed: {tail}")
    return time.monotonic() - started


def summarize_store(result: PolicyResult, store_path: Path, target: float) -> None:
    """Fill in points, precise points, iterations, span and medians from a store."""
    frame = across_runs.ok_points_of_every_run(store_path)
    result.points = len(frame)
    result.precise = int((frame["ci_rel_halfwidth"] <= target).sum())  # NaN counts as not
    result.iterations = int(frame["iterations"].sum())
    spans = frame.groupby("run_id").agg(a=("started_at", "min"), b=("finished_at", "max"))
    result.span_s = float((spans["b"] - spans["a"]).dt.total_seconds().sum())
    within = frame["ci_rel_halfwidth"] <= target
    result.by_ranks = {
        int(r): (int(within[frame["ranks"] == r].sum()), int((frame["ranks"] == r).sum()))
        for r in sorted(frame["ranks"].unique())
    }
    keys = zip(frame["algorithm"], frame["ranks"], frame["bytes"], strict=True)
    result.medians = dict(zip(keys, frame["median_s"], strict=True))


def run_policies(spec: SweepSpec, folder: Path) -> list[PolicyResult]:
    """The spec as it is, then the OSU-style halves; each into its own store."""
    quick, osu = PolicyResult("quick preset (adaptive)"), PolicyResult("OSU-style fixed counts")
    spec_file = write_spec(spec, folder)
    log("figure 3: quick preset")
    quick.wall_s = sweep(spec_file, folder / "quick.duckdb", [])
    summarize_store(quick, folder / "quick.duckdb", spec.timing.target_rel_ci)
    for overrides in by_size(spec, osu_policy):
        log(f"figure 3: OSU-style policy, {overrides[1]} B")
        osu.wall_s += sweep(spec_file, folder / "osu.duckdb", overrides)
    summarize_store(osu, folder / "osu.duckdb", spec.timing.target_rel_ci)
    return [quick, osu]


def agreement(
    quick: PolicyResult, osu: PolicyResult, ranks: int | None = None
) -> tuple[float, float, int]:
    """Median and worst |quick / osu - 1| over the points both measured (at `ranks`)."""
    mine, theirs = quick.medians or {}, osu.medians or {}
    keys = [k for k in set(mine) & set(theirs) if ranks is None or k[1] == ranks]
    gaps = sorted(abs(mine[k] / theirs[k] - 1) for k in keys)
    if not gaps:
        return float("nan"), float("nan"), 0
    return gaps[len(gaps) // 2], gaps[-1], len(gaps)


def agreement_note(quick: PolicyResult, osu: PolicyResult) -> str:
    """How far the two policies' medians are apart, per group size."""
    parts = []
    for ranks in quick.by_ranks or {}:
        mid, worst, shared = agreement(quick, osu, ranks)
        parts.append(f"p={ranks}: median {mid:.1%}, worst {worst:.1%} over {shared} points")
    return "medians of the two policies, |quick/OSU - 1|: " + "; ".join(parts)


def by_ranks_note(quick: PolicyResult, osu: PolicyResult) -> str:
    """Points within the CI target per group size, both policies."""
    parts = []
    for ranks, (q_in, q_all) in (quick.by_ranks or {}).items():
        o_in, o_all = (osu.by_ranks or {}).get(ranks, (0, 0))
        parts.append(f"p={ranks}: quick {q_in}/{q_all}, OSU-style {o_in}/{o_all}")
    return "within CI by group size: " + "; ".join(parts)


def run(mode: Mode) -> Figure:
    """Run both policies on the preset's grid and compare cost and precision."""
    spec = mode.preset()
    with tempfile.TemporaryDirectory(prefix="collsweep-bench-") as folder:
        quick, osu = run_policies(spec, Path(folder))
        factors_folder = Path(folder) / "factors"
        factors_folder.mkdir()
        spec_file = write_spec(spec, factors_folder)
        plan = mode.pick(fig_factors.VARIANTS, fig_factors.VARIANTS, fig_factors.SMOKE_VARIANTS)
        rounds = mode.pick(3, 2, 1)
        timeline = fig_factors.run_variants(spec_file, spec, factors_folder, (plan, rounds), sweep)
    factors = fig_factors.factor_rows(timeline, plan)
    barrier = fig_factors.barrier_lines(spec, mode.pick(15, 9, 3))
    figure = Figure(
        3,
        "Time to precision",
        "OSU-style fixed counts (1000 iterations / 100 warm-ups up to 8 KiB, 100 / 10 above) "
        f"on the same grid ({mode.preset_label()})",
    )
    rows = [policy_row(p) for p in (quick, osu)]
    headers = ["policy", "wall s", "measuring s", "points", "iterations", "within CI", "s/precise"]
    figure.table = [
        *table(headers, rows),
        "",
        *fig_factors.factor_table(factors),
        "",
        *fig_factors.barrier_table(barrier),
    ]
    target = spec.timing.target_rel_ci
    figure.checks = [*precision_checks(quick, osu, target), fig_factors.check(factors)]
    figure.notes += [
        by_ranks_note(quick, osu),
        f"'within CI': points whose median's 95% CI half-width is within {target:.0%} "
        "(the preset's target; for the quick preset this is points.ci_target_met)",
        agreement_note(quick, osu),
        "wall s: the whole `collsweep sweep` command(s), including any calibration and analysis "
        "the sweep does; measuring s: first point started to last point finished, per run",
        *fig_factors.notes(factors, barrier, rounds),
    ]
    return figure


def policy_row(p: PolicyResult) -> list[object]:
    """One table row for a policy."""
    per_precise = f"{p.span_s / p.precise:.3f}" if p.precise else "inf"
    share = f"{p.precise}/{p.points} ({p.precise / max(p.points, 1):.0%})"
    times = [f"{p.wall_s:.1f}", f"{p.span_s:.1f}"]
    return [p.name, *times, p.points, p.iterations, share, per_precise]


def precision_checks(quick: PolicyResult, osu: PolicyResult, target: float) -> list[Check]:
    """The ratios of figure 3 against the OSU-style baseline (the issue sets no target)."""
    share_q, share_o = quick.precise / max(quick.points, 1), osu.precise / max(osu.points, 1)
    per_q = quick.span_s / quick.precise if quick.precise else float("inf")
    per_o = osu.span_s / osu.precise if osu.precise else float("inf")
    time_ratio = quick.span_s / osu.span_s if osu.span_s else float("nan")
    values = {
        "measuring time, quick / OSU-style": f"{time_ratio:.2f}x",
        f"share of points within {target:.0%} CI, quick vs OSU-style": (
            f"{share_q:.0%} vs {share_o:.0%}"
        ),
        "seconds per point within CI, quick / OSU-style": f"{per_q / per_o:.2f}x",
    }
    return [Check(name, value, "(no target)", None) for name, value in values.items()]
