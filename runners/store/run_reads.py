"""Named reads of one stored run for the analysis and the jobs: its probes, predictions,
samples, stored tables read back for the terminal, and the runs before it on its host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from runners.store.reads import Source, read_frame

CROSSOVERS_SQL = """
SELECT collective, ranks, dtype, op, algorithm_a, algorithm_b, kind,
       coalesce(calibration_id, '') AS calibration_id, bytes, low_bytes, high_bytes, detail
FROM crossovers
WHERE run_id = ?
ORDER BY collective, ranks, dtype, op, least(algorithm_a, algorithm_b),
         greatest(algorithm_a, algorithm_b), kind, calibration_id, bytes
"""

WINNERS_SQL = """
SELECT collective, ranks, dtype, op, bytes, winner, runner_up,
       CASE WHEN decided THEN 'decided' ELSE 'tie' END AS verdict,
       round(ratio, 3) AS ratio, round(ratio_low, 3) AS ratio_low,
       round(ratio_high, 3) AS ratio_high, launches, pairing, default_algorithm,
       speedup, speedup_low, speedup_high, speedup_verdict
FROM winners
WHERE run_id = ? AND coalesce(library, 'all') = 'all'
ORDER BY collective, ranks, dtype, op, bytes
"""

AGREEMENT_SQL = """
SELECT collective, scope, calibration_id, points, model_pick_share, median_slowdown,
       mean_slowdown, same_model_share
FROM agreement
WHERE run_id = ?
ORDER BY collective <> 'allreduce', collective, scope <> 'run', scope <> 'dedicated',
         scope <> 'oversubscribed', ranks, dtype, op,
         calibration_id
"""

AGAINST_DEFAULT_SQL = """
SELECT collective, ranks, dtype, op, bytes, algorithm, baseline, ratio, ratio_low, ratio_high,
       verdict, launches
FROM against_default
WHERE run_id = ?
ORDER BY collective, ranks, dtype, op, algorithm, bytes
"""

INTERVALS_SQL = """
SELECT collective, ranks, dtype, op, bytes, algorithm, median_s, interval_low_s, interval_high_s
FROM points
WHERE run_id = ? AND status = 'ok' AND median_s > 0
"""

EARLIER_SQL = """
SELECT o.run_id FROM runs r
JOIN runs o ON o.host = r.host AND o.run_id <> r.run_id AND o.started_at < r.started_at
WHERE r.run_id = ? ORDER BY o.started_at DESC LIMIT ?
"""


def stored_crossovers(source: Source, run_id: str) -> pd.DataFrame:
    """A run's stored crossovers, pairs together, with the calibration of predicted ones."""
    return read_frame(source, CROSSOVERS_SQL, [run_id])


def stored_winners(source: Source, run_id: str) -> pd.DataFrame:
    """A run's stored winners per cell (every library together): decided, or a tie; the
    winner's speed-up over the library default with its interval (domain.verdict.speedup)."""
    return read_frame(source, WINNERS_SQL, [run_id])


INFERENCES_SQL = """
SELECT collective, ranks, dtype, op, bytes, winner, runner_up, settled, reason, below_bytes,
       above_bytes
FROM cell_inferences WHERE run_id = ? ORDER BY collective, ranks, dtype, op, bytes
"""


def stored_inferences(source: Source, run_id: str) -> pd.DataFrame:
    """An adaptive run's unmeasured cells, each with its inferred winner and why (none for
    any other run)."""
    return read_frame(source, INFERENCES_SQL, [run_id])


def stored_against_default(source: Source, run_id: str) -> pd.DataFrame:
    """A run's stored comparisons of each library algorithm with its default, per size."""
    return read_frame(source, AGAINST_DEFAULT_SQL, [run_id])


def point_intervals(source: Source, run_id: str) -> pd.DataFrame:
    """A run's ok points with their medians and 95% intervals over launches."""
    return read_frame(source, INTERVALS_SQL, [run_id])


def stored_agreement(source: Source, run_id: str) -> pd.DataFrame:
    """A run's stored agreement rows, the whole run first."""
    return read_frame(source, AGREEMENT_SQL, [run_id])


def probes_of(source: Source, run_id: str) -> list[dict[str, Any]]:
    """The machine probes a run recorded, one dict per probe."""
    frame = read_frame(source, "SELECT * FROM probes WHERE run_id = ?", [run_id])
    return frame.to_dict("records")


def predictions_of(source: Source, run_id: str) -> pd.DataFrame:
    """Every prediction stored for a run's points: point_id, calibration_id, predicted_s."""
    return read_frame(
        source,
        "SELECT point_id, calibration_id, predicted_s FROM predictions WHERE run_id = ?",
        [run_id],
    )


def samples_of(source: Source, run_id: str) -> pd.DataFrame:
    """A run's samples in order: point_id, seconds, pass and launch (0 before launches)."""
    return read_frame(
        source,
        "SELECT point_id, seconds, pass, coalesce(launch, 0) AS launch FROM samples "
        "WHERE run_id = ? ORDER BY point_id, iteration",
        [run_id],
    )


def assumption_counts(source: Source, run_id: str) -> pd.DataFrame:
    """Per assumption and state, how many of a run's checks are in it: name, state, n."""
    return read_frame(
        source,
        "SELECT name, state, count(*) AS n FROM assumptions WHERE run_id = ? GROUP BY ALL",
        [run_id],
    )


def earlier_runs_on_host(source: Source, run_id: str, limit: int) -> list[str]:
    """The ids of at most ``limit`` runs on the run's host started before it, newest first."""
    return list(read_frame(source, EARLIER_SQL, [run_id, limit]).run_id)


def run_statuses(path: Path) -> set[str]:
    """The statuses of the runs in a store (a shard holds one run)."""
    return set(read_frame(path, "SELECT status FROM runs").status)


def points_of(source: Source, run_id: str) -> pd.DataFrame:
    """Every stored column of a run's points, whatever their status."""
    return read_frame(source, "SELECT * FROM points WHERE run_id = ?", [run_id])
