"""What the models say about a stored run, stored beside it (no MPI imported here).

`analyze_run` reads a run's ok points and raw samples with aggregating SQL and writes, through
runners.store:
- a calibration fitted to the run's own medians (source 'fitted:<run_id>', fitting.fit_collectives
  with one gamma per dtype/op), next to the run's ping-pong calibration (runs.calibration_id);
- `predictions` for every ok point and each of those calibrations, latency, bandwidth and
  reduction terms apart. Plain 'mpi' (the library's autotuned choice) is predicted with the
  'lower_bound' model, and the `model` column says so;
- `crossovers`: for every pair of algorithms and (ranks, dtype, op), the measured crossovers
  (log-log interpolation of medians, 90% bootstrap interval from the raw samples) and the
  predicted ones of each calibration (T_A = T_B solved within the swept sizes);
- `best_choices` per point and calibration and `agreement` per run and per (ranks, dtype, op);
- `assumptions` (runners.domain.assumptions).

Only algorithms with a model of their own compete for best choices, agreement and predicted
crossovers, so plain 'mpi' does not (its lower bound would win every prediction). Algorithms
that share a model (ring and mpi:ring) tie in prediction; the tie goes to collsweep's own
implementation, which runs the modelled schedule exactly.

`collsweep sweep` calls `after_sweep` when a run ends; the calibration a sweep needs before it
starts is runners.jobs.calibrate's (it launches ranks, which this module never does).
"""

from __future__ import annotations

import bisect
import itertools
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from runners import store
from runners.domain import assumptions
from runners.domain.catalog import DTYPES
from runners.domain.crossovers import (
    best_algorithm,
    bootstrap_crossover,
    predicted_crossover,
)
from runners.domain.errors import BadInput
from runners.domain.fitting import (
    PINGPONG_SOURCE,
    CollectiveFit,
    fit_collectives,
    weighted_r_squared,
)
from runners.domain.machine import physical_cores
from runners.domain.models import Prediction, model_for, predict
from runners.domain.spec import SpecError, parse_spec
from runners.domain.units import format_bytes

FITTED_PREFIX = "fitted:"
N_BOOT = 200

Progress = Callable[[str], None]
Key = tuple[int, str, str]  # (ranks, dtype, op)

POINTS_SQL = """
SELECT point_id, algorithm, ranks, bytes, dtype, op, median_s, coalesce(oversubscribed, false) AS
       oversubscribed
FROM points
WHERE run_id = ? AND status = 'ok' AND median_s > 0
ORDER BY ranks, dtype, op, algorithm, bytes
"""

SAMPLES_SQL = """
SELECT s.point_id, list(s.seconds ORDER BY s.iteration) AS seconds
FROM samples s JOIN points p USING (point_id)
WHERE p.run_id = ? AND p.status = 'ok'
GROUP BY s.point_id
"""

CROSSOVERS_SQL = """
SELECT ranks, dtype, op, algorithm_a, algorithm_b, kind, coalesce(calibration_id, '') AS
       calibration_id, bytes, low_bytes, high_bytes, detail
FROM crossovers
WHERE run_id = ?
ORDER BY ranks, dtype, op, least(algorithm_a, algorithm_b), greatest(algorithm_a, algorithm_b),
         kind, calibration_id, bytes
"""

AGREEMENT_SQL = """
SELECT scope, calibration_id, points, model_pick_share, mean_slowdown, same_model_share
FROM agreement
WHERE run_id = ?
ORDER BY scope <> 'run', ranks, dtype, op, calibration_id
"""


class AnalysisError(BadInput):
    """A run cannot be analysed (unknown, or nothing measured), worded for the user."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# --- points and calibration parameters -------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One ok point of a run, as the analysis needs it."""

    point_id: str
    algorithm: str
    ranks: int
    nbytes: int
    dtype: str
    op: str
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
    def modelled(self) -> bool:
        """Whether the algorithm has a model of its own (plain 'mpi' does not)."""
        return model_for(self.algorithm) is not None


