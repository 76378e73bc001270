"""Schedule-exact prediction: every round of an algorithm's real schedule priced at its own size.

The closed-form model (runners.domain.models, the `textbook` variant) charges every message
alpha + m * beta with one (alpha, beta) chosen by the payload n. Here each round of the
descriptor's schedule (folds and uneven blocks included) is priced with the calibrated
point-to-point curve itself at that round's message size (`MessageCost`: the ping-pong medians,
made monotone and interpolated), plus gamma for the bytes that round reduces. Ranks run a round
at the same time, so a round costs what its slowest rank pays; rounds add up.

Pure: no MPI, no store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from runners.domain.models import Prediction
from runners.domain.schedule import Schedule

SCHEDULE = "schedule"
TEXTBOOK = "textbook"
VARIANTS = (TEXTBOOK, SCHEDULE)

StepLoad = tuple[int, int]  # (elements moved, elements reduced) by one step (one MPI call)
RankRound = tuple[StepLoad, ...]  # one rank's steps in one round


@dataclass(frozen=True)
class MessageCost:
    """One-way time of a point-to-point message by size, from a calibration's ping-pong.

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
        """Seconds for one message of `nbytes` bytes."""
        xs, ys = self.sizes, self.seconds
        if nbytes <= xs[-1] or len(xs) == 1:
            return float(np.interp(nbytes, xs, ys)) if nbytes <= xs[-1] else ys[-1]
        slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) if xs[-1] > xs[-2] else 0.0
        return ys[-1] + slope * (nbytes - xs[-1])


@lru_cache(maxsize=4096)
def round_loads(schedule: Schedule, size: int, count: int) -> tuple[tuple[RankRound, ...], ...]:
    """Per round (in order), the distinct step loads of the ranks taking part in it.

    A step moves max(sent, received) elements (a full-duplex exchange; an empty block is still
    a message) and reduces what it received when it reduces.
    """
    rounds: dict[tuple[int, int], dict[int, RankRound]] = {}
    for rank in range(size):
        for step in schedule(rank, size, count):
            load = (max(step.sent, step.received), step.received if step.reduce else 0)
            steps = rounds.setdefault(step.round, {})
            steps[rank] = (*steps.get(rank, ()), load)
    return tuple(tuple(sorted(set(rounds[key].values()))) for key in sorted(rounds))


def schedule_prediction(
    schedule: Schedule,
    parts: int,
    ranks: int,
    nbytes: float,
    itemsize: int,
    cost: MessageCost,
    gamma: float,
    *,
    smooth: bool = False,
) -> Prediction:
    """The schedule's time on `ranks` ranks for `nbytes` bytes, each round priced on its own.

    Exact for a whole number of elements; with `smooth` (or a fractional count) the schedule is
    walked with one element per block and every round's load scaled with the payload, as
    models.predict(smooth=True) scales its counts. The split: latency_s is the messages times
    the curve's start-up cost, bandwidth_s what larger messages cost beyond it, reduction_s
    gamma times the reduced bytes, all on each round's slowest rank.
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
    terms = [_round_terms(load, scale * itemsize, cost, gamma) for load in loads]
    messages = sum(t.messages for t in terms)
    return Prediction(
        latency_s=messages * cost.latency_s,
        bandwidth_s=sum(t.message_s for t in terms) - messages * cost.latency_s,
        reduction_s=sum(t.reduction_s for t in terms),
        messages=float(messages),
        bytes_sent=sum(t.moved for t in terms),
        bytes_reduced=sum(t.reduced for t in terms),
    )


@dataclass(frozen=True)
class _Priced:
    """One rank's round, priced."""

    messages: int
    message_s: float
    reduction_s: float
    moved: float
    reduced: float


def _round_terms(
    ranks: tuple[RankRound, ...], bytes_per_element: float, cost: MessageCost, gamma: float
) -> _Priced:
    """The round as its slowest rank pays it."""

    def priced(steps: RankRound) -> _Priced:
        moved = [m * bytes_per_element for m, _ in steps]
        reduced = sum(r for _, r in steps) * bytes_per_element
        return _Priced(len(steps), sum(map(cost, moved)), reduced * gamma, sum(moved), reduced)

    return max((priced(steps) for steps in ranks), key=lambda t: t.message_s + t.reduction_s)
