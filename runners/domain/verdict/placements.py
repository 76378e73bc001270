"""The same grid on several placements, side by side (pure): per cell and size, each
placement's winner (a tie as `a ~ b`), and the sizes where the best choice changes in each, so
a user sees the crossover a network moves (a sweep of several ranks_per_node: a run each)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runners.domain.collectives.collective import DEFAULT_COLLECTIVE
from runners.domain.sweep.run_labels import NAME_MAX
from runners.domain.units import format_bytes

Cell = tuple[str, int, str, str]  # (collective, ranks, dtype, op)


def placement_label(ranks_per_node: int, ranks: int) -> str:
    """How a placement is named in a header: `one host`, `2 nodes x 1`."""
    if not ranks_per_node:
        return "one host"
    return f"{ranks // ranks_per_node} nodes x {ranks_per_node}"


def placement_name(name: str | None, ranks_per_node: int) -> str:
    """The name of one placement's run in a sweep of several: the user's name, if any, then
    the placement, so every run picker tells them apart."""
    placed = f"ranks_per_node={ranks_per_node}"
    return f"{name[: NAME_MAX - len(placed) - 3]} · {placed}" if name else placed


def _said(row: Mapping[str, Any]) -> str:
    """A winners row as one cell's text: the winner, or `a ~ b` for a tie."""
    if row["decided"]:
        return str(row["winner"])
    return f"{row['winner']} ~ {row['runner_up']}"


def _by_cell(rows: Sequence[Mapping[str, Any]]) -> dict[Cell, dict[int, str]]:
    cells: dict[Cell, dict[int, str]] = {}
    for row in rows:
        cell = (row.get("collective") or DEFAULT_COLLECTIVE, row["ranks"], row["dtype"], row["op"])
        cells.setdefault(cell, {})[int(row["bytes"])] = _said(row)
    return cells


def changes(winners: Mapping[int, str]) -> list[str]:
    """Where a decided winner gives way to another, size by size ('a -> b at 64 KiB')."""
    found, last = [], None
    for size in sorted(winners):
        text = winners[size]
        if "~" in text:
            continue
        if last is not None and text != last:
            found.append(f"{last} -> {text} at {format_bytes(size)}")
        last = text
    return found


def placements_text(runs: Sequence[tuple[int, str, Sequence[Mapping[str, Any]]]]) -> list[str]:
    """The lines comparing runs of one grid on several placements: `runs` holds each run's
    (ranks_per_node, run id, winners rows)."""
    tables = [(per_node, run_id, _by_cell(rows)) for per_node, run_id, rows in runs]
    cells = sorted({cell for _, _, found in tables for cell in found})
    lines = ["placements compared (each size's winner; `a ~ b`: a tie; docs/guide/nodes.md)"]
    for cell in cells:
        collective, ranks, dtype, op = cell
        heads = [f"{placement_label(n, ranks)} ({run_id})" for n, run_id, _ in tables]
        name = "" if collective == DEFAULT_COLLECTIVE else f"{collective} "
        lines.append(f"{name}p={ranks} {dtype} {op}: " + " | ".join(heads))
        sizes = sorted({s for _, _, found in tables for s in found.get(cell, {})})
        for size in sizes:
            said = [found.get(cell, {}).get(size, "-") for _, _, found in tables]
            lines.append(f"  {format_bytes(size):>8}  " + " | ".join(said))
        for n, _, found in tables:
            moved = changes(found.get(cell, {}))
            where = ", ".join(moved) or "no decided change of winner"
            lines.append(f"  {placement_label(n, ranks)}: {where}")
    return lines
