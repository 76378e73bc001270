"""A sweep of several ranks_per_node: a run each (one host, 2 emulated nodes x 1), each with
its own calibration, analysis and verdict, then their winners side by side; every analysis
row says how many ranks shared a node, as its points do. The node-aware allreduces sweep there
beside a flat one: `hierarchical` takes its node size from the sweep, MPICH's composition runs
in a launch of its own, recorded as forced by its environment, and its fallback where it cannot
apply (one rank a node) is said, never timed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from runners import store

pytestmark = pytest.mark.mpi


def test_two_placements_are_two_runs_compared_at_the_end(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    done = run_cli(
        "sweep", "--store", str(db), "--sizes", "8,4096", "--ranks", "2", "--ranks-per-node",
        "0,1", "--network", "bandwidth=4Gbit", "--algorithms",
        "hierarchical,recursive_doubling,mpi:composition_alpha",
        "--launches", "1", "--budget-s", "0.02", "--max-iterations", "20",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = store.query(db, "SELECT run_id, name, spec_toml FROM runs ORDER BY started_at")
    assert len(runs) == 2 and list(runs.name) == ["ranks_per_node=0", "ranks_per_node=1"]
    assert "ranks_per_node = [0]" in runs.spec_toml[0] and 'network = ""' in runs.spec_toml[0]
    assert "ranks_per_node = [1]" in runs.spec_toml[1] and "4Gbit" in runs.spec_toml[1]
    first, second = runs.run_id
    assert f"p=2 float32 sum: one host ({first}) | 2 nodes x 1 ({second})" in done.stdout
    placed = store.query(
        db, "SELECT run_id, list(DISTINCT ranks_per_node) AS n FROM winners GROUP BY run_id"
    )
    assert dict(zip(placed.run_id, placed.n, strict=True)) == {first: [2], second: [1]}
    points = store.query(db, "SELECT * FROM points WHERE run_id = ?", [second])
    rows = {r.algorithm: r for r in points.itertuples()}
    assert set(rows) == {"hierarchical(node=1)", "recursive_doubling", "mpi:composition_alpha"}
    flat = [rows["hierarchical(node=1)"], rows["recursive_doubling"]]
    assert all(r.status == "ok" and r.verified for r in flat)
    alpha = rows["mpi:composition_alpha"]  # forced by its environment, a launch of its own
    assert "MPIR_CVAR_ALLREDUCE_COMPOSITION=1" in alpha.library_config
    # one rank a node leaves alpha no node to reduce in: MPICH falls back, said, never timed
    assert alpha.status == "skipped" and "could not apply composition_alpha" in alpha.reason
