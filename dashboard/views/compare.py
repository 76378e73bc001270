"""Compare runs page: median ratios between two runs at matching points, big changes flagged."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import charts, queries, ui


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
    percent = ui.number(
        "Flag changes beyond (%)", "thr", 10.0, min_value=0.0, max_value=1000.0, step=1.0
    )
    if a == b:
        st.info("Pick two different runs.")
        return
    ratios = queries.compare_runs(path, a, b, percent / 100)
    if ratios.empty:
        why = queries.no_overlap_reason(path, a, b)
        st.warning(
            "These two runs share no point (same algorithm, ranks, size, dtype and op), so "
            f"there is nothing to compare{': ' + why if why else ''}.",
            icon=":material/difference:",
        )
    for label, run_id in (("A", a), ("B", b)):
        st.markdown(f"Run {label}:")
        ui.show_assumptions(queries.assumption_summary(path, queries.Scope(run_id)))
    slower = int((ratios["change"] == "slower").sum())
    faster = int((ratios["change"] == "faster").sum())
    c1, c2, c3 = st.columns(3)
    c1.metric("Matching points", len(ratios))
    c2.metric(f"B slower by > {percent:g}%", slower)
    c3.metric(f"B faster by > {percent:g}%", faster)
    ui.chart(charts.compare_figure(ratios, percent / 100, a, b), "compare_chart")
    only_flagged = ui.toggle("Only flagged changes", "flagged")
    shown = ratios[ratios["change"] != ""] if only_flagged else ratios
    ui.table(shown, key="compare_table")
    diff = queries.provenance_diff(path, a, b)
    st.markdown("**Provenance that differs**" if not diff.empty else "Same provenance.")
    if not diff.empty:
        ui.table(diff, key="compare_provenance")


ui.run_page("Compare runs", main)
