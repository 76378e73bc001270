"""Imported files as one run's points and samples (pure).

Every file is one launch. Files whose points are the same configuration (the same library,
forcing and tool) are launches of one job, in the order given, so several files of one command
give each point several launches and the usual intervals; files of different configurations
(NCCL_ALGO=Ring and =Tree) are jobs of their own, compared by round as a sweep's forced
algorithms are. Each point's sample of a launch is the tool's figure; with one launch the
point's median is that figure exactly and it has no interval over launches (NULL).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runners.domain.imports.datatypes import analysable
from runners.domain.imports.naming import algorithm_of, library_of_file, selectors_of
from runners.domain.imports.records import ImportProblem, ToolFile, ToolRow
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.status import PointStatus
from runners.domain.sweep.repetition import Repetition, point_summary
from runners.domain.sweep.stats import bandwidths, summarize


@dataclass
class Measured:
    """One point's identity and its launches' figures (with the rows they came from)."""

    row: ToolRow
    algorithm: str
    library: str
    job: str
    config: str
    tool: str
    warmup: int | None
    seconds: list[float] = field(default_factory=list)
    launches: list[int] = field(default_factory=list)
    iterations: list[tuple[float, ...]] = field(default_factory=list)  # per launch, if any

    def samples(self) -> tuple[list[float], list[int]]:
        """Every sample with its launch: a launch's per-iteration times where the tool
        reported them, else its one figure."""
        seconds: list[float] = []
        launches: list[int] = []
        for figure, launch, times in zip(self.seconds, self.launches, self.iterations, strict=True):
            seconds += list(times) or [figure]
            launches += [launch] * (len(times) or 1)
        return seconds, launches


@dataclass(frozen=True)
class ImportPlan:
    """What an import stores: points and samples, each job's settings, the libraries' versions,
    notes of rows left out, and why the run cannot be analysed ('' when it can)."""

    points: list[dict[str, Any]]
    samples: list[dict[str, Any]]
    jobs: dict[str, dict[str, str]]
    libraries: dict[str, str]
    launches: int
    notes: list[str]
    not_analysed: str


def plan_import(files: Sequence[ToolFile], run_id: str, library: str | None) -> ImportPlan:
    """The run's points from the files (see the module docstring); `library` is --library."""
    planner = _Planner(run_id, library)
    for index, tool_file in enumerate(files):
        planner.add(index, tool_file)
    points, samples = _rows(run_id, planner.measured)
    notes = [f"{f.name}: {note}" for f in files for note in f.notes]
    most = max((len(v) for v in planner.files_of.values()), default=0)
    why_not = _why_not(planner.measured)
    return ImportPlan(points, samples, planner.jobs, planner.libraries, most, notes, why_not)


@dataclass
class _Planner:
    """The points measured so far, each job's settings and launches (its files, in order)."""

    run_id: str
    library: str | None
    measured: dict[str, Measured] = field(default_factory=dict)
    jobs: dict[str, dict[str, str]] = field(default_factory=dict)
    libraries: dict[str, str] = field(default_factory=dict)
    files_of: dict[str, list[int]] = field(default_factory=dict)

    def add(self, index: int, tool_file: ToolFile) -> None:
        """Every row of file `index` as a launch of its point; a point twice in one file is
        ImportProblem."""
        lib = library_of_file(tool_file.library, self.library, tool_file.name, tool_file.tool)
        self.libraries.setdefault(lib, tool_file.library_version)
        seen: dict[str, int] = {}
        for row in tool_file.rows:
            algorithm = algorithm_of(lib, row.collective, tool_file.environment, tool_file.name)
            point_id = f"{self.run_id}/{algorithm}/{row.ranks}/{row.nbytes}/{row.dtype}/{row.op}"
            if point_id in seen:
                raise ImportProblem(
                    tool_file.name, row.line, f"the same point as line {seen[point_id]} again"
                )
            seen[point_id] = row.line
            found = self.measured.get(point_id) or self._new(row, algorithm, lib, tool_file)
            self.measured[point_id] = found
            launches = self.files_of.setdefault(found.job, [])
            if index not in launches:
                launches.append(index)
            found.seconds.append(row.seconds)
            found.launches.append(launches.index(index))
            found.iterations.append(row.samples)

    def _new(self, row: ToolRow, algorithm: str, library: str, tool_file: ToolFile) -> Measured:
        """A point's record before its launches' figures, in the job of its configuration."""
        knobs = selectors_of(row.collective, tool_file.environment)
        config = _config(tool_file, library, knobs)
        job = f"ranks={row.ranks} config={config}"
        self.jobs[job] = knobs
        return Measured(row, algorithm, library, job, config, tool_file.tool, tool_file.warmup)


