"""Why a sweep spec cannot run, each reason one line (no MPI): its grid (names, group sizes,
sizes, cells), its numbers out of range, and what keeps its ranks from starting as asked
(library, launcher, tuning files, nodes)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS, is_tuned, is_vendor_tuned
from runners.domain.libraries.switching import LAUNCH, RUNTIME
from runners.domain.nodes.placement import Placement, nodes_problems
from runners.domain.sweep.launcher import (
    DEFAULT_LAUNCHER,
    RANKS_PER_NODE,
    launcher_syntax_problem,
)
from runners.domain.sweep.records import TimingPolicy
from runners.domain.sweep.spec_keys import SpecKey
from runners.domain.sweep.spec_names import check_names
from runners.domain.sweep.workload_spec import Cell, cell_problems


class SweepSpec(Protocol):
    """What these checks read of a runners.domain.sweep.spec.SweepSpec (which imports them)."""

    @property
    def sizes(self) -> tuple[int, ...]: ...

    @property
    def ranks(self) -> tuple[int, ...]: ...

    @property
    def dtypes(self) -> tuple[str, ...]: ...

    @property
    def ops(self) -> tuple[str, ...]: ...

    @property
    def algorithms(self) -> tuple[str, ...]: ...

    @property
    def collectives(self) -> tuple[str, ...]: ...

    @property
    def cells(self) -> tuple[Cell, ...]: ...

    @property
    def timing(self) -> TimingPolicy: ...

    @property
    def library_switching(self) -> str: ...

    @property
    def launcher(self) -> str: ...

    @property
    def launcher_shell(self) -> bool: ...

    @property
    def thread_level(self) -> str: ...

    @property
    def tuning_file(self) -> str: ...

    @property
    def vendor_tuning_file(self) -> str: ...

    @property
    def libraries(self) -> tuple[str, ...]: ...

    @property
    def ranks_per_node(self) -> tuple[int, ...]: ...

    @property
    def network(self) -> str: ...

    @property
    def adaptive(self) -> bool: ...

    @property
    def adaptive_points(self) -> tuple[tuple[Any, ...], ...]: ...

    @property
    def nodes(self) -> Placement: ...

    def values(self) -> dict[str, Any]: ...

    def per_placement(self) -> tuple[SweepSpec, ...]: ...


CACHE_MODES = ("hot", "cold")
THREAD_LEVELS = ("single", "funneled", "serialized", "multiple")


def spec_problems(spec: SweepSpec, keys: Sequence[SpecKey]) -> list[str]:
    """Every reason the spec cannot run ([]: none); `keys`: the spec's keys (their bounds)."""
    grid = _grid_problems(spec) + _adaptive_problems(spec)
    return grid + _range_problems(spec, keys) + _launch_problems(spec)


def _adaptive_problems(spec: SweepSpec) -> list[str]:
    """What an adaptive sweep cannot be: a workload's calls (each is measured as it is), or
    several placements at once (each would choose its own points: sweep them one by one)."""
    if not spec.adaptive:
        return ["adaptive_points are an adaptive sweep's: set adaptive = true"] * bool(
            spec.adaptive_points
        )
    problems = []
    if spec.cells:
        problems.append(
            "adaptive chooses among a grid's sizes; a workload's calls are each measured"
        )
    if len(spec.ranks_per_node) > 1:
        problems.append("adaptive sweeps one placement: give one ranks_per_node at a time")
    return problems


def _grid_problems(spec: SweepSpec) -> list[str]:
    """What is wrong with the grid: names, group sizes, sizes and cells."""
    problems = check_names(spec.algorithms, ALGORITHMS, "algorithm")
    foreign = [
        a
        for a in spec.algorithms
        if a in ALGORITHMS and ALGORITHMS[a].collective not in spec.collectives
    ]
    if foreign:
        problems.append(
            f"algorithms {', '.join(foreign)} are not of the collectives swept "
            f"({', '.join(spec.collectives)}): add their collective to collectives"
        )
    problems += check_names(spec.dtypes, DTYPES, "dtype")
    problems += check_names(spec.ops, OPS, "op")
    if min(spec.ranks) < 1:
        problems.append(f"ranks must all be >= 1, got {list(spec.ranks)}")
    if min(spec.sizes) < 1:
        problems.append(f"sizes must all be >= 1 byte, got {list(spec.sizes)}")
    for dtype in spec.dtypes:
        if dtype in DTYPES:
            sizes = [c[2] for c in spec.cells if c[3] == dtype] if spec.cells else spec.sizes
            bad = [s for s in sizes if s % DTYPES[dtype].itemsize]
            if bad:
                problems.append(
                    f"sizes {bad} are not a multiple of {dtype}'s {DTYPES[dtype].itemsize} bytes"
                )
    problems += cell_problems(spec.cells, spec.collectives, spec.ops)
    outside = [c for c in spec.cells if c[1] not in spec.ranks or c[2] not in spec.sizes]
    if outside:
        problems.append(f"cells {list(outside[0])} is outside the ranks and sizes swept")
    return problems


