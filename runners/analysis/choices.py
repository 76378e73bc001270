"""Best choices per point, measured and predicted, and how often the model picks the best:
the one home of that rule (the dashboard and the CLI read what this stores)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from runners.analysis.params import model_of
from runners.analysis.points import Key, Point
from runners.domain.libraries.catalog import is_library_call
from runners.domain.verdict.crossovers import (
    best_algorithm,
)

# --- best choices and agreement ------------------------------------------------------------------


Contest = dict[tuple[int, int, str, str], dict[str, float]]  # (ranks, bytes, dtype, op) -> times


def contests(points: Iterable[Point], predicted: Mapping[str, float]) -> tuple[Contest, Contest]:
    """Measured and predicted times of the modelled algorithms per (ranks, bytes, dtype, op),
    only where at least two compete and the prediction exists."""
    measured: Contest = defaultdict(dict)
    model: Contest = defaultdict(dict)
    for p in points:
        if p.modelled and p.ranks >= 2 and p.point_id in predicted:
            where = (p.ranks, p.nbytes, p.dtype, p.op)
            measured[where][p.algorithm] = p.median_s
            model[where][p.algorithm] = predicted[p.point_id]
    keep = [k for k, times in measured.items() if len(times) >= 2]
    return {k: measured[k] for k in keep}, {k: model[k] for k in keep}


def model_pick(predicted: Mapping[str, float]) -> str:
    """The predicted fastest algorithm. Algorithms sharing a model tie; the tie goes to
    collsweep's own implementation (it runs the modelled schedule exactly), then by name."""
    return min(predicted, key=lambda a: (predicted[a], is_library_call(a), a))


def best_choice_rows(
    measured: Contest, model: Contest, calibration_id: str
) -> list[dict[str, Any]]:
    """One best_choices row per (ranks, bytes, dtype, op)."""
    rows = []
    for where in sorted(measured):
        times = measured[where]
        best, pick = best_algorithm(times), model_pick(model[where])
        if times[pick] == times[best]:  # a tie in medians: the model's pick is a best too
            best = pick
        ranks, nbytes, dtype, op = where
        rows.append(
            {
                "calibration_id": calibration_id,
                "ranks": ranks,
                "bytes": nbytes,
                "dtype": dtype,
                "op": op,
                "measured_best": best,
                "predicted_best": pick,
                "best_s": times[best],
                "pick_s": times[pick],
                "slowdown": times[pick] / times[best] - 1.0,
                "candidates": len(times),
                "same_model": model_of(best) == model_of(pick),
            }
        )
    return rows


def agreement_rows(
    choices: Sequence[dict[str, Any]], oversubscribed: AbstractSet[int] = frozenset()
) -> list[dict[str, Any]]:
    """agreement rows of one calibration's best choices: the whole run, its groups with a core
    per rank (`dedicated`) and the `oversubscribed` ones apart, and each (ranks, dtype, op).
    A hit is a pick as fast as the measured best; slowdown is pick_s / best_s - 1;
    same_model_share counts the points where the measured best runs the picked model, maybe
    in another implementation (MPICH's C recursive doubling beating collsweep's Python one)."""
    scopes: dict[Key | str, list] = {}
    for row in choices:
        scopes.setdefault("run", []).append(row)
        placement = "oversubscribed" if row["ranks"] in oversubscribed else "dedicated"
        scopes.setdefault(placement, []).append(row)
        scopes.setdefault((row["ranks"], row["dtype"], row["op"]), []).append(row)
    return [_agreement(scope, rows) for scope, rows in scopes.items()]


def _agreement(scope: Key | str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ranks, dtype, op = scope if isinstance(scope, tuple) else (None, None, None)
    return {
        "calibration_id": rows[0]["calibration_id"],
        "scope": scope if isinstance(scope, str) else f"ranks={ranks} {dtype} {op}",
        "ranks": ranks,
        "dtype": dtype,
        "op": op,
        "points": len(rows),
        "model_pick_share": float(np.mean([r["pick_s"] == r["best_s"] for r in rows])),
        "mean_slowdown": float(np.mean([r["slowdown"] for r in rows])),
        "median_slowdown": float(np.median([r["slowdown"] for r in rows])),
        "same_model_share": float(np.mean([r["same_model"] for r in rows])),
    }
