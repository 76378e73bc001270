"""Verdict page, the front page: a run's answer (the newest run unless another is picked),
per group one sentence and a strip of winners by size with the margin over the runner-up and
the speed-up over the library default; ties grey, provisional winners marked. The same cells
as the tables `collsweep sweep` ends with (runners.domain.verdict.winner_table). An adaptive
run's unmeasured cells are in italics, inferred; its rounds (every point chosen, when and why)
below the strip."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import charts, queries, run_banners, ui
from dashboard.report import report_html
from runners.domain.adaptive.rounds import rounds_words
from runners.domain.collectives.collective import group_title
from runners.domain.verdict.provisional import short_reason
from runners.domain.verdict.winner_table import by_group, group_sentence


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    chosen = ui.choose_run_with_points(path, one_collective=False)
    if chosen is None:
        return
    run_id, _ = chosen
    data = queries.verdict_data(path, run_id)
    simulated = run_banners.simulation_of_run(path, run_id) is not None
    if not simulated:  # a simulated point has one value: no precision target
        st.caption(
            f"Precision: {data.points_met} of {data.points_ok} points met their target (the "
            "interval over launches as tight as the run asked)"
        )
    if data.provisional_reason:
        st.warning(
            f"Provisional (†): {short_reason(data.provisional_reason)}; measure again on a "
            "quiet machine before acting on these winners.",
            icon=":material/warning:",
        )
        with st.expander("Why provisional: the evidence"):
            st.markdown(
                f"{data.provisional_reason}. `collsweep tune` refuses these winners unless "
                "given --accept-provisional."
            )
    groups = by_group(data.cells)
    if not groups:
        st.info(f"No winners stored for this run yet: `collsweep analyze {run_id}` makes them.")
        return
    ui.chart(charts.winner_strip(data.cells), "winner_strip")
    if data.adaptive:
        _adaptive(path, run_id, data.adaptive)
    lines = []
    for (ranks, dtype, op, collective), cells in groups.items():
        apart = " (oversubscribed: reported apart)" if ranks in data.oversubscribed else ""
        title = group_title(ranks, dtype, op, collective)
        lines.append(f"**{title}**{apart}: {group_sentence(cells)}")
    st.markdown("\n\n".join(lines))
    ui.show_run_assumptions(path, run_id)  # the same line as every other page of the run
    st.caption(
        "Each cell: the winner and how much slower the runner-up is (paired launches); grey "
        "where the launches could not tell the two apart. Hover for the times and the speed-up "
        f"over the library default. Details: [Curves](curves?run={run_id}), "
        f"[Crossovers](crossovers?run={run_id}), [Runs](runs)."
    )
    if st.button("Prepare a report to share (one HTML file)", key="prepare_report"):
        st.download_button(
            "Download the report",
            report_html(path, run_id),
            file_name=f"{run_id}.html",
            mime="text/html",
            key="report_download",
        )


def _adaptive(path: Path, run_id: str, rounds: dict) -> None:
    """An adaptive run: how its rounds ended, and every point it chose, when and why."""
    st.info(
        f"Adaptive run: {rounds_words(rounds)}. Cells in "
        "italics were not measured: their winner is inferred (between two measured sizes won by "
        "the same algorithm) or a model pick (the model corrected by the measurements, where "
        "the winner changes between its measured neighbours).",
        icon=":material/insights:",
    )
    choices = queries.adaptive_choices(path, run_id)
    with st.expander(f"Which points were measured, in which round and why ({len(choices)})"):
        ui.chart(charts.rounds_figure(choices), "adaptive_rounds")
        shown = choices.drop(columns=["bytes"])
        st.dataframe(shown, hide_index=True, key="adaptive_choices")


ui.run_page("Verdict", main)