def _config(tool_file: ToolFile, library: str, knobs: Mapping[str, str]) -> str:
    """The configuration a point of a file ran: the tool, the library and the settings the file
    shows that pick the collective's algorithm (files of one configuration are launches of one
    job)."""
    forced = " ".join(f"{k}={v}" for k, v in sorted(knobs.items()))
    return " ".join(filter(None, (f"imported:{tool_file.format}", library, forced)))


def _why_not(measured: Mapping[str, Measured]) -> str:
    """Why collsweep's analysis cannot take these points ('' when it can)."""
    for m in measured.values():
        if m.algorithm not in ALGORITHMS:
            return f"collsweep's catalog has no {m.library} algorithm {m.algorithm}"
        problem = analysable(m.row.dtype, m.row.op)
        if problem:
            return problem
    return ""


def _rows(run_id: str, measured: Mapping[str, Measured]) -> tuple[list[dict], list[dict]]:
    """Points and samples rows: each launch's samples (Measured.samples), its pass 0."""
    points, samples = [], []
    for point_id, m in measured.items():
        points.append({"point_id": point_id, **_point(run_id, m)})
        seconds, launches = m.samples()
        samples += [
            {"point_id": point_id, "run_id": run_id, "iteration": i, "seconds": s, "pass": 0}
            | {"launch": launch}
            for i, (s, launch) in enumerate(zip(seconds, launches, strict=True))
        ]
    return points, samples


def _point(run_id: str, m: Measured) -> dict[str, Any]:
    """A point's columns: identity, the tool's figures' statistics, and how it was measured."""
    row = m.row
    launches = len(m.seconds)
    return {
        "run_id": run_id,
        "algorithm": m.algorithm,
        "collective": row.collective,
        "library": m.library,
        "library_config": f"imported from {m.tool} ({m.config})",
        "ranks": row.ranks,
        "bytes": row.nbytes,
        "dtype": row.dtype,
        "op": row.op,
        "count": row.count,
        "status": PointStatus.OK,
        "reason": "",
        "iterations": row.iterations,
        "warmup": m.warmup,
        "launches": launches,
        "job": m.job,
        "sync_cadence": launch_words(launches, m.tool),
        "verified": False,
    } | _statistics(m)


def launch_words(launches: int, tool: str) -> str:
    """How an imported point or run was measured, in words: `one launch, imported from <tool>`."""
    if launches == 1:
        return f"one launch, imported from {tool}"
    return f"{launches} launches (one per file), imported from {tool}"


def run_words(files: int, most: int, tool: str) -> str:
    """How an imported run was measured, in words: `one launch, imported from <tool>` when no
    point has more (its files, if several, are different configurations)."""
    if most == 1:
        apart = f" ({files} files of different configurations)" if files > 1 else ""
        return f"one launch, imported from {tool}{apart}"
    return f"up to {most} launches (one per file), imported from {tool}"


def _statistics(m: Measured) -> dict[str, Any]:
    """Median (the tool's figure itself with one launch, the median of the launches' figures
    with several), spread, and the interval.

    One launch of one figure has no interval over launches (NULL), nor a confidence interval
    of its own (NULL, its relative half-width inf), where collsweep's own one-launch points
    keep their within-launch one; with the tool's per-iteration times it has that one too."""
    row = m.row
    seconds, launches = m.samples()
    if len(seconds) < 2:
        return _single(m)
    rep = Repetition.of(seconds, [0] * len(seconds), launches)
    stats = point_summary(rep, row.nbytes, row.ranks, math.inf, collective=row.collective)
    median = float(np.median(m.seconds))
    algbw, busbw = bandwidths(row.nbytes, row.ranks, median, row.collective)
    iterations = row.iterations if len(seconds) == len(m.seconds) else len(seconds)
    return stats | {
        "median_s": median,
        "algbw_gbps": algbw,
        "busbw_gbps": busbw,
        "ci_target_met": None,
        "iterations": iterations,
    }


def _single(m: Measured) -> dict[str, Any]:
    """The statistics of one launch's one figure."""
    row = m.row
    summary = summarize(np.asarray(m.seconds)).as_dict() | {"iterations": row.iterations}
    algbw, busbw = bandwidths(row.nbytes, row.ranks, m.seconds[0], row.collective)
    return summary | {
        "ci_low_s": None,
        "ci_high_s": None,
        "ci_rel_halfwidth": math.inf,
        "interval_low_s": None,
        "interval_high_s": None,
        "interval_rel_halfwidth": None,
        "algbw_gbps": algbw,
        "busbw_gbps": busbw,
    }
