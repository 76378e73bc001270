"""A calibrations row from a calibration job's medians, and one from several launches' rows
(pure: fitting only; the job that measures is runners.jobs.calibrate, the ranks'
runners.ranks.calibrate_worker).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

import numpy as np

from runners.domain.model.calibration_id import CalibrationId, GammaKey
from runners.domain.model.fitting import (
    PINGPONG_SOURCE,
    LinearFit,
    fit_gamma,
    fit_linear,
    fit_piecewise,
)
from runners.domain.model.overheads import family_overheads


def _curve(medians: list[dict]) -> dict[str, list]:
    return {"bytes": [p["bytes"] for p in medians], "median_s": [p["median_s"] for p in medians]}


def _segment(fit: LinearFit) -> dict:
    return {
        "min_bytes": int(fit.min_bytes),
        "max_bytes": int(fit.max_bytes),
        "alpha_s": fit.alpha,
        "beta_s_per_byte": fit.beta,
        "r_squared": fit.r_squared,
    }


def gamma_of(nbytes: Sequence[int], seconds: Sequence[float]) -> tuple[float, str]:
    """fit_gamma's slope, or the largest size's seconds per byte when the slope is not > 0."""
    gamma = fit_gamma(nbytes, seconds)
    if gamma > 0:
        return gamma, "fit_gamma slope"
    largest = max(range(len(nbytes)), key=lambda i: nbytes[i])
    return seconds[largest] / nbytes[largest], "largest size (the fitted slope was not > 0)"


def fit_gammas(reductions: Iterable[dict]) -> tuple[dict[str, float], dict[str, dict]]:
    """gamma per GammaKey ("<dtype>/<op>") in s/B, and per key the medians it came from and
    how."""
    medians: dict[str, dict] = {}
    for row in sorted(reductions, key=lambda r: r["bytes"]):
        key = str(GammaKey(row["dtype"], row["op"]))
        entry = medians.setdefault(key, {"bytes": [], "median_s": []})
        entry["bytes"].append(row["bytes"])
        entry["median_s"].append(row["median_s"])
    gammas = {}
    for key, entry in medians.items():
        gammas[key], entry["gamma_from"] = gamma_of(entry["bytes"], entry["median_s"])
    return gammas, medians


def calibration_row(
    worker: dict, created_at: datetime | None = None, extra: dict | None = None, *, host: str
) -> dict:
    """Fit the worker's timings and return the `calibrations` row of a calibration measured on
    `host` (see the module docstring)."""
    pingpong = sorted(worker["pingpong"], key=lambda p: p["bytes"])
    sizes = [p["bytes"] for p in pingpong]
    one_way = [p["one_way_median_s"] for p in pingpong]
    overall, piecewise = fit_linear(sizes, one_way), fit_piecewise(sizes, one_way)
    gammas, reductions = fit_gammas(worker["reductions"])
    stamp = created_at or datetime.now(UTC)
    exchange = sorted(worker.get("exchange") or [], key=lambda p: p["bytes"])
    copies = sorted(worker.get("copies") or [], key=lambda p: p["bytes"])
    details = {
        "pingpong": {
            "bytes": sizes,
            "one_way_median_s": one_way,
            "iterations": [p["iterations"] for p in pingpong],
            "ci_rel_halfwidth": [p["ci_rel_halfwidth"] for p in pingpong],
        },
        "exchange": _curve(exchange),
        "copy": _curve(copies),
        "reductions": reductions,
        "piecewise_r_squared": piecewise.r_squared,
        "fit": (
            "relative least squares (runners.domain.model.fitting); "
            "alpha/beta/r_squared: whole range"
        ),
        **{k: worker[k] for k in ("mpi_version", "mpi4py_version", "numpy_version") if k in worker},
        "settings": worker.get("settings", {}),
        **(extra or {}),
    }
    return {
        "calibration_id": str(CalibrationId.new_job(stamp)),
        "created_at": stamp.astimezone(UTC).replace(tzinfo=None) if stamp.tzinfo else stamp,
        "host": host,
        "mpi_library": worker["mpi_library"],
        "ranks": int(worker["ranks"]),
        "alpha_s": overall.alpha,
        "beta_s_per_byte": overall.beta,
        "r_squared": overall.r_squared,
        "min_bytes": int(min(sizes)),
        "max_bytes": int(max(sizes)),
        "breakpoints": piecewise.breakpoints,
        "segments": [_segment(s) for s in piecewise.segments],
        "gammas": gammas,
        "overheads": family_overheads(worker.get("overheads") or []),
        "source": PINGPONG_SOURCE,
        "details": details,
    }


def combined_calibration(
    rows: Sequence[Mapping[str, Any]], calibration_id: str, source: str
) -> dict:
    """One calibrations row from several (each launch's): per size the median of the launches'
    medians for every curve and reduction, per family the median overheads, then fitted as one
    calibration job's medians are."""
    details = [row["details"] for row in rows]
    worker = {
        "mpi_library": rows[0]["mpi_library"],
        "ranks": rows[0]["ranks"],
        "pingpong": _merged(d["pingpong"] for d in details),
        "exchange": _merged(d.get("exchange") for d in details),
        "copies": _merged(d.get("copy") for d in details),
        "reductions": [
            asdict(GammaKey.parse(key)) | point
            for key in details[0]["reductions"]
            for point in _merged(d["reductions"].get(key) for d in details)
        ],
        "overheads": [],
        "settings": details[0].get("settings", {}),
    }
    combined = calibration_row(worker, extra={"launches": len(rows)}, host=rows[0]["host"])
    combined["overheads"] = _median_overheads(launch.get("overheads") or {} for launch in rows)
    return combined | {"calibration_id": calibration_id, "source": source}


def _merged(curves: Iterable[dict | None]) -> list[dict]:
    """Per size, the median over the curves that measured it (as calibration job medians),
    with the iterations of all of them where the curves record iterations."""
    by_size: dict[int, list[float]] = {}
    iterations: dict[int, int] = {}
    for curve in curves:
        if not curve:
            continue
        seconds = curve.get("one_way_median_s") or curve.get("median_s") or []
        counts = curve.get("iterations") or [None] * len(seconds)
        for nbytes, value, count in zip(curve["bytes"], seconds, counts, strict=True):
            by_size.setdefault(int(nbytes), []).append(value)
            if count is not None:
                iterations[int(nbytes)] = iterations.get(int(nbytes), 0) + int(count)
    return [
        {
            "bytes": n,
            "one_way_median_s": float(np.median(v)),
            "median_s": float(np.median(v)),
            "iterations": iterations.get(n),
            "ci_rel_halfwidth": None,
        }
        for n, v in sorted(by_size.items())
    ]


def _median_overheads(families: Iterable[dict]) -> dict[str, dict[str, float]]:
    values: dict[str, dict[str, list[float]]] = {}
    for family in families:
        for name, cost in family.items():
            for term, seconds in cost.items():
                values.setdefault(name, {}).setdefault(term, []).append(seconds)
    return {
        name: {term: float(np.median(v)) for term, v in terms.items()}
        for name, terms in values.items()
    }
