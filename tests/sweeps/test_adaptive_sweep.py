"""`collsweep sweep --adaptive` on real ranks (p=2): round 0 from the model, later rounds where
the decision is uncertain, every unmeasured cell inferred and said so on every surface, the
stored spec holding each point chosen with its round and reason, a stop between rounds leaving
a true status, and a resume that measures the chosen round and goes on."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from conftest import HeldPoint, run_cli, wait_until
from helpers.sweep_runs import only_run, start, write_spec

from runners import store
from runners.domain.adaptive.rounds import BUDGET_SPENT, DECIDED
from runners.domain.status import RunStatus
from runners.domain.sweep.spec import parse_spec

pytestmark = pytest.mark.mpi

ALGORITHMS = '["recursive_doubling", "ring", "rabenseifner", "binomial_tree", "mpi"]'
SPEC = (  # 22 sizes x 5 algorithms: a round's launches cost less than the rest of the grid
    f"ranks = [2]\nalgorithms = {ALGORITHMS}\nsizes = {{ min = 8, max = 16777216 }}\n"
    "budget_s = 0.2\nmin_iterations = 4\nmax_iterations = 400\nwarmup = 1\nlaunches = 2\n"
    "launch_calibration = false\n"
)
SIZES = [8 * 2**k for k in range(22)]


def cells_of(db: Path, table: str, run_id: str) -> set[int]:
    found = store.query(db, f"SELECT bytes FROM {table} WHERE run_id = ?", [run_id])
    return {int(n) for n in found.bytes}


def test_an_adaptive_sweep_measures_some_points_and_says_what_it_inferred(
    tmp_path: Path, calibrated_store: Path
) -> None:
    db = calibrated_store
    spec = str(write_spec(tmp_path, SPEC))
    done = run_cli("sweep", spec, "--adaptive", "--adaptive-budget", "60%", "--store", str(db))
    assert done.returncode == 0, done.stderr
    assert "adaptive round 0:" in done.stderr and "smallest size" in done.stderr
    run_id = only_run(db)
    run = store.get_run(db, run_id)
    assert run is not None and run["status"] == RunStatus.COMPLETE
    rounds = run["adaptive"]
    assert rounds["stop"] in (DECIDED, BUDGET_SPENT) and rounds["grid_points"] == 110
    chosen = parse_spec(run["spec_toml"]).adaptive_points
    assert 0 < len(chosen) == rounds["measured"] < 110
    assert all(reason for *_, reason in chosen) and {k for *_, k, _ in chosen} >= {0}
    smallest = {a for a, _, n, *_ in chosen if n == 8}
    assert len(smallest) == 5  # every algorithm at the smallest size
    stored = store.query(db, "SELECT algorithm, bytes, status FROM points")
    assert set(stored.status) == {"ok"}
    assert set(zip(stored.algorithm, stored.bytes, strict=True)) == {
        (a, n) for a, _, n, *_ in chosen
    }
    measured, inferred = cells_of(db, "winners", run_id), cells_of(db, "cell_inferences", run_id)
    assert measured | inferred == set(SIZES) and not measured & inferred and inferred
    assert "inferred, not measured:" in done.stderr and "(inferred" in done.stderr
    summary = run_cli("crossovers", run_id, "--summary", "--format", "json", "--store", str(db))
    cells = json.loads(summary.stdout)
    guessed = [c for c in cells if not c["measured"]]
    assert {c["bytes"] for c in guessed} == inferred and all(c["reason"] for c in guessed)


def test_a_stop_between_rounds_is_true_and_a_resume_measures_the_round_and_goes_on(
    tmp_path: Path, calibrated_store: Path, reliability
) -> None:
    db, log = calibrated_store, tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "adaptive-round")
    spec = write_spec(tmp_path, SPEC)  # the whole budget: round 1 is chosen (8 B's winner is
    # the library's, the large sizes' a hand-written one's; a sweep without one fails at once)
    sweep = start(db, spec, "--adaptive", "--adaptive-budget", "100%", env=held.env, log=log)
    parked = wait_until(lambda: held.held_file.exists() or sweep.poll() is not None, 180)
    assert parked and sweep.poll() is None, log.read_text()[-2000:]
    sweep.send_signal(signal.SIGINT)
    out, _ = sweep.communicate(timeout=60)
    assert sweep.returncode == 130, log.read_text()[-2000:]
    run_id = only_run(db)
    run = store.get_run(db, run_id)
    assert run is not None and run["status"] == RunStatus.INTERRUPTED
    assert "adaptive round 1 chosen, not yet measured" in run["status_reason"]
    assert f"collsweep sweep --resume {run_id}" in out
    chosen = parse_spec(run["spec_toml"]).adaptive_points
    pending = {(a, n) for a, _, n, _, _, k, _ in chosen if k == 1}
    stored = store.query(db, "SELECT algorithm, bytes FROM points WHERE run_id = ?", [run_id])
    assert pending and not pending & set(zip(stored.algorithm, stored.bytes, strict=True))
    reliability.fault("SIGINT between adaptive rounds", 0, True)
    resumed = run_cli("sweep", "--resume", run_id, "--adaptive-budget", "100%", "--store", str(db))
    assert resumed.returncode == 0, resumed.stderr
    after = store.get_run(db, run_id)
    assert after is not None and after["status"] == RunStatus.COMPLETE
    assert after["adaptive"]["rounds"] >= 2
    stored = store.query(db, "SELECT algorithm, bytes FROM points WHERE run_id = ?", [run_id])
    assert pending <= set(zip(stored.algorithm, stored.bytes, strict=True))
