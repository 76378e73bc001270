"""A workload: the collective calls one job makes, as a documented JSON file (no MPI).

A workload file is a JSON object:

    {"collsweep_workload": 1,
     "name": "ddp-resnet50",
     "source": {"kind": "recorded" | "ddp" | "param" | "hand", ...how it was made},
     "calls": [{"collective": "allreduce", "bytes": 4194304, "dtype": "float32",
                "op": "sum", "ranks": 8, "calls": 300, "root": null}, ...],
     "order": [[0, 1], [2, 100], ...],
     "notes": ["..."]}

- `calls`: one entry per distinct call, `calls` times in the recorded run. `bytes` is the whole
  vector as collsweep sizes it (runners.domain.collectives.collective): what every rank holds at
  the end of
  an allgather or bcast, what every rank holds at the start of a reduce_scatter or reduce.
  `ranks` is the communicator's size; `root` the root of bcast and reduce (null otherwise).
  `dtype` and `op` use collsweep's names where they have one (`float32`, `sum`); a call of
  another datatype or a user-defined op is kept under its own name (`byte`, `user`) and is not
  measured (`Call.measurable`).
- `order` (optional): the order of the calls in the recorded run, run-length encoded as
  [index into calls, how many times in a row]; empty where the source has no order.
- `notes`: what the maker noticed (ranks that disagreed about a call, a truncated order).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.domain.collectives.collective import COLLECTIVES, NO_OP
from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.errors import BadInput
from runners.domain.inputs import BadInputFile, load_json_text, read_text_input

FORMAT_KEY = "collsweep_workload"
FORMAT_VERSION = 1
CALL_KEYS = ("collective", "bytes", "dtype", "op", "ranks", "calls")  # `show --json`'s keys
MAX_WORKLOAD_BYTES = 64 * 2**20
MAX_ORDER = 1_000_000  # order entries kept; a longer recorded order is cut and noted
MAX_SEQUENCE = 10_000_000  # calls the order may spell out (a replay runs each of them)
MAX_RANKS = 2**20  # a communicator's size: past the largest machines' ranks
MAX_INTEGER = 2**53  # any count: exact as a float, as the reports' sums are
MOST = {"ranks": MAX_RANKS, "root": MAX_RANKS - 1, "bytes": 2**40}
MAX_NOTES, MAX_NOTE_CHARS = 1000, 4000  # what a maker noticed: a few lines, printed whole


class WorkloadError(BadInput, ValueError):
    """A workload file or value that cannot be used; the message says what and where."""


@dataclass(frozen=True)
class Call:
    """One distinct collective call of a job and how many times the job makes it."""

    collective: str
    nbytes: int
    dtype: str
    op: str
    ranks: int
    calls: int
    root: int | None = None

    @property
    def key(self) -> tuple[str, int, str, str, int]:
        """What makes two calls the same call: (collective, bytes, dtype, op, ranks)."""
        return (self.collective, self.nbytes, self.dtype, self.op, self.ranks)

    @property
    def measurable(self) -> bool:
        """Whether collsweep can time this call: a datatype and an op it knows."""
        op_known = self.op in OPS or (self.op == NO_OP and not COLLECTIVES[self.collective].reduces)
        return self.dtype in DTYPES and op_known and self.nbytes % DTYPES[self.dtype].itemsize == 0

    def as_json(self) -> dict[str, Any]:
        """The stable JSON object of `workload show --json` (and of the file)."""
        return {
            "collective": self.collective,
            "bytes": self.nbytes,
            "dtype": self.dtype,
            "op": self.op,
            "ranks": self.ranks,
            "calls": self.calls,
            "root": self.root,
        }


@dataclass(frozen=True)
class Workload:
    """A job's collective calls: each distinct call with its count, and their order."""

    name: str
    calls: tuple[Call, ...]
    order: tuple[tuple[int, int], ...] = ()
    source: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def total_calls(self) -> int:
        """Calls the job makes in all."""
        return sum(call.calls for call in self.calls)

    def measurable(self) -> tuple[Call, ...]:
        """The calls collsweep can time."""
        return tuple(call for call in self.calls if call.measurable)

    @property
    def sequence_length(self) -> int:
        """len(sequence()), without spelling it out."""
        return sum(times for _, times in self.order) if self.order else len(self.calls)

    def sequence(self) -> list[int]:
        """The calls' indices in recorded order (each distinct call once, in file order, where
        no order was recorded)."""
        if not self.order:
            return list(range(len(self.calls)))
        return [index for index, times in self.order for _ in range(times)]

    def sequence_counts(self) -> dict[int, int]:
        """How many times each call appears in sequence(): its count in the recorded order,
        once each where no order was recorded (what a replay runs)."""
        counts: dict[int, int] = {}
        for index, times in self.order or ((i, 1) for i in range(len(self.calls))):
            counts[index] = counts.get(index, 0) + times
        return counts

    def on_ranks(self, ranks: int) -> Workload:
        """The same job on ``ranks`` ranks: every call on a group of that size, the sizes as
        recorded. Only for a job whose calls all run on one group (WorkloadError otherwise:
        which group would grow to what is not recorded)."""
        groups = sorted({call.ranks for call in self.calls})
        if len(groups) > 1:
            raise WorkloadError(
                f"the workload's calls run on groups of {', '.join(map(str, groups))} ranks: "
                "--ranks scales a job whose calls all run on one group"
            )
        calls = tuple(dataclasses.replace(call, ranks=ranks) for call in self.calls)
        note = f"every call priced on {ranks} ranks (recorded on {groups[0] if groups else 0})"
        return dataclasses.replace(self, calls=calls, notes=(*self.notes, note))

    def as_json(self) -> dict[str, Any]:
        """The file's JSON object."""
        return {
            FORMAT_KEY: FORMAT_VERSION,
            "name": self.name,
            "source": self.source,
            "calls": [call.as_json() for call in self.calls],
            "order": [list(entry) for entry in self.order],
            "notes": list(self.notes),
        }

    def to_text(self) -> str:
        """The file's text."""
        return json.dumps(self.as_json(), indent=1) + "\n"


