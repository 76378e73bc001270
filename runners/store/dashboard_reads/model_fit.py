"""Data of the Model fit page: calibrations, their fits, and measured / predicted residuals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from runners import store
from runners.domain.model.calibration_id import (
    LIBRARY_SUFFIX_PATTERN,
    CalibrationId,
    CalibrationKind,
)
from runners.domain.model.fitting import PINGPONG_SOURCE
from runners.domain.model.pricing import VARIANTS
from runners.store.dashboard_reads.base import (
    OWN_CALIBRATIONS,
    Scope,
    StorePath,
    _catalog,
    _df,
    _open,
)
from runners.store.records import CalibrationRecord

# --- model fit ---------------------------------------------------------------------------------


_CALIBRATIONS_SQL = """
SELECT calibration_id, created_at, source, host, ranks, alpha_s, beta_s_per_byte, r_squared,
       min_bytes, max_bytes, CAST(breakpoints AS VARCHAR) AS breakpoints,
       CAST(gammas AS VARCHAR) AS gammas
FROM calibrations ORDER BY created_at DESC, calibration_id
"""


def calibrations(path: StorePath) -> pd.DataFrame:
    """Every calibration, newest first (JSON columns as text)."""
    with _open(path) as con:
        return _df(con, _CALIBRATIONS_SQL)


def calibration(path: StorePath, calibration_id: str) -> CalibrationRecord | None:
    """One calibration as a dict with its JSON columns decoded, or None (store.get_calibration)."""
    with _open(path) as con:
        return store.get_calibration(con, calibration_id)


_PAIR_CALIBRATIONS_SQL = """
SELECT
  (SELECT calibration_id FROM calibrations
   WHERE regexp_replace(source, $suffixes, '') = $fitted
   ORDER BY created_at DESC LIMIT 1) AS fitted,
  coalesce(
    (SELECT k.calibration_id FROM runs r JOIN calibrations k USING (calibration_id)
     WHERE r.run_id = $run AND NOT starts_with(coalesce(k.source, ''), $fitted_prefix)),
    (SELECT k.calibration_id FROM calibrations k, runs r
     WHERE r.run_id = $run AND k.source = $pingpong
     ORDER BY (k.host = r.host) DESC NULLS LAST, k.created_at DESC LIMIT 1)) AS micro
"""


@dataclass(frozen=True)
class FitComparison:
    """The microbenchmark calibration beside the one fitted to a run's collective timings."""

    micro_id: str | None
    fitted_id: str | None
    table: pd.DataFrame


def fit_comparison(path: StorePath, run_id: str) -> FitComparison:
    """alpha, beta, r_squared and every gamma: ping-pong vs fitted:<run_id>, and their ratio."""
    with _open(path) as con:
        row = con.execute(_PAIR_CALIBRATIONS_SQL, _fitted_params(run_id)).fetchone()
    fitted, micro = row or (None, None)
    cal_micro = calibration(path, micro) if micro else None
    cal_fitted = calibration(path, fitted) if fitted else None
    return FitComparison(micro, fitted, parameter_table(cal_micro, cal_fitted))


def _fitted_params(run_id: str) -> dict[str, str]:
    """SQL parameters naming a run, its fitted calibration (id and prefix) and the ping-pong
    source."""
    return {
        "run": run_id,
        "fitted": str(CalibrationId(CalibrationKind.FITTED, run_id)),  # or a library's own
        "suffixes": LIBRARY_SUFFIX_PATTERN,
        "fitted_prefix": CalibrationKind.FITTED.prefix,
        "pingpong": PINGPONG_SOURCE,
    }


