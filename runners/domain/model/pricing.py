"""Schedule-exact prediction: every round of an algorithm's real schedule priced at its own size.

The closed-form model (runners.domain.model.closed_form, the `textbook` variant) charges every
message
alpha + m * beta with one (alpha, beta) chosen by the payload n. Here each round of the
descriptor's schedule (folds and uneven blocks included) is priced with the calibrated
point-to-point curve itself at that round's message size (`MessageCost`: measured medians,
made monotone and interpolated), plus gamma for the bytes that round reduces. Ranks run a round
at the same time, so a round costs what its slowest rank pays; rounds add up.

The variants, each adding one term to the one before (`Costs` holds what a variant knows):
- `schedule`: every message priced on the ping-pong's one-way curve;
- `overheads`: the implementation family's measured per-call and per-round costs
  (runners.domain.model.overheads) replace the curve's start-up: a round costs round_s plus what its
  message costs beyond an empty one, a call adds call_s (the `software_s` term);
- `contention`: a step that sends and receives at once is priced on the exchange curve (both
  ranks copying through the same memory at once) instead of the one-way curve, and the call's
  copy of its input into the result buffer on the copy curve (both ranks copying at once),
  counted in bandwidth_s.

Pure: no MPI, no store.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from runners.domain.collectives.schedule import Schedule
from runners.domain.model.closed_form import Prediction

TEXTBOOK, SCHEDULE, OVERHEADS, CONTENTION = "textbook", "schedule", "overheads", "contention"
VARIANTS = (TEXTBOOK, SCHEDULE, OVERHEADS, CONTENTION)

StepLoad = tuple[int, int, bool]  # (elements moved, reduced, both ways at once) of one MPI call
RankRound = tuple[StepLoad, ...]  # one rank's steps in one round


@dataclass(frozen=True)
class MessageCost:
    """Time of one operation by size from a calibration's medians: a one-way message (the
    ping-pong), an exchange, or a local copy.

    The medians are made monotone (a running maximum: a larger message never costs less) and
    interpolated linearly in bytes between measured sizes; below the smallest size the
    smallest's time, beyond the largest the last segment's slope.
    """

    sizes: tuple[float, ...]
    seconds: tuple[float, ...]

    @classmethod
    def from_medians(cls, sizes: Sequence[float], seconds: Sequence[float]) -> MessageCost:
        """The curve through (size, median one-way seconds) pairs, in any order."""
        if len(sizes) != len(seconds) or not sizes:
            raise ValueError("a message cost needs one median per size, at least one")
        order = sorted(range(len(sizes)), key=lambda i: sizes[i])
        xs = tuple(float(sizes[i]) for i in order)
        ys = tuple(float(v) for v in np.maximum.accumulate([seconds[i] for i in order]))
        return cls(xs, ys)

    @property
    def latency_s(self) -> float:
        """The time of the smallest message: the curve's start-up cost."""
        return self.seconds[0]

    def __call__(self, nbytes: float) -> float:
        """Seconds for `nbytes` bytes."""
        xs, ys = self.sizes, self.seconds
        if nbytes <= xs[-1]:  # np.interp's answer, without its cost for one scalar
            right = bisect.bisect_right(xs, nbytes)
            if right == 0 or right == len(xs):
                return ys[0] if right == 0 else ys[-1]
            x0, x1 = xs[right - 1], xs[right]
            return ys[right - 1] + (ys[right] - ys[right - 1]) * (nbytes - x0) / (x1 - x0)
        if len(xs) == 1:
            return ys[-1]
        return ys[-1] + self._slope_beyond() * (nbytes - xs[-1])

    def many(self, nbytes: np.ndarray) -> np.ndarray:
        """Seconds for each size in `nbytes`: the same curve, evaluated over an array."""
        xs, ys = self.sizes, self.seconds
        out = np.interp(nbytes, xs, ys)
        beyond = nbytes > xs[-1]
        if len(xs) > 1 and beyond.any():
            out[beyond] = ys[-1] + self._slope_beyond() * (nbytes[beyond] - xs[-1])
        return out

    def _slope_beyond(self) -> float:
        xs, ys = self.sizes, self.seconds
        return (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) if xs[-1] > xs[-2] else 0.0