def _range_problems(spec: SweepSpec, keys: Sequence[SpecKey]) -> list[str]:
    """The numbers out of their range: the timing policy's, the watchdog's and each key's
    largest value (SpecKey.most)."""
    values, problems = spec.values(), []
    for key in ("warmup", "budget_s", "point_timeout_s"):
        if values[key] < 0 or math.isnan(values[key]):
            problems.append(f"{key} must be >= 0, got {values[key]}")
    timing = spec.timing
    if timing.min_iterations < 1 or timing.max_iterations < timing.min_iterations:
        problems.append("need 1 <= min_iterations <= max_iterations")
    for key in ("passes", "launches"):
        if values[key] < 1:
            problems.append(f"{key} must be >= 1, got {values[key]}")
    for bounded in keys:
        most, value = bounded.most, values[bounded.name]
        value = max(value, default=0) if isinstance(value, tuple) else value
        if most is not None and not value <= most:  # also catches nan
            problems.append(f"{bounded.name} must be at most {most:g}, got {value!r}")
    if not 0 < timing.target_rel_ci < 1:
        problems.append(f"target_rel_ci must be between 0 and 1, got {timing.target_rel_ci}")
    if timing.cache_mode not in CACHE_MODES:
        problems.append(f"cache_mode must be one of {', '.join(CACHE_MODES)}")
    return problems


def _launch_problems(spec: SweepSpec) -> list[str]:
    """What keeps the ranks from starting as asked: the library, the launcher, tuning files."""
    problems = []
    if spec.library_switching not in (RUNTIME, LAUNCH):
        problems.append(f"library_switching must be {RUNTIME} or {LAUNCH}")
    if spec.thread_level not in THREAD_LEVELS:
        problems.append(f"thread_level must be one of {', '.join(THREAD_LEVELS)}")
    launcher = launcher_syntax_problem(spec.launcher, spec.launcher_shell)
    if launcher:
        problems.append(launcher)
    vendor = [a for a in spec.algorithms if is_vendor_tuned(a)]
    if vendor and not spec.vendor_tuning_file:
        problems.append(f"{vendor[0]} needs vendor_tuning_file (a file its autotuner wrote)")
    tuned = [a for a in spec.algorithms if is_tuned(a)]
    if tuned and not spec.tuning_file:
        problems.append(f"{tuned[0]} needs tuning_file (a file collsweep tune wrote)")
    if len({ALGORITHMS[a].runs_on for a in tuned}) > 1:
        problems.append(f"one tuning_file serves one library; {' and '.join(tuned)} all ask")
    problems += _nodes_problems(spec)
    own = [LIBRARIES[n] for n in spec.libraries if n in LIBRARIES and LIBRARIES[n].prefix_name]
    if own and spec.launcher != DEFAULT_LAUNCHER:
        problems.append(
            f"launcher: {' and '.join(lib.title for lib in own)} ranks start with their own "
            f"mpiexec; a sweep with library {', '.join(lib.name for lib in own)} keeps the "
            "default launcher"
        )
    return problems


def _nodes_problems(spec: SweepSpec) -> list[str]:
    """What keeps the ranks from running on the nodes asked for, each ranks_per_node (its
    own run: SweepSpec.per_placement)."""
    default, places = spec.launcher == DEFAULT_LAUNCHER, RANKS_PER_NODE in spec.launcher
    problems: list[str] = []
    for one in spec.per_placement() if len(spec.ranks_per_node) > 1 else (spec,):
        found = nodes_problems(one.nodes, one.network, spec.ranks, spec.libraries, default,
                               places)  # fmt: skip
        problems += [p for p in found if p not in problems]
    return problems
