"""Sweep specs: a TOML file of flat keys, each overridable on the command line (no MPI)."""

from __future__ import annotations

import math
import tomllib
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from runners.domain.catalog import (
    ALGORITHMS,
    BASE_ALGORITHMS,
    DTYPES,
    OPS,
    is_tuned,
    is_vendor_tuned,
)
from runners.domain.collectives import DEFAULT_COLLECTIVE
from runners.domain.descriptor import MPICH
from runners.domain.errors import BadInput
from runners.domain.launcher import DEFAULT_LAUNCHER, launcher_syntax_problem
from runners.domain.libraries import LIBRARIES
from runners.domain.records import TimingPolicy
from runners.domain.spec_names import (
    add_tuned,
    add_vendor_tuned,
    check_names,
    expand_collectives,
    expand_libraries,
)
from runners.domain.switching import LAUNCH, RUNTIME
from runners.domain.units import format_bytes
from runners.domain.workload_spec import Cell, cell_problems, parse_cells

CACHE_MODES = ("hot", "cold")
THREAD_LEVELS = ("single", "funneled", "serialized", "multiple")


class SpecError(BadInput, ValueError):
    """A sweep spec that cannot run; the message lists every problem found."""


# Seconds a launch may take to start (MPI_Init, the launch's calibration) on top of the
# point timeout before its first point: start-up on a loaded machine is no hang.
STARTUP_GRACE_S = 60.0


@dataclass(frozen=True)
class SweepSpec:
    """Everything that defines a sweep: the grid, the timing policy and how ranks start."""

    sizes: tuple[int, ...]
    ranks: tuple[int, ...]
    dtypes: tuple[str, ...] = ("float32",)
    ops: tuple[str, ...] = ("sum",)
    algorithms: tuple[str, ...] = tuple(BASE_ALGORITHMS)
    collectives: tuple[str, ...] = (DEFAULT_COLLECTIVE,)
    # The timing policy's keys, flat as in the TOML; their defaults are TimingPolicy's.
    warmup: int = TimingPolicy.warmup
    min_iterations: int = TimingPolicy.min_iterations
    max_iterations: int = TimingPolicy.max_iterations
    target_rel_ci: float = TimingPolicy.target_rel_ci
    budget_s: float = TimingPolicy.budget_s
    passes: int = TimingPolicy.passes
    cache_mode: str = TimingPolicy.cache_mode
    launches: int = TimingPolicy.launches
    seed: int = 1  # orders each launch's groups and cells (random.Random(seed, launch))
    library_switching: str = RUNTIME  # forced library algorithms: MPI_T in a shared launch
    launcher: str = DEFAULT_LAUNCHER
    launcher_shell: bool = False
    launch_calibration: bool = True  # a short calibration in every launch (its machine state)
    thread_level: str = "single"
    point_timeout_s: float = 120.0  # a launch's first point gets STARTUP_GRACE_S more
    tuning_file: str = ""  # a collsweep tuning file: adds <library>:tuned, the library following it
    vendor_tuning_file: str = ""  # a file the library's own autotuner wrote: adds impi:autotuned
    libraries: tuple[str, ...] = (MPICH,)  # the MPI libraries whose ranks run the algorithms
    cells: tuple[Cell, ...] = ()  # only these grid points: a workload's calls (workload_spec)
    workload: str = ""  # the name of the workload whose calls the cells are

    def timing(self) -> TimingPolicy:
        """The timing policy of every job of this sweep."""
        return TimingPolicy(**{f.name: getattr(self, f.name) for f in fields(TimingPolicy)})

    def to_toml(self) -> str:
        """The spec as TOML text that `parse_spec` reads back to an equal spec."""
        return "".join(f"{key} = {_toml_value(value)}\n" for key, value in asdict(self).items())


FIELD_NAMES = tuple(f.name for f in fields(SweepSpec))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


def expand_sizes(raw: Any) -> tuple[int, ...]:
    """A list of byte sizes, or {min, max, factor} expanded geometrically (max included)."""
    if isinstance(raw, dict):
        unknown = set(raw) - {"min", "max", "factor"}
        if unknown or not {"min", "max"} <= set(raw):
            raise SpecError("sizes as a table needs min, max and optionally factor (default 2)")
        lo, hi, factor = raw["min"], raw["max"], raw.get("factor", 2)
        if not all(isinstance(v, int) for v in (lo, hi, factor)) or lo < 1 or factor < 2:
            raise SpecError("sizes: min >= 1 and factor >= 2 must be integers")
        if hi < lo:
            raise SpecError(f"sizes: max ({hi}) is below min ({lo})")
        out = []
        while lo <= hi:
            out.append(lo)
            lo *= factor
        return tuple(out)
    if isinstance(raw, list) and raw and all(isinstance(v, int) for v in raw):
        return tuple(raw)
    raise SpecError(f"sizes must be a non-empty list of integers or a min/max table, got {raw!r}")


def _as_tuple(raw: Any, key: str, kind: type) -> tuple:
    items = raw if isinstance(raw, list) else [raw]
    if not items or not all(isinstance(v, kind) and not isinstance(v, bool) for v in items):
        raise SpecError(f"{key} must be a non-empty list of {kind.__name__} values, got {raw!r}")
    return tuple(items)


