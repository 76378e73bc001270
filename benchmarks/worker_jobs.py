"""Points timed by collsweep's own sweep worker (`python -m runners.ranks sweep`) in a job we plan.

A sweep puts each forced MPICH algorithm in its own job, apart from the hand-written ones.
The figures instead put the algorithms they compare into one job, so they alternate over
the passes under one environment: the comparison is then as fair as a sweep's comparison
of the algorithms within a job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.common import run_python_job
from runners.domain.collectives.descriptor import MPICH
from runners.domain.libraries.catalog import library_knobs
from runners.domain.sweep.job_file import SweepJob
from runners.domain.sweep.plan import Cell
from runners.domain.sweep.records import TimingPolicy
from runners.jobs import launch


def Timing(**limits: object) -> TimingPolicy:
    """The benchmarks' timing policy: the sweep's record with tighter defaults, in one launch
    (a figure compares inside one launch)."""
    defaults: dict[str, Any] = {
        "min_iterations": 20,
        "max_iterations": 4000,
        "target_rel_ci": 0.02,
        "passes": 3,
    }
    defaults |= {"launches": 1}
    return TimingPolicy(**(defaults | limits))


def job_knobs(algorithms: Sequence[str]) -> dict[str, str]:
    """The library knobs of the (at most one) forced MPICH algorithm among `algorithms`."""
    knobs: dict[str, str] = {}
    for name in algorithms:
        knobs.update(library_knobs(name))
    return knobs


def time_points(
    ranks: int,
    algorithms: Sequence[str],
    sizes: Sequence[int],
    timing: TimingPolicy,
    extra_knobs: Mapping[str, str] | None = None,
    dtype: str = "float32",
) -> list[dict]:
    """The sweep worker's `point` events for every size x algorithm (op SUM), in one job."""
    knobs = {**job_knobs(algorithms), **(extra_knobs or {})}
    cells = [Cell(nbytes, dtype, "sum", tuple(algorithms)) for nbytes in sizes]
    payload = SweepJob("bench", 0, MPICH, {}, tuple(cells), timing)
    with launch.job_file(payload) as path:
        lines = run_python_job(ranks, launch.RANKS_ENTRY, ["sweep", path], knobs, timeout=900)
    return [line for line in lines if line.get("type") == "point"]
