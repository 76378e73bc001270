"""The answer at a glance: per (ranks, dtype, op), which algorithm wins along the size axis and
where the choice changes, measured beside predicted. Pure: it folds rows of the stored `winners`
and `crossovers` tables (the analysis computed them once) into sentences; the CLI
(runners.analysis.verdict) and the dashboard read them through it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from runners.domain.collectives.collective import DEFAULT_COLLECTIVE, group_title
from runners.domain.libraries.catalog import local_name
from runners.domain.model.calibration_id import with_caveat
from runners.domain.sweep.simulated_run import is_simulated_pairing
from runners.domain.units import format_bytes
from runners.domain.verdict.provisional import short_reason, stored_reason

TIE = "tie"
INFERRED, PICKED = "inferred", "inferred: the model picks"  # an adaptive run's unmeasured cells


@dataclass(frozen=True)
class Band:
    """Consecutive measured sizes with one answer: a decided winner, or a tie."""

    answer: str  # the winner, or TIE
    low: int
    high: int
    detail: str = ""  # for a tie, the two algorithms that could not be told apart

    def describe(self) -> str:
        """e.g. '8 B .. 32 KiB: mpi' or '256 KiB: tie ring ~ mpi'."""
        span = format_bytes(self.low)
        if self.high != self.low:
            span += f" .. {format_bytes(self.high)}"
        return f"{span}: {TIE} {self.detail}" if self.answer == TIE else f"{span}: {self.answer}"


UNDECIDABLE = "one launch: cannot decide"  # a tie of points with no paired launches to compare


def bands(cells: Sequence[Mapping[str, Any]]) -> list[Band]:
    """One group's winners rows, ordered by size, folded into bands of one answer; a tie whose
    two points share no two launches (or passes) to pair, as imported files of one launch
    each, says it cannot be decided (UNDECIDABLE); a simulated run's tie, its margin."""
    out: list[Band] = []
    for cell in sorted(cells, key=lambda c: c["bytes"]):
        decided = bool(cell["decided"])
        answer = cell["winner"] if decided else TIE
        detail = "" if decided else " ~ ".join(sorted((cell["winner"], cell["runner_up"])))
        if not decided and is_simulated_pairing(cell.get("pairing")):
            detail += f" ({cell['pairing']})"
        elif not decided and cell.get("launches") == 0:
            detail += f" ({UNDECIDABLE})"
        if out and out[-1].answer == answer and out[-1].detail == detail:
            out[-1] = Band(answer, out[-1].low, int(cell["bytes"]), detail)
        else:
            out.append(Band(answer, int(cell["bytes"]), int(cell["bytes"]), detail))
    return out


def change_lines(
    group_bands: Sequence[Band],
    crossovers: Sequence[Mapping[str, Any]],
    calibrations: Sequence[str] = (),
    found_by: str = "measured",
) -> list[str]:
    """Where the decided winner changes: the measured crossover of the two winners with its
    interval, beside the predicted one of the first of `calibrations` (the run's, most direct
    first) that predicts one; `found_by` says how the run's points were found ('simulated')."""

    def rank(row: Mapping[str, Any]) -> int:
        cal = row.get("calibration_id")
        return calibrations.index(cal) if cal in calibrations else len(calibrations)

    decided = [b for b in group_bands if b.answer != TIE]
    lines = []
    for before, after in itertools.pairwise(decided):
        if before.answer == after.answer:
            continue
        pair = {before.answer, after.answer}
        rows = [c for c in crossovers if {c["algorithm_a"], c["algorithm_b"]} == pair]
        measured = [c for c in rows if c["kind"] == "measured"]
        predicted = sorted((c for c in rows if c["kind"] == "predicted"), key=rank)
        lines.append(_change(before, after, measured, predicted, found_by))
    return lines


