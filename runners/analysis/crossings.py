"""Predicted crossovers, and how the analysis groups points (measured ones: winners.py)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from runners.analysis.params import Params, model_of
from runners.analysis.points import Key, Point, smooth_times
from runners.domain.model.closed_form import model_for
from runners.domain.units import format_bytes
from runners.domain.verdict.crossovers import log_grid, sign_changes_of

# --- crossovers ---------------------------------------------------------------------------------


def group_points(points: Iterable[Point]) -> dict[Key, dict[str, dict[int, Point]]]:
    """Points by (ranks, dtype, op), then algorithm, then size."""
    groups: dict[Key, dict[str, dict[int, Point]]] = defaultdict(lambda: defaultdict(dict))
    for p in points:
        groups[p.key][p.algorithm][p.nbytes] = p
    return groups


def crossing_row(key: Key, a: str, b: str, a_first: bool, kind: str, **rest: Any) -> dict:
    """A crossovers row; a_first: `a` is the faster one below the crossover."""
    first, second = (a, b) if a_first else (b, a)
    ranks, dtype, op = key
    return {
        "ranks": ranks,
        "dtype": dtype,
        "op": op,
        "algorithm_a": first,
        "algorithm_b": second,
        "kind": kind,
        **rest,
    }


class PredictedTimes:
    """Smooth predicted times of one calibration in one variant, each curve priced once over a
    whole grid of sizes (points.smooth_times): the pairs of a group share their grid, so each
    curve is priced once, not once per pair it is in. Single sizes (a bisection's steps) go
    through the same vectorised pricing, so a grid and a bisection never disagree on a sign."""

    def __init__(self, params: Params, variant: str | None = None) -> None:
        self.params, self.variant = params, variant
        self._grids: dict[tuple[str, Key, float, float], np.ndarray]
        self._grids = params.priced.setdefault(("grids", variant), {})

    def on_grid(self, name: str, key: Key, lo: float, hi: float) -> np.ndarray:
        """Seconds of `name` in group `key` at every size of log_grid(lo, hi)."""
        found = self._grids.get((name, key, lo, hi))
        if found is None:
            grid = log_grid(lo, hi)
            found = self._grids[name, key, lo, hi] = smooth_times(
                self.params, name, key, grid, self.variant
            )
        return found

    def many(self, name: str, key: Key, nbytes: np.ndarray) -> np.ndarray:
        """Seconds of `name` in group `key` (its gamma must be known) at every size given."""
        return smooth_times(self.params, name, key, nbytes, self.variant)


def predicted_pair(
    key: Key,
    names: tuple[str, str],
    span: tuple[float, float],
    params: Params,
    variant: str | None = None,
    times: PredictedTimes | None = None,
) -> list[dict[str, Any]]:
    """Predicted crossovers of two modelled algorithms within span = (lo, hi) bytes, priced in
    `variant` (default: the calibration's most exact, as the stored predictions are); `times`
    shares the pricing with the other pairs of these parameters and variant."""
    ranks, dtype, op = key
    models = tuple(model_of(n) for n in names)
    if params.gamma(dtype, op) is None or models[0] == models[1] or ranks < 2:
        return []
    time_of = times or PredictedTimes(params, variant)

    def diff(sizes: np.ndarray) -> np.ndarray:
        return time_of.many(names[0], key, sizes) - time_of.many(names[1], key, sizes)

    lo, hi = span
    on_grid = time_of.on_grid(names[0], key, lo, hi) - time_of.on_grid(names[1], key, lo, hi)
    rows = []
    for x in sign_changes_of(diff, lo, hi, on_grid):
        below_above = diff(np.array([x * 0.999, x * 1.001]))
        below = below_above[0] or -below_above[1]
        within = f"{format_bytes(lo)} .. {format_bytes(hi)}"
        detail = f"predicted times of {models[0]} and {models[1]} equal (solved within {within})"
        rows.append(
            crossing_row(
                key,
                *names,
                below < 0,
                "predicted",
                bytes=x,
                calibration_id=params.calibration_id,
                detail=detail,
            )
        )
    return rows


def predicted_crossover_rows(
    groups: Mapping[Key, Mapping], params: Params, variant: str | None = None
) -> list[dict[str, Any]]:
    """Predicted crossovers of every pair of modelled algorithms, over their common sizes."""
    rows, times = [], PredictedTimes(params, variant)
    for key, by_alg in groups.items():
        names = sorted(a for a in by_alg if model_for(a) is not None)
        for a, b in itertools.combinations(names, 2):
            common = by_alg[a].keys() & by_alg[b].keys()
            if len(common) >= 2:
                span = (min(common), max(common))
                rows += predicted_pair(key, (a, b), span, params, variant, times)
    return rows
