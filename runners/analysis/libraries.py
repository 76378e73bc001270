"""One run's calibrations per MPI library, each library's points with its own models, and the
model variant each group size can use (no MPI imported here): the parts of runners.analysis
that differ between libraries.

Each library's launches calibrate themselves on its own ranks (calibration ids end with the
library's suffix: launches:<run>@openmpi, domain.model.calibration_id), and the fit to a library's
own
timings is its own too; the ping-pong calibration made before a sweep is MPICH's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from runners import store
from runners.analysis.accuracy import accuracy_rows
from runners.analysis.checks import stored_spec
from runners.analysis.crossings import group_points, predicted_crossover_rows
from runners.analysis.fitted import fitted_calibration
from runners.analysis.params import Params
from runners.analysis.points import Point, Progress, prediction_rows
from runners.analysis.winners import Comparisons, Groups, winner_rows
from runners.domain.collectives.descriptor import MPICH
from runners.domain.libraries import DEFAULT, LIBRARIES
from runners.domain.libraries.catalog import library_of
from runners.domain.model.calibration import combined_calibration
from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.domain.model.closed_form import model_for
from runners.domain.model.fitting import PINGPONG_SOURCE
from runners.domain.model.levels import NODE
from runners.domain.model.pricing import CONTENTION, OVERHEADS, TWO_LEVEL
from runners.domain.sweep.spec import SweepSpec
from runners.domain.verdict.topology import allocation_nodes, group_hosts, multi_node_ranks


def measured_calibration(
    path: Path, run: Mapping[str, Any], progress: Progress
) -> Mapping[str, Any] | None:
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


def launches_calibration(
    path: Path, run_id: str, points: Sequence[Point], library: str = MPICH
) -> dict[str, Any] | None:
    """The run's launches' own calibrations of one library combined into one (stored now), from
    the launches of groups with a core per rank where there are any; None for a run without."""
    source = CalibrationId(CalibrationKind.LAUNCH, run_id, library=library)
    rows = store.calibrations_of_source(path, str(source))
    dedicated = {p.ranks for p in points if not p.oversubscribed}
    rows = [r for r in rows if r["ranks"] in dedicated] or rows
    if not rows:
        return None
    name = str(CalibrationId(CalibrationKind.LAUNCHES, run_id, library=library))
    combined = combined_calibration(rows, name, name)
    store.add_calibration(path, combined)
    return combined


def run_calibrations(
    path: Path,
    run: Mapping[str, Any],
    points: Sequence[Point],
    progress: Progress,
    library: str = MPICH,
) -> list[Mapping[str, Any]]:
    """One library's calibrations of the run, those that exist: its launches' combined, the
    ping-pong one made before the run (MPICH's; any library's for an imported run, whose file
    measured it, and for a simulated run, whose platform priced every library's schedules),
    and the one fitted to the library's points (the last and the first stored now)."""
    launches = launches_calibration(path, run["run_id"], points, library)
    own = run.get("calibration_id")
    kind = CalibrationId.parse(str(own)).kind if own else None
    every_library = kind in (CalibrationKind.IMPORTED, CalibrationKind.PLATFORM)
    measured = (
        measured_calibration(path, run, progress)
        if library == DEFAULT.name or every_library
        else None
    )
    fitted = fitted_calibration(run, points, library)
    if fitted is None:
        why = (
            "cannot separate alpha, beta and gamma"
            if any(p.modelled for p in points)
            else "hold no point to fit (of an allreduce algorithm with a schedule of its own)"
        )
        progress(f"the run's {LIBRARIES[library].title} timings {why}: no fitted calibration")
    else:
        if fitted["details"]["assumption"]:
            progress(
                f"the run's {LIBRARIES[library].title} timings cannot separate alpha, beta and "
                f"gamma: {fitted['calibration_id']} fits alpha and beta, "
                f"{fitted['details']['assumption']}"
            )
        store.add_calibration(path, fitted)
    return [cal for cal in (launches, measured, fitted) if cal is not None]


def by_library(points: Sequence[Point]) -> dict[str, list[Point]]:
    """The run's points per MPI library whose ranks ran them (each has its own calibrations)."""
    out: dict[str, list[Point]] = {}
    for point in points:
        out.setdefault(library_of(point.algorithm), []).append(point)
    return out


@dataclass
class LibraryModels:
    """One library's points and the parameters of its calibrations."""

    points: list[Point]
    params: list[Params]

    @cached_property
    def groups(self) -> Groups:
        """The library's points by (ranks, dtype, op), then algorithm and size."""
        return group_points(self.points)

    def predictions(self, run_id: str, wanted: Callable[[int], str]) -> list[dict[str, Any]]:
        """predictions rows of the library's points with each of its calibrations, each group
        size's in the most complete variant `wanted` allows it."""
        rows = []
        for ranks in sorted({p.ranks for p in self.points}):
            mine = [p for p in self.points if p.ranks == ranks]
            for params in self.params:
                rows += prediction_rows(run_id, mine, params, wanted(ranks))
        return rows

    def crossovers(self) -> list[dict[str, Any]]:
        """Predicted crossovers between the library's algorithms, each calibration's."""
        return [row for p in self.params for row in predicted_crossover_rows(self.groups, p)]

    def winners(self, library: str, comparisons: Comparisons) -> list[dict[str, Any]]:
        """winners rows among this library's algorithms only."""
        return winner_rows(self.groups, comparisons, library)

    def accuracy(
        self, comparisons: Comparisons, measured: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Any]]:
        """model_accuracy rows of the library's points against its own measured crossovers."""
        names = {p.algorithm for p in self.points}
        modelled = {k: {a: v for a, v in g.items() if model_for(a)} for k, g in self.groups.items()}
        mine = [r for r in measured if {r["algorithm_a"], r["algorithm_b"]} <= names]
        return accuracy_rows(self.points, self.params, winner_rows(modelled, comparisons), mine)


