"""The job file the parent hands the ranks (plan -> ranks), one typed record per job kind.

Both sides use these classes: runners.jobs builds a record and writes `to_json()` (which checks
its own text as the ranks will, so the parent never writes a file they refuse); the ranks
(`python -m runners.ranks KIND JOB`) read it back with `from_json`, which checks the kind, every
key (none missing, none unknown) and every value's type, nested records (the TimingPolicy, the
sweep's cells, a launch's calibration) included. A file that does not match is a
MalformedJobFile, a bug, never guessed at. No MPI here.
"""

from __future__ import annotations

import json
import types
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any, ClassVar, Self, Union, get_args, get_origin, get_type_hints

from runners.domain.sweep.plan import Cell
from runners.domain.sweep.records import TimingPolicy


class MalformedJobFile(ValueError):
    """A job file whose kind, keys or values do not match its record."""


class JobFile:
    """What every job file record shares: its kind, and its JSON text both ways."""

    KIND: ClassVar[str]

    def to_json(self) -> str:
        """The record as the job file's text, checked as the ranks check it."""
        text = json.dumps({"kind": self.KIND, **asdict(self)})  # type: ignore[call-overload]
        type(self).from_json(text)
        return text

    @classmethod
    def from_json(cls, text: str) -> Self:
        """The record a job file's text holds; MalformedJobFile if it holds anything else."""
        try:
            raw = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise MalformedJobFile(f"not JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise MalformedJobFile(f"a {cls.KIND} job file holds an object, not {raw!r:.60}")
        kind = raw.pop("kind", None)
        if kind != cls.KIND:
            raise MalformedJobFile(f"a {cls.KIND} job file, but its kind is {kind!r}")
        return _record(cls, raw, cls.KIND)


def _record(cls: type, raw: Any, where: str) -> Any:
    """`raw` as a `cls` record: exactly its fields, each of its type."""
    if not isinstance(raw, dict):
        raise MalformedJobFile(f"{where}: expected an object, got {raw!r:.60}")
    names = {f.name for f in fields(cls)}
    if set(raw) != names:
        missing, extra = sorted(names - set(raw)), sorted(set(raw) - names)
        raise MalformedJobFile(f"{where}: missing {missing}, unexpected {extra}")
    hints = get_type_hints(cls)
    return cls(**{name: _value(hints[name], raw[name], f"{where}.{name}") for name in names})


def _value(hint: Any, raw: Any, where: str) -> Any:
    """`raw` checked against the type `hint` (JSON's lists become the record's tuples)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        if raw is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _value(inner, raw, where)
    if isinstance(hint, type) and is_dataclass(hint):
        return _record(hint, raw, where)
    if origin in (tuple, list):
        if not isinstance(raw, list):
            raise MalformedJobFile(f"{where}: expected a list, got {raw!r:.60}")
        items = [_value(args[0], item, f"{where}[{i}]") for i, item in enumerate(raw)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(raw, dict):
            raise MalformedJobFile(f"{where}: expected an object, got {raw!r:.60}")
        return {key: _value(args[1], value, f"{where}.{key}") for key, value in raw.items()}
    return _scalar(hint, raw, where)


def _scalar(hint: type, raw: Any, where: str) -> Any:
    """A str, bool, int or float (a whole number stands for a float, as JSON writes 1.0)."""
    fits = isinstance(raw, hint) and (hint is bool or not isinstance(raw, bool))
    if hint is float and isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    if not fits:
        raise MalformedJobFile(f"{where}: expected {hint.__name__}, got {raw!r:.60}")
    return raw


@dataclass(frozen=True)
class CalibrationJob(JobFile):
    """A calibration's ranks (runners.ranks.calibrate_worker): ping-pong, exchange and copy
    over `sizes`, local reductions of each dtype x op over `reduce_sizes`."""

    KIND: ClassVar[str] = "calibrate"
    sizes: tuple[int, ...]
    reduce_sizes: tuple[int, ...]
    dtypes: tuple[str, ...]
    ops: tuple[str, ...]
    timing: TimingPolicy


@dataclass(frozen=True)
class SweepJob(JobFile):
    """One launch of a sweep's group (runners.ranks.sweep_worker): its cells in order, whose
    library's ranks run them, the MPI_T settings each algorithm takes before its turn, and
    the launch's own short calibration (None: the spec turned it off)."""

    KIND: ClassVar[str] = "sweep"
    run_id: str
    launch: int
    library: str
    switches: dict[str, dict[str, int]]
    cells: tuple[Cell, ...]
    timing: TimingPolicy
    calibration: CalibrationJob | None = None


@dataclass(frozen=True)
class VerifyJob(JobFile):
    """The exact checks of one verify launch (runners.ranks.verify_worker); no counts: the
    default ones for the group size."""

    KIND: ClassVar[str] = "verify"
    algorithms: tuple[str, ...]
    dtypes: tuple[str, ...]
    ops: tuple[str, ...]
    counts: tuple[int, ...] = ()


@dataclass(frozen=True)
class ReplayCall:
    """One distinct call of a replayed workload."""

    collective: str
    nbytes: int
    dtype: str
    op: str


@dataclass(frozen=True)
class ReplayJob(JobFile):
    """One replay launch (runners.ranks.replay_worker): the distinct calls, the recorded
    sequence of their indices, each policy's algorithm per call, timed `repetitions` times."""

    KIND: ClassVar[str] = "replay"
    calls: tuple[ReplayCall, ...]
    sequence: tuple[int, ...]
    policies: dict[str, tuple[str, ...]]
    repetitions: int
    launch: int
    library: str


JOB_FILES: dict[str, type[JobFile]] = {
    cls.KIND: cls for cls in (SweepJob, CalibrationJob, VerifyJob, ReplayJob)
}