@dataclass(frozen=True)
class Params:
    """A calibration's alpha and beta per message size and gamma per dtype/op."""

    calibration_id: str
    source: str
    alpha: float
    beta: float
    breakpoints: tuple[int, ...] = ()
    segments: tuple[tuple[float, float], ...] = ()
    gammas: Mapping[str, float] = field(default_factory=dict)

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
        )

    def at(self, nbytes: float) -> tuple[float, float]:
        """(alpha, beta) of the piecewise segment covering `nbytes`, else the whole-range fit."""
        if not self.segments:
            return self.alpha, self.beta
        return self.segments[bisect.bisect_right(self.breakpoints, nbytes)]

    def gamma(self, dtype: str, op: str) -> float | None:
        """Seconds per byte reduced for dtype/op, or None when not calibrated."""
        value = self.gammas.get(f"{dtype}/{op}")
        return None if value is None else float(value)


def model_of(algorithm: str) -> str:
    """The model a measured algorithm is predicted with ('lower_bound' for plain 'mpi')."""
    return model_for(algorithm) or "lower_bound"


def predict_with(
    params: Params, algorithm: str, ranks: int, nbytes: float, dtype: str, op: str
) -> Prediction | None:
    """The prediction for one point with a calibration's parameters; None without its gamma."""
    gamma = params.gamma(dtype, op)
    if gamma is None:
        return None
    alpha, beta = params.at(nbytes)
    return predict(model_of(algorithm), ranks, nbytes, alpha, beta, gamma, DTYPES[dtype].itemsize)


def load_points(path: Path, run_id: str) -> list[Point]:
    """The run's ok points with a positive median."""
    frame = store.query(path, POINTS_SQL, [run_id])
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


def load_samples(path: Path, run_id: str) -> dict[str, np.ndarray]:
    """Raw sample seconds of every ok point of the run, by point_id."""
    frame = store.query(path, SAMPLES_SQL, [run_id])
    return {
        pid: np.asarray(s, dtype=float)
        for pid, s in zip(frame.point_id, frame.seconds, strict=True)
    }


# --- predictions -------------------------------------------------------------------------------


def prediction_rows(run_id: str, points: Iterable[Point], params: Params) -> list[dict[str, Any]]:
    """`predictions` rows of every point that the calibration has a gamma for."""
    rows = []
    for p in points:
        pred = predict_with(params, p.algorithm, p.ranks, p.nbytes, p.dtype, p.op)
        if pred is None:
            continue
        rows.append(
            {
                "point_id": p.point_id,
                "run_id": run_id,
                "calibration_id": params.calibration_id,
                "model": model_of(p.algorithm),
                "predicted_s": pred.total_s,
                "latency_s": pred.latency_s,
                "bandwidth_s": pred.bandwidth_s,
                "reduction_s": pred.reduction_s,
            }
        )
    return rows


# --- the calibration fitted to the run's own timings -----------------------------------------


def fit_points(points: Sequence[Point]) -> tuple[list[Point], str, CollectiveFit] | None:
    """fit_collectives over the modelled points with a core per rank, or over all modelled
    points when those cannot separate alpha, beta and gamma; with the points used and which."""
    usable = [p for p in points if p.modelled and p.ranks >= 2]
    dedicated = [p for p in usable if not p.oversubscribed]
    for chosen, which in ((dedicated, "points with a core per rank"), (usable, "all points")):
        fit = fit_collectives(_fit_rows(chosen))
        if fit is not None:
            return chosen, which, fit
    return None


def _fit_rows(points: Iterable[Point]) -> list[tuple[str, int, int, int, float]]:
    """The (algorithm, ranks, nbytes, itemsize, seconds) rows fit_collectives takes."""
    return [(p.algorithm, p.ranks, p.nbytes, p.itemsize, p.median_s) for p in points]


def _counts(p: Point) -> Prediction:
    """The point's critical-path counts (messages, bytes sent, bytes reduced)."""
    return predict(p.algorithm, p.ranks, p.nbytes, 1.0, 1.0, 1.0, p.itemsize)