@dataclass(frozen=True)
class Costs:
    """What one variant knows of a message, a round and a call on one calibration.

    `exchange` (contention) prices steps that send and receive at once; `round_s` and `call_s`
    (overheads) are the implementation family's, round_s None where unknown: then a message's
    start-up is the curve's own; `copy` (contention) prices the call's copy of its input.
    """

    one_way: MessageCost
    exchange: MessageCost | None = None
    round_s: float | None = None
    call_s: float = 0.0
    copy: MessageCost | None = None

    def input_copy(self, nbytes: float) -> float:
        """What copying the input costs beyond an empty copy (0 without a copy curve)."""
        return 0.0 if self.copy is None else self.copy(nbytes) - self.copy(0)

    def input_copies(self, nbytes: np.ndarray) -> np.ndarray:
        """input_copy at every size of `nbytes`."""
        if self.copy is None:
            return np.zeros(nbytes.shape)
        return self.copy.many(nbytes) - self.copy(0)

    def curve(self, both_ways: bool) -> MessageCost:
        """The curve a message is priced on: the exchange curve for a step that sends and
        receives at once (where known), else the one-way curve."""
        return self.exchange if both_ways and self.exchange is not None else self.one_way

    def message(self, nbytes: float, both_ways: bool) -> tuple[float, float]:
        """(start-up s, the rest s) of one message: the start-up is what an empty one costs."""
        curve = self.curve(both_ways)
        empty = curve(0)
        return empty, curve(nbytes) - empty


@lru_cache(maxsize=4096)
def round_loads(schedule: Schedule, size: int, count: int) -> tuple[tuple[RankRound, ...], ...]:
    """Per round (in order), the distinct step loads of the ranks taking part in it.

    A step moves max(sent, received) elements (a full-duplex exchange; an empty block is still
    a message), reduces what it received when it reduces, and is an exchange when it both sends
    and receives.
    """
    rounds: dict[tuple[int, int], dict[int, RankRound]] = {}
    for rank in range(size):
        for step in schedule(rank, size, count):
            both_ways = step.send is not None and step.recv is not None
            load = (max(step.sent, step.received), step.received if step.reduce else 0, both_ways)
            steps = rounds.setdefault(step.round, {})
            steps[rank] = (*steps.get(rank, ()), load)
    return tuple(tuple(sorted(set(rounds[key].values()))) for key in sorted(rounds))


