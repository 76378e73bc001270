"""How well each model variant predicts a run: the `model_accuracy` rows (no MPI, no store).

Per calibration, variant (textbook, schedule) and placement (dedicated, oversubscribed: never
mixed), the |predicted / measured - 1| of the points' medians per family, and on the `all` rows
two questions a user asks of a model: does it name the measured winner of a decided cell, and
does it put a measured crossover inside the interval the measurements bracket?
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from runners.analysis.choices import model_pick
from runners.analysis.crossings import PredictedTimes, group_points, predicted_pair
from runners.analysis.params import Params, variant_of
from runners.analysis.points import Point, predict_with
from runners.domain.libraries.catalog import ALGORITHMS, is_autotuned
from runners.domain.model.closed_form import model_for
from runners.domain.model.pricing import TEXTBOOK, VARIANTS
from runners.domain.units import aligned_lines

ALL = "all"
FAMILIES = ("hand-written", "forced library", "autotuned")
DEDICATED, OVERSUBSCRIBED = "dedicated", "oversubscribed"


def family_of(algorithm: str) -> str:
    """hand-written (collsweep's own), forced library (`mpi:<name>`) or autotuned (`mpi`)."""
    if not ALGORITHMS[algorithm].library:
        return "hand-written"
    return "autotuned" if is_autotuned(algorithm) else "forced library"


def variants_of(params: Params, points: Iterable[Point]) -> list[str]:
    """The variants that price at least one of the points in their own way (a point a variant
    cannot price is priced by the most complete variant below it)."""
    algorithms = {p.algorithm for p in points}
    return [
        v
        for v in VARIANTS
        if v == TEXTBOOK or any(variant_of(params, a, v) == v for a in algorithms)
    ]


def accuracy_rows(
    points: Sequence[Point],
    params: Sequence[Params],
    winners: Sequence[Mapping[str, Any]],
    measured_crossovers: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """model_accuracy rows of every calibration, variant, placement and family. `winners` are
    winners rows among the modelled algorithms only (the autotuned 'mpi' has no schedule to
    predict), `measured_crossovers` the measured crossovers rows."""
    placement = {p.ranks: OVERSUBSCRIBED if p.oversubscribed else DEDICATED for p in points}
    rows = []
    for cal in params:
        for variant in variants_of(cal, points):
            predicted = _predicted(points, cal, variant)
            for where in (DEDICATED, OVERSUBSCRIBED):
                mine = [
                    p for p in points if placement[p.ranks] == where and p.point_id in predicted
                ]
                if not mine:
                    continue
                head = {
                    "calibration_id": cal.calibration_id,
                    "variant": variant,
                    "placement": where,
                }
                rows += [head | _errors(f, mine, predicted) for f in FAMILIES if _of(f, mine)]
                cells = [w for w in winners if placement.get(w["ranks"]) == where]
                flips = [c for c in measured_crossovers if placement.get(c["ranks"]) == where]
                rows.append(
                    head
                    | _errors(ALL, mine, predicted)
                    | _winners(cells, mine, predicted)
                    | _crossovers(flips, mine, cal, variant)
                )
    return rows


def _predicted(points: Iterable[Point], cal: Params, variant: str) -> dict[str, float]:
    out = {}
    for p in points:
        pred = predict_with(cal, *p.where, variant=variant)
        if pred is not None and pred.total_s > 0:
            out[p.point_id] = pred.total_s
    return out


def _of(family: str, points: Sequence[Point]) -> list[Point]:
    return [p for p in points if family == ALL or family_of(p.algorithm) == family]


def _errors(family: str, points: Sequence[Point], predicted: Mapping[str, float]) -> dict:
    errors = [abs(predicted[p.point_id] / p.median_s - 1) for p in _of(family, points)]
    return {
        "family": family,
        "points": len(errors),
        "median_abs_error": float(np.median(errors)),
        "p90_abs_error": float(np.percentile(errors, 90)),
    }


def _winners(cells: Sequence[Mapping], points: Sequence[Point], predicted: Mapping) -> dict:
    """Decided cells (winner rows among the modelled algorithms): does the variant pick the
    measured winner?"""
    times: dict[tuple, dict[str, float]] = {}
    for p in points:
        if p.modelled:
            where = (p.ranks, p.dtype, p.op, p.nbytes)
            times.setdefault(where, {})[p.algorithm] = predicted[p.point_id]
    judged = []
    for cell in cells:
        contenders = times.get((cell["ranks"], cell["dtype"], cell["op"], cell["bytes"]), {})
        if cell["decided"] and cell["winner"] in contenders and len(contenders) >= 2:
            judged.append(model_pick(contenders) == cell["winner"])
    share = float(np.mean(judged)) if judged else None
    return {"decided_cells": len(judged), "winner_share": share}


def _crossovers(
    flips: Sequence[Mapping], points: Sequence[Point], cal: Params, variant: str
) -> dict:
    """Measured crossovers of two modelled algorithms of different models: does the variant
    predict one inside the measured interval?"""
    groups, times = group_points(points), PredictedTimes(cal, variant)
    judged = []
    for flip in flips:
        names = (flip["algorithm_a"], flip["algorithm_b"])
        models = [model_for(n) for n in names]
        if None in models or models[0] == models[1]:
            continue
        key = (flip["ranks"], flip["dtype"], flip["op"])
        if not all(n in groups.get(key, {}) for n in names):
            continue  # not predicted here (no gamma for its dtype/op)
        sizes = groups[key][names[0]].keys() & groups[key][names[1]].keys()
        found = predicted_pair(key, names, (min(sizes), max(sizes)), cal, variant, times)
        judged.append(any(flip["low_bytes"] <= r["bytes"] <= flip["high_bytes"] for r in found))
    share = float(np.mean(judged)) if judged else None
    return {"measured_crossovers": len(judged), "crossover_inside_share": share}


def accuracy_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The accuracy rows as a short table for the terminal, one line per calibration, variant
    and placement (what `collsweep analyze` prints)."""
    if not rows:
        return []
    header = ("collective", "calibration", "variant", "placement", *FAMILIES)
    table: list[tuple[str, ...]] = [(*header, "winners", "crossovers")]

    def head_of(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
        collective = row.get("collective", "allreduce")
        return collective, row["calibration_id"], row["variant"], row["placement"]

    for head in dict.fromkeys(head_of(r) for r in rows):
        mine = {r["family"]: r for r in rows if head_of(r) == head}
        total = mine[ALL]
        table.append(
            (
                *head,
                *(_error_cell(mine.get(f)) for f in FAMILIES),
                _share_cell(total["winner_share"], total["decided_cells"]),
                _share_cell(total["crossover_inside_share"], total["measured_crossovers"]),
            )
        )
    return [
        "  model accuracy: median |predicted/measured - 1| (p90) per family; measured winners "
        "named in decided cells; measured crossovers predicted inside their interval",
        *aligned_lines(table, indent="    "),
    ]


def _error_cell(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "-"
    return f"{row['median_abs_error']:.0%} ({row['p90_abs_error']:.0%})"


def _share_cell(share: float | None, of: int) -> str:
    return "-" if share is None else f"{share:.0%} of {of}"


__all__ = ["accuracy_lines", "accuracy_rows", "family_of", "variants_of"]
