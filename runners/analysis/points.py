"""A run's ok points and the predictions of each point with a calibration's parameters
(runners.analysis.params)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from runners import store
from runners.analysis.params import Params, model_of, variant_of
from runners.domain.collectives.datatypes import DTYPES, op_spec
from runners.domain.libraries.catalog import ALGORITHMS, collective_of, library_of
from runners.domain.model.closed_form import (
    LIBRARY_MIN,
    Prediction,
    library_models,
    model_for,
    predict,
)
from runners.domain.model.closed_form import smooth_totals as models_smooth_totals
from runners.domain.model.pricing import (
    TEXTBOOK,
    TWO_LEVEL,
    Costs,
    schedule_prediction,
    smooth_totals,
)
from runners.domain.verdict.assumptions import PointFacts

Progress = Callable[[str], None]
Key = tuple[int, str, str]  # (ranks, dtype, op)

# --- points ----------------------------------------------------------------------------------


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
    """One point's prediction with a calibration's parameters (None without its gamma), in
    `variant` (default: the most complete) or the most complete one below it that the
    parameters can price (variant_of). An algorithm without a schedule of its own (the
    autotuned 'mpi', mpi:tuned) is library_min in the closed form: the fastest of the library's
    algorithms that can run the call, the op's commutativity included."""
    key = ("point", algorithm, ranks, nbytes, dtype, op, variant or params.most_complete, smooth)
    if key not in params.priced:
        params.priced[key] = _priced(params, key[1:6], key[6], smooth)
    return params.priced[key]


def _priced(
    params: Params, where: tuple[str, int, float, str, str], variant: str, smooth: bool
) -> Prediction | None:
    """predict_with, computed."""
    algorithm, ranks, nbytes, dtype, op = where
    if _fastest_of_library_on_levels(params, algorithm, variant):
        return _fastest_on_levels(params, where, smooth)
    found = _pricing(params, algorithm, dtype, op, variant)
    if found is None:
        return None
    gamma, model, costs = found
    itemsize = DTYPES[dtype].itemsize
    if costs is not None:
        spec = ALGORITHMS[model]
        schedule, parts = spec.schedule_at(itemsize), spec.blocks(ranks)
        return schedule_prediction(
            schedule, parts, ranks, nbytes, itemsize, costs, gamma, smooth=smooth
        )
    alpha, beta = params.at(nbytes)
    commutative, library = op_spec(op).commutative, library_of(algorithm)
    collective = ALGORITHMS[algorithm].collective
    return predict(
        model,
        ranks,
        nbytes,
        alpha,
        beta,
        gamma,
        itemsize,
        smooth=smooth,
        commutative=commutative,
        library=library,
        collective=collective,
    )


def _fastest_of_library_on_levels(params: Params, algorithm: str, variant: str | None) -> bool:
    """Whether `algorithm` is an autotuned call (library_min) priced on both levels here."""
    autotuned = model_of(algorithm) == LIBRARY_MIN
    return autotuned and variant_of(params, algorithm, variant) == TWO_LEVEL


def _fastest_on_levels(
    params: Params, where: tuple[str, int, float, str, str], smooth: bool
) -> Prediction | None:
    """The autotuned choice on nodes (library_min, two_level): the fastest of the library's
    forced algorithms that can run the call, each priced on both levels."""
    algorithm, ranks, nbytes, dtype, op = where
    spec = ALGORITHMS[algorithm]
    count = nbytes / DTYPES[dtype].itemsize
    names = library_models(
        ranks, count, op_spec(op).commutative, library_of(algorithm), spec.collective
    )
    found = [
        predict_with(params, name, ranks, nbytes, dtype, op, variant=TWO_LEVEL, smooth=smooth)
        for name in names
    ]
    priced = [p for p in found if p is not None]
    return min(priced, key=lambda p: p.total_s) if priced else None


