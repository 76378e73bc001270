"""Figure 11: `collsweep simulate` at scale: what a point costs against p, messages simulated per
second, the scale preset's wall time, the rounds approximation against actors on a contended
platform, and `this-host` against a real p=2 sweep on this machine.

Each timing is one `collsweep simulate` command (its wall time as the points report it,
`wall_s`: the schedule's steps made, simulated and priced), on an otherwise idle machine.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.common import (
    Check,
    Figure,
    JobFailed,
    json_lines,
    log,
    median,
    run_command,
    table,
    venv_tool,
)
from benchmarks.mode import Mode
from runners import store
from runners.domain.sweep.simulation import SimulatedCall
from runners.jobs.launch import JobResult
from runners.store.across_runs import ok_points_of_every_run

ALLREDUCE = ("recursive_doubling", "binomial_tree", "rabenseifner", "ring")
LOGARITHMIC = ("recursive_doubling", "binomial_tree", "rabenseifner")
POINT_LIMIT_S = 30.0  # one algorithm at p = 1024 (the logarithmic ones at 4096), one size
PRESET_LIMIT_S = 180.0  # data/scale.toml
THIS_HOST_LIMIT = 0.15  # median |simulated / measured - 1| at p = 2


def simulate(*words: str, timeout: float = 900) -> list[dict]:
    """The points of one `collsweep simulate --json` command (stored nowhere unless words
    name a --store)."""
    stored = "--store" in words
    argv = [venv_tool("collsweep"), "simulate", *words, "--json"]
    argv += [] if stored else ["--no-store"]
    return json_lines_of(run_command(argv, timeout=timeout), " ".join(words))


def json_lines_of(result: JobResult, what: str) -> list[dict]:
    """The JSON lines of a finished command; JobFailed if it failed."""
    if result.timed_out or result.returncode != 0:
        raise JobFailed(f"collsweep simulate {what}: {result.stderr.strip()[-300:]}")
    return json_lines(result.stdout)


def run(mode: Mode) -> Figure:
    """Cost against p, the preset (full mode), rounds against actors, this-host."""
    figure = Figure(
        11,
        "Simulation at scale",
        "the contention-free price of the same schedule on the same platform (sim / free), "
        f"and the limits of issue 46: {POINT_LIMIT_S:.0f} s a point, "
        f"{PRESET_LIMIT_S:.0f} s for data/scale.toml, {THIS_HOST_LIMIT:.0%} at p=2 here",
    )
    figure.table = _cost_table(mode, figure)
    if mode is Mode.FULL:
        _preset(figure)
    _rounds_error(mode, figure)
    _this_host(mode, figure)
    figure.notes += NOTES
    return figure


def _cost_table(mode: Mode, figure: Figure) -> list[str]:
    """Wall seconds and messages per second of one 1 MiB point per algorithm and p (a smoke
    run simulates every algorithm in one command: its times are not judged)."""
    ranks = mode.pick((64, 256, 1024, 4096), (64, 1024), (16,))
    rows = []
    for p in ranks:
        algorithms = [a for a in ALLREDUCE if p <= 1024 or a in LOGARITHMIC]
        batches = [algorithms] if mode is Mode.SMOKE else [[a] for a in algorithms]
        for batch in batches:
            log(f"figure 11: {', '.join(batch)} at p={p}")
            words = ["--sizes", "1M", "--ranks", str(p), "--algorithms", ",".join(batch)]
            for point in simulate(*words):
                rows.append(_cost_row(point, p))
                if p >= 1024:
                    figure.checks.append(_point_check(point, p))
    head = ["algorithm", "p", "mode", "wall s", "messages/s", "sim / free"]
    return table(head, rows)


def _cost_row(point: dict, p: int) -> list[object]:
    """One simulated point's row: its wall time, messages per second and price ratio."""
    messages = _messages(point["algorithm"], p)
    return [
        point["algorithm"],
        p,
        point["mode"],
        f"{point['wall_s']:.2f}",
        f"{messages / point['wall_s']:.0f}",
        f"{point['simulated_s'] / point['predicted_s']:.4f}",
    ]


def _point_check(point: dict, p: int) -> Check:
    """A point at p >= 1024 within its time limit."""
    ok = point["wall_s"] <= POINT_LIMIT_S
    name = f"{point['algorithm']} at p={p}, 1 MiB"
    return Check(name, f"{point['wall_s']:.1f} s", f"<= {POINT_LIMIT_S:.0f} s", ok)


