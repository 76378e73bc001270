"""The calibration fitted to a run's own timings (alpha, beta and a gamma per dtype/op)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from runners.analysis.points import Point
from runners.domain.libraries import DEFAULT, LIBRARIES
from runners.domain.model.calibration_id import CalibrationId, CalibrationKind, GammaKey
from runners.domain.model.closed_form import Prediction, predict
from runners.domain.model.fitting import (
    CollectiveFit,
    fit_collectives,
    weighted_r_squared,
)

# --- the calibration fitted to the run's own timings -----------------------------------------

# What a fit assumes where the library reduces inside the kernels that move the data
# (LibrarySpec.reduces_while_copying) and its timings cannot separate gamma from beta.
GAMMA_ZERO = (
    "gamma = 0 assumed: {library} reduces inside the kernels that move the data, so these "
    "timings cannot separate gamma from beta, and beta carries both"
)


@dataclass(frozen=True)
class PointsFit:
    """A joint fit to a run's points: the points used, which ones in words, the fit, and what
    it assumes beyond the model ('' or GAMMA_ZERO)."""

    points: list[Point]
    which: str
    fit: CollectiveFit
    assumption: str = ""


def fit_points(points: Sequence[Point], library: str = DEFAULT.name) -> PointsFit | None:
    """fit_collectives over the modelled points with a core per rank, or over all modelled
    points when those cannot separate alpha, beta and gamma; where neither can and `library`
    reduces while it copies, alpha and beta with gamma = 0 (GAMMA_ZERO)."""
    lib = LIBRARIES[library]
    usable = [p for p in points if p.modelled and p.ranks >= 2]
    dedicated = [p for p in usable if not p.oversubscribed]
    choices = ((dedicated, "points with a core per rank"), (usable, "all points"))
    tries = [(True, "")]
    if lib.reduces_while_copying:
        tries.append((False, GAMMA_ZERO.format(library=lib.title)))
    for with_gamma, assumption in tries:
        for chosen, which in choices:
            fit = fit_collectives(_fit_rows(chosen), with_gamma=with_gamma)
            if fit is not None:
                return PointsFit(chosen, which, fit, assumption)
    return None


def _fit_rows(points: Iterable[Point]) -> list[tuple[str, int, int, int, float]]:
    """The (algorithm, ranks, nbytes, itemsize, seconds) rows fit_collectives takes."""
    return [(p.algorithm, p.ranks, p.nbytes, p.itemsize, p.median_s) for p in points]


def _counts(p: Point) -> Prediction:
    """The point's critical-path counts (messages, bytes sent, bytes reduced)."""
    return predict(p.algorithm, p.ranks, p.nbytes, 1.0, 1.0, 1.0, p.itemsize)


def key_gamma(points: Iterable[Point], alpha: float, beta: float) -> float | None:
    """Gamma >= 0 for one dtype/op with alpha and beta held fixed (relative least squares)."""
    num = den = 0.0
    for p in points:
        c = _counts(p)
        reduced = c.bytes_reduced / p.median_s
        num += reduced * (1.0 - (alpha * c.messages + beta * c.bytes_sent) / p.median_s)
        den += reduced * reduced
    return max(num / den, 0.0) if den > 0 else None


def _fitted_r_squared(points: Sequence[Point], alpha: float, beta: float, gammas: dict) -> float:
    """Relative R^2 of the fitted times (one gamma per dtype/op) against the medians."""
    fitted = []
    for p in points:
        c = _counts(p)
        gamma = gammas[str(GammaKey(p.dtype, p.op))]
        fitted.append(alpha * c.messages + beta * c.bytes_sent + gamma * c.bytes_reduced)
    return weighted_r_squared(np.array([p.median_s for p in points]), np.array(fitted))


def fitted_calibration(
    run: Mapping[str, Any], points: Sequence[Point], library: str = DEFAULT.name
) -> dict[str, Any] | None:
    """A calibrations row fitted to the run's medians, or None when they cannot separate
    alpha, beta and gamma (its id and source fitted:<run> of `library`'s points). alpha and
    beta are fitting.fit_collectives' over every fitted point;
    each dtype/op then gets its own gamma with alpha and beta held (one key: the same fit).
    """
    found = fit_points(points, library)
    if found is None:
        return None
    chosen, fit = found.points, found.fit
    by_key: dict[str, list[Point]] = defaultdict(list)
    for p in chosen:
        by_key[str(GammaKey(p.dtype, p.op))].append(p)
    if found.assumption:  # every key's gamma is inside beta, as the joint fit's is
        gammas: dict[str, float | None] = dict.fromkeys(by_key, 0.0)
    else:
        gammas = {k: key_gamma(ps, fit.alpha, fit.beta) for k, ps in by_key.items()}
    gammas = {k: fit.gamma if g is None else g for k, g in gammas.items()}
    r2 = _fitted_r_squared(chosen, fit.alpha, fit.beta, gammas)
    low, high = min(p.nbytes for p in chosen), max(p.nbytes for p in chosen)
    name = str(CalibrationId(CalibrationKind.FITTED, run["run_id"], library=library))
    return {
        "calibration_id": name,
        "created_at": datetime.now(UTC).replace(tzinfo=None),
        "host": run.get("host"),
        "mpi_library": run.get("mpi_library"),
        "alpha_s": fit.alpha,
        "beta_s_per_byte": fit.beta,
        "r_squared": r2,
        "min_bytes": low,
        "max_bytes": high,
        "breakpoints": [],
        "segments": [_segment(low, high, fit.alpha, fit.beta, r2)],
        "gammas": gammas,
        "source": name,
        "details": _fit_details(found, by_key),
    }


def _segment(low: int, high: int, alpha: float, beta: float, r2: float) -> dict[str, Any]:
    """One entry of a calibration's segments list."""
    return {
        "min_bytes": low,
        "max_bytes": high,
        "alpha_s": alpha,
        "beta_s_per_byte": beta,
        "r_squared": r2,
    }


def _fit_details(found: PointsFit, by_key: Mapping[str, list]) -> dict[str, Any]:
    """The fitted calibration's details: which points it used, the joint fit's numbers, and
    what it assumes (CalibrationKind.FITTED.caveat: it predicts the points it was fitted on)."""
    chosen = found.points
    return {
        "fit": "fitting.fit_collectives on the run's medians (relative least squares); "
        + (
            "alpha and beta only, gamma = 0 for every dtype/op"
            if found.assumption
            else "gamma per dtype/op refitted with alpha and beta held"
        ),
        "fitted_on": CalibrationKind.FITTED.caveat,
        "assumption": found.assumption,
        "points_used": found.which,
        "points": len(chosen),
        "ranks": sorted({p.ranks for p in chosen}),
        "algorithms": sorted({p.algorithm for p in chosen}),
        "points_per_key": {k: len(v) for k, v in by_key.items()},
        "joint_gamma": found.fit.gamma,
        "joint_r_squared": found.fit.r_squared,
    }
