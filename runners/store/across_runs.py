"""Named reads across every run of a store, for figures that compare runs (benchmarks/)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from runners.domain.status import PointStatus
from runners.store.reads import Source, read_frame

OK_POINTS_SQL = """
SELECT * REPLACE (coalesce(launch_low_s, interval_low_s) AS launch_low_s,
                  coalesce(launch_high_s, interval_high_s) AS launch_high_s)
FROM points WHERE status = ? ORDER BY run_id, point_id
"""


def run_ids(path: Path) -> list[str]:
    """Every run's id, oldest first; [] when there is no store yet."""
    if not path.exists():
        return []
    return list(read_frame(path, "SELECT run_id FROM runs ORDER BY started_at").run_id)


def ok_points_of_every_run(source: Source) -> pd.DataFrame:
    """Every run's ok points, all their columns; launch_low_s and launch_high_s fall back to the
    stored interval where a point has no launches' own (one launch)."""
    return read_frame(source, OK_POINTS_SQL, [PointStatus.OK.value])


def winners_of_every_run(source: Source) -> pd.DataFrame:
    """Every stored winner cell of every run: run_id, ranks, bytes, winner, decided."""
    return read_frame(source, "SELECT run_id, ranks, bytes, winner, decided FROM winners")


def fastest_of_every_run(source: Source) -> pd.DataFrame:
    """Per run, group size and payload, the algorithm with the lowest median (ok points)."""
    return read_frame(
        source,
        "SELECT run_id, ranks, bytes, arg_min(algorithm, median_s) AS fastest FROM points "
        "WHERE status = ? GROUP BY ALL",
        [PointStatus.OK.value],
    )


def dedicated_accuracy(source: Source, except_prefix: str) -> pd.DataFrame:
    """The stored model accuracy on dedicated groups, calibrations named ``except_prefix...``
    left out."""
    return read_frame(
        source,
        "SELECT calibration_id, variant, family, median_abs_error, decided_cells, winner_share, "
        "measured_crossovers, crossover_inside_share FROM model_accuracy "
        "WHERE placement = 'dedicated' AND NOT starts_with(calibration_id, ?)",
        [except_prefix],
    )
