"""Sweep specs: a TOML file of flat keys, each overridable on the command line (no MPI).

The keys are SweepSpec's fields and its TimingPolicy's (runners.domain.sweep.spec_keys reads them
into
SPEC_KEYS, the one table of their names, types, defaults, flags and help)."""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args, get_origin

from runners.domain.collectives.collective import DEFAULT_COLLECTIVE
from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.collectives.descriptor import MPICH
from runners.domain.inputs import BadInputFile, read_text_input
from runners.domain.libraries.catalog import (
    BASE_ALGORITHMS,
    known_names,
)
from runners.domain.libraries.switching import RUNTIME
from runners.domain.nodes.network import EXAMPLE as NETWORK_EXAMPLE
from runners.domain.nodes.network import Network, checked_network_text, parse_network
from runners.domain.nodes.placement import BLOCK, PLACEMENTS, Placement
from runners.domain.sweep.adaptive_spec import (
    DEFAULT_BUDGET,
    AdaptivePoint,
    budget_text,
    parse_adaptive_points,
)
from runners.domain.sweep.auto_points import AutoPoint, parse_auto_points
from runners.domain.sweep.launcher import (
    DEFAULT_LAUNCHER,
)
from runners.domain.sweep.records import TimingPolicy
from runners.domain.sweep.spec_keys import (
    SpecError,
    SpecKey,
    expand_sizes,
    keys_of,
    parsed,
    spec_key,
    toml_value,
)
from runners.domain.sweep.spec_names import (
    add_tuned,
    add_vendor_tuned,
    expand_collectives,
    expand_libraries,
    expand_parameters,
)
from runners.domain.sweep.spec_problems import spec_problems
from runners.domain.sweep.workload_spec import Cell, parse_cells
from runners.domain.units import format_bytes, parse_bytes

# Seconds a launch may take to start (MPI_Init, the launch's calibration) on top of the
# point timeout before its first point: start-up on a loaded machine is no hang.
STARTUP_GRACE_S = 60.0


def _radixes(raw: Any) -> tuple[int, ...]:
    """The `radixes` key: a list of integers, empty (the default) for none."""
    items = raw if isinstance(raw, list) else [raw]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        raise SpecError(f"radixes must be a list of integers, got {raw!r}")
    return tuple(items)


def _segment_sizes(raw: Any) -> tuple[int, ...]:
    """The `segment_sizes` key: a list of sizes in bytes (4096 or "4KiB"), empty for none."""
    items = raw if isinstance(raw, list) else [raw]
    try:
        sizes = tuple(
            parse_bytes(v) if isinstance(v, str) else v
            for v in items
            if not isinstance(v, bool) and isinstance(v, int | str)
        )
    except ValueError:
        sizes = ()
    if len(sizes) != len(items) or not all(v >= 1 for v in sizes):
        raise SpecError(f"segment_sizes must be a list of sizes in bytes (e.g. 8K), got {raw!r}")
    return sizes


