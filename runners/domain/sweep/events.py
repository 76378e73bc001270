"""The events a job's rank 0 prints, one JSON line each, as typed records (no MPI).

Both sides use these classes: the ranks (runners.ranks: sweep, calibrate and verify) build them
and print `event_line(event)`; the parent (runners.jobs) reads lines back with `parse_event`.
A line that is not JSON (a library's chatter) is no event; a JSON line of a known type with
missing or unknown fields is a MalformedEvent, a bug, never guessed at.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar


class MalformedEvent(ValueError):
    """A rank reported an event whose fields do not match its type."""


@dataclass(frozen=True)
class Hello:
    """Once per job: the library and the process's facts (provenance)."""

    TYPE: ClassVar[str] = "hello"
    mpi_library: str
    mpi_version: str
    mpi4py_version: str
    numpy_version: str
    python_version: str
    thread_level: str
    memory_setting: str
    ranks: int


@dataclass(frozen=True)
class Probe:
    """The machine-state probe (runners.ranks.probe) at the start or end of a launch."""

    TYPE: ClassVar[str] = "probe"
    moment: str
    measured_at: float
    pingpong_s: float
    copy_gbps: float
    nodes: int | None = None  # hosts the ranks ran on, by their own names (None: not probed)
    ranks_per_node: int | None = None
    hosts: str = ""
    node_map: str = ""  # every rank's node as the library sees it ("0,0,1,1"; "" not probed)
    network_bytes: int | None = None  # loopback bytes of an emulated network so far, else None


@dataclass(frozen=True)
class CellStarted:
    """A heartbeat as each (bytes, dtype, op) starts (the watchdog's progress)."""

    TYPE: ClassVar[str] = "cell"
    nbytes: int
    dtype: str
    op: str


@dataclass(frozen=True)
class PointMeasured:
    """One point of one launch: its identity, status and this launch's raw samples."""

    TYPE: ClassVar[str] = "point"
    point_id: str
    algorithm: str
    ranks: int
    nbytes: int
    dtype: str
    op: str
    status: str
    reason: str
    started_at: float
    finished_at: float
    warmup: int
    sync_cadence: str
    cache_mode: str
    verified: bool
    launch: int
    samples: list[float]
    passes: list[int]


@dataclass(frozen=True)
class Done:
    """Every cell of the job finished."""

    TYPE: ClassVar[str] = "done"


@dataclass(frozen=True)
class Checked:
    """One exact check of a verify job: an algorithm's result against the serial reference."""

    TYPE: ClassVar[str] = "check"
    algorithm: str
    dtype: str
    op: str
    count: int
    ranks: int
    status: str
    detail: str


@dataclass(frozen=True)
class Calibrated:
    """A calibration job's medians: ping-pong, exchange and local copy per size, reductions per
    dtype/op/size, and the overhead runs (runners.ranks.overheads)."""

    TYPE: ClassVar[str] = "calibration"
    mpi_library: str
    mpi_version: str
    mpi4py_version: str
    numpy_version: str
    ranks: int
    processor_names: list[str]
    settings: dict[str, Any]
    pingpong: list[dict[str, Any]]
    exchange: list[dict[str, Any]]
    copies: list[dict[str, Any]]
    reductions: list[dict[str, Any]]
    overheads: list[dict[str, Any]]
    measure_s: float


Event = Hello | Probe | CellStarted | PointMeasured | Done | Checked | Calibrated
TYPES: dict[str, Any] = {
    cls.TYPE: cls for cls in (Hello, Probe, CellStarted, PointMeasured, Done, Checked, Calibrated)
}


def event_line(event: Event) -> str:
    """The event as the JSON line the ranks print."""
    return json.dumps({"type": event.TYPE, **asdict(event)})


def parse_event(line: str) -> Event | None:
    """The event a printed line holds; None for a line that is no event."""
    if not line.startswith("{"):
        return None
    try:
        raw: dict[str, Any] = json.loads(line)
    except json.JSONDecodeError:
        return None
    kind = TYPES.get(raw.pop("type", None))
    if kind is None:
        return None
    expected = {f.name for f in fields(kind)}
    if set(raw) != expected:
        missing, extra = sorted(expected - set(raw)), sorted(set(raw) - expected)
        raise MalformedEvent(f"{kind.TYPE} event: missing {missing}, unexpected {extra}")
    return kind(**raw)
