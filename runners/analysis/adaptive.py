"""An adaptive sweep's view of a run (runners.domain.adaptive): its grid priced on the run's
calibration, what its stored points say (medians and each cell's measured winner), what a
round costs, and the stored inference of every cell it left unmeasured (`cell_inferences`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from runners import store
from runners.analysis.checks import stored_spec
from runners.analysis.libraries import spec_params
from runners.analysis.params import Params
from runners.analysis.points import Point, predict_with
from runners.domain.adaptive.cost import launch_cost_s, point_cost
from runners.domain.adaptive.design import Choice
from runners.domain.adaptive.estimates import (
    Grid,
    Group,
    Measured,
    Outcome,
    PointAt,
    Where,
    corrected,
)
from runners.domain.adaptive.inference import inferred
from runners.domain.libraries.catalog import ALGORITHMS, autotuned_of, collective_of, library_of
from runners.domain.model.closed_form import NOT_SCHEDULES, model_for
from runners.domain.sweep.adaptive_spec import AdaptivePoint
from runners.domain.sweep.plan import grid as spec_grid
from runners.domain.sweep.plan import plan_groups, ranks_per_node, skip_reason
from runners.domain.sweep.spec import SweepSpec


def adaptive_grid(spec: SweepSpec, params: Params) -> Grid:
    """Every runnable point of the spec's full grid, priced on `params`; an algorithm the model
    cannot price (a library's own choice without forced models) is priced as the cell's best,
    as the library would like to be; such a one, or one priced as its library's best
    (library_min), has no schedule of its own (Grid.unscheduled)."""
    full = spec.with_values(adaptive=False, adaptive_points=())
    algorithms: dict[Where, list[str]] = {}
    priced: dict[PointAt, float | None] = {}
    for ranks, algorithm, op, nbytes, dtype in spec_grid(full):
        if skip_reason(algorithm, ranks, op, nbytes, dtype) is not None:
            continue
        group = (collective_of(algorithm), ranks, dtype, op)
        algorithms.setdefault((group, nbytes), []).append(algorithm)
        found = predict_with(params, algorithm, ranks, nbytes, dtype, op)
        priced[(group, nbytes, algorithm)] = found.total_s if found else None
    predicted = {}
    for (group, nbytes), names in algorithms.items():
        known = [t for a in names if (t := priced[(group, nbytes, a)]) is not None]
        floor = min(known, default=1e-6)
        for a in names:
            predicted[(group, nbytes, a)] = priced[(group, nbytes, a)] or floor
    defaults = {group: _defaults(group, algorithms) for group, _ in algorithms}
    every = {a for found in algorithms.values() for a in found}
    unscheduled = frozenset(a for a in every if model_for(a) in (None, *NOT_SCHEDULES))
    return Grid({w: tuple(a) for w, a in algorithms.items()}, predicted, defaults, unscheduled)


def _defaults(group: Group, algorithms: Mapping[Where, Sequence[str]]) -> tuple[str, ...]:
    """The library defaults of a group that the spec sweeps (the speed-up is held to them)."""
    names = {a for (g, _), found in algorithms.items() if g == group for a in found}
    libraries = dict.fromkeys(library_of(a) for a in names if ALGORITHMS[a].library)
    return tuple(d for lib in libraries if (d := autotuned_of(lib, group[0])) in names)


def measured_of(
    points: Iterable[Point], winners: Iterable[Mapping[str, Any]], tried: Iterable[PointAt] = ()
) -> Measured:
    """The medians of a run's ok points and its cells' measured winners (the winners rows
    where every library's algorithms compete)."""
    measured = Measured(tried=set(tried))
    for p in points:
        group = (collective_of(p.algorithm), p.ranks, p.dtype, p.op)
        measured.times[(group, p.nbytes, p.algorithm)] = p.median_s
    for row in winners:
        group = (row.get("collective") or "allreduce", int(row["ranks"]), row["dtype"], row["op"])
        outcome = Outcome(row["winner"], row["runner_up"], bool(row["decided"]))
        measured.outcomes[(group, int(row["bytes"]))] = outcome
    return measured


def choices_of(points: Iterable[AdaptivePoint]) -> list[Choice]:
    """The spec's adaptive_points as the design's choices."""
    return [Choice(((collective_of(a), r, d, o), n, a), k, why) for a, r, n, d, o, k, why in points]


def points_of(choices: Iterable[Choice]) -> tuple[AdaptivePoint, ...]:
    """The design's choices as the spec's adaptive_points."""
    return tuple(
        (a, g[1], n, g[2], g[3], c.round, c.reason) for c in choices for g, n, a in [c.point]
    )


def round_cost(
    spec: SweepSpec, grid: Grid, measured: Measured, choices: Sequence[Choice], cores: int
) -> tuple[float, int]:
    """A round's estimated (seconds, launches): each point's cost at its corrected time, and
    the starts (and calibrations) of the launches that measure them."""
    estimates = {g: corrected(grid, measured, g) for g in {c.point[0] for c in choices}}
    seconds = sum(
        point_cost(spec.timing, estimates[g][(n, a)]) for (g, n, a) in (c.point for c in choices)
    )
    round_spec = spec.with_values(adaptive=True, adaptive_points=points_of(choices))
    launches = _groups(round_spec, cores) * spec.timing.launches
    return seconds + launches * launch_cost_s(spec.launch_calibration), launches


def _groups(spec: SweepSpec, cores: int) -> int:
    """How many launches a round of the spec takes (forced algorithms switched as the spec
    prefers: the probe that settles it runs ranks, and an estimate runs none)."""
    return len(plan_groups(spec, "", switching=spec.library_switching, cores=cores))


def inference_rows(
    path: Path,
    run: Mapping[str, Any],
    points: Sequence[Point],
    winners: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The `cell_inferences` rows of an adaptive run: every cell of its grid it did not
    measure, its inferred winner and why ([] for any other run, or one without calibration)."""
    spec = stored_spec(run)
    if spec is None or not spec.adaptive:
        return []
    cal = store.get_calibration(path, run.get("calibration_id") or "")
    if cal is None:
        return []
    grid = adaptive_grid(spec, spec_params(path, spec, cal))
    measured = measured_of(points, winners)
    return [
        {
            "collective": i.where[0][0],
            "ranks": i.where[0][1],
            "dtype": i.where[0][2],
            "op": i.where[0][3],
            "bytes": i.where[1],
            "winner": i.winner,
            "runner_up": i.runner_up,
            "settled": i.settled,
            "reason": i.reason,
            "below_bytes": i.below,
            "above_bytes": i.above,
            "ranks_per_node": ranks_per_node(spec, i.where[0][1]),
        }
        for i in inferred(grid, measured)
    ]
