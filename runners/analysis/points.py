"""A run's ok points and raw samples, calibration parameters, and the predictions of each point."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.assumptions import PointFacts
from runners.domain.catalog import DTYPES
from runners.domain.models import Prediction, model_for, predict

Progress = Callable[[str], None]
Key = tuple[int, str, str]  # (ranks, dtype, op)

POINTS_SQL = """
SELECT point_id, algorithm, ranks, bytes, dtype, op, median_s, coalesce(oversubscribed, false) AS
       oversubscribed
FROM points
WHERE run_id = ? AND status = 'ok' AND median_s > 0
ORDER BY ranks, dtype, op, algorithm, bytes
"""

# --- points and calibration parameters -------------------------------------------------------


@dataclass(frozen=True)
class Point(PointFacts):
    """One ok point of a run, as the analysis needs it: its facts (which the assumption checks
    read too) and its median."""

    median_s: float
    oversubscribed: bool

    @property
    def itemsize(self) -> int:
        """Bytes per element of the point's datatype."""
        return DTYPES[self.dtype].itemsize

    @property
    def key(self) -> Key:
        """(ranks, dtype, op): the points that compete with each other, size by size."""
        return self.ranks, self.dtype, self.op

    @property
    def modelled(self) -> bool:
        """Whether the algorithm has a model of its own (plain 'mpi' does not)."""
        return model_for(self.algorithm) is not None


@dataclass(frozen=True)
class Params:
    """A calibration's alpha and beta per message size and gamma per dtype/op."""

    calibration_id: str
    source: str
    alpha: float
    beta: float
    breakpoints: tuple[int, ...] = ()
    segments: tuple[tuple[float, float], ...] = ()
    gammas: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_row(cls, cal: Mapping[str, Any]) -> Params:
        """Parameters of a calibrations row (as stored, or as built before storing)."""
        segments = tuple((s["alpha_s"], s["beta_s_per_byte"]) for s in cal.get("segments") or [])
        breakpoints = tuple(int(b) for b in cal.get("breakpoints") or [])
        if len(segments) != len(breakpoints) + 1:
            segments, breakpoints = (), ()
        return cls(
            calibration_id=cal["calibration_id"],
            source=str(cal.get("source") or ""),
            alpha=float(cal["alpha_s"]),
            beta=float(cal["beta_s_per_byte"]),
            breakpoints=breakpoints,
            segments=segments,
            gammas=dict(cal.get("gammas") or {}),
        )

    def at(self, nbytes: float) -> tuple[float, float]:
        """(alpha, beta) of the piecewise segment covering `nbytes`, else the whole-range fit."""
        if not self.segments:
            return self.alpha, self.beta
        return self.segments[bisect.bisect_right(self.breakpoints, nbytes)]

    def gamma(self, dtype: str, op: str) -> float | None:
        """Seconds per byte reduced for dtype/op, or None when not calibrated."""
        value = self.gammas.get(f"{dtype}/{op}")
        return None if value is None else float(value)


def model_of(algorithm: str) -> str:
    """The model a measured algorithm is predicted with ('lower_bound' for plain 'mpi')."""
    return model_for(algorithm) or "lower_bound"


def predict_with(
    params: Params, algorithm: str, ranks: int, nbytes: float, dtype: str, op: str
) -> Prediction | None:
    """The prediction for one point with a calibration's parameters; None without its gamma."""
    gamma = params.gamma(dtype, op)
    if gamma is None:
        return None
    alpha, beta = params.at(nbytes)
    return predict(model_of(algorithm), ranks, nbytes, alpha, beta, gamma, DTYPES[dtype].itemsize)


def load_points(path: Path, run_id: str) -> list[Point]:
    """The run's ok points with a positive median."""
    frame = store.query(path, POINTS_SQL, [run_id])
    return [
        Point(
            r.point_id,
            r.algorithm,
            int(r.ranks),
            int(r.bytes),
            r.dtype,
            r.op,
            r.median_s,
            r.oversubscribed,
        )
        for r in frame.itertuples(index=False)
    ]


# --- predictions -------------------------------------------------------------------------------


def prediction_rows(run_id: str, points: Iterable[Point], params: Params) -> list[dict[str, Any]]:
    """`predictions` rows of every point that the calibration has a gamma for."""
    rows = []
    for p in points:
        pred = predict_with(params, p.algorithm, p.ranks, p.nbytes, p.dtype, p.op)
        if pred is None:
            continue
        rows.append(
            {
                "point_id": p.point_id,
                "run_id": run_id,
                "calibration_id": params.calibration_id,
                "model": model_of(p.algorithm),
                "predicted_s": pred.total_s,
                "latency_s": pred.latency_s,
                "bandwidth_s": pred.bandwidth_s,
                "reduction_s": pred.reduction_s,
            }
        )
    return rows