def key_gamma(points: Iterable[Point], alpha: float, beta: float) -> float | None:
    """Gamma >= 0 for one dtype/op with alpha and beta held fixed (relative least squares)."""
    num = den = 0.0
    for p in points:
        c = _counts(p)
        reduced = c.bytes_reduced / p.median_s
        num += reduced * (1.0 - (alpha * c.messages + beta * c.bytes_sent) / p.median_s)
        den += reduced * reduced
    return max(num / den, 0.0) if den > 0 else None


def _fitted_r_squared(points: Sequence[Point], alpha: float, beta: float, gammas: dict) -> float:
    """Relative R^2 of the fitted times (one gamma per dtype/op) against the medians."""
    fitted = []
    for p in points:
        c = _counts(p)
        gamma = gammas[f"{p.dtype}/{p.op}"]
        fitted.append(alpha * c.messages + beta * c.bytes_sent + gamma * c.bytes_reduced)
    return weighted_r_squared(np.array([p.median_s for p in points]), np.array(fitted))


def fitted_calibration(run: Mapping[str, Any], points: Sequence[Point]) -> dict[str, Any] | None:
    """A calibrations row fitted to the run's medians, or None when they cannot separate
    alpha, beta and gamma. alpha and beta are fitting.fit_collectives' over every fitted point;
    each dtype/op then gets its own gamma with alpha and beta held (one key: the same fit).
    """
    found = fit_points(points)
    if found is None:
        return None
    chosen, which, fit = found
    by_key: dict[str, list[Point]] = defaultdict(list)
    for p in chosen:
        by_key[f"{p.dtype}/{p.op}"].append(p)
    gammas = {k: key_gamma(ps, fit.alpha, fit.beta) for k, ps in by_key.items()}
    gammas = {k: fit.gamma if g is None else g for k, g in gammas.items()}
    r2 = _fitted_r_squared(chosen, fit.alpha, fit.beta, gammas)
    low, high = min(p.nbytes for p in chosen), max(p.nbytes for p in chosen)
    run_id = run["run_id"]
    return {
        "calibration_id": FITTED_PREFIX + run_id,
        "created_at": datetime.now(UTC).replace(tzinfo=None),
        "host": run.get("host"),
        "mpi_library": run.get("mpi_library"),
        "alpha_s": fit.alpha,
        "beta_s_per_byte": fit.beta,
        "r_squared": r2,
        "min_bytes": low,
        "max_bytes": high,
        "breakpoints": [],
        "segments": [_segment(low, high, fit.alpha, fit.beta, r2)],
        "gammas": gammas,
        "source": FITTED_PREFIX + run_id,
        "details": _fit_details(chosen, which, fit.gamma, fit.r_squared, by_key),
    }


def _segment(low: int, high: int, alpha: float, beta: float, r2: float) -> dict[str, Any]:
    """One entry of a calibration's segments list."""
    return {
        "min_bytes": low,
        "max_bytes": high,
        "alpha_s": alpha,
        "beta_s_per_byte": beta,
        "r_squared": r2,
    }


def _fit_details(
    chosen: Sequence[Point], which: str, gamma: float, r2: float, by_key: Mapping[str, list]
) -> dict[str, Any]:
    """The fitted calibration's details: which points it used and the joint fit's numbers."""
    return {
        "fit": "fitting.fit_collectives on the run's medians (relative least squares); "
        "gamma per dtype/op refitted with alpha and beta held",
        "points_used": which,
        "points": len(chosen),
        "ranks": sorted({p.ranks for p in chosen}),
        "algorithms": sorted({p.algorithm for p in chosen}),
        "points_per_key": {k: len(v) for k, v in by_key.items()},
        "joint_gamma": gamma,
        "joint_r_squared": r2,
    }


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
    return min(predicted, key=lambda a: (predicted[a], ":" in a, a))


def best_choice_rows(
    measured: Contest, model: Contest, calibration_id: str
) -> list[dict[str, Any]]:
    """One best_choices row per (ranks, bytes, dtype, op)."""
    rows = []
    for where in sorted(measured):
        times = measured[where]
        best, pick = best_algorithm(times), model_pick(model[where])
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


