"""A tuning file's validation says its verdict per size and flags a default that moved against
the run the file came from (#45, item 5)."""

from __future__ import annotations

from pathlib import Path

from helpers.store_rows import point_row, run_row

from runners import store
from runners.analysis.validation import validation_lines

SOURCE, CHECK = "r-source", "r-check"


def stored(path: Path, check_default_s: float) -> dict:
    """A source run and a validation run of mpi (and mpi:tuned) at 8 B and 8 KiB; the
    validation's default at 8 KiB takes ``check_default_s``."""
    store.Store.open(path, write=True).close()  # a new store
    store.create_run(path, run_row(SOURCE))
    environment = {"tuning_file": {"file": "t.json", "provenance": {"run_id": SOURCE}}}
    store.create_run(path, run_row(CHECK, environment=environment))
    interval = {"interval_low_s": 0.9e-3, "interval_high_s": 1.1e-3}
    points = [point_row(SOURCE, "mpi", n, median_s=1e-3, **interval) for n in (8, 8192)] + [
        point_row(CHECK, "mpi", 8, median_s=1e-3),
        point_row(CHECK, "mpi", 8192, median_s=check_default_s),
        point_row(CHECK, "mpi:tuned", 8, median_s=1e-3),
        point_row(CHECK, "mpi:tuned", 8192, median_s=0.5e-3),
    ]
    store.add_points(path, points, [])
    base = {"ranks": 4, "dtype": "float32", "op": "sum", "algorithm": "mpi:tuned"}
    store.replace_against_default(
        path,
        CHECK,
        [
            base | {"bytes": 8, "ratio": 1.01, "ratio_low": 0.95, "ratio_high": 1.07,
                    "verdict": "within noise", "launches": 3, "baseline": "mpi"},
            base | {"bytes": 8192, "ratio": 0.5, "ratio_low": 0.45, "ratio_high": 0.55,
                    "verdict": "faster", "launches": 3, "baseline": "mpi"},
        ],
    )  # fmt: skip
    return store.get_run(path, CHECK) or {}


def test_the_verdict_per_size_and_a_steady_baseline(tmp_path: Path) -> None:
    path = tmp_path / "v.duckdb"
    lines = validation_lines(path, stored(path, check_default_s=1.05e-3))
    text = "\n".join(lines)
    assert "p=4 float32 sum: 8 B within noise 1.01x [0.95x, 1.07x]; 8 KiB faster 0.5x" in text
    assert f"the default stayed inside run {SOURCE}'s intervals at all 2 points" in text


def test_a_default_that_moved_is_flagged(tmp_path: Path) -> None:
    path = tmp_path / "v.duckdb"
    text = "\n".join(validation_lines(path, stored(path, check_default_s=2e-3)))
    assert "warning: the baseline drifted" in text and "at 1 of 2 points" in text
    assert "8 KiB p=4: 2x" in text


def test_a_run_without_a_tuning_file_has_no_validation(tmp_path: Path) -> None:
    path = tmp_path / "v.duckdb"
    stored(path, 1e-3)
    assert validation_lines(path, store.get_run(path, SOURCE) or {}) == []
