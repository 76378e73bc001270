"""Assumption badges: one per checked assumption, its worst state within a view.

Pure functions over the summary frames of dashboard.queries (name, state, checks, points,
detail). A view whose points break an assumption (oversubscribed, non-power-of-two ranks...)
gets a one-line headline saying it is not a clean test of the model, and a table of what each
assumption means behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from runners.domain.units import counted
from runners.domain.verdict.assumptions import MEANINGS

STATE_RANK = {"violated": 0, "unknown": 1, "holds": 2}


@dataclass(frozen=True)
class Badge:
    """One assumption in a view: its worst state and how many points are in that state."""

    name: str
    state: str
    points: int
    total_points: int
    detail: str


def badges(summary: pd.DataFrame) -> list[Badge]:
    """One badge per assumption name: its worst state, violated first, then by name."""
    if summary is None or summary.empty:
        return []
    out = []
    for name, group in summary.groupby("name", sort=True):
        ranked = group.assign(rank=group["state"].map(STATE_RANK).fillna(3))
        worst = ranked.sort_values("rank").iloc[0]
        out.append(
            Badge(
                name=str(name),
                state=str(worst["state"]),
                points=int(worst["points"]),
                total_points=int(group["points"].sum()),
                detail=str(worst["detail"] or ""),
            )
        )
    return sorted(out, key=lambda b: (STATE_RANK.get(b.state, 3), b.name))


def violations(items: list[Badge]) -> list[Badge]:
    """The badges whose worst state is 'violated'."""
    return [b for b in items if b.state == "violated"]


def _share(badge: Badge) -> str:
    """'12 of 20 points' for a point check, 'whole run' for a run check."""
    if badge.total_points == 0:
        return "whole run"
    return f"{badge.points} of {counted(badge.total_points, 'point')}"


def headline(items: list[Badge]) -> str:
    """The view's assumptions in one line: what broke (and where) first, then what is unknown,
    then how many hold."""
    parts = []
    broken = violations(items)
    if broken:
        parts.append("; ".join(f"{b.name} violated ({_share(b)})" for b in broken))
    unknown = [b.name for b in items if b.state == "unknown"]
    if unknown:
        parts.append(f"unknown: {', '.join(unknown)}")
    holding = sum(b.state == "holds" for b in items)
    parts.append(f"{counted(holding, 'assumption')} hold" if holding != 1 else "1 holds")
    lead = "Not a clean test of the model: " if broken else "Assumptions: "
    return lead + " · ".join(parts)


def view_line(items: list[Badge], words: str, run: Sequence[Badge] = ()) -> str:
    """What the points of a view narrower than the run (`words`: 'p=3 float32 sum') break, in
    one line: the run's line (`run`, its badges) counts the whole run, this one the view's own
    points; where they break nothing, said only when the run's points break something ('')."""
    broken = [b for b in violations(items) if b.total_points]
    if not broken:
        elsewhere = any(b.total_points for b in violations(list(run)))
        return f"In this view ({words}): no point breaks an assumption" if elsewhere else ""
    return f"In this view ({words}): " + "; ".join(
        f"{b.name} violated ({_share(b)})" for b in broken
    )


def meaning_table(items: list[Badge]) -> pd.DataFrame:
    """One row per assumption: its state in the view, the points it covers, and what it means
    for the model when it breaks (domain.verdict.assumptions.MEANINGS)."""
    return pd.DataFrame(
        {
            "assumption": [b.name for b in items],
            "state": [b.state for b in items],
            "points": [_share(b) for b in items],
            "what a break means": [MEANINGS.get(b.name, "") for b in items],
            "evidence": [b.detail for b in items],
        }
    )
