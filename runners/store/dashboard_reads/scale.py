"""The Scale page's data: a simulated run's winners over (ranks x size), the measured runs'
decided winners at the same cells, and the crossovers as a function of p, simulated beside
the closed form on the platform's own parameters."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from runners.store.dashboard_reads.base import StorePath, _df, _open


def _simulated(runs: str) -> str:
    """SQL: whether a runs row (of alias ``runs``) is a simulated run's."""
    return f"json_extract({runs}.environment, '$.simulated') IS NOT NULL"


GROUP = (  # one (collective, dtype, op) of winners (alias w), every library's competing
    "coalesce(w.collective, 'allreduce') = $coll AND w.dtype = $dtype AND w.op = $op "
    "AND coalesce(w.library, 'all') = 'all'"
)


@dataclass(frozen=True)
class ScaleData:
    """One (collective, dtype, op) of a simulated run."""

    winners: pd.DataFrame  # ranks, bytes, algorithm, runner_up, decided, ratio
    measured: pd.DataFrame  # ranks, bytes, algorithm, decided, run_id: measured runs' winners
    crossovers: pd.DataFrame  # ranks, algorithm_a, algorithm_b, kind, bytes, low/high_bytes


def simulated_runs(path: StorePath) -> pd.DataFrame:
    """Every simulated run, newest first: run_id, name, started_at, platform, simulator,
    margin, points."""
    with _open(path) as con:
        return _df(
            con,
            "SELECT r.run_id, r.name, r.started_at, "
            "json_extract_string(r.environment, '$.simulated.platform.name') AS platform, "
            "json_extract_string(r.environment, '$.simulated.simulator') AS simulator, "
            "CAST(json_extract(r.environment, '$.simulated.margin') AS DOUBLE) AS margin, "
            "(SELECT count(*) FROM points p WHERE p.run_id = r.run_id) AS points "
            f"FROM runs r WHERE {_simulated('r')} ORDER BY r.started_at DESC, r.run_id DESC",
        )


def scale_groups(path: StorePath, run_id: str) -> pd.DataFrame:
    """The (collective, dtype, op) groups of a run's winners."""
    with _open(path) as con:
        return _df(
            con,
            "SELECT DISTINCT coalesce(collective, 'allreduce') AS collective, dtype, op "
            "FROM winners WHERE run_id = $run AND coalesce(library, 'all') = 'all' "
            "ORDER BY collective, dtype, op",
            {"run": run_id},
        )


def scale_data(path: StorePath, run_id: str, collective: str, dtype: str, op: str) -> ScaleData:
    """The simulated run's winners and crossovers of one group, and every measured (not
    simulated) run's winners of the same collective, dtype and op."""
    values = {"run": run_id, "coll": collective, "dtype": dtype, "op": op}
    with _open(path) as con:
        winners = _df(
            con,
            "SELECT ranks, bytes, winner AS algorithm, runner_up, decided, ratio "
            f"FROM winners w WHERE run_id = $run AND {GROUP} ORDER BY ranks, bytes",
            values,
        )
        measured = _df(
            con,
            "SELECT w.ranks, w.bytes, w.winner AS algorithm, w.runner_up, w.decided, w.run_id "
            f"FROM winners w JOIN runs r ON r.run_id = w.run_id "
            f"WHERE NOT {_simulated('r')} AND {GROUP} ORDER BY w.run_id DESC",
            values,
        )
        crossovers = _df(
            con,
            "SELECT ranks, algorithm_a, algorithm_b, kind, bytes, low_bytes, high_bytes, "
            "calibration_id FROM crossovers WHERE run_id = $run "
            "AND coalesce(collective, 'allreduce') = $coll AND dtype = $dtype AND op = $op "
            "AND (kind = 'measured' OR calibration_id LIKE 'platform:%') ORDER BY ranks, bytes",
            values,
        )
    return ScaleData(winners, measured, crossovers)
