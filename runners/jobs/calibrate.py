"""`collsweep calibrate`: measure alpha, beta and gamma on this machine (no MPI here).

The ranks (`python -m runners.ranks calibrate`, runners.ranks.calibrate_worker) time a
ping-pong between ranks 0 and 1 and the local reductions; this module launches them, fits the
alpha-beta-gamma parameters with runners.domain.model.fitting and returns one row of the store's
`calibrations` table.

What the row's numbers mean:
- `alpha_s`, `beta_s_per_byte` and `r_squared` come from one linear fit of the one-way
  ping-pong medians over the whole size range (fit_linear, relative least squares), so all
  three describe the same fit, as docs/schema.md says;
- `breakpoints` and `segments` come from fit_piecewise (up to 3 segments, split where the
  library switches protocol); each segment carries its own r_squared, and the piecewise
  fit's overall r_squared is in `details["piecewise_r_squared"]`;
- `gammas["<dtype>/<op>"]` is fit_gamma's slope of the local reduction time over the
  reduction sizes, in seconds per byte (should noise make that slope 0, the largest size's
  time per byte instead; `details["reductions"][key]["gamma_from"]` says which);
- `details` keeps the per-size medians behind every fit, so a dashboard can plot them.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.errors import BadInput, CollsweepError
from runners.domain.libraries.catalog import known_names
from runners.domain.model.calibration import (
    calibration_row,
)
from runners.domain.model.calibration_id import GammaKey
from runners.domain.model.fitting import PINGPONG_SOURCE, network_source
from runners.domain.model.levels import two_levels
from runners.domain.nodes.placement import Placement
from runners.domain.sweep import launcher
from runners.domain.sweep.events import Calibrated, MalformedEvent, parse_event
from runners.domain.sweep.job_file import CalibrationJob
from runners.domain.sweep.records import TimingPolicy
from runners.domain.sweep.spec import SweepSpec
from runners.domain.units import format_bytes, format_per_byte, format_seconds
from runners.host.machine import cpu_model, hostname, physical_cores
from runners.jobs import launch
from runners.jobs.calibration_budget import auto_calibration_budget
from runners.process.children import python

DEFAULT_BUDGET_S = 20.0
STARTUP_ALLOWANCE_S = 60.0


class CalibrationError(CollsweepError):
    """A calibration could not be made, worded for the person running collsweep."""


class CalibrationRequestError(CalibrationError, BadInput):
    """A calibration asked for with values the ranks cannot carry out (exit 2)."""


def size_range(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    """min_bytes, min_bytes * factor, ... up to max_bytes (included when reached exactly)."""
    if min_bytes < 1 or max_bytes < min_bytes or factor < 2:
        raise ValueError(
            f"need 1 <= min <= max and factor >= 2, got {min_bytes, max_bytes, factor}"
        )
    sizes = [min_bytes]
    while sizes[-1] * factor <= max_bytes:
        sizes.append(sizes[-1] * factor)
    return sizes


DEFAULT_SIZES: tuple[int, ...] = tuple(size_range(8, 4 * 2**20, 2))
DEFAULT_REDUCE_SIZES: tuple[int, ...] = tuple(size_range(64 * 2**10, 16 * 2**20, 4))


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def check_request(
    ranks: int,
    sizes: Sequence[int],
    reduce_sizes: Sequence[int],
    dtypes: Sequence[str],
    ops: Sequence[str],
) -> None:
    """Raise CalibrationError for a request the ranks cannot carry out."""
    if ranks < 2:
        raise CalibrationRequestError(f"a ping-pong needs at least 2 ranks, got {ranks}")
    if len(set(sizes)) < 2 or min(sizes) < 0:
        raise CalibrationRequestError("need at least 2 distinct message sizes >= 0 bytes to fit")
    for name, table, given in (("dtype", DTYPES, dtypes), ("op", OPS, ops)):
        if not given:
            raise CalibrationRequestError(f"no {name} given")
        unknown = [g for g in given if g not in table]
        if unknown:
            known = known_names(table)
            raise CalibrationRequestError(f"unknown {name} {unknown[0]!r}; known: {known}")
    smallest = max(DTYPES[d].itemsize for d in dtypes)
    if not reduce_sizes or min(reduce_sizes) < smallest:
        raise CalibrationRequestError(f"reduction sizes must be >= {smallest} bytes")


# Every measured size: 10 warm-ups, 20 to 10,000 iterations until the median's CI is 2%.
TIMING = TimingPolicy(
    warmup=10, min_iterations=20, max_iterations=10_000, target_rel_ci=0.02, passes=1, launches=1
)


LAUNCH_BUDGET_S = 0.6  # a launch's calibration, all sizes together
LAUNCH_MIN_TOP = 64 * 2**10  # a launch's calibration measures messages up to at least this
LAUNCH_MAX_TOP = 16 * 2**20  # ... and at most this (time and memory)


def launch_job(spec: SweepSpec) -> CalibrationJob:
    """The short calibration every launch of a sweep makes first: ping-pong, exchange and copy
    over the sizes its rounds send (8 B up to the largest payload, doubling; at least up to
    LAUNCH_MIN_TOP so that a fit has sizes on both sides of the eager limit, at most
    LAUNCH_MAX_TOP: beyond it the curves go on with their last slope), reductions of its dtypes
    and ops, and the overhead runs."""
    top = min(max(max(spec.sizes), LAUNCH_MIN_TOP), LAUNCH_MAX_TOP)
    sizes = size_range(min(8, min(spec.sizes)), top)
    largest = max(min(max(spec.sizes), LAUNCH_MAX_TOP), DEFAULT_REDUCE_SIZES[0])
    reduce_sizes = [n for n in DEFAULT_REDUCE_SIZES if n <= largest]
    return worker_job(sizes, reduce_sizes, spec.dtypes, spec.ops, LAUNCH_BUDGET_S)


def worker_job(
    sizes: Sequence[int],
    reduce_sizes: Sequence[int],
    dtypes: Sequence[str],
    ops: Sequence[str],
    budget_s: float,
) -> CalibrationJob:
    """The ranks' job file; `budget_s` is shared out evenly over every measured size."""
    points = len(set(sizes)) + len(set(reduce_sizes)) * len(dtypes) * len(ops)
    return CalibrationJob(
        sizes=tuple(sorted(set(sizes))),
        reduce_sizes=tuple(sorted(set(reduce_sizes))),
        dtypes=tuple(dtypes),
        ops=tuple(ops),
        timing=replace(TIMING, budget_s=budget_s / points),
    )


