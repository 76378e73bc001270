"""The answer per size, one home for the terminal's tables and the dashboard's winner strip:
per (ranks, dtype, op, collective) group and size the best algorithm and its time, the
runner-up, the margin between them with its interval (decided or a tie), the library's default
and the best one's speed-up over it, and whether the run's winners are provisional; then one
sentence per group. Algorithms are named within their group's collective (`ring`, not
`allgather.ring`: the title says allgather).

Pure: it reads rows of the stored `winners` table (every library's algorithms competing) and
the points' medians; the default of a cell is the autotuned entry of the winner's library, and
its speed-up the one the analysis stored with the row (runners.domain.verdict.speedup).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runners.domain.collectives.collective import DEFAULT_COLLECTIVE, group_title
from runners.domain.libraries.catalog import ALGORITHMS, autotuned_of, library_of, local_name
from runners.domain.units import aligned_lines, counted, format_bytes, format_seconds
from runners.domain.verdict.speedup import IS_DEFAULT, NO_SPEEDUP, UNKNOWN, Speedup, margin_words
from runners.domain.verdict.summary import INFERRED, PICKED

Medians = Mapping[tuple[int, str, str, int, str], float]  # (ranks, dtype, op, bytes, alg) -> s
Group = tuple[int, str, str, str]  # (ranks, dtype, op, collective)
HEADER = ("size", "best", "time", "runner-up", "runner-up is", "best against the default")


@dataclass(frozen=True)
class Cell:
    """One size of one group: who wins, by how much, and what the default would cost."""

    group: Group
    nbytes: int
    best: str
    runner_up: str
    decided: bool
    best_s: float | None
    margin: tuple[float, float, float] | None  # runner-up / best, with its interval
    default: str
    default_s: float | None
    speedup: Speedup = NO_SPEEDUP
    provisional: bool = False
    inferred: str = ""  # an adaptive run's unmeasured cell: why its winner is inferred

    @property
    def answer(self) -> str:
        """The winner, or 'tie a ~ b', named within the group's collective; an inferred
        cell's winner says so."""
        best, runner_up = local_name(self.best), local_name(self.runner_up)
        if self.inferred:
            return f"{best} ({INFERRED if self.decided else PICKED})"
        return best if self.decided else f"tie {best} ~ {runner_up}"


def default_of(algorithm: str) -> str:
    """The library default a cell's winner is held against: its library's autotuned entry of
    the winner's collective ('' where there is none)."""
    if algorithm not in ALGORITHMS:
        return ""
    found = autotuned_of(library_of(algorithm), ALGORITHMS[algorithm].collective)
    return found if found in ALGORITHMS else ""


def cells_of(
    winners: Sequence[Mapping[str, Any]],
    medians: Medians,
    inferred: Sequence[Mapping[str, Any]] = (),
) -> list[Cell]:
    """A cell per winners row, and per `cell_inferences` row of an adaptive run (never
    measured: no time, no margin, no speed-up; `decided` is whether it is settled), by group
    then size."""
    out = [_inferred_cell(row) for row in inferred]
    for row in winners:
        collective = row.get("collective") or DEFAULT_COLLECTIVE
        group = (int(row["ranks"]), row["dtype"], row["op"], collective)
        where = (*group[:3], int(row["bytes"]))
        default = default_of(row["winner"])
        out.append(
            Cell(
                group,
                int(row["bytes"]),
                row["winner"],
                row["runner_up"],
                bool(row["decided"]),
                medians.get((*where, row["winner"])),
                margin_of(row),
                default,
                medians.get((*where, default)),
                Speedup.from_row(row),
                bool(row.get("provisional")),
            )
        )
    return sorted(out, key=lambda c: (c.group, c.nbytes))


def _inferred_cell(row: Mapping[str, Any]) -> Cell:
    group = (int(row["ranks"]), row["dtype"], row["op"], row["collective"])
    runner_up = row.get("runner_up") or row["winner"]
    settled, reason = bool(row["settled"]), str(row["reason"])
    return Cell(group, int(row["bytes"]), row["winner"], runner_up, settled, None, None, "",
                None, inferred=reason)  # fmt: skip


