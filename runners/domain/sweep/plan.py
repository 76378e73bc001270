"""Turning a sweep spec into jobs: per round, one launch per (ranks, library configuration)
(no MPI)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from runners.domain.collectives.collective import COLLECTIVES, qualified
from runners.domain.collectives.datatypes import DTYPES, op_spec, ops_of
from runners.domain.collectives.descriptor import MPICH
from runners.domain.libraries import LIBRARIES, PER_CALL, PER_COMMUNICATOR, switching_mode_of
from runners.domain.libraries.catalog import ALGORITHMS, collective_of, library_of
from runners.domain.libraries.switching import LAUNCH, RUNTIME, settings
from runners.domain.status import PointStatus
from runners.domain.sweep.adaptive_spec import AdaptiveFilter
from runners.domain.sweep.auto_points import AutoFilter
from runners.domain.sweep.launcher import default_knobs, is_oversubscribed, runs_here
from runners.domain.sweep.point_row import PointRow
from runners.domain.sweep.records import PointKey
from runners.domain.sweep.spec import SweepSpec
from runners.domain.sweep.workload_spec import in_cells


@dataclass(frozen=True)
class Cell:
    """One (collective, bytes, dtype, op) of a job; its algorithms are timed alternately."""

    nbytes: int
    dtype: str
    op: str
    algorithms: tuple[str, ...]
    collective: str = "allreduce"

    @property
    def count(self) -> int:
        """Elements per buffer."""
        return self.nbytes // DTYPES[self.dtype].itemsize


@dataclass(frozen=True)
class Group:
    """One MPI job: a group size, the environment that configures the library, and, with
    run-time switching, the MPI_T settings each algorithm takes before its turn."""

    ranks: int
    config: str  # "" for hand-written + autotuned (+ switched) algorithms, else the forced one
    # (or the algorithm that needs a launch of its own)
    knobs: dict[str, str]
    cells: list[Cell] = field(default_factory=list)
    switches: dict[str, dict[str, int]] = field(default_factory=dict)
    switching: str = LAUNCH
    library: str = MPICH  # whose ranks run the job (its mpiexec, its libmpi)
    oversubscribed: bool = False  # more ranks than the host's physical cores
    ranks_per_node: int | None = None  # ranks that share a node's memory (None: not known)
    adaptive_round: int | None = None  # an adaptive run's: the round whose points it measures

    @property
    def label(self) -> str:
        """The job's name in the run's environment record and points.job (an adaptive round's
        says its round: points of two rounds never shared a launch)."""
        label = f"ranks={self.ranks} config={self.config or 'default'}"
        return label if self.adaptive_round is None else f"{label} round={self.adaptive_round}"

    def points(self, run_id: str) -> list[str]:
        """The ids of every point this job measures."""
        return [
            PointKey(run_id, alg, self.ranks, cell.nbytes, cell.dtype, cell.op).point_id()
            for cell in self.cells
            for alg in cell.algorithms
        ]


@dataclass(frozen=True)
class Launch:
    """One MPI launch of a sweep: a group's cells in the launch's order, in round `index`."""

    index: int
    group: Group


@dataclass(frozen=True)
class Plan:
    """A spec planned once, for everything a sweep reads of it: every point the spec asks
    for, the launches still to run, and the rows of the points declared unsupported."""

    point_ids: frozenset[str]  # every point the spec asks for, measured or unsupported
    launches: list[Launch]
    skipped: list[PointRow]

    def to_measure(self, run_id: str) -> set[str]:
        """The points the launches measure."""
        return {pid for launch in self.launches for pid in launch.group.points(run_id)}


def plan_sweep(
    spec: SweepSpec,
    run_id: str,
    kept: set[str],
    done: Iterable[tuple[str, int]] = (),
    switching: str = LAUNCH,
    *,
    cores: int,
) -> Plan:
    """The spec's Plan for run `run_id` on a host of `cores` physical cores: `kept` points are
    measured no more (nor declared skipped again), `done` (point_id, launch) pairs are not
    launched again."""
    return Plan(
        frozenset(all_point_ids(spec, run_id)),
        plan_launches(spec, run_id, kept, done, switching, cores=cores),
        skipped_points(spec, run_id, kept, switching, cores=cores),
    )


def plan_launches(
    spec: SweepSpec,
    run_id: str,
    kept: set[str],
    done: Iterable[tuple[str, int]] = (),
    switching: str = LAUNCH,
    *,
    cores: int,
) -> list[Launch]:
    """Every launch still to run, round by round: launch 0 of every group, then launch 1, ...

    Each round's groups, and each group's cells, come in an order shuffled by
    random.Random(f"{spec.seed}:{round}"), so a point meets other machine states and
    neighbours in every round. `kept` points are measured no more; `done` holds the
    (point_id, launch) pairs already stored, so a resumed run redoes only what is missing.
    """
    done_by_launch: dict[int, set[str]] = {}
    for point_id, launch in done:
        done_by_launch.setdefault(launch, set()).add(point_id)
    launches = []
    for index in range(spec.timing.launches):
        skip = set(kept) | done_by_launch.get(index, set())
        groups = plan_groups(spec, run_id, skip, switching, cores=cores)
        order = random.Random(f"{spec.seed}:{index}")
        order.shuffle(groups)
        for group in groups:
            order.shuffle(group.cells)
        launches += [Launch(index, group) for group in groups]
    return launches


def ranks_per_node(spec: SweepSpec, ranks: int) -> int | None:
    """How many of a group's ranks share a node's memory: the nodes' size asked for (emulated,
    or told to a cluster's launcher), every rank when the launcher starts them all on this
    host, None when a launcher places them as it likes (the probes then say where they ran)."""
    if spec.nodes.placed:
        return spec.nodes.ranks_per_node
    return ranks if runs_here(spec.launcher) else None


def skip_reason(algorithm: str, ranks: int, op: str, nbytes: int, dtype: str) -> str | None:
    """Why a point is not measured, or None: the algorithm's declared requirements, the
    collective's (equal blocks need a multiple of p elements), or the library would run
    another algorithm in its place (a fallback, from its source)."""
    spec, commutative = ALGORITHMS[algorithm], op_spec(op).commutative
    itemsize = DTYPES[dtype].itemsize
    count = nbytes // itemsize
    return (
        spec.unsupported_reason(ranks, op, commutative)
        or COLLECTIVES[spec.collective].unsupported_count(count, ranks)
        or spec.fallback_reason(count, itemsize, ranks, commutative)
    )


def plan_groups(
    spec: SweepSpec,
    run_id: str,
    done: AbstractSet[str] = frozenset(),
    switching: str = LAUNCH,
    *,
    cores: int,
) -> list[Group]:
    """The jobs that measure every supported point of `spec` not already in `done`, on a
    host of `cores` physical cores (more ranks than that: oversubscribed).

    Each library's algorithms run in jobs of that library. `switching` (the probe's answer
    for MPICH) RUNTIME: every MPICH algorithm of a group size shares one job, forced ones
    switched through MPI_T before each turn; LAUNCH: a job per forced algorithm, forced by
    environment. Open MPI forces per communicator, which it always allows, so the spec's
    choice holds; Intel MPI only per launch. An algorithm configured at start-up only
    (`own_launch`: mpi:tuned, impi:tuned, impi:autotuned) has a job of its own either way.
    """
    groups: list[Group] = []
    for ranks in spec.ranks:
        for config in _configs(spec.algorithms, switching, spec.library_switching):
            algs = [
                a
                for a in spec.algorithms
                if _config(a, switching, spec.library_switching) == config
            ]
            library = library_of(algs[0])
            mode = switching_mode_of(LIBRARIES[library], switching, spec.library_switching)
            knobs = default_knobs(ranks, spec.thread_level, cores=cores)
            knobs |= _knobs(algs, mode, library) | spec.nodes.library_env(ranks)
            if ALGORITHMS[algs[0]].own_launch:
                knobs.update(_file_env(algs[0], spec))
            cells = _cells(spec, run_id, ranks, algs, done)
            if cells:
                switches = _switches(algs, mode)
                over = is_oversubscribed(ranks, cores)
                per_node = ranks_per_node(spec, ranks)
                index = adaptive_round(spec, ranks, cells)
                groups.append(
                    Group(
                        ranks, config, knobs, cells, switches, mode, library, over, per_node, index
                    )
                )
    return groups


def adaptive_round(spec: SweepSpec, ranks: int, cells: list[Cell]) -> int | None:
    """The latest round among an adaptive job's points (None for any other sweep's job)."""
    if not spec.adaptive:
        return None
    wanted = {(a, ranks, c.nbytes, c.dtype, c.op) for c in cells for a in c.algorithms}
    return max((p[5] for p in spec.adaptive_points if p[:5] in wanted), default=0)


def _file_env(algorithm: str, spec: SweepSpec) -> dict[str, str]:
    """The environment that makes an entry configured at start-up read its file: the file
    the library's own autotuner wrote (its vendor entry), else collsweep's tuning file."""
    lib = LIBRARIES[ALGORITHMS[algorithm].runs_on]
    if algorithm == lib.vendor_tuned:
        return lib.vendor_tuning_env(spec.vendor_tuning_file)
    return lib.tuning_env(spec.tuning_file)


def _config(algorithm: str, switching: str, other_switching: str) -> str:
    """The job an algorithm runs in: '' (MPICH's shared job), MPICH's forced algorithm's name
    or another library's forced algorithm (a launch of its own), or the library's name (its
    shared job)."""
    spec = ALGORITHMS[algorithm]
    lib = LIBRARIES[spec.runs_on]
    if spec.own_launch or (spec.forced and not lib.switches_at_run_time(spec)):
        return algorithm
    mode = switching_mode_of(lib, switching, other_switching)
    if lib.runtime_forcing == PER_CALL:  # a launch per forced algorithm of each collective
        return "" if mode == RUNTIME else qualified(spec.collective, spec.forced)
    return algorithm if spec.forced and mode == LAUNCH else spec.runs_on


def _configs(algorithms: tuple[str, ...], switching: str, other_switching: str) -> list[str]:
    return list(dict.fromkeys(_config(a, switching, other_switching) for a in algorithms))


def _knobs(algorithms: list[str], switching: str, library: str) -> dict[str, str]:
    """The environment that configures a job's library for its algorithms: what switching
    at run time needs, or what forces the job's one forced algorithm for the whole launch."""
    lib = LIBRARIES[library]
    forced = [a for a in algorithms if ALGORITHMS[a].forced]
    if switching == RUNTIME and forced and lib.switches_at_run_time(ALGORITHMS[forced[0]]):
        return lib.shared_env()
    return lib.forcing_env(ALGORITHMS[forced[0] if forced else algorithms[0]])


def _switches(algorithms: list[str], switching: str) -> dict[str, dict[str, int]]:
    """MPI_T settings per algorithm, for a job that has a forced library algorithm to switch
    (per call, MPICH: every algorithm's, written before its turn; per communicator, Open MPI:
    the forced ones', written before each one's communicator is made)."""
    lib = LIBRARIES[library_of(algorithms[0])]
    forced = [a for a in algorithms if ALGORITHMS[a].forced]
    if switching != RUNTIME or not all(lib.switches_at_run_time(ALGORITHMS[a]) for a in forced):
        return {}
    if LIBRARIES[library_of(algorithms[0])].runtime_forcing == PER_COMMUNICATOR:
        return {a: settings(a) for a in forced}
    return {a: settings(a) for a in algorithms} if forced else {}


def _cells(
    spec: SweepSpec, run_id: str, ranks: int, algs: list[str], done: AbstractSet[str]
) -> list[Cell]:
    cells, wanted, chosen = [], frozenset(spec.cells), AutoFilter(spec.auto_points)
    adaptive = AdaptiveFilter(spec.adaptive, spec.adaptive_points)
    for collective in dict.fromkeys(collective_of(a) for a in algs):
        mine = [a for a in algs if collective_of(a) == collective]
        for nbytes in spec.sizes:
            for dtype in spec.dtypes:
                for op in ops_of(collective, spec.ops):
                    if not in_cells(wanted, (collective, ranks, nbytes, dtype, op)):
                        continue
                    todo = tuple(
                        a
                        for a in mine
                        if chosen.measures(a, ranks, nbytes, dtype)
                        and adaptive.measures(a, ranks, nbytes, dtype, op)
                        and skip_reason(a, ranks, op, nbytes, dtype) is None
                        and PointKey(run_id, a, ranks, nbytes, dtype, op).point_id() not in done
                    )
                    if todo:
                        cells.append(Cell(nbytes, dtype, op, todo, collective))
    return cells


def grid(spec: SweepSpec) -> Iterable[tuple[int, str, str, int, str]]:
    """Every (ranks, algorithm, op, bytes, dtype) the spec asks for: each algorithm with the
    ops of its collective (`none` for one that reduces nothing), among the spec's cells where
    it lists some (a workload's calls), a member chosen for an `auto` parameter only at its
    points (auto_points), and in an adaptive sweep only the points it chose (adaptive_points)."""
    wanted, chosen = frozenset(spec.cells), AutoFilter(spec.auto_points)
    adaptive = AdaptiveFilter(spec.adaptive, spec.adaptive_points)
    for ranks, alg in itertools.product(spec.ranks, spec.algorithms):
        collective = collective_of(alg)
        for op, nbytes, dtype in itertools.product(
            ops_of(collective, spec.ops), spec.sizes, spec.dtypes
        ):
            cell = (collective, ranks, nbytes, dtype, op)
            if (
                in_cells(wanted, cell)
                and chosen.measures(alg, ranks, nbytes, dtype)
                and adaptive.measures(alg, ranks, nbytes, dtype, op)
            ):
                yield ranks, alg, op, nbytes, dtype


def all_point_ids(spec: SweepSpec, run_id: str) -> set[str]:
    """The id of every point the spec asks for, measured or declared unsupported."""
    return {
        PointKey(run_id, alg, ranks, nbytes, dtype, op).point_id()
        for ranks, alg, op, nbytes, dtype in grid(spec)
    }


def skipped_points(
    spec: SweepSpec,
    run_id: str,
    done: AbstractSet[str] = frozenset(),
    switching: str = LAUNCH,
    *,
    cores: int,
) -> list[PointRow]:
    """Point rows for every combination an algorithm declares it cannot run (on a host of
    `cores` physical cores)."""
    rows = []
    for ranks, alg, op, nbytes, dtype in grid(spec):
        reason = skip_reason(alg, ranks, op, nbytes, dtype)
        key = PointKey(run_id, alg, ranks, nbytes, dtype, op)
        if reason is not None and key.point_id() not in done:
            per_node = ranks_per_node(spec, ranks)
            status = PointStatus.SKIPPED
            rows.append(PointRow(key, status, reason, cores, switching, ranks_per_node=per_node))
    return rows