def agreement_rows(choices: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """agreement rows of one calibration's best choices: the whole run and each (ranks, dtype,
    op). A hit is a pick as fast as the measured best; slowdown is pick_s / best_s - 1;
    same_model_share counts the points where the measured best runs the picked model, maybe
    in another implementation (MPICH's C recursive doubling beating collsweep's Python one)."""
    scopes: dict[Key | None, list] = {}
    for row in choices:
        scopes.setdefault(None, []).append(row)
        scopes.setdefault((row["ranks"], row["dtype"], row["op"]), []).append(row)
    return [_agreement(scope, rows) for scope, rows in scopes.items()]


def _agreement(scope: Key | None, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ranks, dtype, op = scope if scope else (None, None, None)
    return {
        "calibration_id": rows[0]["calibration_id"],
        "scope": "run" if scope is None else f"ranks={ranks} {dtype} {op}",
        "ranks": ranks,
        "dtype": dtype,
        "op": op,
        "points": len(rows),
        "model_pick_share": float(np.mean([r["pick_s"] == r["best_s"] for r in rows])),
        "mean_slowdown": float(np.mean([r["slowdown"] for r in rows])),
        "same_model_share": float(np.mean([r["same_model"] for r in rows])),
    }


# --- assumptions -------------------------------------------------------------------------------


def _launcher(run: Mapping[str, Any]) -> str | None:
    try:
        return parse_spec(run.get("spec_toml") or "").launcher
    except SpecError:
        return None


def assumption_rows(
    run: Mapping[str, Any], points: Sequence[Point], calibrations: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Every assumption check of the run (runners.domain.assumptions) from its recorded facts."""
    environment = run.get("environment") or {}
    if not isinstance(environment, dict):
        environment = {}
    inherited = environment.get("inherited", {})
    facts = [
        assumptions.PointFacts(p.point_id, p.algorithm, p.ranks, p.nbytes, p.dtype, p.op)
        for p in points
    ]
    cores = int(run.get("physical_cores") or physical_cores())
    return assumptions.run_checks(
        facts,
        cores,
        _launcher(run),
        inherited,
        calibrations,
        environment.get("load_average_before"),
    )


# --- calibrations of a run -----------------------------------------------------------------------


def measured_calibration(path: Path, run: Mapping[str, Any], progress: Progress) -> dict | None:
    """The run's ping-pong calibration; for a run without one, the newest for its host and
    library, which is then recorded in runs.calibration_id."""
    if run.get("calibration_id"):
        cal = store.get_calibration(path, run["calibration_id"])
        if cal is None:
            progress(f"calibration {run['calibration_id']} of run {run['run_id']} is not stored")
        return cal
    cal = store.latest_calibration(
        path, run.get("host"), mpi_library=run.get("mpi_library"), source=PINGPONG_SOURCE
    )
    if cal is not None:
        store.update_run(path, run["run_id"], {"calibration_id": cal["calibration_id"]})
    return cal


# --- the whole analysis ---------------------------------------------------------------------------


@dataclass
class AnalysisSummary:
    """What analyze_run stored."""

    run_id: str
    calibrations: list[str]
    predictions: int
    crossovers: int
    best_choices: int
    assumptions: int
    agreement: list[dict[str, Any]]

    def describe(self) -> str:
        """One paragraph for the terminal."""
        lines = [
            f"run {self.run_id}: {self.predictions} predictions, {self.crossovers} crossovers, "
            f"{self.best_choices} best choices, {self.assumptions} assumption checks; "
            f"calibrations {', '.join(self.calibrations) or 'none'}"
        ]
        for row in self.agreement:
            if row["scope"] == "run":
                lines.append(
                    f"  {row['calibration_id']}: the model picks the measured best at "
                    f"{row['model_pick_share']:.0%} of {row['points']} points (its model at "
                    f"{row['same_model_share']:.0%}), mean slowdown {row['mean_slowdown']:.1%}"
                )
        return "\n".join(lines)


def run_calibrations(
    path: Path, run: Mapping[str, Any], points: Sequence[Point], progress: Progress
) -> list[dict[str, Any]]:
    """The run's ping-pong calibration and its fitted one (stored now), those that exist."""
    measured = measured_calibration(path, run, progress)
    fitted = fitted_calibration(run, points)
    if fitted is None:
        progress("the run's timings cannot separate alpha, beta and gamma: no fitted calibration")
    else:
        store.add_calibration(path, fitted)
    return [cal for cal in (measured, fitted) if cal is not None]


def analyze_run(path: Path | str, run_id: str, progress: Progress = _stderr) -> AnalysisSummary:
    """Compute and store the model-side tables of a stored run (see the module docstring)."""
    path = Path(path)
    store.migrate(path)  # a writer upgrades an older store; a missing one raises StoreError
    run = store.get_run(path, run_id)
    if run is None:
        raise AnalysisError(f"no run {run_id!r} in {path}; see `collsweep runs`")
    points = load_points(path, run_id)
    if not points:
        raise AnalysisError(f"run {run_id} has no ok points to analyse")
    progress(f"analysing run {run_id}: {len(points)} ok points")
    calibrations = run_calibrations(path, run, points, progress)
    params = [Params.from_row(cal) for cal in calibrations]
    predictions = [row for p in params for row in prediction_rows(run_id, points, p)]
    store.replace_predictions(path, run_id, predictions)
    groups = group_points(points)
    crossings = measured_crossover_rows(groups, load_samples(path, run_id))
    crossings += [row for p in params for row in predicted_crossover_rows(groups, p)]
    store.replace_crossovers(path, run_id, crossings)
    choices, agreements = _choices(points, params, predictions)
    store.replace_best_choices(path, run_id, choices)
    store.replace_agreement(path, run_id, agreements)
    checks = assumption_rows(run, points, calibrations)
    store.replace_assumptions(path, run_id, checks)
    ids = [p.calibration_id for p in params]
    return AnalysisSummary(
        run_id, ids, len(predictions), len(crossings), len(choices), len(checks), agreements
    )


def _choices(
    points: Sequence[Point], params: Sequence[Params], predictions: Sequence[dict]
) -> tuple[list[dict], list[dict]]:
    """best_choices and agreement rows of every calibration."""
    choices, agreements = [], []
    for p in params:
        predicted = {
            r["point_id"]: r["predicted_s"]
            for r in predictions
            if r["calibration_id"] == p.calibration_id
        }
        mine = best_choice_rows(*contests(points, predicted), p.calibration_id)
        choices += mine
        agreements += agreement_rows(mine)
    return choices, agreements


def after_sweep(path: Path, run_id: str, progress: Progress = _stderr) -> None:
    """Sweep hook at the end: analyse a run that has ok points; a failure only warns, since
    the measurements are stored and `collsweep analyze RUN` can try again."""
    if not store.point_ids(path, run_id, ["ok"]):
        return
    try:
        summary = analyze_run(path, run_id, progress)
    except Exception as exc:  # the sweep's data is safe; report and let the user retry
        progress(
            f"analysis of run {run_id} failed ({type(exc).__name__}: {exc}); the measurements "
            f"are stored: retry with `collsweep analyze {run_id}`"
        )
        return
    progress(summary.describe())


# --- reading back, for the command line ----------------------------------------------------


def crossovers_frame(path: Path, run_id: str) -> pd.DataFrame:
    """A run's stored crossovers, pairs together, with the calibration source of predicted ones."""
    _require_run(path, run_id)
    return store.query(path, CROSSOVERS_SQL, [run_id])


def agreement_frame(path: Path, run_id: str) -> pd.DataFrame:
    """A run's stored agreement rows, the whole run first."""
    _require_run(path, run_id)
    return store.query(path, AGREEMENT_SQL, [run_id])


def _require_run(path: Path, run_id: str) -> None:
    if store.get_run(path, run_id) is None:
        if not Path(path).exists():
            store.query(path, "SELECT 1")  # raises the store's "no results store" error
        raise AnalysisError(f"no run {run_id!r} in {path}; see `collsweep runs`")
