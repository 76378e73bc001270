"""The same grid on several placements, side by side (pure): per cell and size, each
placement's winner (a tie as `a ~ b`), and where each pair's measured order flips on each, so a
user sees the crossover a network moves (a sweep of several ranks_per_node: a run each)."""

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


def _cell(row: Mapping[str, Any]) -> Cell:
    return (row.get("collective") or DEFAULT_COLLECTIVE, row["ranks"], row["dtype"], row["op"])


def _by_cell(rows: Sequence[Mapping[str, Any]]) -> dict[Cell, dict[int, str]]:
    cells: dict[Cell, dict[int, str]] = {}
    for row in rows:
        cells.setdefault(_cell(row), {})[int(row["bytes"])] = _said(row)
    return cells


Pair = tuple[str, str]
Flip = tuple[float, str]  # (bytes, where: '~4 KiB [2 KiB..8 KiB]')
SHOWN_PAIRS = 6  # crossover lines a cell shows; the rest are counted


def _crossovers(rows: Sequence[Mapping[str, Any]]) -> dict[Cell, dict[Pair, list[Flip]]]:
    """Each cell's measured crossovers by (unordered) pair, in size order: (bytes, text)."""
    found: dict[Cell, dict[Pair, list[Flip]]] = {}
    for row in rows:
        if row.get("kind") != "measured":
            continue
        cell = _cell(row)
        a, b = sorted((str(row["algorithm_a"]), str(row["algorithm_b"])))
        where = f"~{format_bytes(round(row['bytes']))}"
        if row.get("low_bytes") is not None and row.get("high_bytes") is not None:
            where += f" [{format_bytes(row['low_bytes'])}..{format_bytes(row['high_bytes'])}]"
        found.setdefault(cell, {}).setdefault((a, b), []).append((float(row["bytes"]), where))
    for pairs in found.values():
        for flips in pairs.values():
            flips.sort()
    return found


def _crossover_lines(cell: Cell, placed: Sequence[dict[Cell, dict[Pair, list[Flip]]]]) -> list[str]:
    """Where each pair's decided order flips on each placement, the pairs with a flip on any,
    the first placement's first, smallest first (at most SHOWN_PAIRS, the rest counted)."""
    pairs: list[Pair] = []
    for found in placed:
        ordered = sorted(found.get(cell, {}).items(), key=lambda item: item[1][0][0])
        pairs += [pair for pair, _ in ordered if pair not in pairs]

    def said(found: dict[Cell, dict[Pair, list[Flip]]], pair: Pair) -> str:
        flips = found.get(cell, {}).get(pair, [])
        return ", ".join(text for _, text in flips) or "none"

    lines = [
        f"  {a} / {b} flip: " + " | ".join(said(found, (a, b)) for found in placed)
        for a, b in pairs[:SHOWN_PAIRS]
    ]
    if len(pairs) > SHOWN_PAIRS:
        lines.append(f"  {len(pairs) - SHOWN_PAIRS} more pairs flip: `collsweep crossovers RUN`")
    return lines or ["  no measured crossover on any placement"]


Run = tuple[int, str, Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]


def placements_text(runs: Sequence[Run]) -> list[str]:
    """The lines comparing runs of one grid on several placements: `runs` holds each run's
    (ranks_per_node, run id, winners rows, crossovers rows)."""
    tables = [(per_node, run_id, _by_cell(rows)) for per_node, run_id, rows, _ in runs]
    placed = [_crossovers(crossings) for *_, crossings in runs]
    cells = sorted({cell for _, _, found in tables for cell in found})
    lines = [
        "placements compared (each size's winner, `a ~ b` a tie; where each pair's measured "
        "order flips; docs/guide/nodes.md)"
    ]
    for cell in cells:
        collective, ranks, dtype, op = cell
        heads = [f"{placement_label(n, ranks)} ({run_id})" for n, run_id, _ in tables]
        name = "" if collective == DEFAULT_COLLECTIVE else f"{collective} "
        lines.append(f"{name}p={ranks} {dtype} {op}: " + " | ".join(heads))
        sizes = sorted({s for _, _, found in tables for s in found.get(cell, {})})
        for size in sizes:
            said = [found.get(cell, {}).get(size, "-") for _, _, found in tables]
            lines.append(f"  {format_bytes(size):>8}  " + " | ".join(said))
        lines += _crossover_lines(cell, placed)
    return lines
