"""The table a sweep ends with, one per (ranks, dtype, op) group, as nccl-tests prints its
own: per size the best algorithm and its time, the runner-up, the margin between them with
its interval (decided or a tie), the library's default and the best one's speed-up over it.

Pure: it reads rows of the stored `winners` table (every library's algorithms competing) and
the points' medians; the default of a cell is the autotuned entry of the winner's library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runners.domain.catalog import ALGORITHMS, autotuned_of, library_of
from runners.domain.units import format_bytes, format_ratio, format_seconds

Medians = Mapping[tuple[int, str, str, int, str], float]  # (ranks, dtype, op, bytes, alg) -> s
HEADER = (
    "size",
    "best",
    "time",
    "runner-up",
    "margin (95% interval)",
    "default",
    "default time",
    "speed-up",
)


def default_of(algorithm: str) -> str:
    """The library default a cell's winner is held against: its library's autotuned entry."""
    return autotuned_of(library_of(algorithm)) if algorithm in ALGORITHMS else ""


def group_tables(
    winners: Sequence[Mapping[str, Any]], medians: Medians, oversubscribed: set[int]
) -> list[str]:
    """Every group's table, a title line first, a blank line between groups."""
    groups: dict[tuple[int, str, str], list[Mapping[str, Any]]] = {}
    for row in winners:
        groups.setdefault((int(row["ranks"]), row["dtype"], row["op"]), []).append(row)
    lines: list[str] = []
    for (ranks, dtype, op), rows in sorted(groups.items()):
        apart = " (oversubscribed: reported apart, not a test of the model)"
        title = f"p={ranks} {dtype} {op}" + (apart if ranks in oversubscribed else "")
        body = [_cells(r, medians) for r in sorted(rows, key=lambda r: int(r["bytes"]))]
        lines += [*([""] if lines else []), title, *_aligned([HEADER, *body])]
    return lines


def _cells(row: Mapping[str, Any], medians: Medians) -> tuple[str, ...]:
    """One size's row of the table."""
    where = (int(row["ranks"]), row["dtype"], row["op"], int(row["bytes"]))
    best = medians.get((*where, row["winner"]))
    default = default_of(row["winner"])
    default_s = medians.get((*where, default))
    speedup = format_ratio(default_s / best) if best and default_s else "-"
    return (
        format_bytes(int(row["bytes"])),
        row["winner"],
        format_seconds(best) if best else "-",
        row["runner_up"],
        _margin(row),
        default if default_s else "-",
        format_seconds(default_s) if default_s else "-",
        "-" if default == row["winner"] else speedup,
    )


def _margin(row: Mapping[str, Any]) -> str:
    """How much slower the runner-up is, with its interval, or 'tie' when undecided."""
    ratio, low, high = row.get("ratio"), row.get("ratio_low"), row.get("ratio_high")
    if ratio is None or low is None or high is None or not ratio > 0:
        return "unknown"
    text = f"{format_ratio(1 / ratio)} ({format_ratio(1 / high)} .. {format_ratio(1 / low)})"
    return text if row["decided"] else f"tie: {text}"


def _aligned(table: Sequence[tuple[str, ...]]) -> list[str]:
    """Columns left-aligned, two spaces apart, indented."""
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