def _fastest_on_levels_many(
    params: Params, algorithm: str, key: Key, nbytes: np.ndarray
) -> np.ndarray:
    """_fastest_on_levels at every size of `nbytes` (smooth): the sizes that share the same
    candidate algorithms are priced together."""
    ranks, dtype, op = key
    spec, itemsize = ALGORITHMS[algorithm], DTYPES[dtype].itemsize
    choices = [
        library_models(ranks, n / itemsize, op_spec(op).commutative, library_of(algorithm),
                       spec.collective)
        for n in nbytes
    ]  # fmt: skip
    totals = np.full(nbytes.shape, np.inf)
    for names in set(choices):
        here = np.array([c == names for c in choices])
        for name in names:
            priced = smooth_times(params, name, key, nbytes[here], TWO_LEVEL)
            totals[here] = np.minimum(totals[here], priced)
    return totals


def smooth_times(
    params: Params,
    algorithm: str,
    key: Key,
    nbytes: np.ndarray,
    variant: str | None = None,
) -> np.ndarray:
    """predict_with(..., smooth=True).total_s at every size in `nbytes` (group key =
    (ranks, dtype, op); its gamma must be known): a schedule is priced over the whole array at
    once (pricing.smooth_totals), and so is a closed form (models.smooth_totals); the
    autotuned choice on nodes, the fastest of its library's algorithms on both levels."""
    ranks, dtype, op = key
    if _fastest_of_library_on_levels(params, algorithm, variant):
        return _fastest_on_levels_many(params, algorithm, key, np.asarray(nbytes, dtype=float))
    found = _pricing(params, algorithm, dtype, op, variant)
    if found is None:
        raise ValueError(f"{algorithm} has no prediction for {dtype}/{op} here")
    gamma, model, costs = found
    itemsize = DTYPES[dtype].itemsize
    if costs is not None:
        spec = ALGORITHMS[model]
        return smooth_totals(
            spec.schedule_at(itemsize), spec.blocks(ranks), ranks, nbytes, itemsize, costs, gamma
        )
    args = (model, ranks, nbytes, *params.at_many(nbytes), gamma, itemsize)
    return models_smooth_totals(
        *args,
        commutative=op_spec(op).commutative,
        library=library_of(algorithm),
        collective=ALGORITHMS[algorithm].collective,
    )


def _pricing(
    params: Params, algorithm: str, dtype: str, op: str, variant: str | None
) -> tuple[float, str, Costs | None] | None:
    """How `algorithm` is priced here: (gamma, model, costs) with costs for pricing its
    schedule round by round, None for the closed form; None without a gamma or a model."""
    gamma, model = params.gamma(dtype, op), model_of(algorithm)
    if gamma is None or model is None:
        return None
    costs = params.costs(variant_of(params, algorithm, variant), algorithm)
    return gamma, model, costs if model in ALGORITHMS else None


def by_collective(points: Iterable[Point]) -> dict[str, list[Point]]:
    """The run's points per collective: each is analysed on its own (its algorithms compete
    with each other only)."""
    out: dict[str, list[Point]] = {}
    for point in points:
        out.setdefault(collective_of(point.algorithm), []).append(point)
    return out


def load_points(path: store.Source, run_id: str) -> list[Point]:
    """The run's ok points with a positive median (store.ok_points)."""
    frame = store.ok_points(path, run_id)
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


def prediction_rows(
    run_id: str, points: Iterable[Point], params: Params, wanted: str | None = None
) -> list[dict[str, Any]]:
    """`predictions` rows of every point that the calibration has a gamma for, each in the
    most complete variant up to `wanted` (variant_of; analysis.libraries.variant_for says
    which a group size wants)."""
    rows = []
    for p in points:
        pred = predict_with(params, *p.where, variant=wanted)
        textbook = predict_with(params, *p.where, variant=TEXTBOOK)
        if pred is None or textbook is None:
            continue
        rows.append(
            {
                "point_id": p.point_id,
                "run_id": run_id,
                "calibration_id": params.calibration_id,
                "model": model_of(p.algorithm),
                "variant": variant_of(params, p.algorithm, wanted),
                "predicted_s": pred.total_s,
                "latency_s": pred.latency_s,
                "bandwidth_s": pred.bandwidth_s,
                "reduction_s": pred.reduction_s,
                "software_s": pred.software_s,
                "textbook_s": textbook.total_s,
            }
        )
    return rows
