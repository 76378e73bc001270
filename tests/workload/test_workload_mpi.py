"""Workloads on real ranks (issue 31): a sweep of exactly a workload's calls at p = 3 (not a
power of two), its whole-job report, and the replay of its calls in recorded order under each
policy's launch, stored beside the sum of points."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runners import store

pytestmark = pytest.mark.mpi

CALLS = [
    {"collective": "allreduce", "bytes": 12, "dtype": "float32", "op": "sum", "ranks": 3,
     "calls": 20},
    {"collective": "allreduce", "bytes": 12288, "dtype": "float32", "op": "sum", "ranks": 3,
     "calls": 4},
    {"collective": "bcast", "bytes": 3072, "dtype": "float32", "op": "none", "ranks": 3,
     "calls": 1, "root": 0},
]  # fmt: skip
ORDER = [[2, 1], *[[1, 1], [0, 5]] * 4]


@pytest.fixture(scope="module")
def answered(
    tmp_path_factory: pytest.TempPathFactory, calibration_template: Path
) -> tuple[Path, Path, str, str]:
    """A sweep of the workload's calls into a store holding the host's calibration, then its
    report with a replay (one launch)."""
    from conftest import run_cli

    folder = tmp_path_factory.mktemp("workload")
    path, workload = folder / "s.duckdb", folder / "w.json"
    shutil.copyfile(calibration_template, path)
    body = {"collsweep_workload": 1, "name": "tiny-job", "calls": CALLS, "order": ORDER}
    workload.write_text(json.dumps(body))
    args = ["sweep", "--workload", str(workload), "--algorithms", "ring,binomial_tree,mpi"]
    args += ["--launches", "2", "--budget-s", "0.05", "--store", str(path)]
    done = run_cli(*args, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (run_id,) = store.query(path, "SELECT run_id FROM runs").run_id
    report = ["workload", "report", str(workload), "--run", run_id, "--store", str(path)]
    replayed = run_cli(*report, "--replay", "--launches", "1", "--json", timeout=600)
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    return path, workload, run_id, done.stdout + "\n" + replayed.stdout


def test_the_sweep_measures_exactly_the_workloads_calls(answered) -> None:
    path, _, run_id, output = answered
    points = store.query(
        path, "SELECT DISTINCT collective, ranks, bytes FROM points WHERE run_id = ?", [run_id]
    )
    assert set(zip(points.collective, points.ranks, points.bytes, strict=True)) == {
        ("allreduce", 3, 12),
        ("allreduce", 3, 12288),
        ("bcast", 3, 3072),
    }
    assert "workload tiny-job on run" in output and "where the job's time goes" in output


def test_every_policy_is_priced_and_replayed_beside_its_points(answered) -> None:
    path, _, run_id, output = answered
    report = json.loads(output[output.index('{\n "workload"') :])
    names = [p["policy"] for p in report["policies"]]
    assert names[0] == "default" and {"ring", "binomial_tree", "best"} <= set(names)
    for policy in report["policies"]:
        assert policy["total_s"] > 0 and policy["priced_calls"] == 3
    replays = store.query(
        path,
        "SELECT policy, count(*) AS n, min(replayed_s) AS fastest, min(sequenced_s) AS seq, "
        "min(isolated_s) AS alone FROM replays WHERE run_id = ? GROUP BY policy",
        [run_id],
    )
    assert set(replays.policy) >= {"default", "ring", "binomial_tree"}
    assert (replays.fastest > 0).all() and (replays.seq > 0).all() and (replays.alone > 0).all()
    replayed = {r["policy"]: r for r in report["replays"]}
    # the replay is of the same calls: within a factor the machine's drift cannot reach
    for r in replayed.values():
        assert 0.05 < r["replayed_s"] / r["estimate_s"] < 20


def test_a_workload_sweep_refuses_grid_options_before_any_rank(answered, tmp_path) -> None:
    from conftest import run_cli

    _, workload, _, _ = answered
    path = tmp_path / "s.duckdb"
    done = run_cli("sweep", "--workload", str(workload), "--sizes", "8", "--store", str(path))
    assert done.returncode == 2 and "--workload sets sizes" in done.stderr
    assert not path.exists()
