"""A run's ok points and raw samples, calibration parameters, and the predictions of each point."""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.assumptions import PointFacts
from runners.domain.catalog import ALGORITHMS, DTYPES
from runners.domain.models import Prediction, model_for, predict
from runners.domain.pricing import SCHEDULE, TEXTBOOK, MessageCost, schedule_prediction

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
    def where(self) -> tuple[str, int, int, str, str]:
        """(algorithm, ranks, bytes, dtype, op): the arguments predict_with takes after params."""
        return self.algorithm, self.ranks, self.nbytes, self.dtype, self.op

    @property
    def modelled(self) -> bool:
        """Whether the algorithm has a model of its own (plain 'mpi' does not)."""
        return model_for(self.algorithm) is not None


@dataclass(frozen=True)
class Params:
    """A calibration's alpha and beta per message size, gamma per dtype/op and, for a ping-pong
    calibration, the measured one-way message times themselves (`message_cost`)."""

    calibration_id: str
    source: str
    alpha: float
    beta: float
    breakpoints: tuple[int, ...] = ()
    segments: tuple[tuple[float, float], ...] = ()
    gammas: Mapping[str, float] = field(default_factory=dict)
    message_cost: MessageCost | None = None

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
            message_cost=_message_cost(cal.get("details")),
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


def _message_cost(details: Any) -> MessageCost | None:
    """The ping-pong curve a calibration's details hold, if any (as stored: maybe JSON text)."""
    if isinstance(details, str):
        details = json.loads(details)
    pingpong = (details or {}).get("pingpong") or {}
    if not pingpong.get("bytes"):
        return None
    return MessageCost.from_medians(pingpong["bytes"], pingpong["one_way_median_s"])


def model_of(algorithm: str) -> str:
    """The model a measured algorithm is predicted with ('lower_bound' for plain 'mpi')."""
    return model_for(algorithm) or "lower_bound"


def variant_of(params: Params, algorithm: str) -> str:
    """How a point of `algorithm` is priced with these parameters: `schedule` when the
    calibration has a ping-pong curve and the algorithm a schedule, else `textbook`."""
    model = model_of(algorithm)
    return SCHEDULE if params.message_cost is not None and model in ALGORITHMS else TEXTBOOK


def predict_with(
    params: Params,
    algorithm: str,
    ranks: int,
    nbytes: float,
    dtype: str,
    op: str,
    *,
    variant: str | None = None,
    smooth: bool = False,
) -> Prediction | None:
    """One point's prediction with a calibration's parameters (None without its gamma): the
    textbook closed form when `variant` asks for it or when variant_of allows no more (the
    autotuned 'mpi', a calibration without a ping-pong curve), else schedule-exact."""
    gamma = params.gamma(dtype, op)
    if gamma is None:
        return None
    model, itemsize = model_of(algorithm), DTYPES[dtype].itemsize
    if variant != TEXTBOOK and variant_of(params, algorithm) == SCHEDULE and params.message_cost:
        spec = ALGORITHMS[model]
        return schedule_prediction(
            spec.schedule,
            spec.parts(ranks),
            ranks,
            nbytes,
            itemsize,
            params.message_cost,
            gamma,
            smooth=smooth,
        )
    alpha, beta = params.at(nbytes)
    return predict(model, ranks, nbytes, alpha, beta, gamma, itemsize, smooth=smooth)


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
        pred = predict_with(params, *p.where)
        textbook = predict_with(params, *p.where, variant=TEXTBOOK)
        if pred is None or textbook is None:
            continue
        rows.append(
            {
                "point_id": p.point_id,
                "run_id": run_id,
                "calibration_id": params.calibration_id,
                "model": model_of(p.algorithm),
                "variant": variant_of(params, p.algorithm),
                "predicted_s": pred.total_s,
                "latency_s": pred.latency_s,
                "bandwidth_s": pred.bandwidth_s,
                "reduction_s": pred.reduction_s,
                "textbook_s": textbook.total_s,
            }
        )
    return rows