def merged(calls: list[Call]) -> list[Call]:
    """Calls with the same key (and root) merged, counts added, in order of first appearance."""
    seen: dict[tuple, Call] = {}
    for call in calls:
        key = (*call.key, call.root)
        prior = seen.get(key)
        seen[key] = call if prior is None else _with_calls(prior, prior.calls + call.calls)
    return list(seen.values())


def _with_calls(call: Call, calls: int) -> Call:
    return Call(call.collective, call.nbytes, call.dtype, call.op, call.ranks, calls, call.root)


# --- reading ------------------------------------------------------------------------------------


def integer(value: Any, where: str, least: int = 0, most: int = MAX_INTEGER) -> int:
    """`value` when it is an integer from `least` to `most` (not a bool); WorkloadError
    otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise WorkloadError(
            f"{where} must be an integer from {least} to {most:,}, got {_shown(value)}"
        )
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _integer(entry: dict, key: str, where: str, least: int) -> int:
    return integer(entry.get(key), f"{where}: {key}", least, MOST.get(key, MAX_INTEGER))


def _call(entry: Any, where: str) -> Call:
    """One entry of `calls`, checked."""
    if not isinstance(entry, dict):
        raise WorkloadError(f"{where} must be an object with keys {', '.join(CALL_KEYS)}")
    collective = entry.get("collective")
    if collective not in COLLECTIVES:
        raise WorkloadError(
            f"{where}: collective must be one of {', '.join(COLLECTIVES)}, got {collective!r}"
        )
    for key in ("dtype", "op"):
        value = entry.get(key)
        if not isinstance(value, str) or not value or len(value) > 40 or not value.isprintable():
            raise WorkloadError(f"{where}: {key} must be a short name, got {value!r}")
    root = entry.get("root")
    if root is not None:
        root = _integer(entry, "root", where, 0)
    call = Call(
        collective,
        _integer(entry, "bytes", where, 1),
        entry["dtype"],
        entry["op"],
        _integer(entry, "ranks", where, 1),
        _integer(entry, "calls", where, 1),
        root,
    )
    if call.root is not None and call.root >= call.ranks:
        raise WorkloadError(f"{where}: root {call.root} is not a rank of {call.ranks}")
    return call


def cut_order(
    order: Sequence[Sequence[int]],
) -> tuple[tuple[tuple[int, int], ...], bool]:
    """The start of a run-length encoded order that a workload file can hold (MAX_ORDER runs
    spelling out at most MAX_SEQUENCE calls), and whether anything was cut."""
    kept: list[tuple[int, int]] = []
    spelled = 0
    for index, times in order:
        take = min(times, MAX_SEQUENCE - spelled)
        if len(kept) == MAX_ORDER or take < 1:
            return tuple(kept), True
        kept.append((index, take))
        spelled += take
        if take < times:
            return tuple(kept), True
    return tuple(kept), False


ORDER_CUT_NOTE = (
    f"order: only its first {MAX_ORDER:,} runs and {MAX_SEQUENCE:,} calls are kept (the counts "
    "stay whole)"
)


def _order(raw: Any, calls: int) -> tuple[tuple[int, int], ...]:
    if not isinstance(raw, list) or len(raw) > MAX_ORDER:
        raise WorkloadError(f"order must be a list of at most {MAX_ORDER} [index, times] pairs")
    order = []
    for number, entry in enumerate(raw):
        ok = (
            isinstance(entry, list)
            and len(entry) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in entry)
        )
        if not ok or not 0 <= entry[0] < calls or entry[1] < 1:
            raise WorkloadError(
                f"order[{number}] must be [index of a call (0..{calls - 1}), times >= 1], "
                f"got {entry!r}"
            )
        order.append((entry[0], entry[1]))
    spelled = sum(times for _, times in order)
    if spelled > MAX_SEQUENCE:
        raise WorkloadError(
            f"order spells out {spelled} calls; at most {MAX_SEQUENCE:,} can be replayed "
            "(cut the recorded order)"
        )
    return tuple(order)


def workload_from_json(data: Any, where: str = "workload") -> Workload:
    """A workload from the file's JSON value; WorkloadError naming the first problem."""
    if not isinstance(data, dict) or data.get(FORMAT_KEY) != FORMAT_VERSION:
        raise WorkloadError(
            f"{where} is not a collsweep workload (a JSON object with "
            f'"{FORMAT_KEY}": {FORMAT_VERSION})'
        )
    raw_calls = data.get("calls")
    if not isinstance(raw_calls, list) or not raw_calls:
        raise WorkloadError(f"{where}: calls must be a non-empty list")
    calls = tuple(_call(entry, f"{where}: calls[{i}]") for i, entry in enumerate(raw_calls))
    name = data.get("name", "")
    if not isinstance(name, str) or len(name) > 200 or not name.isprintable():
        raise WorkloadError(f"{where}: name must be a short printable string")
    source, notes = data.get("source", {}), data.get("notes", [])
    if not isinstance(source, dict):
        raise WorkloadError(f"{where}: source must be an object")
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise WorkloadError(f"{where}: notes must be a list of strings")
    if len(notes) > MAX_NOTES or any(len(n) > MAX_NOTE_CHARS for n in notes):
        raise WorkloadError(
            f"{where}: notes must be at most {MAX_NOTES} strings of {MAX_NOTE_CHARS} characters"
        )
    order = _order(data.get("order", []), len(calls))
    return Workload(name, calls, order, source, tuple(notes))


def load_workload(path: Path) -> Workload:
    """Read and check a workload file; WorkloadError (one line) for anything else."""
    try:
        text = read_text_input(path, "workload", MAX_WORKLOAD_BYTES)
        data = load_json_text(text, "workload", path)
    except BadInputFile as exc:
        raise WorkloadError(str(exc)) from None
    return workload_from_json(data, f"workload {path}")