def by_group(cells: Sequence[Cell]) -> dict[Group, list[Cell]]:
    """Cells by their group, groups and sizes in order."""
    return {g: list(mine) for g, mine in itertools.groupby(cells, key=lambda c: c.group)}


def margin_of(row: Mapping[str, Any]) -> tuple[float, float, float] | None:
    """How much slower a winners row's runner-up is, with its interval (the stored ratio is
    winner / runner-up); None without paired launches (missing or NaN ratios)."""
    ratio, low, high = row.get("ratio"), row.get("ratio_low"), row.get("ratio_high")
    if ratio is None or low is None or high is None or not (ratio > 0 and low > 0 and high > 0):
        return None  # NaN is not > 0 either
    return 1 / ratio, 1 / high, 1 / low


def margin_text(cell: Cell) -> str:
    """How much slower the runner-up is: '1.83x slower [1.06, 3.17]', 'tie (...)' when
    undecided, 'unknown' without launches (speedup.margin_words)."""
    if cell.margin is None:
        return "unknown"
    return margin_words(cell.margin, cell.decided)


def group_sentence(cells: Sequence[Cell]) -> str:
    """One sentence for a group: the answer by size range, then the default's standing."""
    spans = []
    for answer, run in itertools.groupby(cells, key=lambda c: c.answer):
        sizes = [c.nbytes for c in run]
        where = format_bytes(sizes[0])
        where += f" .. {format_bytes(sizes[-1])}" if len(sizes) > 1 else ""
        spans.append(f"{answer} at {where}")
    return "; ".join(spans) + f". {_standing(cells)}."


def _standing(cells: Sequence[Cell]) -> str:
    """Where the default stands, from the stored speed-ups: at how many sizes the best is
    decidedly faster than it, by how much at most, and where the default holds."""
    known = [c for c in cells if c.speedup.verdict != UNKNOWN]
    if not known:
        return (
            "No speed-up over the default is stored (the default was not measured, or the run "
            "was analysed before schema 11: `collsweep analyze RUN` stores it)"
        )
    if all(c.speedup.verdict == IS_DEFAULT for c in known):
        return f"The default is the best at {counted(len(known), 'size')}"
    faster = [c.speedup for c in known if c.speedup.decided]
    if not faster:
        return f"Nothing is decidedly faster than the default at {counted(len(known), 'size')}"
    top = max(faster, key=lambda s: s.ratio or 0.0)
    held = len(known) - len(faster)
    return (
        f"The best beats the default at {len(faster)} of {counted(len(known), 'size')}: up to "
        f"{top.text()} (paired launches)"
        + (f"; the default holds at the other {held}" if held else "")
    )


def group_tables(
    winners: Sequence[Mapping[str, Any]],
    medians: Medians,
    oversubscribed: set[int],
    inferred: Sequence[Mapping[str, Any]] = (),
) -> list[str]:
    """Every group's table, a title line first, a blank line between groups; an adaptive
    run's inferred cells among the measured ones, each saying it was not measured."""
    lines: list[str] = []
    grouped = by_group(cells_of(winners, medians, inferred))
    for (ranks, dtype, op, collective), cells in grouped.items():
        apart = " (oversubscribed: reported apart, not a test of the model)"
        title = group_title(ranks, dtype, op, collective) + (
            apart if ranks in oversubscribed else ""
        )
        defaults = sorted({local_name(c.default) for c in cells if c.default})
        title += f" (default: {' / '.join(defaults)})" if defaults else ""
        body = [_row(c) for c in cells]
        lines += [*([""] if lines else []), title, *aligned_lines([HEADER, *body])]
    return lines


def _row(cell: Cell) -> tuple[str, ...]:
    """One size's row of the table."""
    if cell.inferred:
        how = INFERRED if cell.decided else PICKED
        best = f"{local_name(cell.best)} ({how})"
        return format_bytes(cell.nbytes), best, "not measured", local_name(cell.runner_up), "-", "-"
    speedup = cell.speedup
    return (
        format_bytes(cell.nbytes),
        local_name(cell.best),
        format_seconds(cell.best_s) if cell.best_s else "-",
        local_name(cell.runner_up),
        margin_text(cell),
        speedup.text() if speedup.verdict != UNKNOWN else "-",
    )
