"""Rows for the store's tables, filled in as the tests that write them directly need."""

from __future__ import annotations


def run_row(run_id: str = "r1", **extra) -> dict:
    """A runs row with the usual provenance filled in."""
    return {
        "run_id": run_id,
        "host": "node1",
        "mpi_version": "MPICH 5.0.2",
        "environment": {"MPI4PY_RC_THREAD_LEVEL": "single"},
        "physical_cores": 2,
        **extra,
    }


def point_row(run_id: str, algorithm: str, nbytes: int, status: str = "ok", **extra) -> dict:
    """A points row for 4 ranks, float32 sum."""
    row = {
        "point_id": f"{run_id}/{algorithm}/4/{nbytes}/float32/sum",
        "run_id": run_id,
        "algorithm": algorithm,
        "ranks": 4,
        "bytes": nbytes,
        "dtype": "float32",
        "op": "sum",
        "count": nbytes // 4,
        "status": status,
    }
    if status == "ok":
        row |= {"median_s": 1e-6 * nbytes, "iterations": 3, "ci_target_met": True}
    return row | extra


def sample_rows(point_id: str, n: int, scale: float = 1.0) -> list[dict]:
    """n samples of one point, split over two passes."""
    return [
        {"point_id": point_id, "iteration": i, "seconds": scale * (1 + i), "pass": i % 2}
        for i in range(n)
    ]
