"""What a sweep is asked for, checked before any rank starts and before the store is touched:
the spec from a file, flags, a workload's calls or a stored run (--resume), the new run's name
and tags, and whether this machine can run it (launcher, libraries, the files every rank reads,
cores, memory). Bad input is a BadInput: one line, exit 2."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from runners.domain.errors import BadInput
from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.names import run_id_problem
from runners.domain.sweep import capacity, launcher
from runners.domain.sweep.launcher import DEFAULT_LAUNCHER
from runners.domain.sweep.run_labels import checked_name, checked_tags
from runners.domain.sweep.spec import (
    SPEC_KEYS,
    SweepSpec,
    load_spec,
    parse_spec,
    spec_from_mapping,
    spec_of,
)
from runners.domain.sweep.workload_spec import workload_overrides
from runners.domain.workload.file import load_workload
from runners.host.machine import physical_cores
from runners.host.memory import available_bytes
from runners.host.tuning_files import tuning_problem
from runners.jobs import launch
from runners.jobs.calibration_budget import auto_calibration_budget
from runners.jobs.sweep import resume_spec
from runners.process.network_namespace import namespace_problem


@dataclass(frozen=True)
class SweepRequest:
    """A sweep as the person asked for it: a spec file and the flags over its keys, or a
    workload's calls, or a stored run to finish; the new run's id, name and tags."""

    store: Path
    spec_file: Path | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    resume: str | None = None
    workload: Path | None = None
    dedicated: bool = False
    trust_stored_launcher: bool = False
    name: str | None = None
    tags: tuple[str, ...] = ()


def _resumed_spec(request: SweepRequest) -> SweepSpec:
    """The stored run's spec with its executable settings from this command line or the spec
    file given, never from the store unless --trust-stored-launcher says so."""
    if request.resume is None:
        raise BadInput("--resume names no run")
    stored = resume_spec(request.store, request.resume)
    overrides = dict(request.overrides)
    resumable = [key for key in SPEC_KEYS if key.resumable]
    if set(overrides) - {key.name for key in resumable}:
        flags = [key.alias or key.flag for key in resumable]
        raise BadInput(
            "--resume reuses the run's own grid and timing; only "
            f"{', '.join(flags[:-1])} and {flags[-1]} may be given with it"
        )
    default = stored.launcher == DEFAULT_LAUNCHER and not stored.launcher_shell
    if request.spec_file:
        source = load_spec(request.spec_file)
    elif "launcher" in overrides or request.trust_stored_launcher or default:
        source = stored
    else:
        raise BadInput(
            f"run {request.resume} was started with launcher {stored.launcher!r}; a resume runs "
            "no command taken from the store: give it again with --launcher (or the spec "
            "file), or add --trust-stored-launcher"
        )
    settings = {key.name: source.values()[key.name] for key in resumable}
    return parse_spec(stored.with_values(**(settings | overrides)).to_toml())  # validated again


def checked_labels(request: SweepRequest) -> dict:
    """The new run's name and tags (runs columns), checked; none with --resume, whose run has
    them already (`collsweep tag` changes them)."""
    if request.resume and (request.name is not None or request.tags):
        raise BadInput(
            "--name and --tag label a new run; change a stored run's with `collsweep tag RUN`"
        )
    name, tags = checked_name(request.name), checked_tags(list(request.tags))
    return {**({"name": name} if name else {}), **({"tags": tags} if tags else {})}


def checked_spec(request: SweepRequest, notes: list[str]) -> SweepSpec:
    """The spec to run, checked (syntax, launcher program, libraries, the files every rank
    reads, cores, memory) before any rank starts; the notes it adds are for the person."""
    if request.run_id is not None and request.resume:
        raise BadInput("--resume takes the run to finish, --run-id names a new one")
    for given in (request.run_id, request.resume):
        if given is not None and run_id_problem(given):
            raise BadInput(str(run_id_problem(given)))

    if request.resume:
        if request.workload:
            raise BadInput("--resume measures the run's own calls: leave --workload out")
        spec = _resumed_spec(request)
    elif request.workload:
        spec = _workload_spec(request, notes)
    else:
        spec = spec_of(request.spec_file, dict(request.overrides), notes)
    if request.dedicated and not request.resume and launcher.runs_here(spec.launcher):
        kept, dropped = capacity.dedicated_ranks(spec.ranks, physical_cores())
        if dropped:
            notes.append(
                f"--dedicated: {physical_cores()} cores here, so group sizes "
                f"{', '.join(map(str, dropped))} are left out (more ranks than cores)"
            )
        spec = replace(spec, ranks=kept)
    auto_calibration_budget()  # a bad $COLLSWEEP_CALIBRATION_BUDGET_S, before any rank starts
    problem = launch.launcher_problem(spec.launcher, spec.launcher_shell)
    problem = problem or launch.libraries_problem(spec.libraries)
    problem = problem or _files_problem(spec)
    widest = replace(spec.nodes, ranks_per_node=max(spec.ranks_per_node))  # any on nodes?
    if problem is None and widest.emulated:
        problem = namespace_problem(spec.shaped_network.qdisc())
    if problem is None and launcher.runs_here(spec.launcher):
        problem = capacity.ranks_problem(spec.ranks, physical_cores())
    if problem is None:
        here = max(spec.ranks) if launcher.runs_here(spec.launcher) else 1
        problem = capacity.payload_problem(spec.sizes, here, available_bytes())
    if problem:
        raise BadInput(problem)
    return spec


WORKLOAD_KEYS = ("sizes", "ranks", "dtypes", "ops", "collectives")


def _workload_spec(request: SweepRequest, notes: list[str]) -> SweepSpec:
    """The spec of a sweep of exactly the workload's calls: its grid keys from the workload,
    the algorithms, timing and launcher from the spec file (if any) and the options."""
    overrides = dict(request.overrides)
    clash = [key for key in WORKLOAD_KEYS if key in overrides]
    if clash:
        raise BadInput(f"--workload sets {', '.join(clash)} from its calls: leave them out")
    if request.workload is None:
        raise BadInput("--workload names no file")
    workload = load_workload(request.workload)
    try:
        overrides |= workload_overrides(workload)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    left_out = [call for call in workload.calls if not call.measurable]
    if left_out:
        notes.append(
            f"{len(left_out)} of the workload's {len(workload.calls)} distinct calls are not "
            f"measured (datatype or op collsweep cannot time): "
            + ", ".join(f"{c.collective} {c.dtype} {c.op}" for c in left_out[:3])
        )
    if request.spec_file:
        return load_spec(request.spec_file, overrides, notes)
    return spec_from_mapping(overrides, notes)


def _files_problem(spec: SweepSpec) -> str | None:
    """Why a file an entry reads at start-up cannot be used (every rank reads it: check it
    now): collsweep's tuning file for the library's tuned entry, the autotuner's file for
    Intel MPI's impi:autotuned."""
    for name in spec.algorithms:
        entry = ALGORITHMS[name]
        lib = LIBRARIES[entry.runs_on]
        if name == lib.vendor_tuned:
            path = Path(spec.vendor_tuning_file)
            if not path.is_file() or path.stat().st_size == 0:
                return f"vendor_tuning_file {path} is not a file with content ({name} reads it)"
        elif entry.own_launch:
            problem = tuning_problem(lib, spec.tuning_file)
            if problem:
                return problem
    return None
