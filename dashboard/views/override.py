"""Override impact page: a forced library algorithm against the autotuned MPI_Allreduce."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui


def _forced_choices(grid: pd.DataFrame) -> list[str]:
    """Algorithms to set against 'mpi': forced library ones (mpi:...) first, then the rest."""
    algs = sorted(set(grid["algorithm"]) - {"mpi"})
    return sorted(algs, key=lambda a: (not a.startswith("mpi:"), a))


def _verdict_line(impact: pd.DataFrame, forced: str) -> str:
    """One sentence: at how many sizes the override wins and loses."""
    faster = int((impact["verdict"] == "faster").sum())
    slower = int((impact["verdict"] == "slower").sum())
    return (
        f"Over {len(impact)} (ranks, size) points, **{forced}** is faster than the autotuned "
        f"choice at {faster}, slower at {slower}, and within noise at the other "
        f"{len(impact) - faster - slower}."
    )


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    run_id = ui.choose_run(queries.runs_table(path))
    grid = queries.run_grid(path, run_id)
    if "mpi" not in set(grid["algorithm"]):
        st.info("This run did not measure the library's autotuned MPI_Allreduce ('mpi').")
        return
    cols = st.columns(3)
    forced = ui.choose("Forced algorithm", _forced_choices(grid), "forced", container=cols[0])
    dtype = ui.choose("Datatype", sorted(grid["dtype"].unique()), "dtype", container=cols[1])
    op = ui.choose(
        "Op", sorted(grid[grid["dtype"] == dtype]["op"].unique()), "op", container=cols[2]
    )
    if forced is None:
        st.info("This run measured no algorithm besides 'mpi'.")
        return
    scope = queries.Scope(run_id, dtype=dtype, op=op, algorithms=(forced, "mpi"))
    impact = queries.override_impact(path, scope, forced)
    ui.show_assumptions(queries.assumption_summary(path, scope))
    if not impact.empty:
        st.markdown(_verdict_line(impact, forced))
    ui.chart(charts.override_figure(impact, forced), "override_chart")
    st.caption(
        "Speed-up = mpi time / forced time, from the launches that timed both (paired). "
        "Triangles up/down: its 95% interval excludes 1 (faster/slower); open circles: "
        "within noise."
    )
    ui.table(queries.override_summary(impact), key="override_summary")
    with st.expander("Every size"):
        ui.table(impact, key="override_points")


ui.run_page("Override impact", main)
