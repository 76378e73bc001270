"""A forced MPICH algorithm is really the one that runs, and a fallback is never hidden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from runners import store
from runners.domain import launcher
from runners.domain.catalog import library_knobs
from runners.jobs import launch

pytestmark = pytest.mark.mpi


def reduction_calls(forced: str, ranks: int = 4, count: int = 1024) -> dict[int, list[int]]:
    """Per rank, the element counts MPI_Allreduce passed to a counting user op."""
    knobs = {
        **launcher.default_knobs(ranks),
        **library_knobs(f"mpi:{forced}"),
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
    }
    result = launch.run(launch.Job(ranks, "library_fingerprint", [str(count)], knobs), 120)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("[")]
    rows = json.loads(line)
    assert all(row["ok"] for row in rows)
    return {row["rank"]: row["calls"] for row in rows}


def test_forced_recursive_doubling_reduces_the_full_count_log2_p_times() -> None:
    assert reduction_calls("recursive_doubling") == {r: [1024, 1024] for r in range(4)}


def test_forced_ring_reduces_one_block_p_minus_1_times() -> None:
    assert reduction_calls("ring") == {r: [256, 256, 256] for r in range(4)}


def test_forced_tree_reduces_only_on_inner_nodes() -> None:
    calls = reduction_calls("tree")
    assert calls[0] and all(c == 1024 for c in calls[0])
    assert any(not c for c in calls.values())  # leaves reduce nothing


@pytest.mark.parametrize("forced", ["recursive_doubling", "ring"])
def test_fingerprints_differ_from_each_other(forced: str) -> None:
    other = {"recursive_doubling": "ring", "ring": "recursive_doubling"}[forced]
    assert reduction_calls(forced) != reduction_calls(other)


def test_a_sweep_records_mpich_falling_back_instead_of_timing_it(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'sizes = [8, 4096]\nranks = [4]\nalgorithms = ["mpi:reduce_scatter_allgather"]\n'
        "budget_s = 0.05\nmin_iterations = 4\nmax_iterations = 40\n"
    )
    result = run_cli("sweep", str(spec), "--store", str(db), timeout=300)
    assert result.returncode == 0, result.stderr
    rows = store.query(
        db, "SELECT bytes, status, reason, library_config FROM points ORDER BY bytes"
    )
    small, large = rows.to_dict("records")
    assert small["status"] == "skipped" and "fell back" in small["reason"]  # 2 floats < p
    assert large["status"] == "ok"
    assert large["library_config"] == "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=reduce_scatter_allgather"
