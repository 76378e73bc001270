"""A calibration's measured time of one operation by size (a one-way message, an exchange, a
local copy), as the schedule-exact pricing reads it (runners.domain.model.pricing). Pure."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


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