@dataclass(frozen=True)
class SweepSpec:
    """Everything that defines a sweep: the grid, the timing policy and how ranks start.

    Every field is a key of the spec file (the timing policy's keys flat there, nested here)
    and, where it names a flag, of the command line."""

    sizes: tuple[int, ...] = spec_key(
        flag="--sizes",
        help="bytes: '8,64,512' or MIN:MAX[:FACTOR], e.g. 8:4M:8 (K/M/G suffixes are binary)",
        most=2**40,
        parse=expand_sizes,
    )
    ranks: tuple[int, ...] = spec_key(flag="--ranks", help="group sizes, e.g. 2,3,4,8", most=4096)
    dtypes: tuple[str, ...] = spec_key(
        ("float32",), flag="--dtypes", help=f"datatypes: {known_names(DTYPES)}"
    )
    ops: tuple[str, ...] = spec_key(
        ("sum",), flag="--ops", help=f"reduction ops: {known_names(OPS)}"
    )
    algorithms: tuple[str, ...] = spec_key(
        tuple(BASE_ALGORITHMS),
        flag="--algorithms",
        help="algorithms, e.g. ring,mpi,mpi:ring (`collsweep algorithms` lists them); with "
        "--collectives, ring stands for each collective's ring",
    )
    collectives: tuple[str, ...] = spec_key(
        (DEFAULT_COLLECTIVE,),
        flag="--collectives",
        help="collectives: allreduce (default), reduce_scatter, allgather, bcast, reduce, or all",
    )
    timing: TimingPolicy = field(default_factory=TimingPolicy)  # its keys: TimingPolicy's
    seed: int = spec_key(  # orders each launch's groups and cells (random.Random(seed, launch))
        1, flag="--seed", help="seed of each launch's shuffled order of groups and cells"
    )
    library_switching: str = spec_key(  # forced library algorithms: MPI_T in a shared launch
        RUNTIME,
        flag="--library-switching",
        help="runtime: forced MPICH algorithms share each launch, switched through MPI_T "
        "(default); launch: a launch of their own, forced by environment",
    )
    launcher: str = spec_key(
        DEFAULT_LAUNCHER,
        flag="--launcher",
        help="launcher template, e.g. 'srun -n {ranks}' (default 'mpiexec -n {ranks}')",
        resumable=True,
    )
    launcher_shell: bool = spec_key(
        False,
        flag="--launcher-shell",
        help="run the launcher text with sh -c (allows pipes, ';', '$VAR'...)",
        resumable=True,
    )
    launch_calibration: bool = spec_key(True)  # a short calibration in every launch
    thread_level: str = spec_key(
        "single", flag="--thread-level", help="MPI thread level to initialise (default single)"
    )
    point_timeout_s: float = spec_key(  # a launch's first point gets STARTUP_GRACE_S more
        120.0,
        flag="--point-timeout-s",
        alias="--point-timeout",
        help="watchdog: seconds without progress before a job is declared hung (before a "
        f"launch's first point, {STARTUP_GRACE_S:g} s more for start-up)",
        resumable=True,
        most=86400.0,
    )
    tuning_file: str = spec_key(
        "",
        flag="--tuning-file",
        help="a tuning file `collsweep tune` wrote: adds the tuned entry of the library swept "
        "(mpi:tuned, openmpi:tuned, impi:tuned), the library following it",
    )
    vendor_tuning_file: str = spec_key(
        "",
        flag="--vendor-tuning-file",
        help="a file Intel MPI's own autotuner wrote (mpitune_fast, or I_MPI_TUNING_BIN_DUMP): "
        "adds impi:autotuned, Intel MPI following it (I_MPI_TUNING_BIN)",
    )
    libraries: tuple[str, ...] = spec_key(
        (MPICH,),
        flag="--libraries",
        help="MPI libraries to run the algorithms on: mpich (default), openmpi, impi, or "
        "several: mpich,openmpi,impi",
    )
    ranks_per_node: tuple[int, ...] = spec_key(
        (0,),
        flag="--ranks-per-node",
        help="split each group into emulated nodes of this many ranks that share no memory, "
        "talking over a private network namespace's loopback (MPICH; 0: one host, the default; "
        "with a cluster's launcher, real nodes it is told); several, e.g. 0,1: a run each, "
        "compared at the end",
        most=4096,
    )
    placement: str = spec_key(
        BLOCK,
        flag="--placement",
        help=f"which emulated node each rank sits on: {' or '.join(PLACEMENTS)} (default block)",
    )
    network: str = spec_key(
        "",
        flag="--network",
        help=f"the network between emulated nodes, e.g. {NETWORK_EXAMPLE!r} (default: the "
        "loopback unshaped)",
        parse=checked_network_text,
    )
    radixes: tuple[int, ...] = spec_key(
        (),
        flag="--radixes",
        help="the radixes to sweep of each algorithm that has one and names none (knomial, "
        "bcast.knomial, reduce.knomial, mpi:knomial), e.g. 2,4,8: a member each",
        most=1 << 20,
        parse=_radixes,
    )
    segment_sizes: tuple[int, ...] = spec_key(
        (),
        flag="--segment-sizes",
        help="the segment sizes to sweep of each pipelined algorithm that names none "
        "(bcast.chain, reduce.chain), e.g. 4K,16K,64K: a member each",
        most=1 << 40,
        parse=_segment_sizes,
    )
    cells: tuple[Cell, ...] = spec_key(
        (), parse=parse_cells
    )  # only these grid points (a workload's)
    # where the members chosen for an `auto` parameter are measured (auto_points.py)
    auto_points: tuple[AutoPoint, ...] = spec_key((), parse=parse_auto_points)
    workload: str = spec_key("")  # the name of the workload whose calls the cells are
    adaptive: bool = spec_key(
        False,
        flag="--adaptive",
        help="measure round by round where the decision is least certain (crossovers, close "
        "algorithms, the model disagreeing), within --adaptive-budget; every cell left "
        "unmeasured is inferred and said to be",
    )
    adaptive_budget: str = spec_key(
        DEFAULT_BUDGET,
        flag="--adaptive-budget",
        help="an adaptive sweep's budget: seconds of measuring (90s, 2min, 1h), launches "
        "(30 launches) or a share of the full grid's estimated cost (default 10%)",
        resumable=True,
        parse=budget_text,
    )
    # the points an adaptive sweep chose so far, with round and reason (adaptive_spec.py)
    adaptive_points: tuple[AdaptivePoint, ...] = spec_key((), parse=parse_adaptive_points)

    @property
    def nodes(self) -> Placement:
        """Where each rank sits: its node (runners.domain.nodes.placement); for a spec of
        several ranks_per_node, the first's (a sweep runs each apart: per_placement)."""
        real = self.launcher != DEFAULT_LAUNCHER
        return Placement(self.ranks_per_node[0], self.placement, real=real)

    def per_placement(self) -> tuple[SweepSpec, ...]:
        """The spec of each ranks_per_node it names, one each (a run each); the network only
        where there are nodes for it to join."""
        return tuple(
            self.with_values(ranks_per_node=(n,), network=self.network if n else "")
            for n in self.ranks_per_node
        )

    @property
    def shaped_network(self) -> Network:
        """The network between emulated nodes (unshaped when the key is empty)."""
        return parse_network(self.network) if self.network else Network()

    def values(self) -> dict[str, Any]:
        """Every key's value, flat as in the spec file, in the table's order."""
        return {
            key.name: getattr(getattr(self, key.within) if key.within else self, key.name)
            for key in SPEC_KEYS
        }

    def with_values(self, **changes: Any) -> SweepSpec:
        """A copy with these keys (the timing policy's too) set to these values."""
        return _from_values(self.values() | changes)

    def to_toml(self) -> str:
        """The spec as TOML text that `parse_spec` reads back to an equal spec."""
        return "".join(f"{name} = {toml_value(v)}\n" for name, v in self.values().items())


