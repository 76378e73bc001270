"""A tool's row as a collsweep point would hold it: the whole vector, the stored datatype, and
the rows collsweep cannot hold (zero bytes, a size that is not whole elements), left out with a
note (pure)."""

from __future__ import annotations

from typing import Any

from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.imports.datatypes import itemsize, stored_dtype, stored_op
from runners.domain.imports.records import ToolRow

# the collectives whose size a tool may count per rank: the whole vector is p blocks
BLOCKED = ("allgather", "reduce_scatter")


def wrong_note(line: int, tool_bytes: int, wrong: float) -> str:
    """Why a row whose result the tool found wrong is left out: it is no measurement of the
    collective (collsweep keeps only verified results)."""
    return (
        f"line {line}: {tool_bytes} B left out: the tool found {wrong:g} wrong elements in its "
        "result"
    )


def tool_row(
    *,
    line: int,
    collective: str,
    ranks: int,
    tool_bytes: int,
    per_rank: bool,
    tool_dtype: str,
    tool_op: str,
    seconds: float,
    iterations: int | None,
    columns: dict[str, Any],
    samples: tuple[float, ...] = (),
) -> ToolRow | str:
    """The row as collsweep stores it, or why it is left out (a note). `per_rank`: the tool's
    size is one rank's block (IMB's Allgather and Reduce_scatter_block, OSU's allgather);
    `samples`: the tool's per-iteration times, where it reports them."""
    nbytes = tool_bytes * ranks if per_rank and collective in BLOCKED else tool_bytes
    dtype = stored_dtype(collective, tool_dtype)
    size = itemsize(dtype)
    if size is None:
        return f"line {line}: {tool_bytes} B of {collective} left out: {dtype}'s size is unknown"
    blocks = ranks if COLLECTIVES[collective].equal_blocks else 1
    if nbytes == 0 or nbytes % (size * blocks):
        return (
            f"line {line}: {tool_bytes} B of {collective} left out: collsweep's points hold "
            f"whole {dtype} elements{' in p equal blocks' if blocks > 1 else ''}, at least one"
        )
    return ToolRow(
        line=line,
        collective=collective,
        ranks=ranks,
        tool_bytes=tool_bytes,
        nbytes=nbytes,
        count=nbytes // size,
        dtype=dtype,
        op=stored_op(collective, tool_op),
        seconds=seconds,
        iterations=iterations,
        columns=columns,
        samples=samples,
    )
