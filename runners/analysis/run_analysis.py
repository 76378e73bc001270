"""What the models say about a stored run, stored beside it (no MPI imported here).

`analyze_run` reads a run's ok points and raw samples with aggregating SQL and writes, through
runners.store:
- a calibration fitted to the run's own medians (source 'fitted:<run_id>', fitting.fit_collectives
  with one gamma per dtype/op), next to the run's ping-pong calibration (runs.calibration_id);
- `predictions` for every ok point and each of those calibrations, latency, bandwidth and
  reduction terms apart. Plain 'mpi' (the library's autotuned choice) is predicted with the
  'library_min' model (the fastest of the library's own algorithms), and the `model` column
  says so;
- `winners`: per (ranks, dtype, op, bytes) the fastest two algorithms and whether the paired
  launches decide between them (runners.domain.verdict.comparison), a tie otherwise: every library's
  algorithms competing (library 'all') and, in a run on two libraries, each library's apart
  (the model side, calibrations to agreement, is per library too);
- `against_default`: every other library algorithm (forced, or mpi:tuned) against the autotuned
  mpi at each size, faster / slower / within noise by the same paired comparison;
- `crossovers`: for every pair of algorithms and (ranks, dtype, op), the measured crossovers
  (where their decided order flips, bracketed by the two measured sizes around the flip) and
  the predicted ones of each calibration (T_A = T_B solved within the swept sizes);
- `best_choices` per point and calibration and `agreement` per run and per (ranks, dtype, op);
- `assumptions` (runners.domain.verdict.assumptions).

Only algorithms with a model of their own compete for best choices, agreement and predicted
crossovers, so plain 'mpi' does not (predicted as the fastest of the library's models, it
would tie with the winner). Algorithms that share a model (ring and mpi:ring) tie in
prediction; the tie goes to collsweep's own implementation, which runs the modelled schedule
exactly.

Each step has its module: points.py (points, predictions), params.py (a calibration's
parameters and the variants they price), fitted.py, libraries.py
(each MPI library's calibrations and models, and the variant each group can use), winners.py
(winners and measured crossovers), crossings.py (predicted crossovers), choices.py (best choices
and agreement), checks.py (assumptions); run_analysis.py runs them in order. tuning.py and
tuning_files.py make `collsweep tune`'s files from a run's stored winners.
`collsweep sweep` calls `after_sweep` when a run ends; the calibration a sweep needs before it
starts is runners.jobs.calibrate's (it launches ranks, which this module never does).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from runners import store
from runners.analysis.accuracy import accuracy_lines
from runners.analysis.adaptive import inference_rows
from runners.analysis.checks import assumption_rows, stored_spec
from runners.analysis.choices import agreement_rows, best_choice_rows, contests
from runners.analysis.crossings import group_points
from runners.analysis.history import widen_by_history
from runners.analysis.libraries import (
    LibraryModels,
    by_library,
    run_calibrations,
    run_params,
    variant_for,
)
from runners.analysis.params import Params, model_of
from runners.analysis.points import Point, Progress, by_collective, load_points
from runners.analysis.validation import validation_lines
from runners.analysis.verdict import run_tables, run_verdict
from runners.analysis.winners import (
    ALL_LIBRARIES,
    Comparisons,
    against_default_rows,
    comparisons_of,
    measured_crossover_rows,
    winner_rows,
)
from runners.domain.errors import BadInput, Stopped
from runners.domain.libraries.catalog import ALGORITHMS, collective_of
from runners.domain.model.calibration_id import with_caveat
from runners.domain.status import PointStatus
from runners.domain.sweep.plan import ranks_per_node
from runners.domain.sweep.simulated_run import found_by
from runners.domain.units import wrapped
from runners.domain.verdict.provisional import provisional_reason
from runners.process.faults import hold_at
from runners.store import run_reads
from runners.store.migrations import COLLECTIVE_TABLES


def _ranks_per_node(run: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """For a row of a group of points, its ranks_per_node as the points have it (plan's
    ranks_per_node: the nodes' size asked for, every rank on one host, None where a launcher
    placed them as it liked); a row without ranks (a whole run's) keeps the run's nodes' size."""
    spec = stored_spec(run)

    def of(row: Mapping[str, Any]) -> dict[str, Any]:
        if spec is None:
            return {"ranks_per_node": None}
        ranks = row.get("ranks")
        if ranks is None:
            return {"ranks_per_node": spec.nodes.ranks_per_node or None}
        return {"ranks_per_node": ranks_per_node(spec, int(ranks))}

    return of


class AnalysisError(BadInput):
    """A run cannot be analysed (unknown, or nothing measured), worded for the user."""


def _stderr(line: str) -> None:
    print(wrapped(line), file=sys.stderr, flush=True)


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
    cells: int = 0
    decided: int = 0
    accuracy: list[dict[str, Any]] = field(default_factory=list)
    found_by: str = "measured"  # 'simulated' for a simulated run's points

    def describe(self) -> str:
        """One paragraph for the terminal."""
        lines = [
            f"run {self.run_id}: {self.predictions} predictions, {self.crossovers} crossovers, "
            f"{self.best_choices} best choices, {self.assumptions} assumption checks; "
            f"calibrations {', '.join(map(with_caveat, self.calibrations)) or 'none'}",
            f"  winners: decided in {self.decided} of {self.cells} cells ("
            + (
                "the paired launches agree"
                if self.found_by == "measured"
                else "their times differ by more than the run's margin"
            )
            + "); the others are ties",
        ]
        for row in self.agreement:
            if row["scope"] in ("dedicated", "oversubscribed"):
                apart = " (reported apart)" if row["scope"] == "oversubscribed" else ""
                which = row.get("collective", "allreduce")
                which = "" if which == "allreduce" else f"{which}: "
                lines.append(
                    f"  {which}{row['calibration_id']}, {row['scope']} groups{apart}: "
                    f"the model picks the {self.found_by} best in {row['model_pick_share']:.0%} "
                    f"of {row['points']} cells, the right schedule in "
                    f"{row['same_model_share']:.0%}; median slowdown of its pick "
                    f"{row['median_slowdown']:.0%}"
                )
        lines += accuracy_lines(self.accuracy)
        return "\n".join(lines)


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
    unknown = sorted({p.algorithm for p in points if p.algorithm not in ALGORITHMS})
    if unknown:
        raise AnalysisError(
            f"run {run_id} has algorithms collsweep's catalog does not know ({', '.join(unknown)}"
            "; e.g. imported from another tool): its points can be queried and drawn, not analysed"
        )
    progress(f"analysing run {run_id}: {len(points)} ok points")
    hold_at("analysis")
    libraries = {name: LibraryModels(mine, []) for name, mine in by_library(points).items()}
    calibrations = []
    for name, models in libraries.items():
        fitted_on = [p for p in models.points if collective_of(p.algorithm) == "allreduce"]
        mine = run_calibrations(path, run, fitted_on, progress, name)
        calibrations += mine
        models.params = [run_params(path, run, cal) for cal in mine]
    probes = run_reads.probes_of(path, run_id)
    # computed in memory, then stored in one transaction: all or nothing
    comparisons = comparisons_of(path, run)
    tables: dict[str, list[dict[str, Any]]] = {}
    placed = _ranks_per_node(run)
    for collective, of_collective in by_collective(points).items():
        part = _collective_tables(run, probes, of_collective, libraries, comparisons)
        for name, rows in part.items():
            if name in COLLECTIVE_TABLES:
                rows = [row | {"collective": collective, **placed(row)} for row in rows]
            tables[name] = tables.get(name, []) + rows
    tables["assumptions"] = assumption_rows(run, points, calibrations, probes)
    reason = provisional_reason(tables["assumptions"])
    for row in tables["winners"]:
        row |= {"provisional": bool(reason), "provisional_reason": reason}
    winners = [row for row in tables["winners"] if row["library"] == ALL_LIBRARIES]
    tables["cell_inferences"] = inference_rows(path, run, points, winners)  # adaptive runs'
    store.replace_analysis(path, run_id, tables)
    widen_by_history(path, run_id)
    return AnalysisSummary(
        run_id,
        [p.calibration_id for models in libraries.values() for p in models.params],
        len(tables["predictions"]),
        len(tables["crossovers"]),
        len(tables["best_choices"]),
        len(tables["assumptions"]),
        tables["agreement"],
        len(winners),
        sum(row["decided"] for row in winners),
        tables["model_accuracy"],
        found_by(run.get("spec_toml")),
    )


def _collective_tables(
    run: Mapping[str, Any],
    probes: Sequence[Mapping[str, Any]],
    points: Sequence[Point],
    libraries: Mapping[str, LibraryModels],
    comparisons: Comparisons,
) -> dict[str, list[dict[str, Any]]]:
    """Every analysis table of one collective's points, each library's calibrations pricing
    its own algorithms."""
    mine = {
        name: LibraryModels(ps, libraries[name].params) for name, ps in by_library(points).items()
    }
    tables = _measured_tables(points, mine, comparisons)
    tables |= _model_tables(run, probes, mine, comparisons, tables["crossovers"])
    tables["crossovers"] = tables["crossovers"] + tables.pop("predicted_crossovers")
    return tables


def _measured_tables(
    points: Sequence[Point], libraries: Mapping[str, LibraryModels], comparisons: Comparisons
) -> dict[str, list[dict[str, Any]]]:
    """What the measurements alone say: winners (every library's algorithms competing, and
    each library's apart in a run on several), against_default and measured crossovers."""
    groups = group_points(points)
    winners = winner_rows(groups, comparisons)
    if len(libraries) > 1:
        winners += [row for name, m in libraries.items() for row in m.winners(name, comparisons)]
    return {
        "winners": winners,
        "against_default": against_default_rows(groups, comparisons),
        "crossovers": measured_crossover_rows(groups, comparisons),
    }


def _model_tables(
    run: Mapping[str, Any],
    probes: Sequence[Mapping[str, Any]],
    libraries: Mapping[str, LibraryModels],
    comparisons: Comparisons,
    measured_crossovers: Sequence[Mapping[str, Any]],
) -> dict[str, list[dict[str, Any]]]:
    """What each library's calibrations predict, and how well: predictions, predicted
    crossovers, model accuracy, best choices and agreement."""

    def wanted(ranks: int) -> str:
        return variant_for(run, probes, ranks)

    tables: dict[str, list[dict[str, Any]]] = {
        "predictions": [],
        "predicted_crossovers": [],
        "model_accuracy": [],
        "best_choices": [],
        "agreement": [],
    }
    for models in libraries.values():
        predictions = models.predictions(run["run_id"], wanted)
        choices, agreements = _choices(models.points, models.params, predictions)
        tables["predictions"] += predictions
        tables["predicted_crossovers"] += models.crossovers()
        tables["model_accuracy"] += models.accuracy(comparisons, measured_crossovers)
        tables["best_choices"] += choices
        tables["agreement"] += agreements
    return tables


def _choices(
    points: Sequence[Point], params: Sequence[Params], predictions: Sequence[dict]
) -> tuple[list[dict], list[dict]]:
    """best_choices and agreement rows of every calibration."""
    choices, agreements = [], []
    oversubscribed = {p.ranks for p in points if p.oversubscribed}
    for p in params:
        predicted = {
            r["point_id"]: r["predicted_s"]
            for r in predictions
            if r["calibration_id"] == p.calibration_id
        }
        mine = best_choice_rows(*contests(points, predicted), p.calibration_id)
        choices += mine
        agreements += agreement_rows(mine, oversubscribed)
    return choices, agreements


def after_sweep(
    path: Path, run_id: str, progress: Progress = _stderr, verbose: bool = False
) -> bool:
    """Sweep hook at the end: analyse a run that has ok points (the model's diagnostics said
    too when `verbose`; `collsweep analyze` prints them); whether it has an analysis to tell
    (tell_the_story). A failure only warns, since the measurements are stored and
    `collsweep analyze RUN` can try again."""
    if not store.point_ids(path, run_id, [PointStatus.OK]):
        return False
    try:
        summary = analyze_run(path, run_id, progress)
    except Stopped:
        raise  # a stop signal: the command says what it means
    except Exception as exc:  # the sweep's data is safe; report and let the user retry
        progress(
            f"analysis of run {run_id} failed ({type(exc).__name__}: {exc}); the measurements "
            f"are stored: retry with `collsweep analyze {run_id}`"
        )
        return False
    if verbose:
        progress(summary.describe())
    return True


def tell_the_story(
    path: store.Source, run_id: str, progress: Progress = _stderr, verbose: bool = False
) -> None:
    """The end of a sweep's output: each group's winners as a table, then the verdict."""
    run = store.get_run(path, run_id) or {"run_id": run_id}
    if not verbose:
        progress(f"model diagnostics: `collsweep analyze {run_id}` (or sweep --verbose)")
    tables = run_tables(path, run)
    if tables:
        progress(
            "winners per size (both ratios paired by launch, with 95% intervals; "
            "docs/guide/reading.md)"
        )
        for line in tables:
            progress(line)
    progress("verdict (decided winners by size; ties where the launches disagree):")
    for line in run_verdict(path, run):
        progress(line)
    for line in validation_lines(path, run):  # a tuning file's validation: its own verdict
        progress(line)


# --- reading back, for the command line ----------------------------------------------------


def crossovers_frame(path: store.Target, run_id: str) -> pd.DataFrame:
    """A run's stored crossovers, pairs together, with the calibration source of predicted ones."""
    _require_run(path, run_id)
    return run_reads.stored_crossovers(path, run_id)


def winners_frame(path: store.Target, run_id: str) -> pd.DataFrame:
    """A run's stored winners per cell: decided by the paired launches, or a tie."""
    _require_run(path, run_id)
    return run_reads.stored_winners(path, run_id)


def analysis_missing(path: store.Target, run_id: str) -> bool:
    """Whether the run has ok points but no stored analysis (a stop ended it, or it failed)."""
    ok = store.point_ids(path, run_id, [PointStatus.OK])
    return bool(ok) and run_reads.stored_winners(path, run_id).empty


def agreement_frame(path: store.Target, run_id: str) -> pd.DataFrame:
    """A run's stored agreement rows, the whole run first."""
    _require_run(path, run_id)
    return run_reads.stored_agreement(path, run_id)


def _require_run(path: store.Target, run_id: str) -> None:
    if store.get_run(path, run_id) is None:
        if not Path(path).exists():
            store.Store.open(Path(path)).close()  # raises the store's "no results store" error
        raise AnalysisError(f"no run {run_id!r} in {path}; see `collsweep runs`")


__all__ = [
    "AnalysisError",
    "Params",
    "after_sweep",
    "analyze_run",
    "model_of",
    "tell_the_story",
    "variant_for",
]
