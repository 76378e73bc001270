"""Override impact page: a forced library algorithm against its library's autotuned call of the
same collective, or one library's autotuned default against another's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.libraries.catalog import collective_of, is_autotuned


def _choices(baselines: dict[str, str]) -> list[str]:
    """Algorithms set against a default: other libraries' defaults first (the comparison of
    the autotuners), then the forced and tuned ones, each by name."""
    return sorted(baselines, key=lambda a: (not is_autotuned(a), a))


def _verdict_line(impact: pd.DataFrame, forced: str, baseline: str) -> str:
    """One sentence: at how many sizes the override wins and loses."""
    faster = int((impact["verdict"] == "faster").sum())
    slower = int((impact["verdict"] == "slower").sum())
    return (
        f"Over {len(impact)} (ranks, size) points, **{forced}** is faster than the autotuned "
        f"**{baseline}** at {faster}, slower at {slower}, and within noise at the other "
        f"{len(impact) - faster - slower}."
    )


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    run_id = ui.choose_run(queries.runs_table(path))
    collective, grid = ui.choose_collective(queries.run_grid(path, run_id))
    baselines = {
        algorithm: baseline
        for algorithm, baseline in queries.baselines(path, run_id).items()
        if collective_of(algorithm) == collective
    }
    if not baselines:
        st.info(
            "Nothing in this run was set against a library's autotuned MPI_Allreduce ('mpi', "
            "'openmpi'): it needs the default and a forced algorithm (or two libraries)."
        )
        return
    cols = st.columns(3)
    forced = ui.choose("Algorithm", _choices(baselines), "forced", container=cols[0])
    dtype = ui.choose("Datatype", sorted(grid["dtype"].unique()), "dtype", container=cols[1])
    op = ui.choose(
        "Op", sorted(grid[grid["dtype"] == dtype]["op"].unique()), "op", container=cols[2]
    )
    if forced is None:
        return
    baseline = baselines[forced]
    scope = queries.Scope(
        run_id, dtype=dtype, op=op, algorithms=(forced, baseline), collective=collective
    )
    impact = queries.override_impact(path, scope, forced)
    view = queries.assumption_summary(path, scope)
    ui.show_run_assumptions(path, run_id, view, scope.words())
    if not impact.empty:
        st.markdown(_verdict_line(impact, forced, baseline))
    ui.chart(charts.override_figure(impact, forced, baseline), "override_chart")
    st.caption(
        f"Speed-up = {baseline} time / {forced} time, from the launches that timed both "
        "(paired; two libraries' launches are paired by round). "
        "Triangles up/down: its 95% interval excludes 1 (faster/slower); open circles: "
        "within noise."
    )
    ui.table(queries.override_summary(impact), key="override_summary")
    with st.expander("Every size"):
        ui.table(queries.readable(impact), key="override_points")


ui.run_page("Override impact", main)
