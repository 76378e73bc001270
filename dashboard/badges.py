"""Assumption badges: one per checked assumption, its worst state within a view.

Pure functions over the summary frames of dashboard.queries (name, state, checks, points,
detail). A view whose points break an assumption (oversubscribed, non-power-of-two ranks...)
gets a red badge and a warning sentence, so it never reads as a clean test of the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from runners.domain.units import counted

STATE_RANK = {"violated": 0, "unknown": 1, "holds": 2}
STATE_STYLE = {  # state: (badge colour, material icon)
    "violated": ("red", ":material/error:"),
    "unknown": ("orange", ":material/help:"),
    "holds": ("green", ":material/check_circle:"),
}


@dataclass(frozen=True)
class Badge:
    """One assumption in a view: its worst state and how many points are in that state."""

    name: str
    state: str
    points: int
    total_points: int
    detail: str

    @property
    def label(self) -> str:
        """Short text, e.g. 'no_oversubscription: violated (12 of 20 points)'."""
        if self.total_points == 0:
            return f"{self.name}: {self.state} (run)"
        return f"{self.name}: {self.state} ({self.points} of {counted(self.total_points, 'point')})"

    @property
    def color(self) -> str:
        """Streamlit badge colour for the state."""
        return STATE_STYLE.get(self.state, ("gray", ""))[0]

    @property
    def markdown(self) -> str:
        """The badge as Streamlit markdown (``:red-badge[...]``)."""
        icon = STATE_STYLE.get(self.state, ("gray", ":material/circle:"))[1]
        text = self.label.replace("[", "(").replace("]", ")")
        return f":{self.color}-badge[{icon} {text}]"


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


def badges_markdown(items: list[Badge]) -> str:
    """All badges on one markdown line."""
    return " ".join(b.markdown for b in items)


def violations(items: list[Badge]) -> list[Badge]:
    """The badges whose worst state is 'violated'."""
    return [b for b in items if b.state == "violated"]


def warning_text(items: list[Badge]) -> str | None:
    """A sentence saying the view is not a clean test of the model, or None when nothing broke."""
    broken = violations(items)
    if not broken:
        return None
    parts = ", ".join(
        f"{b.name} ({counted(b.points, 'point')})" if b.total_points else f"{b.name} (whole run)"
        for b in broken
    )
    return f"Not a clean test of the model: violated assumptions: {parts}."
