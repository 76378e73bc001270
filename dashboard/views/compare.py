"""Compare runs page: run B against run A, the rows `collsweep compare` prints: decided
slow-downs and speed-ups at matching points, and the cells whose decided winner changed."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.collectives.collective import group_title
from runners.domain.units import format_bytes
from runners.domain.verdict.run_comparison import WITHIN_NOISE


def _runs(runs) -> tuple[str, str]:
    """Run A (default: the second newest) and run B (default: the newest)."""
    ids = runs["run_id"].tolist()
    left, right = st.columns(2)
    a = ui.choose_run(runs, "a", "Run A (baseline)", ids[min(1, len(ids) - 1)], container=left)
    b = ui.choose_run(runs, "b", "Run B", ids[0], container=right)
    return a, b


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    runs = queries.runs_table(path)
    a, b = _runs(runs)
    if a == b:
        st.info("Pick two different runs.")
        return
    found = queries.compare_runs(path, a, b)
    ratios = found.points
    if ratios.empty:
        why = queries.no_overlap_reason(path, a, b)
        st.warning(
            "These two runs share no point (same algorithm, ranks, size, dtype and op), so "
            f"there is nothing to compare{': ' + why if why else ''}.",
            icon=":material/difference:",
        )
    for label, run_id in (("A", a), ("B", b)):
        st.markdown(f"Run {label}: {ui.run_title_of(runs, run_id)}")
        ui.show_run_assumptions(path, run_id)
    s = found.summary
    st.markdown(summary_sentence(s, found.winners))
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Matching points", s["matching_points"])
    c2.metric("B decidedly slower", s["slower"])
    c3.metric("B decidedly faster", s["faster"])
    c4.metric("Winner changes", s["winner_changes"])
    ui.chart(charts.compare_figure(ratios, a, b), "compare_chart")
    only_flagged = ui.toggle("Only decided changes", "flagged")
    shown = ratios[ratios["change"] != WITHIN_NOISE] if only_flagged else ratios
    ui.table(shown, key="compare_table")
    diff = queries.provenance_diff(path, a, b)
    st.markdown("**Provenance that differs**" if not diff.empty else "Same provenance.")
    if not diff.empty:
        ui.table(diff, key="compare_provenance")


def summary_sentence(s: dict, winners: list) -> str:
    """What changed from A to B, in words: decided slow-downs and speed-ups (95% intervals of
    the ratio that exclude 1) and the cells whose decided winner changed."""
    changed = [w for w in winners if w.changed]
    where = "; ".join(
        f"{group_title(w.cell[0], w.cell[1], w.cell[2], w.cell[4])} {format_bytes(w.cell[3])}: "
        f"{w.winner_a} -> {w.winner_b}"
        for w in changed
    )
    return (
        f"B is decidedly slower at {s['slower']} and decidedly faster at {s['faster']} of "
        f"{s['matching_points']} matching points (the 95% interval of B / A excludes 1); "
        f"the rest are within noise. Of {s['cells_decided_in_both']} cells both runs decided, "
        + (f"the winner changed in {len(changed)}: {where}." if changed else "none changed winner.")
    )


ui.run_page("Compare runs", main)
