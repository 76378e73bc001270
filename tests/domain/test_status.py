"""Point and run statuses as types (runners.domain.status): the text a store keeps, bound into
SQL as a parameter, never written into a query."""

from __future__ import annotations

from pathlib import Path

from helpers import synthetic

from runners import store
from runners.domain.status import PointStatus, RunStatus
from runners.store import run_compare


def test_a_status_is_its_stored_text() -> None:
    assert [str(s) for s in PointStatus] == ["ok", "failed", "skipped", "timeout"]
    assert [str(s) for s in RunStatus] == ["running", "complete", "interrupted", "failed"]
    assert PointStatus("timeout") is PointStatus.TIMEOUT and PointStatus.OK == "ok"


def test_a_status_bound_into_sql_selects_its_points(tmp_path: Path) -> None:
    """A small synthetic run with its timed-out cell: the ok points a bound PointStatus.OK
    selects are those stored as 'ok', and a read that binds it (a run against itself) matches
    exactly them."""
    spec = synthetic.RunSpec(
        ranks=(2, 4), sizes=(8, 1024), algorithms=("ring", "binomial_tree"), samples=5
    )
    path = tmp_path / "s.duckdb"
    synthetic.write_run(path, spec)
    counts = store.query(path, "SELECT status, count(*) AS n FROM points GROUP BY status")
    stored = dict(zip(counts.status, counts.n, strict=True))
    assert set(stored) == {PointStatus.OK, PointStatus.TIMEOUT}
    bound = store.query(path, "SELECT count(*) AS n FROM points WHERE status = ?", [PointStatus.OK])
    assert bound.n.item() == stored["ok"]
    assert len(run_compare.compare_runs(path, spec.run_id, spec.run_id).points) == stored["ok"]
    assert store.get_run(path, spec.run_id)["status"] == RunStatus.COMPLETE
