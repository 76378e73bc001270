"""The store's named reads (runners.store.reads, point_reads, reports.runs) on a real DuckDB
file: the runs listing `collsweep runs` and the dashboard's Runs page share, and the reads of a
run's points that the sweep, the merge, the analysis and the pages ask the same way."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from dashboard import queries
from runners import store
from runners.domain.status import PointStatus
from runners.store.reports import runs_table

STATUSES = [PointStatus.OK, PointStatus.FAILED, PointStatus.TIMEOUT, PointStatus.SKIPPED]


def point(run_id: str, ranks: int, status: str, median_s: float | None = None, **extra) -> dict:
    """A ring point of `ranks` ranks, 1 KiB float32 sum; an ok one with a median."""
    row = {
        "point_id": f"{run_id}/ring/{ranks}/1024/float32/sum",
        "run_id": run_id,
        "algorithm": "ring",
        "ranks": ranks,
        "bytes": 1024,
        "dtype": "float32",
        "op": "sum",
        "status": status,
    }
    if status == PointStatus.OK:
        row |= {"median_s": 1e-5 * ranks if median_s is None else median_s, "launches": 2}
    return row | extra


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """A store of two runs: r1 with p=2, 4, 16 and 8 in each status (and p=32 ok but not timed),
    r2 with no point."""
    path = tmp_path / "store.duckdb"
    store.create_run(path, {"run_id": "r1", "host": "h", "started_at": datetime(2026, 1, 1)})
    store.create_run(path, {"run_id": "r2", "started_at": datetime(2026, 1, 2)})
    rows = [point("r1", p, s) for p, s in zip((2, 4, 16, 8), STATUSES, strict=True)]
    rows.append(point("r1", 32, PointStatus.OK, median_s=0.0, oversubscribed=True))
    store.add_points(path, rows, [])
    return path


def test_collsweep_runs_and_the_runs_page_list_one_query(path: Path) -> None:
    """Same runs in the same order, same counts; group sizes in numeric order in both."""
    cli, page = runs_table(path), queries.runs_table(path)
    assert cli.run_id.tolist() == page.run_id.tolist() == ["r2", "r1"]
    for column in ("ok", "failed", "skipped", "algorithms"):
        assert cli[column].tolist() == page[column].tolist()
    r1, shown = cli.set_index("run_id").loc["r1"], page.set_index("run_id").loc["r1"]
    assert (r1.ok, r1.failed, r1.skipped) == (2, 2, 1)
    assert r1.ranks == "2,4,8,16,32" and shown.ranks == "2, 4, 8, 16, 32"
    assert r1.started == "2026-01-01 00:00:00" and bool(shown.oversubscribed)
    empty = cli.set_index("run_id").loc["r2"]
    assert (empty.ranks, empty.host, empty.ok) == ("", "", 0)
    assert pd.isna(page.set_index("run_id").loc["r2", "ranks"])  # as SQL's NULL reads


def test_the_ok_points_of_one_run_or_several(path: Path) -> None:
    store.create_run(path, {"run_id": "r3"})
    store.add_points(path, [point("r3", 2, PointStatus.OK)], [])
    ok = store.ok_points(path, "r1")
    assert ok.ranks.tolist() == [2]  # the failed, timed-out, skipped and zero-median left out
    both = store.ok_points(path, ["r1", "r3"])
    assert both.run_id.tolist() == ["r1", "r3"] and not both.oversubscribed.any()
    assert store.point_medians(path, "r1") == {(2, "float32", "sum", 1024, "ring"): 2e-5}


def test_point_states_ids_and_grid(path: Path) -> None:
    states = store.point_states(path, "r1")
    assert states["r1/ring/2/1024/float32/sum"] == store.PointState(PointStatus.OK, 2)
    assert states["r1/ring/4/1024/float32/sum"] == store.PointState(PointStatus.FAILED, 1)
    assert len(states) == 5 and store.point_states(path, "r2") == {}
    assert store.point_ids(path, "r1", [PointStatus.SKIPPED]) == {"r1/ring/8/1024/float32/sum"}
    assert len(store.point_ids(path, "r1")) == 5
    assert store.point_grid(path, "r1", [PointStatus.OK]).ranks.tolist() == [2, 32]
    assert store.point_grid(path, "r1").ranks.tolist() == [2, 4, 8, 16, 32]


def test_provisional_reasons_are_distinct_and_sorted(path: Path) -> None:
    def winner(nbytes: int, reason: str) -> dict:
        return {
            "ranks": 2, "dtype": "float32", "op": "sum", "bytes": nbytes, "winner": "ring",
            "runner_up": "mpi", "decided": True, "provisional": bool(reason),
            "provisional_reason": reason,
        }  # fmt: skip

    assert store.provisional_reasons(path, "r1") == []
    rows = [winner(8, "busy"), winner(16, "a probe moved"), winner(32, "busy"), winner(64, "")]
    store.replace_winners(path, "r1", rows)
    assert store.provisional_reasons(path, "r1") == ["a probe moved", "busy"]


def test_named_reads_share_an_open_connection(path: Path) -> None:
    """Given a connection, a read uses it and leaves it open for the next one."""
    with store.reading(path) as con:
        assert store.get_run(con, "r1")["host"] == "h"
        assert len(store.point_states(con, "r1")) == 5
        with store.reading(con) as same:
            assert same is con
        assert store.ok_points(con, "r1").ranks.tolist() == [2]
