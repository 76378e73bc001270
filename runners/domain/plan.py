"""Turning a sweep spec into jobs: one launch per (ranks, library configuration) (no MPI)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from runners.domain.catalog import ALGORITHMS, DTYPES, OPS, library_knobs
from runners.domain.launcher import default_knobs, is_oversubscribed
from runners.domain.records import PointKey
from runners.domain.spec import SweepSpec


@dataclass(frozen=True)
class Cell:
    """One (bytes, dtype, op) of a job; its algorithms are timed alternately."""

    nbytes: int
    dtype: str
    op: str
    algorithms: tuple[str, ...]

    @property
    def count(self) -> int:
        """Elements per buffer."""
        return self.nbytes // DTYPES[self.dtype].itemsize


@dataclass(frozen=True)
class Group:
    """One MPI job: a group size and the environment that configures the library."""

    ranks: int
    config: str  # "" for hand-written + autotuned library, else the forced MPICH algorithm
    knobs: dict[str, str]
    cells: list[Cell] = field(default_factory=list)

    @property
    def oversubscribed(self) -> bool:
        """More ranks than physical cores."""
        return is_oversubscribed(self.ranks)

    def points(self, run_id: str) -> list[str]:
        """The ids of every point this job measures."""
        return [
            PointKey(run_id, alg, self.ranks, cell.nbytes, cell.dtype, cell.op).point_id()
            for cell in self.cells
            for alg in cell.algorithms
        ]

    def as_dict(self) -> dict:
        """JSON-ready form, handed to the ranks."""
        return asdict(self)


def skip_reason(algorithm: str, ranks: int, op: str) -> str | None:
    """Why a point is not measured, or None (declared requirements only)."""
    return ALGORITHMS[algorithm].unsupported_reason(ranks, op, OPS[op].commutative)


def plan_groups(spec: SweepSpec, run_id: str, done: set[str] = frozenset()) -> list[Group]:
    """The jobs that measure every supported point of `spec` not already in `done`."""
    groups: list[Group] = []
    for ranks in spec.ranks:
        for config in _configs(spec.algorithms):
            knobs = {**default_knobs(ranks, spec.thread_level)}
            algs = [a for a in spec.algorithms if ALGORITHMS[a].forced == config]
            knobs.update(library_knobs(algs[0]))
            cells = _cells(spec, run_id, ranks, algs, done)
            if cells:
                groups.append(Group(ranks, config, knobs, cells))
    return groups


def _configs(algorithms: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(ALGORITHMS[a].forced for a in algorithms))


def _cells(spec: SweepSpec, run_id: str, ranks: int, algs: list[str], done: set[str]) -> list[Cell]:
    cells = []
    for nbytes in spec.sizes:
        for dtype in spec.dtypes:
            for op in spec.ops:
                todo = tuple(
                    a
                    for a in algs
                    if skip_reason(a, ranks, op) is None
                    and PointKey(run_id, a, ranks, nbytes, dtype, op).point_id() not in done
                )
                if todo:
                    cells.append(Cell(nbytes, dtype, op, todo))
    return cells


def all_point_ids(spec: SweepSpec, run_id: str) -> set[str]:
    """The id of every point the spec asks for, measured or declared unsupported."""
    return {
        PointKey(run_id, alg, ranks, nbytes, dtype, op).point_id()
        for ranks in spec.ranks
        for alg in spec.algorithms
        for nbytes in spec.sizes
        for dtype in spec.dtypes
        for op in spec.ops
    }


def skipped_points(spec: SweepSpec, run_id: str, done: set[str] = frozenset()) -> list[dict]:
    """Point rows for every combination an algorithm declares it cannot run."""
    rows = []
    for ranks in spec.ranks:
        for alg in spec.algorithms:
            for op in spec.ops:
                reason = skip_reason(alg, ranks, op)
                if reason is None:
                    continue
                for nbytes in spec.sizes:
                    for dtype in spec.dtypes:
                        pid = PointKey(run_id, alg, ranks, nbytes, dtype, op).point_id()
                        if pid not in done:
                            rows.append(
                                PointKey(run_id, alg, ranks, nbytes, dtype, op).row()
                                | {"status": "skipped", "reason": reason}
                            )
    return rows