def _messages(algorithm: str, ranks: int) -> int:
    """Messages the schedule sends at 1 MiB float32 (what the simulator moves)."""
    call = SimulatedCall("allreduce", algorithm, algorithm, ranks, 1 << 20, "float32", "sum")
    return sum(step.send_to is not None for steps in call.steps() for step in steps)


def _preset(figure: Figure) -> None:
    """The preset as a user runs it: simulated on every core, stored as a run and analysed."""
    log("figure 11: data/scale.toml")
    with tempfile.TemporaryDirectory(prefix="collsweep-fig11-") as folder:
        started = time.monotonic()
        points = simulate("data/scale.toml", "--store", f"{folder}/s.duckdb", timeout=1800)
        total = time.monotonic() - started
    figure.checks.append(
        Check(
            f"data/scale.toml ({len(points)} points, stored and analysed)",
            f"{total:.0f} s",
            f"<= {PRESET_LIMIT_S:.0f} s",
            total <= PRESET_LIMIT_S,
        )
    )


def _rounds_error(mode: Mode, figure: Figure) -> None:
    """Rounds against actors on the 2:1 tapered fat-tree: the approximation's error."""
    words = ["--platform", "fat-tree-edr-2to1", "--ranks", mode.pick("64", "64", "16")]
    words += ["--sizes", "64K,1M", "--algorithms", ",".join(ALLREDUCE)]
    actors = simulate(*words, "--mode", "actors")
    rounds = simulate(*words, "--mode", "rounds")
    errors = [r["simulated_s"] / a["simulated_s"] - 1 for a, r in zip(actors, rounds, strict=True)]
    worst = max(errors, key=abs)
    figure.checks.append(
        Check(
            "rounds against actors, 2:1 fat-tree (worst)",
            f"{worst:+.1%} (median {median(errors):+.1%})",
            "none",
            None,
        )
    )


def _this_host(mode: Mode, figure: Figure) -> None:
    """A real p=2 sweep, then the same grid on `this-host` (its calibration)."""
    grid = ["--ranks", "2", "--algorithms", ",".join(ALLREDUCE)]
    grid += ["--sizes", mode.pick("8:2M:8", "8:2M:8", "8,64K")]
    with tempfile.TemporaryDirectory(prefix="collsweep-bench-sim-") as folder:
        db = str(Path(folder) / "s.duckdb")
        log("figure 11: a real p=2 sweep for this-host")
        budget = mode.pick("0.25", "0.25", "0.02")
        sweep = [venv_tool("collsweep"), "sweep", *grid, "--store", db, "--budget-s", budget]
        done = run_command([*sweep, "--launches", mode.pick("3", "2", "1")], timeout=900)
        if done.returncode != 0:
            raise JobFailed(f"the sweep for this-host: {done.stderr.strip()[-300:]}")
        measured = _measured(db)
        simulated = simulate(*grid, "--platform", "this-host", "--store", db)
    errors = [
        p["simulated_s"] / measured[(p["algorithm"], p["bytes"])] - 1
        for p in simulated
        if (p["algorithm"], p["bytes"]) in measured
    ]
    error = median(abs(e) for e in errors)
    figure.checks.append(
        Check(
            f"this-host against a real p=2 sweep ({len(errors)} points)",
            f"median |error| {error:.0%} (signed {median(errors):+.0%})",
            f"<= {THIS_HOST_LIMIT:.0%}",
            error <= THIS_HOST_LIMIT,
        )
    )


def _measured(db: str) -> dict[tuple[str, int], float]:
    """The sweep's ok points' medians by (algorithm, bytes), read through the store."""
    with store.Store.open(db) as opened:
        points = ok_points_of_every_run(opened)
    return {(r.algorithm, int(r.bytes)): float(r.median_s) for r in points.itertuples(index=False)}


NOTES = [
    "wall s: one point's cost inside `collsweep simulate` (steps made, simulated, priced), "
    "without the command's start; messages/s: the schedule's messages over that time",
    "mode auto: an actor per rank up to p=64, rounds above (docs/guide/simulation.md)",
    "this-host is a crossbar of the ping-pong calibration's alpha, beta and gamma: it leaves "
    "out what the model's overheads and contention variants add at p=2 (per-call and per-round "
    "software costs, both ranks copying through one memory), so it runs below the measurement",
]
