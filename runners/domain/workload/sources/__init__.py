"""Workloads written from what users already have (no MPI): DDP's gradient buckets from a list
of a model's parameters (ddp.py, its input in ddp_input.py) and a PARAM comms trace in its
basic format (param.py).

Both collect the job's calls in order through a CallLog, which keeps each distinct call once
with its count and the order run-length encoded, as runners.domain.workload.file stores them.
`read_json_file` reads either input, refusing what is not a small JSON file in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runners.domain.inputs import BadInputFile, load_json_text, read_text_input
from runners.domain.workload.file import (
    MAX_ORDER,
    ORDER_CUT_NOTE,
    Call,
    Workload,
    WorkloadError,
    cut_order,
)

MAX_INPUT_BYTES = 64 * 2**20

# Bytes per element of PyTorch's datatypes, under their names without "torch." (which are also
# the workload's dtype names: float32 ... int64 are collsweep's, the others are kept and not
# measured).
TORCH_ITEMSIZE: dict[str, int] = {
    "float32": 4,
    "float64": 8,
    "float16": 2,
    "bfloat16": 2,
    "complex32": 4,
    "complex64": 8,
    "complex128": 16,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "bool": 1,
    "float8_e4m3fn": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2": 1,
    "float8_e5m2fnuz": 1,
}


def read_json_file(path: Path, what: str) -> Any:
    """The JSON value of the file at `path`; WorkloadError (one line) when it is not a readable
    UTF-8 JSON file of at most 64 MiB. `what` names the input in messages."""
    try:
        return load_json_text(read_text_input(path, what, MAX_INPUT_BYTES), what, path)
    except BadInputFile as exc:
        raise WorkloadError(str(exc)) from None


class CallLog:
    """The calls a job makes, in order: distinct calls with their counts, and the order as
    [index, times in a row] runs (cut at MAX_ORDER runs, the counts still whole)."""

    def __init__(self) -> None:
        self._index: dict[tuple, int] = {}
        self._calls: list[Call] = []
        self._counts: list[int] = []
        self._order: list[list[int]] = []
        self.order_cut = False

    @property
    def distinct(self) -> int:
        """How many distinct calls were logged."""
        return len(self._calls)

    def add(self, call: Call, times: int = 1) -> None:
        """`call` made `times` times in a row (its own `calls` field is ignored)."""
        index = self._index_of(call)
        self._counts[index] += times
        self._extend_order(index, times)

    def add_block(self, block: Sequence[Call], times: int) -> None:
        """The calls of `block`, in order, made `times` times over."""
        indices = [self._index_of(call) for call in block]
        if not indices:
            return
        for index in indices:
            self._counts[index] += times
        if len(set(indices)) == 1:
            self._extend_order(indices[0], len(indices) * times)
            return
        for _ in range(times):  # each round adds runs, so this stops by MAX_ORDER rounds
            if self.order_cut:
                return
            for index in indices:
                self._extend_order(index, 1)

    def workload(self, name: str, source: dict[str, Any], notes: list[str]) -> Workload:
        """The workload of the calls logged."""
        calls = tuple(
            Call(c.collective, c.nbytes, c.dtype, c.op, c.ranks, count, c.root)
            for c, count in zip(self._calls, self._counts, strict=True)
        )
        order, cut = cut_order(self._order)
        if self.order_cut or cut:
            notes = [*notes, ORDER_CUT_NOTE]
        return Workload(name, calls, order, source, tuple(notes))

    def _index_of(self, call: Call) -> int:
        key = (*call.key, call.root)
        if key not in self._index:
            self._index[key] = len(self._calls)
            self._calls.append(call)
            self._counts.append(0)
        return self._index[key]

    def _extend_order(self, index: int, times: int) -> None:
        if self.order_cut:
            return
        if self._order and self._order[-1][0] == index:
            self._order[-1][1] += times
        elif len(self._order) < MAX_ORDER:
            self._order.append([index, times])
        else:
            self.order_cut = True
