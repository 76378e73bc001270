"""A run's ok points and raw samples, calibration parameters, and the predictions of each point."""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from runners import store
from runners.domain.collectives.collective import NO_OP
from runners.domain.collectives.datatypes import DTYPES, op_spec
from runners.domain.libraries.catalog import ALGORITHMS, library_of
from runners.domain.model.calibration_id import GammaKey
from runners.domain.model.closed_form import (
    LIBRARY_MIN,
    Prediction,
    autotuned_model,
    library_models,
    model_for,
    predict,
)
from runners.domain.model.closed_form import smooth_totals as models_smooth_totals
from runners.domain.model.overheads import family_of as overhead_family
from runners.domain.model.pricing import (
    CONTENTION,
    OVERHEADS,
    SCHEDULE,
    TEXTBOOK,
    TWO_LEVEL,
    Costs,
    Levels,
    MessageCost,
    schedule_prediction,
    smooth_totals,
    stand_ins,
)
from runners.domain.nodes.placement import Placement
from runners.domain.verdict.assumptions import PointFacts

Progress = Callable[[str], None]
Key = tuple[int, str, str]  # (ranks, dtype, op)

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
    calibration, its measured curves (one-way and exchange message times) and the
    implementation families' overheads (runners.domain.model.overheads)."""

    calibration_id: str
    source: str
    alpha: float
    beta: float
    breakpoints: tuple[int, ...] = ()
    segments: tuple[tuple[float, float], ...] = ()
    gammas: Mapping[str, float] = field(default_factory=dict)
    message_cost: MessageCost | None = None
    exchange_cost: MessageCost | None = None
    copy_cost: MessageCost | None = None
    overheads: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # a calibration of two levels on a run's nodes: the node level's parameters and where the
    # ranks sit (with_levels); None for one level
    node: Params | None = None
    placement: Placement | None = None
    # what these parameters have priced, so that predictions, crossovers, accuracy and best
    # choices read one price of each (algorithm, group, size, variant) and one curve of each
    # (not an argument: a replace()d copy prices afresh)
    priced: dict[tuple, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

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
            message_cost=_curve(cal.get("details"), "pingpong", "one_way_median_s"),
            exchange_cost=_curve(cal.get("details"), "exchange", "median_s"),
            copy_cost=_curve(cal.get("details"), "copy", "median_s"),
            overheads=_decoded(cal.get("overheads")) or {},
        )

    @property
    def most_complete(self) -> str:
        """The variant a point is priced in unless asked otherwise: two_level on nodes with
        both levels known, else contention (one host)."""
        return TWO_LEVEL if self.placement is not None else CONTENTION

    def with_levels(self, node: Mapping[str, Any], placement: Placement) -> Params:
        """These parameters (a calibration of two levels: the network's) with the node
        level's (`node`: that level's calibrations row) and the run's placement, which price
        the two_level variant."""
        return replace(self, node=Params.from_row(node), placement=placement)

    def at(self, nbytes: float) -> tuple[float, float]:
        """(alpha, beta) of the piecewise segment covering `nbytes`, else the whole-range fit."""
        if not self.segments:
            return self.alpha, self.beta
        return self.segments[self._segment(nbytes)]

    def segment_start(self, nbytes: float) -> int | None:
        """The breakpoint where the segment covering `nbytes` starts; None for the first
        segment or a whole-range fit, whose alpha is a start-up cost (beyond it, alpha is only
        that segment's intercept)."""
        index = self._segment(nbytes) if self.segments else 0
        return self.breakpoints[index - 1] if index else None

    def _segment(self, nbytes: float) -> int:
        return bisect.bisect_right(self.breakpoints, nbytes)

    def at_many(self, nbytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """at() of every size in `nbytes`: (alphas, betas)."""
        if not self.segments:
            return np.full(nbytes.shape, self.alpha), np.full(nbytes.shape, self.beta)
        chosen = np.array(self.segments)[np.searchsorted(self.breakpoints, nbytes, side="right")]
        return chosen[:, 0], chosen[:, 1]

    def gamma(self, dtype: str, op: str) -> float | None:
        """Seconds per byte reduced for dtype/op, or None when not calibrated (0 for `none`,
        the op of a collective that reduces nothing)."""
        if op == NO_OP:
            return 0.0
        value = self.gammas.get(str(GammaKey(dtype, op)))
        return None if value is None else float(value)

    def costs(self, variant: str, algorithm: str) -> Costs | None:
        """What `variant` knows for `algorithm` here; None where the calibration lacks a term
        it needs (or for textbook, which needs no Costs)."""
        family = self.overheads.get(overhead_family(algorithm))
        if variant == TEXTBOOK or self.message_cost is None:
            return None
        if variant == SCHEDULE:
            return Costs(self.message_cost)
        if variant == TWO_LEVEL:
            return self._two_levels(algorithm)
        if family is None or (variant == CONTENTION and self.exchange_cost is None):
            return None
        if variant != CONTENTION:
            return Costs(self.message_cost, None, family["round_s"], family["call_s"])
        args = (self.message_cost, self.exchange_cost, family["round_s"], family["call_s"])
        return Costs(*args, copy=self.copy_cost)

    def _two_levels(self, algorithm: str) -> Costs | None:
        """two_level's costs: a message across priced as the network's overheads variant
        would (its curve, round and call costs where measured), one inside as the node's most
        complete variant would, the call's input copy on the copy curve, the network a bus (the
        emulated nodes' one loopback); None without both levels."""
        if self.node is None or self.placement is None:
            return None
        across = self.costs(variant_of(self, algorithm, OVERHEADS), algorithm)
        inside = self.node.costs(variant_of(self.node, algorithm, CONTENTION), algorithm)
        if across is None or inside is None:
            return None
        levels = Levels(inside, self.placement.node_map)
        return replace(across, copy=self.copy_cost, levels=levels)


def _decoded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _curve(details: Any, name: str, seconds: str) -> MessageCost | None:
    """A measured message-time curve of a calibration's details, if it has one."""
    curve = (_decoded(details) or {}).get(name) or {}
    if not curve.get("bytes"):
        return None
    return MessageCost.from_medians(curve["bytes"], curve[seconds])


def model_of(algorithm: str) -> str | None:
    """The model a measured algorithm is predicted with ('library_min' for plain 'mpi'; None
    for a forced algorithm without one)."""
    return autotuned_model(algorithm)


def variant_of(params: Params, algorithm: str, wanted: str | None = None) -> str:
    """The most complete variant up to `wanted` (default: params.most_complete) that these
    parameters can price `algorithm` with (pricing.stand_ins): a calibration without curves
    stays `textbook`; a family without measured overheads stays `schedule`. The autotuned
    'mpi' stays `textbook`: on one node MPICH runs its shared-memory path, not the forced
    algorithms' code, so their measured overheads and message curves are not its costs (at
    p=2 it measures about half of every forced one)."""
    upto = stand_ins(wanted or params.most_complete)
    if model_of(algorithm) == LIBRARY_MIN and params.placement is not None and TWO_LEVEL in upto:
        return TWO_LEVEL  # the fastest of the library's algorithms, each on both levels
    if model_of(algorithm) not in ALGORITHMS:
        return TEXTBOOK
    return next((v for v in upto if params.costs(v, algorithm) is not None), TEXTBOOK)


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
    if variant_of(params, algorithm, variant) == TWO_LEVEL and model_of(algorithm) == LIBRARY_MIN:
        return _fastest_on_levels(params, where, smooth)
    found = _pricing(params, algorithm, dtype, op, variant)
    if found is None:
        return None
    gamma, model, costs = found
    itemsize = DTYPES[dtype].itemsize
    if costs is not None:
        spec = ALGORITHMS[model]
        schedule, parts = spec.required_schedule, spec.blocks(ranks)
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
    if variant_of(params, algorithm, variant) == TWO_LEVEL and model_of(algorithm) == LIBRARY_MIN:
        return _fastest_on_levels_many(params, algorithm, key, np.asarray(nbytes, dtype=float))
    found = _pricing(params, algorithm, dtype, op, variant)
    if found is None:
        raise ValueError(f"{algorithm} has no prediction for {dtype}/{op} here")
    gamma, model, costs = found
    itemsize = DTYPES[dtype].itemsize
    if costs is not None:
        spec = ALGORITHMS[model]
        return smooth_totals(
            spec.required_schedule, spec.blocks(ranks), ranks, nbytes, itemsize, costs, gamma
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
