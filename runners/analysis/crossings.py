"""Measured crossovers (with bootstrap intervals from the raw samples) and predicted ones."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from runners.analysis.points import Key, Params, Point, model_of
from runners.domain.catalog import DTYPES
from runners.domain.crossovers import (
    bootstrap_crossover,
    predicted_crossover,
)
from runners.domain.models import model_for, predict
from runners.domain.units import format_bytes

N_BOOT = 200


# --- crossovers ---------------------------------------------------------------------------------


def group_points(points: Iterable[Point]) -> dict[Key, dict[str, dict[int, Point]]]:
    """Points by (ranks, dtype, op), then algorithm, then size."""
    groups: dict[Key, dict[str, dict[int, Point]]] = defaultdict(lambda: defaultdict(dict))
    for p in points:
        groups[p.key][p.algorithm][p.nbytes] = p
    return groups


def _crossing(key: Key, a: str, b: str, a_first: bool, kind: str, **rest: Any) -> dict:
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


def _faster_below(sizes: Sequence[int], ratio: np.ndarray, x: float) -> bool:
    """Whether a (ratio = a / b) is faster at the last size below x where the two differ."""
    below = [r for n, r in zip(sizes, ratio, strict=True) if n < x and r != 1.0]
    return bool(below[-1] < 1.0) if below else bool(ratio[-1] > 1.0)


def measured_pair(
    key: Key, a: dict[int, Point], b: dict[int, Point], names: tuple[str, str], samples: dict
) -> list[dict[str, Any]]:
    """Measured crossovers of one pair of algorithms, with bootstrap intervals."""
    sizes = [
        n
        for n in sorted(a.keys() & b.keys())
        if a[n].point_id in samples and b[n].point_id in samples
    ]
    if len(sizes) < 2:
        return []
    sa = [samples[a[n].point_id] for n in sizes]
    sb = [samples[b[n].point_id] for n in sizes]
    ratio = np.array([np.median(x) / np.median(y) for x, y in zip(sa, sb, strict=True)])
    rows = []
    for x, low, high in bootstrap_crossover(sizes, sa, sb, n_boot=N_BOOT):
        detail = (
            "medians cross between measured sizes (log-log interpolation); 90% interval from "
            f"{N_BOOT} bootstrap resamples of the raw samples"
        )
        a_first = _faster_below(sizes, ratio, x)
        rows.append(
            _crossing(
                key,
                *names,
                a_first,
                "measured",
                bytes=x,
                low_bytes=low,
                high_bytes=high,
                detail=detail,
            )
        )
    return rows


def measured_crossover_rows(groups: Mapping[Key, Mapping], samples: dict) -> list[dict[str, Any]]:
    """Measured crossovers of every pair of algorithms in every (ranks, dtype, op)."""
    rows = []
    for key, by_alg in groups.items():
        for a, b in itertools.combinations(sorted(by_alg), 2):
            rows += measured_pair(key, by_alg[a], by_alg[b], (a, b), samples)
    return rows


def predicted_pair(
    key: Key, names: tuple[str, str], lo: float, hi: float, params: Params
) -> list[dict[str, Any]]:
    """Predicted crossovers of two modelled algorithms within [lo, hi] bytes."""
    ranks, dtype, op = key
    gamma = params.gamma(dtype, op)
    models = tuple(model_of(n) for n in names)
    if gamma is None or models[0] == models[1] or ranks < 2:
        return []
    itemsize = DTYPES[dtype].itemsize

    def diff(n: float) -> float:
        alpha, beta = params.at(n)
        t = [
            predict(m, ranks, n, alpha, beta, gamma, itemsize, smooth=True).total_s for m in models
        ]
        return t[0] - t[1]

    args = (ranks, params.alpha, params.beta, gamma, itemsize, lo, hi, params.at)
    rows = []
    for x in predicted_crossover(*models, *args):
        below = diff(x * 0.999) or -diff(x * 1.001)
        span = f"{format_bytes(lo)} .. {format_bytes(hi)}"
        detail = f"predicted times of {models[0]} and {models[1]} equal (solved within {span})"
        rows.append(
            _crossing(
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


def predicted_crossover_rows(groups: Mapping[Key, Mapping], params: Params) -> list[dict[str, Any]]:
    """Predicted crossovers of every pair of modelled algorithms, over their common sizes."""
    rows = []
    for key, by_alg in groups.items():
        names = sorted(a for a in by_alg if model_for(a) is not None)
        for a, b in itertools.combinations(names, 2):
            common = by_alg[a].keys() & by_alg[b].keys()
            if len(common) >= 2:
                rows += predicted_pair(key, (a, b), min(common), max(common), params)
    return rows
