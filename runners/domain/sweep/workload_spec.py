"""A sweep of a workload's calls (no MPI): the spec keys that make `collsweep sweep` measure
exactly the calls a workload makes, not the grid their sizes span.

The spec's `cells` lists each call as [collective, ranks, bytes, dtype, op]; the plan measures
a grid point only where it is one of them (`in_cells`). The spec keeps the cells (stored with
the run), so a resumed run measures the same calls.
"""

from __future__ import annotations

from typing import Any

from runners.domain.collectives.collective import COLLECTIVES, NO_OP
from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.workload.file import Workload

Cell = tuple[str, int, int, str, str]  # (collective, ranks, bytes, dtype, op)
MAX_CELLS = 10_000


def cells_of(workload: Workload) -> tuple[Cell, ...]:
    """The measurable calls of a workload as cells, each once, in the workload's order."""
    found = (
        (call.collective, call.ranks, call.nbytes, call.dtype, call.op)
        for call in workload.measurable()
    )
    return tuple(dict.fromkeys(found))


def workload_overrides(workload: Workload) -> dict[str, Any]:
    """The spec keys of a sweep of exactly the workload's measurable calls (its sizes, group
    sizes, datatypes, ops and collectives, and the cells themselves)."""
    cells = cells_of(workload)
    if not cells:
        raise ValueError(
            f"workload {workload.name or ''} has no call collsweep can measure (datatypes "
            f"{', '.join(DTYPES)}; ops {', '.join(OPS)})"
        )
    ops = [c[4] for c in cells if c[4] != NO_OP]
    return {
        "collectives": list(dict.fromkeys(c[0] for c in cells)),
        "ranks": sorted({c[1] for c in cells}),
        "sizes": sorted({c[2] for c in cells}),
        "dtypes": list(dict.fromkeys(c[3] for c in cells)),
        "ops": list(dict.fromkeys(ops)) or ["sum"],
        "cells": [list(c) for c in cells],
        "workload": workload.name or "workload",
    }


def parse_cells(raw: Any) -> tuple[Cell, ...]:
    """The spec's `cells` value checked for shape; ValueError saying what is wrong."""
    if not isinstance(raw, list) or len(raw) > MAX_CELLS:
        raise ValueError(f"cells must be a list of at most {MAX_CELLS} cells")
    cells = []
    for entry in raw:
        if not _is_cell(entry):
            raise ValueError(
                f"cells: each cell is [collective, ranks, bytes, dtype, op], got {entry!r}"
            )
        cells.append(tuple(entry))
    return tuple(cells)


def _is_cell(entry: Any) -> bool:
    kinds = (str, int, int, str, str)
    return (
        isinstance(entry, list)
        and len(entry) == len(kinds)
        and all(
            isinstance(value, kind) and not isinstance(value, bool)
            for value, kind in zip(entry, kinds, strict=True)
        )
    )


def cell_problems(
    cells: tuple[Cell, ...], collectives: tuple[str, ...], ops: tuple[str, ...]
) -> list[str]:
    """Cells that name a collective, datatype or op the sweep does not run."""
    bad = [
        c
        for c in cells
        if c[0] not in COLLECTIVES
        or c[0] not in collectives
        or c[3] not in DTYPES
        or (c[4] not in ops if COLLECTIVES[c[0]].reduces else c[4] != NO_OP)
    ]
    if not bad:
        return []
    return [f"cells {list(bad[0])} is not among the collectives, dtypes and ops swept"]


def in_cells(cells: frozenset[Cell], cell: Cell) -> bool:
    """Whether a grid point is measured: every point without cells, else a listed one."""
    return not cells or cell in cells