def parse_worker_output(stdout: str) -> dict:
    """The worker's `Calibrated` event as a dict; CalibrationError if there is none."""
    for line in reversed(stdout.splitlines()):
        try:
            event = parse_event(line)
        except MalformedEvent as exc:
            raise CalibrationError(f"the calibration job's result is malformed: {exc}") from exc
        if isinstance(event, Calibrated):
            return asdict(event)
    raise CalibrationError("the calibration job printed no results")


def _job_failure(result: launch.JobResult, timeout_s: float) -> CalibrationError:
    tail = " | ".join(result.stderr.strip().splitlines()[-3:]) or "no error output"
    if result.timed_out:
        return CalibrationError(
            f"the calibration job did not finish within {timeout_s:g} s and was stopped "
            f"(a smaller budget or size range, or a larger timeout, may help): {tail}"
        )
    return CalibrationError(f"the calibration job failed (exit {result.returncode}): {tail}")


def run_calibration(
    ranks: int = 2,
    sizes: Sequence[int] | None = None,
    dtypes: Sequence[str] = ("float32",),
    ops: Sequence[str] = ("sum",),
    budget_s: float = DEFAULT_BUDGET_S,
    timeout_s: float | None = None,
    reduce_sizes: Sequence[int] | None = None,
    progress: Callable[[str], None] = _stderr,
    nodes: tuple[Mapping[str, str], Sequence[str]] = ({}, ()),
) -> dict:
    """Measure on `ranks` real MPI ranks and return a `calibrations` row (store-ready dict).

    `sizes` are the ping-pong message sizes in bytes (default 8 B .. 4 MiB by factor 2),
    `reduce_sizes` the local reduction buffer sizes (default 64 KiB .. 16 MiB by factor 4).
    `budget_s` is the most time spent timing, shared out evenly over every measured size
    (each size usually stops earlier, at a 2% confidence interval of its median).
    `timeout_s` (default 60 s + 3 x budget) kills a stuck job. `nodes`: the knobs that put
    the ranks on emulated nodes and the words of their network namespace (none: one host).
    Raises CalibrationError.
    """
    sizes = list(DEFAULT_SIZES if sizes is None else sizes)
    reduce_sizes = list(DEFAULT_REDUCE_SIZES if reduce_sizes is None else reduce_sizes)
    check_request(ranks, sizes, reduce_sizes, dtypes, ops)
    if not budget_s > 0:
        raise CalibrationRequestError(f"the budget must be > 0 s, got {budget_s}")
    timeout = timeout_s if timeout_s is not None else STARTUP_ALLOWANCE_S + 3 * budget_s
    knobs = launcher.default_knobs(ranks, cores=physical_cores()) | dict(nodes[0])
    job = worker_job(sizes, reduce_sizes, dtypes, ops, budget_s)
    where = f"{ranks} emulated nodes, a rank each" if nodes[1] else f"{ranks} ranks"
    progress(
        f"calibrating on {where}: ping-pong over {len(set(sizes))} sizes "
        f"({format_bytes(min(sizes))} .. {format_bytes(max(sizes))}), local reductions of "
        f"{', '.join(f'{d}/{o}' for d in dtypes for o in ops)}; budget {budget_s:g} s"
    )
    started = time.monotonic()
    with launch.job_file(job) as path:
        job_of_ranks = launch.Job(
            ranks, launch.RANKS_ENTRY, ["calibrate", path], knobs, wrap=tuple(nodes[1])
        )
        result = launch.run(job_of_ranks, timeout)
    if result.timed_out or result.returncode != 0:
        raise _job_failure(result, timeout)
    wall_s = time.monotonic() - started
    extra = {"knobs": knobs, "cpu_model": cpu_model(), "physical_cores": physical_cores()}
    worker = parse_worker_output(result.stdout)
    row = calibration_row(worker, extra=extra | {"wall_s": wall_s}, host=hostname())
    progress(f"calibrated in {format_seconds(wall_s)}: {row['calibration_id']}")
    return row