def _number(raw: dict, key: str, kind: type) -> Any:
    value = raw[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SpecError(
            f"{key} must be {'an integer' if kind is int else 'a number'}, got {value!r}"
        )
    return value


# Sane maxima: beyond them a value is a typo or an attack, never a sweep (a group of 100000
# ranks started on one machine; a billion launches planned in memory before any rank starts).
MAXIMA = {
    "ranks": 4096,
    "sizes": 2**40,
    "warmup": 100_000,
    "min_iterations": 10_000_000,
    "max_iterations": 10_000_000,
    "passes": 100,
    "launches": 1000,
    "budget_s": 3600.0,
    "point_timeout_s": 86400.0,
}


def _problems(spec: SweepSpec) -> list[str]:
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
    for key in ("warmup", "budget_s", "point_timeout_s"):
        if getattr(spec, key) < 0 or math.isnan(getattr(spec, key)):
            problems.append(f"{key} must be >= 0, got {getattr(spec, key)}")
    if spec.min_iterations < 1 or spec.max_iterations < spec.min_iterations:
        problems.append("need 1 <= min_iterations <= max_iterations")
    for key in ("passes", "launches"):
        if getattr(spec, key) < 1:
            problems.append(f"{key} must be >= 1, got {getattr(spec, key)}")
    for key, most in MAXIMA.items():
        value = max(getattr(spec, key)) if key in ("ranks", "sizes") else getattr(spec, key)
        if not value <= most:  # also catches nan
            problems.append(f"{key} must be at most {most:g}, got {value!r}")
    problems += cell_problems(spec.cells, spec.collectives, spec.ops)
    outside = [c for c in spec.cells if c[1] not in spec.ranks or c[2] not in spec.sizes]
    if outside:
        problems.append(f"cells {list(outside[0])} is outside the ranks and sizes swept")
    if not 0 < spec.target_rel_ci < 1:
        problems.append(f"target_rel_ci must be between 0 and 1, got {spec.target_rel_ci}")
    if spec.cache_mode not in CACHE_MODES:
        problems.append(f"cache_mode must be one of {', '.join(CACHE_MODES)}")
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
    own = [LIBRARIES[n] for n in spec.libraries if n in LIBRARIES and LIBRARIES[n].prefix_name]
    if own and spec.launcher != DEFAULT_LAUNCHER:
        problems.append(
            f"launcher: {' and '.join(lib.title for lib in own)} ranks start with their own "
            f"mpiexec; a sweep with library {', '.join(lib.name for lib in own)} keeps the "
            "default launcher"
        )
    return problems


_INT_KEYS = ("warmup", "min_iterations", "max_iterations", "passes", "launches", "seed")
_FLOAT_KEYS = ("target_rel_ci", "budget_s", "point_timeout_s")
_STR_KEYS = (
    "cache_mode",
    "launcher",
    "thread_level",
    "library_switching",
    "tuning_file",
    "vendor_tuning_file",
    "workload",
)


def _without_repeats(values: dict[str, Any], notes: list[str] | None) -> None:
    """Drop repeated entries of the list keys (first kept), noting each key that had some."""
    for key in ("sizes", "ranks", "dtypes", "ops", "algorithms", "libraries", "collectives"):
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
    values: dict[str, Any] = {"sizes": expand_sizes(raw["sizes"])}
    stops_short = isinstance(raw["sizes"], dict) and values["sizes"][-1] != raw["sizes"]["max"]
    if stops_short and notes is not None:
        notes.append(
            f"sizes stop at {format_bytes(values['sizes'][-1])}: the factor does not reach "
            f"max = {format_bytes(raw['sizes']['max'])}"
        )
    values["ranks"] = _as_tuple(raw["ranks"], "ranks", int)
    for key in ("dtypes", "ops", "algorithms", "libraries", "collectives"):
        if key in raw:
            values[key] = _as_tuple(raw[key], key, str)
    for keys, kind in ((_INT_KEYS, int), (_FLOAT_KEYS, float), (_STR_KEYS, str)):
        for key in keys:
            if key in raw:
                values[key] = _number(raw, key, kind) if kind is not str else str(raw[key])
    for key in ("launcher_shell", "launch_calibration"):
        if key in raw:
            if not isinstance(raw[key], bool):
                raise SpecError(f"{key} must be true or false, got {raw[key]!r}")
            values[key] = raw[key]
    if "cells" in raw:
        try:
            values["cells"] = parse_cells(raw["cells"])
        except ValueError as exc:
            raise SpecError(str(exc)) from None
    named = expand_collectives(values)
    if named:
        raise SpecError("; ".join(named))
    add_tuned(values)
    add_vendor_tuned(values)
    _without_repeats(values, notes)
    expanded = expand_libraries(values)
    spec = SweepSpec(**values)
    problems = expanded + _problems(spec)
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
    if path.exists() and not path.is_file():
        raise SpecError(f"spec {path} is not a regular file")
    if path.is_file() and path.stat().st_size > MAX_SPEC_BYTES:
        raise SpecError(f"spec {path} is larger than {MAX_SPEC_BYTES // 2**20} MiB: not a spec")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"spec {path} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise SpecError(f"cannot read spec {path}: {exc.strerror}") from None
    return parse_spec(text, overrides, notes)
