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
    "budget_s = 0.2\nmin_iterations = 4\nmax_iterations = 400\nwarmup = 1\nlaunches = 1\n"
    "launch_calibration = false\n"
)
SIZES = [8 * 2**k for k in range(22)]


def cells_of(db: Path, table: str, run_id: str) -> set[int]:
    found = store.query(db, f"SELECT bytes FROM {table} WHERE run_id = ?", [run_id])
    return {int(n) for n in found.bytes}


def test_an_adaptive_sweep_stopped_between_rounds_resumes_and_says_what_it_inferred(
    tmp_path: Path, calibrated_store: Path, reliability
) -> None:
    """SIGINT while round 1 waits to be measured: the status is true, the stored spec holds the
    round; the resume (with a smaller budget) measures it and ends with every cell either
    measured or inferred, said so in the verdict and the JSON summary."""
    db, log = calibrated_store, tmp_path / "sweep.err"
    held = HeldPoint(tmp_path, "adaptive-round")
    spec = write_spec(tmp_path, SPEC)  # the whole budget: round 1 is chosen (8 B's winner is
    # the library's, the large sizes' a hand-written one's; a sweep without one fails at once)
    sweep = start(db, spec, "--adaptive", "--adaptive-budget", "100%", env=held.env, log=log)
    parked = wait_until(lambda: held.held_file.exists() or sweep.poll() is not None, 180)
    assert parked and sweep.poll() is None, log.read_text()[-2000:]
    assert "adaptive round 0:" in log.read_text() and "smallest size" in log.read_text()
    sweep.send_signal(signal.SIGINT)
    out, _ = sweep.communicate(timeout=60)
    assert sweep.returncode == 130, log.read_text()[-2000:]
    run_id = only_run(db)
    run = store.get_run(db, run_id)
    assert run is not None and run["status"] == RunStatus.INTERRUPTED
    assert "adaptive round 1 chosen, not yet measured" in run["status_reason"]
    assert f"collsweep sweep --resume {run_id}" in out
    pending = {
        (a, n) for a, _, n, _, _, k, _ in parse_spec(run["spec_toml"]).adaptive_points if k == 1
    }
    assert pending and not pending & measured_points(db, run_id)
    reliability.fault("SIGINT between adaptive rounds", 0, True)
    done = run_cli("sweep", "--resume", run_id, "--adaptive-budget", "60%", "--store", str(db))
    assert done.returncode == 0, done.stderr
    run = store.get_run(db, run_id)
    assert run is not None and run["status"] == RunStatus.COMPLETE
    rounds, chosen = run["adaptive"], parse_spec(run["spec_toml"]).adaptive_points
    assert rounds["stop"] in (DECIDED, BUDGET_SPENT) and rounds["grid_points"] == 110
    assert rounds["rounds"] >= 2 and 0 < len(chosen) == rounds["measured"] < 110
    assert all(reason for *_, reason in chosen)
    assert len({a for a, _, n, *_ in chosen if n == 8}) == 5  # every algorithm at 8 B
    assert measured_points(db, run_id) == {(a, n) for a, _, n, *_ in chosen} >= pending
    measured, inferred = cells_of(db, "winners", run_id), cells_of(db, "cell_inferences", run_id)
    assert measured | inferred == set(SIZES) and not measured & inferred and inferred
    assert "inferred, not measured:" in done.stderr and "(inferred" in done.stderr
    summary = run_cli("crossovers", run_id, "--summary", "--format", "json", "--store", str(db))
    guessed = [c for c in json.loads(summary.stdout) if not c["measured"]]
    assert {c["bytes"] for c in guessed} == inferred and all(c["reason"] for c in guessed)


def measured_points(db: Path, run_id: str) -> set[tuple[str, int]]:
    """The run's ok points as (algorithm, bytes)."""
    found = store.query(
        db, "SELECT algorithm, bytes FROM points WHERE run_id = ? AND status = 'ok'", [run_id]
    )
    return set(zip(found.algorithm, found.bytes, strict=True))