def _line(alpha_s: float, beta: float, r_squared: float) -> str:
    return f"alpha {format_seconds(alpha_s)}, beta {format_per_byte(beta)}, R^2 {r_squared:.4f}"


def _header(cal: dict) -> str:
    created = cal.get("created_at")
    when = f", {created:%Y-%m-%d %H:%M:%S} UTC" if isinstance(created, datetime) else ""
    return (
        f"calibration {cal['calibration_id']} ({cal.get('source')}) on {cal.get('host')}, "
        f"{cal.get('ranks')} ranks{when}"
    )


def describe(cal: dict) -> str:
    """A human-readable multi-line summary of a calibrations row (as built or as stored)."""
    library = (cal.get("mpi_library") or "unknown MPI library").splitlines()[0]
    span = f"{format_bytes(cal['min_bytes'])} .. {format_bytes(cal['max_bytes'])}"
    breakpoints = ", ".join(format_bytes(b) for b in cal.get("breakpoints") or []) or "none"
    lines = [
        _header(cal),
        f"MPI: {' '.join(library.split())}",
        f"whole range {span}: " + _line(cal["alpha_s"], cal["beta_s_per_byte"], cal["r_squared"]),
        f"piecewise fit, breakpoints: {breakpoints}",
    ]
    for seg in cal.get("segments") or []:
        seg_span = f"{format_bytes(seg['min_bytes'])} .. {format_bytes(seg['max_bytes'])}"
        fit = _line(seg["alpha_s"], seg["beta_s_per_byte"], seg["r_squared"])
        lines.append(f"  {seg_span:>20}: {fit}")
    lines.append("gamma (local reduction time per byte):")
    for key, gamma in sorted((cal.get("gammas") or {}).items()):
        lines.append(f"  {key:<22} {format_per_byte(gamma)}")
    overheads = cal.get("overheads") or {}
    if overheads:
        lines.append("software overheads (zero-byte runs of each implementation, p=2):")
    for family, cost in sorted(overheads.items()):
        lines.append(
            f"  {family:<22} {format_seconds(cost['call_s'])} a call, "
            f"{format_seconds(cost['round_s'])} a round"
        )
    return "\n".join(lines)


# --- the calibration a sweep needs ------------------------------------------------------------

PINGPONG_MAX_BYTES = 4 * 2**20


