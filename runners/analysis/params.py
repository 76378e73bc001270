"""A calibration's parameters as the analysis prices with them (`Params`: alpha and beta per
size, gamma per dtype/op, measured curves, the implementation families' overheads, and on a
run's nodes the node level and the placement), and which model variant they can price an
algorithm in (`variant_of`)."""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from runners.domain.collectives.collective import NO_OP
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.calibration_id import GammaKey
from runners.domain.model.closed_form import LIBRARY_MIN, autotuned_model
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
    stand_ins,
)
from runners.domain.nodes.placement import Placement


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