def schedule_prediction(
    schedule: Schedule,
    parts: int,
    ranks: int,
    nbytes: float,
    itemsize: int,
    costs: Costs,
    gamma: float,
    *,
    smooth: bool = False,
) -> Prediction:
    """The schedule's time on `ranks` ranks for `nbytes` bytes, each round priced on its own.

    Exact for a whole number of elements; with `smooth` (or a fractional count) the schedule is
    walked with one element per block and every round's load scaled with the payload, as
    models.predict(smooth=True) scales its counts. The split: latency_s is the rounds'
    start-up (round_s each, or their messages' empty cost), bandwidth_s what the messages cost
    beyond it, reduction_s gamma times the reduced bytes, all on each round's slowest rank;
    software_s the call's overhead.
    """
    if ranks == 1:
        return Prediction(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    count = nbytes / itemsize
    if not smooth and count == int(count):
        loads, scale = round_loads(schedule, ranks, int(count)), 1.0
    elif count >= parts or parts == 1:
        loads, scale = round_loads(schedule, ranks, parts), count / parts
    else:
        loads, scale = round_loads(schedule, ranks, max(1, math.ceil(count))), 1.0
    terms = [_round_terms(load, scale * itemsize, costs, gamma) for load in loads]
    startup = sum(t.startup_s if costs.round_s is None else costs.round_s for t in terms)
    return Prediction(
        latency_s=startup,
        bandwidth_s=sum(t.message_s for t in terms) + costs.input_copy(nbytes),
        reduction_s=sum(t.reduction_s for t in terms),
        messages=float(sum(t.messages for t in terms)),
        bytes_sent=sum(t.moved for t in terms),
        bytes_reduced=sum(t.reduced for t in terms),
        software_s=costs.call_s,
    )


def smooth_totals(
    schedule: Schedule,
    parts: int,
    ranks: int,
    nbytes: np.ndarray,
    itemsize: int,
    costs: Costs,
    gamma: float,
) -> np.ndarray:
    """schedule_prediction(..., smooth=True).total_s at every size in `nbytes`, priced over
    the whole array at once. Where every part holds an element the round loads are the same
    for every size and only the bytes per element scale (block = nbytes / parts); below that
    the schedule of ceil(count) elements is priced at whole elements (block = itemsize), one
    numpy evaluation per distinct count."""
    nbytes = np.asarray(nbytes, dtype=float)
    totals = np.zeros(nbytes.shape)
    if ranks == 1:
        return totals
    count = nbytes / itemsize
    scaled = (count >= parts) | (parts == 1)
    if scaled.any():
        loads = round_loads(schedule, ranks, parts)
        totals[scaled] = _loads_totals(loads, nbytes[scaled], nbytes[scaled] / parts, costs, gamma)
    whole = np.maximum(1, np.ceil(count)).astype(int)
    for elements in np.unique(whole[~scaled]):
        here = ~scaled & (whole == elements)
        loads = round_loads(schedule, ranks, int(elements))
        block = np.full(int(here.sum()), float(itemsize))
        totals[here] = _loads_totals(loads, nbytes[here], block, costs, gamma)
    return totals


def _loads_totals(
    loads: tuple[tuple[RankRound, ...], ...],
    nbytes: np.ndarray,
    block: np.ndarray,
    costs: Costs,
    gamma: float,
) -> np.ndarray:
    """Every round's slowest rank, summed, with `block` bytes per element moved or reduced,
    plus the call's costs for payloads of `nbytes` (see smooth_totals)."""
    total = costs.call_s + costs.input_copies(nbytes)
    startup = costs.round_s is None
    for ranks in loads:
        paid: list[np.ndarray | float] = [
            sum(
                costs.curve(both).many(m * block)
                - (0.0 if startup else costs.curve(both)(0))
                + r * block * gamma
                for m, r, both in steps
            )
            for steps in ranks
        ]
        total = total + functools.reduce(np.maximum, paid) + (0.0 if startup else costs.round_s)
    return total


@dataclass(frozen=True)
class _Priced:
    """One rank's round, priced: messages' start-up and the rest, reduction, bytes."""

    messages: int
    startup_s: float
    message_s: float
    reduction_s: float
    moved: float
    reduced: float


def _round_terms(
    ranks: tuple[RankRound, ...], bytes_per_element: float, costs: Costs, gamma: float
) -> _Priced:
    """The round as its slowest rank pays it."""

    def priced(steps: RankRound) -> _Priced:
        moved = [m * bytes_per_element for m, _, _ in steps]
        parts = [costs.message(m, both) for m, (_, _, both) in zip(moved, steps, strict=True)]
        reduced = sum(r for _, r, _ in steps) * bytes_per_element
        startup, rest = sum(p[0] for p in parts), sum(p[1] for p in parts)
        return _Priced(len(steps), startup, rest, reduced * gamma, sum(moved), reduced)

    def paid(t: _Priced) -> float:
        return (t.startup_s if costs.round_s is None else 0.0) + t.message_s + t.reduction_s

    return max((priced(steps) for steps in ranks), key=paid)