@functools.cache  # one library per process: asked once, however many calibrations look it up
def mpi_library_version(timeout: float = 30.0) -> str | None:
    """MPI_Get_library_version of the library mpi4py loads, asked in a subprocess (no MPI_Init)."""
    code = (
        "import mpi4py; mpi4py.rc.initialize = False\n"
        "from mpi4py import MPI; print(MPI.Get_library_version())"
    )
    try:
        result = subprocess.run(
            python("-c", code),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None


def sweep_calibration(
    path: Path, spec: SweepSpec, progress: Callable[[str], None] = _stderr
) -> str | None:
    """The id of a ping-pong calibration for this host and MPI library that has a gamma for
    every dtype/op of the sweep, measuring (briefly) and storing one if the store has none;
    on emulated nodes, the calibration of both levels (network_calibration). None if that
    calibration fails: the run then has only its fitted calibration.
    """
    if spec.nodes.emulated:
        return network_calibration(path, spec, progress)
    cal = _host_calibration(path, spec, progress)
    return cal["calibration_id"] if cal else None


def network_calibration(
    path: Path, spec: SweepSpec, progress: Callable[[str], None] = _stderr
) -> str | None:
    """The calibration of both levels of the spec's emulated nodes, one row: the ping-pong
    across two nodes under the spec's network (the row's alpha, beta and curves) with the one
    inside a node, this host's shared-memory calibration, in details['levels']."""
    source = network_source(spec.network)
    reused = _reusable(path, spec, source, progress)
    if reused is not None:
        return reused["calibration_id"]
    inside = replace(spec, ranks_per_node=(0,), network="")
    node = _host_calibration(path, inside, progress, "inside a node: calibration")
    across = (Placement(1).library_env(2), launch.network_wrapper(spec))
    network = _measured(spec, progress, across)
    if network is None or node is None:
        return None
    network["source"] = source
    network["details"]["levels"] = two_levels(node, network, spec.shaped_network)
    store.add_calibration(path, network)
    return network["calibration_id"]


def _host_calibration(
    path: Path,
    spec: SweepSpec,
    progress: Callable[[str], None],
    said: str = "predictions use calibration",
) -> Mapping[str, Any] | None:
    """This host's newest usable ping-pong calibration, or a new one measured and stored."""
    found = _reusable(path, spec, PINGPONG_SOURCE, progress, said)
    if found is None:
        found = _measured(spec, progress)
        if found is not None:
            store.add_calibration(path, found)
    return found


def _reusable(
    path: Path,
    spec: SweepSpec,
    source: str,
    progress: Callable[[str], None],
    said: str = "predictions use calibration",
) -> Mapping[str, Any] | None:
    """The newest calibration of `source` for this host and library with a gamma for every
    dtype/op of the sweep (said with `said` and its id), or None."""
    keys = {str(GammaKey(d, o)) for d in spec.dtypes for o in spec.ops}
    library = mpi_library_version()
    latest = store.latest_calibration(path, hostname(), mpi_library=library, source=source)
    if latest is None or not keys <= set(latest.get("gammas") or {}):
        return None
    progress(f"{said} {latest['calibration_id']}")
    return latest


def _measured(
    spec: SweepSpec,
    progress: Callable[[str], None],
    nodes: tuple[Mapping[str, str], Sequence[str]] = ({}, ()),
) -> dict[str, Any] | None:
    """A short calibration for the sweep (on `nodes`), or None when it fails (said)."""
    sizes = size_range(min(8, min(spec.sizes)), max(PINGPONG_MAX_BYTES, max(spec.sizes)))
    budget = auto_calibration_budget()
    try:
        return run_calibration(
            2, sizes, spec.dtypes, spec.ops, budget, progress=progress, nodes=nodes
        )
    except CalibrationError as exc:
        progress(f"calibration failed, so only the fit to the run's own timings is used: {exc}")
        return None


def prepare_run(
    path: Path, run_id: str, spec: SweepSpec, progress: Callable[[str], None] = _stderr
) -> None:
    """Sweep hook before launching: give the run a calibration (runs.calibration_id)."""
    run = store.get_run(path, run_id)
    if run is None or run.get("calibration_id"):
        return
    calibration_id = sweep_calibration(path, spec, progress)
    if calibration_id:
        store.update_run(path, run_id, {"calibration_id": calibration_id})