def _change(before: Band, after: Band, measured: list, predicted: list, found_by: str) -> str:
    head = f"{before.answer} -> {after.answer}"
    if measured:
        m = min(measured, key=lambda c: abs(c["low_bytes"] - before.high))
        where = (
            f"{found_by} between {format_bytes(m['low_bytes'])} and {format_bytes(m['high_bytes'])}"
        )
    else:
        where = (
            f"between {format_bytes(before.high)} and {format_bytes(after.low)} (no decided flip)"
        )
    if not predicted:
        return f"{head}: {where}; the model predicts no crossover of this pair"
    best = [c for c in predicted if c.get("calibration_id") == predicted[0].get("calibration_id")]
    sizes = ", ".join(format_bytes(c["bytes"]) for c in best)
    inside = measured and any(
        m["low_bytes"] <= c["bytes"] <= m["high_bytes"] for c in best for m in measured
    )
    verdict = " (inside)" if inside else ""
    return (
        f"{head}: {where}; predicted at {sizes}{verdict} [{with_caveat(best[0]['calibration_id'])}]"
    )


def _group(row: Mapping[str, Any]) -> tuple[int, str, str, str]:
    """A winners or crossovers row's group: (ranks, dtype, op, collective)."""
    return row["ranks"], row["dtype"], row["op"], row.get("collective") or DEFAULT_COLLECTIVE


def _local(row: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The row with its algorithm columns named within their collective (catalog.local_name)."""
    return {**row, **{n: local_name(row[n]) for n in names if row.get(n)}}


def inferred_as_winners(inferred: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """An adaptive run's `cell_inferences` rows as winners rows whose winner says it was
    inferred (settled between two measured sizes won by it, or picked by the model)."""
    return [
        {
            **row,
            "winner": f"{local_name(row['winner'])} ({INFERRED if row['settled'] else PICKED})",
            "runner_up": local_name(row.get("runner_up") or ""),
            "decided": True,
        }
        for row in inferred
    ]


def verdict_lines(
    winners: Sequence[Mapping[str, Any]],
    crossovers: Sequence[Mapping[str, Any]],
    oversubscribed: AbstractSet[int] = frozenset(),
    calibrations: Sequence[str] = (),
    inferred: Sequence[Mapping[str, Any]] = (),
) -> list[str]:
    """The verdict of every (ranks, dtype, op) of a run; groups whose ranks were
    `oversubscribed` are flagged, predictions taken from `calibrations` in that order; winners
    stored as provisional (a busy or unsteady machine) say so, first, with the reason; an
    adaptive run's `inferred` cells take their place among the sizes, each band saying it was
    inferred (the changes of winner are the measured bands')."""
    lines = []
    found_by = "simulated" if any(is_simulated_pairing(w.get("pairing")) for w in winners) else ""
    reason = stored_reason(winners)
    if reason is not None:
        lines.append(
            f"provisional: {short_reason(reason)}; measure again on a quiet machine before "
            "acting on these winners (the evidence: the dashboard's Assumptions page)"
        )
    winners = [_local(row, "winner", "runner_up") for row in winners]
    guessed = inferred_as_winners(inferred)
    crossovers = [_local(row, "algorithm_a", "algorithm_b") for row in crossovers]
    keyed = itertools.groupby(sorted([*winners, *guessed], key=_group), key=_group)
    for (ranks, dtype, op, collective), both in keyed:
        cells = list(both)
        group_bands = bands([c for c in cells if not any(c is g for g in guessed)])
        flag = " (oversubscribed, more ranks than cores)" if ranks in oversubscribed else ""
        flag += " (provisional)" if reason is not None else ""
        title = group_title(ranks, dtype, op, collective)
        lines.append(f"{title}{flag}: " + "; ".join(b.describe() for b in bands(cells)))
        mine = [c for c in crossovers if _group(c) == (ranks, dtype, op, collective)]
        changes = change_lines(group_bands, mine, calibrations, found_by or "measured")
        lines += [f"    {line}" for line in changes]
    return lines
