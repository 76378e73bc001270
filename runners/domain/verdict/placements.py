"""The same grid on several placements, side by side (pure): per cell and size, each
placement's winner (a tie as `a ~ b`), and where each pair's measured order flips on each, so a
user sees the crossover a network moves (a sweep of several ranks_per_node: a run each)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runners.domain.collectives.collective import DEFAULT_COLLECTIVE, group_title
from runners.domain.sweep.run_labels import NAME_MAX
from runners.domain.units import format_bytes

Cell = tuple[str, int, str, str]  # (collective, ranks, dtype, op)


def placement_label(ranks_per_node: int, ranks: int) -> str:
    """How a placement is named in a header: `one host`, `2 nodes x 1`."""
    if not ranks_per_node:
        return "one host"
    return f"{ranks // ranks_per_node} nodes x {ranks_per_node}"


PLACED_NAME = "ranks_per_node="  # how a placement's run is named (and found again)


def placement_name(name: str | None, ranks_per_node: int) -> str:
    """The name of one placement's run in a sweep of several: the user's name, if any, then
    the placement, so every run picker tells them apart."""
    placed = f"{PLACED_NAME}{ranks_per_node}"
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
# one placement's run: (ranks_per_node, run id, winners rows, crossovers rows)
Run = tuple[int, str, Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]


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


def _flipping_pairs(cell: Cell, placed: Sequence[dict[Cell, dict[Pair, list[Flip]]]]) -> list[Pair]:
    """The pairs whose measured order flips on any placement, the first placement's first,
    each placement's smallest flip first."""
    pairs: list[Pair] = []
    for found in placed:
        ordered = sorted(found.get(cell, {}).items(), key=lambda item: item[1][0][0])
        pairs += [pair for pair, _ in ordered if pair not in pairs]
    return pairs


def _flip_text(found: dict[Cell, dict[Pair, list[Flip]]], cell: Cell, pair: Pair) -> str:
    return ", ".join(text for _, text in found.get(cell, {}).get(pair, [])) or "none"


@dataclass(frozen=True)
class CellComparison:
    """One cell (collective, ranks, dtype, op) on several placements: a header per placement
    (`2 nodes x 1`), per size each placement's winner (`-` where it was not measured), and per
    pair whose order flips on any placement where it flips on each (`none`)."""

    cell: Cell
    heads: tuple[str, ...]
    winners: tuple[tuple[int, tuple[str, ...]], ...]
    flips: tuple[tuple[Pair, tuple[str, ...]], ...]


def compare_placements(runs: Sequence[Run]) -> list[CellComparison]:
    """Each cell of runs of one grid on several placements side by side: `runs` holds each
    run's (ranks_per_node, run id, winners rows, crossovers rows)."""
    tables = [(per_node, _by_cell(rows)) for per_node, _, rows, _ in runs]
    placed = [_crossovers(crossings) for *_, crossings in runs]
    out = []
    for cell in sorted({cell for _, found in tables for cell in found}):
        sizes = sorted({s for _, found in tables for s in found.get(cell, {})})
        out.append(
            CellComparison(
                cell,
                tuple(placement_label(n, cell[1]) for n, _ in tables),
                tuple(
                    (size, tuple(found.get(cell, {}).get(size, "-") for _, found in tables))
                    for size in sizes
                ),
                tuple(
                    (pair, tuple(_flip_text(found, cell, pair) for found in placed))
                    for pair in _flipping_pairs(cell, placed)
                ),
            )
        )
    return out


def placements_text(runs: Sequence[Run]) -> list[str]:
    """The lines comparing runs of one grid on several placements (compare_placements): per
    cell a header naming each placement's run, each size's winners, then where each pair's
    decided order flips on each (at most SHOWN_PAIRS, the rest counted)."""
    lines = [
        "placements compared (each size's winner, `a ~ b` a tie; where each pair's measured "
        "order flips; docs/guide/nodes.md)"
    ]
    for compared in compare_placements(runs):
        collective, ranks, dtype, op = compared.cell
        heads = [f"{head} ({run[1]})" for head, run in zip(compared.heads, runs, strict=True)]
        lines.append(f"{group_title(ranks, dtype, op, collective)}: " + " | ".join(heads))
        for size, said in compared.winners:
            lines.append(f"  {format_bytes(size):>8}  " + " | ".join(said))
        lines += [
            f"  {a} / {b} flip: " + " | ".join(texts)
            for (a, b), texts in compared.flips[:SHOWN_PAIRS]
        ]
        if len(compared.flips) > SHOWN_PAIRS:
            more = len(compared.flips) - SHOWN_PAIRS
            lines.append(f"  {more} more pairs flip: `collsweep crossovers RUN`")
        if not compared.flips:
            lines.append("  no measured crossover on any placement")
    return lines