def _parameters(cal: Mapping[str, Any] | None) -> dict[str, float]:
    """A calibration's scalar parameters and its gammas, by display name, in the units people
    read them in (alpha in us, beta and gamma in ns per byte)."""
    if cal is None:
        return {}
    scaled = {"alpha (us)": ("alpha_s", 1e6), "beta (ns/B)": ("beta_s_per_byte", 1e9)}
    params = {name: _scaled(cal.get(key), factor) for name, (key, factor) in scaled.items()}
    params["r_squared"] = cal.get("r_squared")
    gammas = cal.get("gammas") or {}
    params |= {f"gamma {key} (ns/B)": _scaled(v, 1e9) for key, v in sorted(gammas.items())}
    return {k: float(v) for k, v in params.items() if v is not None}


def _scaled(value: Any, factor: float) -> float | None:
    return None if value is None else float(value) * factor


def parameter_table(
    micro: Mapping[str, Any] | None, fitted: Mapping[str, Any] | None
) -> pd.DataFrame:
    """Rows per parameter: microbenchmark value, fitted value, fitted / microbenchmark."""
    a, b = _parameters(micro), _parameters(fitted)
    rows = []
    for name in dict.fromkeys([*a, *b]):
        ratio = b[name] / a[name] if a.get(name) and name in b else float("nan")
        rows.append(
            {
                "parameter": name,
                "microbenchmark": a.get(name, float("nan")),
                "fitted": b.get(name, float("nan")),
                "fitted_over_micro": ratio,
            }
        )
    return pd.DataFrame(
        rows, columns=["parameter", "microbenchmark", "fitted", "fitted_over_micro"]
    )


_RESIDUALS_SQL = f"""
SELECT p.algorithm, p.ranks, p.bytes, m.model, p.median_s, m.predicted_s,
       p.median_s / m.predicted_s AS measured_over_predicted,
       m.latency_s, m.bandwidth_s, m.reduction_s, p.oversubscribed
FROM points p JOIN predictions m ON m.point_id = p.point_id
 AND m.calibration_id {OWN_CALIBRATIONS}
WHERE p.run_id = $run AND p.dtype = $dtype AND p.op = $op AND p.status = $ok
  AND coalesce(p.collective, 'allreduce') = $collective
  AND ($ranks IS NULL OR p.ranks = $ranks) AND p.median_s > 0 AND m.predicted_s > 0
ORDER BY p.algorithm, p.ranks, p.bytes
"""


def residuals(path: StorePath, scope: Scope) -> pd.DataFrame:
    """measured / predicted per point of the view (scope needs dtype, op and calibration_id)."""
    with _open(path) as con:
        return _df(con, _RESIDUALS_SQL, scope.params())


OUTLIER_FACTOR = 2.0  # measured / predicted beyond this factor either way is worth a look


def outliers(resid: pd.DataFrame, factor: float = OUTLIER_FACTOR) -> pd.DataFrame:
    """The residuals of points with a core per rank measured more than `factor` away from their
    prediction (either way), worst first; oversubscribed points are left out (no model
    describes the scheduler)."""
    ratio = resid["measured_over_predicted"]
    far = resid[
        ((ratio > factor) | (ratio < 1 / factor))
        & ~resid["oversubscribed"].fillna(False).astype(bool)
    ]
    off = np.abs(np.log(far["measured_over_predicted"]))
    return far.assign(off=off).sort_values("off", ascending=False).drop(columns="off")


_ACCURACY_SQL = """
SELECT calibration_id, variant, placement, family, points, median_abs_error, p90_abs_error,
       decided_cells, winner_share, measured_crossovers, crossover_inside_share
FROM model_accuracy
WHERE run_id = $run
ORDER BY placement, starts_with(calibration_id, $fitted_prefix), calibration_id,
         list_position($variants, variant),
         family = 'all' DESC, family
"""


def model_accuracy(path: StorePath, run_id: str) -> pd.DataFrame:
    """The stored accuracy of each model variant on a run (runners.analysis.accuracy); empty
    for a store before schema 5 or a run not analysed since."""
    with _open(path) as con:
        if not _catalog(con).has("model_accuracy"):
            return pd.DataFrame()
        return _df(con, _ACCURACY_SQL, _fitted_params(run_id) | {"variants": list(VARIANTS)})
