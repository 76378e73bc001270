"""What an imported file says, tool by tool alike: its rows, settings and provenance (pure).

A parser (imb.py, osu.py, nccl.py) turns one file's text into a `ToolFile`; every number the
tool printed is kept as it printed it, in `ToolRow.columns` (its units, its column names), and
the figure that becomes the point's median is named by `ToolFile.median_column`.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from typing import Any

from runners.domain.errors import BadInput

IMB, OSU, NCCL_TESTS = "imb", "osu", "nccl-tests"
FORMATS = (IMB, OSU, NCCL_TESTS)
IMPORTED_TABLE = "imported"  # the table an imported run's spec_toml holds instead of a spec


def imported_tool(spec_toml: str) -> str:
    """The tool a stored run was imported from (`collsweep import` records an `[imported]`
    table where a sweep records its spec), or '' for a run collsweep swept."""
    try:
        table = tomllib.loads(spec_toml or "").get(IMPORTED_TABLE)
    except tomllib.TOMLDecodeError:
        return ""
    return str(table.get("tool") or "another tool") if isinstance(table, dict) else ""


class ImportProblem(BadInput):
    """A file that cannot be imported, worded as `<file>:<line>: <what>` (exit 2)."""

    def __init__(self, name: str, line: int, what: str, *, broken_row: bool = False) -> None:
        super().__init__(f"{name}:{line}: {what}")
        self.name, self.line, self.broken_row = name, line, broken_row


def broken_row(name: str, line: int, what: str) -> ImportProblem:
    """A table row that does not read as its header says (`what` is wrong with it)."""
    return ImportProblem(name, line, f"broken row: {what}", broken_row=True)


def field_count(name: str, line: int, got: int, header: int) -> ImportProblem:
    """A row with another number of fields than its header has."""
    return broken_row(name, line, f"{got} fields where the header has {header}")


@dataclass(frozen=True)
class ToolRow:
    """One size of one test as the tool printed it.

    `tool_bytes` is the tool's own size column; `nbytes` the whole vector as collsweep counts
    it (times p where the tool counts one rank's block), `count` its elements. `seconds` is
    the figure that becomes the point's median; `columns` every value of the row, as printed
    (None for `N/A`); `samples` the tool's per-iteration times in seconds where it reports
    them (nccl-tests' -I in its JSON report), else empty."""

    line: int
    collective: str
    ranks: int
    tool_bytes: int
    nbytes: int
    count: int
    dtype: str
    op: str
    seconds: float
    iterations: int | None
    columns: dict[str, Any]
    samples: tuple[float, ...] = ()


@dataclass(frozen=True)
class CalibrationRows:
    """What a file measured of the network and the CPU rather than of a collective: IMB's
    PingPong (one-way seconds per size) and Reduce_local (seconds per size, per dtype/op),
    from which the import fits the run's calibration (runners.domain.model.calibration)."""

    ranks: int
    pingpong: tuple[tuple[int, float, int], ...]  # (bytes, one-way seconds, repetitions)
    reductions: tuple[tuple[str, str, int, float], ...] = ()  # (dtype, op, bytes, seconds)

    def worker(self, library_version: str, settings: dict[str, Any]) -> dict[str, Any]:
        """The calibration job's output these rows stand for (calibration_row's input)."""
        return {
            "pingpong": [
                {"bytes": b, "one_way_median_s": s, "iterations": n, "ci_rel_halfwidth": None}
                for b, s, n in self.pingpong
            ],
            "reductions": [
                {"dtype": d, "op": o, "bytes": b, "median_s": s} for d, o, b, s in self.reductions
            ],
            "mpi_library": library_version,
            "ranks": self.ranks,
            "settings": settings,
        }


@dataclass(frozen=True)
class ToolFile:
    """One imported file: the tool, what it says about the run, and its rows.

    `environment` holds the KEY=VALUE settings the file shows (Intel MPI's startup lines,
    NCCL's `NCCL_ALGO set by environment`); `library` the library the file names itself
    (`impi` from Intel MPI's startup line, `nccl`), '' when it names none."""

    name: str
    sha256: str
    format: str
    tool: str
    version: str
    command_line: str
    settings: dict[str, Any]
    hosts: tuple[str, ...]
    environment: dict[str, str]
    library: str
    library_version: str
    median_column: str
    rows: tuple[ToolRow, ...]
    notes: tuple[str, ...] = field(default=())
    warmup: int | None = None  # untimed iterations before each size, where the file says
    calibration: CalibrationRows | None = None  # IMB's PingPong and Reduce_local, if run

    def source(self) -> dict[str, Any]:
        """The file's provenance and every row's columns, as stored with the run."""
        return {
            "file": self.name,
            "sha256": self.sha256,
            "format": self.format,
            "tool": self.tool,
            "version": self.version,
            "command_line": self.command_line,
            "settings": self.settings,
            "hosts": list(self.hosts),
            "environment": self.environment,
            "library": self.library,
            "library_version": self.library_version,
            "median_column": self.median_column,
            "warmup": self.warmup,
            "notes": list(self.notes),
            "rows": [
                {
                    "line": r.line,
                    "collective": r.collective,
                    "ranks": r.ranks,
                    "tool_bytes": r.tool_bytes,
                    "bytes": r.nbytes,
                    "dtype": r.dtype,
                    "op": r.op,
                    "columns": r.columns,
                }
                for r in self.rows
            ],
        }


def sha256_of(data: bytes) -> str:
    """The file's SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def text_of(data: bytes, name: str) -> str:
    """The file's text; ImportProblem for a file that is not UTF-8 text (a NUL byte, or bytes
    that do not decode), naming the line where it stops being text."""
    if b"\0" in data:
        line = data[: data.index(b"\0")].count(b"\n") + 1
        raise ImportProblem(name, line, "not a text file (a NUL byte): not a tool's output")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportProblem(name, line, "not UTF-8 text: not a tool's output") from None


def number(text: str, name: str, line: int, what: str) -> float:
    """A printed number as a float, or ImportProblem naming the row."""
    try:
        value = float(text)
    except ValueError:
        raise broken_row(name, line, f"{what} {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise broken_row(name, line, f"{what} {text!r} is not a finite number")
    return value


def integer(text: str, name: str, line: int, what: str) -> int:
    """A printed count as an int, or ImportProblem naming the row."""
    try:
        value = int(text)
    except ValueError:
        raise broken_row(name, line, f"{what} {text!r} is not an integer") from None
    if value < 0:
        raise broken_row(name, line, f"{what} {text!r} is negative")
    if value > MAX_PRINTED_INTEGER:
        raise broken_row(name, line, f"{what} {text!r} is past any tool's sizes (2^40)")
    return value


MAX_PRINTED_INTEGER = 2**40  # a size or count no tool prints: 1 TiB a call
MAX_MICROSECONDS = 1e9  # 1000 s a call: no benchmark's row


def microseconds(text: str, name: str, line: int, what: str) -> tuple[float, float]:
    """A time printed in microseconds: (the printed value, seconds); positive and at most
    1000 s (a zero or an absurd time is a broken row, never a point)."""
    value = number(text, name, line, what)
    if not 0 < value <= MAX_MICROSECONDS:
        raise broken_row(name, line, f"{what} {text!r} is no time a call takes (0, 1e9 us]")
    return value, value / 1e6