SPEC_KEYS: tuple[SpecKey, ...] = keys_of(SweepSpec)  # the file's keys, the flags, resume
FIELD_NAMES = tuple(key.name for key in SPEC_KEYS)
LIST_KEYS = tuple(  # the keys of lists of names or numbers, each entry measured once
    k.name for k in SPEC_KEYS if get_origin(k.hint) is tuple and get_args(k.hint)[0] in (int, str)
)


def _from_values(values: dict[str, Any]) -> SweepSpec:
    """The spec of flat key values (the timing policy's keys gathered into it)."""
    timing = {k.name: values.pop(k.name) for k in SPEC_KEYS if k.within and k.name in values}
    return SweepSpec(**values, timing=TimingPolicy(**timing))


def _without_repeats(values: dict[str, Any], notes: list[str] | None) -> None:
    """Drop repeated entries of the list keys (first kept), noting each key that had some."""
    for key in LIST_KEYS:
        if key not in values:
            continue
        unique = tuple(dict.fromkeys(values[key]))
        if len(unique) < len(values[key]) and notes is not None:
            counts = Counter(values[key])  # one pass: a list of 10^5 entries stays instant
            repeated = [v for v in unique if counts[v] > 1]
            notes.append(f"{key}: measured once each, listed more than once: {repeated}")
        values[key] = unique


def spec_from_mapping(raw: dict[str, Any], notes: list[str] | None = None) -> SweepSpec:
    """Build and validate a spec from TOML-like values; raises SpecError listing problems.

    Repeated list entries are dropped, each key with repeats described in ``notes``.
    """
    unknown = sorted(set(raw) - set(FIELD_NAMES))
    if unknown:
        raise SpecError(f"unknown spec keys {', '.join(unknown)}; known: {', '.join(FIELD_NAMES)}")
    missing = [key for key in ("sizes", "ranks") if key not in raw]
    if missing:
        raise SpecError(f"spec is missing {', '.join(missing)}")
    values = {key.name: parsed(key, raw[key.name]) for key in SPEC_KEYS if key.name in raw}
    stops_short = isinstance(raw["sizes"], dict) and values["sizes"][-1] != raw["sizes"]["max"]
    if stops_short and notes is not None:
        notes.append(
            f"sizes stop at {format_bytes(values['sizes'][-1])}: the factor does not reach "
            f"max = {format_bytes(raw['sizes']['max'])}"
        )
    named = expand_parameters(values) or expand_collectives(values)
    if named:
        raise SpecError("; ".join(named))
    add_tuned(values)
    add_vendor_tuned(values)
    _without_repeats(values, notes)
    expanded = expand_libraries(values)
    spec = _from_values(values)
    problems = expanded + spec_problems(spec, SPEC_KEYS)
    if problems:
        raise SpecError("; ".join(problems))
    return spec


def parse_spec(
    text: str, overrides: dict[str, Any] | None = None, notes: list[str] | None = None
) -> SweepSpec:
    """Parse TOML text, apply command-line overrides, validate (see spec_from_mapping)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"malformed TOML: {exc}") from None
    except RecursionError:
        raise SpecError("malformed TOML: nested too deeply to be a spec") from None
    return spec_from_mapping({**raw, **(overrides or {})}, notes)


MAX_SPEC_BYTES = 4 * 2**20


def load_spec(
    path: Path, overrides: dict[str, Any] | None = None, notes: list[str] | None = None
) -> SweepSpec:
    """Read a spec file (see parse_spec)."""
    try:
        text = read_text_input(path, "spec", MAX_SPEC_BYTES)
    except BadInputFile as exc:
        raise SpecError(str(exc)) from None
    return parse_spec(text, overrides, notes)


def spec_of(
    path: Path | None,
    overrides: dict[str, Any],
    notes: list[str] | None = None,
    example: str = "data/quick.toml",
) -> SweepSpec:
    """The spec file at ``path`` with the flags' ``overrides`` over it; without a file the
    flags alone, which must give the sizes and the group sizes (SpecError naming ``example``)."""
    if path is not None:
        return load_spec(path, dict(overrides), notes)
    if not {"sizes", "ranks"} <= set(overrides):
        raise SpecError(f"give a spec file (e.g. {example}), or at least --sizes and --ranks")
    return spec_from_mapping(dict(overrides), notes)