def variant_for(
    run: Mapping[str, Any], probes: Sequence[Mapping[str, Any]] = (), ranks: int | None = None
) -> str:
    """The most complete model variant for a run's points (of group size `ranks`): on
    emulated nodes two_level (each message on its level, the network a bus); contention
    models one node's shared memory, so a group whose ranks spanned several hosts (by their own
    host names), or without those, a run in an allocation of several nodes, stops at overheads."""
    spec = stored_spec(run)
    if spec is not None and spec.nodes.emulated:
        return TWO_LEVEL
    if group_hosts(probes):
        spread = multi_node_ranks(probes)
        several = bool(spread) if ranks is None else ranks in spread
        return OVERHEADS if several else CONTENTION
    environment = run.get("environment") or {}
    inherited = environment.get("inherited", {}) if isinstance(environment, dict) else {}
    nodes = allocation_nodes(inherited)
    return OVERHEADS if nodes is not None and nodes > 1 else CONTENTION


def run_params(path: Path, run: Mapping[str, Any], cal: Mapping[str, Any]) -> Params:
    """A calibration's parameters for a run's points: a calibration of two levels on the
    run's emulated nodes with the node level's curve and the run's placement (two_level), if
    that level's calibration is stored."""
    spec = stored_spec(run)
    return Params.from_row(cal) if spec is None else spec_params(path, spec, cal)


def spec_params(path: Path, spec: SweepSpec, cal: Mapping[str, Any]) -> Params:
    """A calibration's parameters for a spec's points (run_params before the run is)."""
    params = Params.from_row(cal)
    levels = (cal.get("details") or {}).get("levels")
    if not spec.nodes.emulated or not levels:
        return params
    node = store.get_calibration(path, levels[NODE]["calibration_id"])
    return params if node is None else params.with_levels(node, spec.nodes)
