"""Placements page: runs of one grid on several placements (one host, emulated or real nodes:
a sweep of several ranks_per_node makes a run each) side by side: each size's winner on each,
each algorithm's time on each, and where each pair's measured order flips on each."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.collectives.collective import group_title
from runners.domain.units import format_bytes
from runners.domain.verdict.placements import CellComparison, compare_placements


def _chosen_runs(path: Path) -> list[str]:
    """The runs to set side by side: by default the newest sweep's placements."""
    runs = queries.runs_table(path)
    return ui.choose_many(
        "Runs, one per placement",
        runs["run_id"].tolist(),
        "runs",
        queries.newest_placements(runs),
        format_func=ui.run_label(runs),
        help="A sweep with --ranks-per-node 0,1 (or 0,8,4) stores a run per placement, named "
        "ranks_per_node=N; any runs of one grid can be set side by side.",
    )


def _cell(compared: list[CellComparison]) -> CellComparison:
    """The group shown (a picker when the runs share several)."""
    titles = {group_title(c.cell[1], c.cell[2], c.cell[3], c.cell[0]): c for c in compared}
    return titles[ui.choose("Group", list(titles), "group")]


def column_names(compared: CellComparison, run_ids: list[str]) -> list[str]:
    """A column per placement, named by it (`2 nodes x 1`); by its run too where two runs share
    a placement."""
    heads = list(compared.heads)
    return [h if heads.count(h) == 1 else f"{h} ({r})" for h, r in zip(heads, run_ids, strict=True)]


def winners_frame(compared: CellComparison, columns: list[str]) -> pd.DataFrame:
    """Each size's winner on each placement (`a ~ b`: a tie), a column per placement."""
    rows = [[format_bytes(size), *said] for size, said in compared.winners]
    return pd.DataFrame(rows, columns=["size", *columns])


def flips_frame(compared: CellComparison, columns: list[str]) -> pd.DataFrame:
    """Where each pair's measured order flips on each placement (`none`: it does not)."""
    rows = [[f"{a} / {b}", *texts] for (a, b), texts in compared.flips]
    return pd.DataFrame(rows, columns=["pair", *columns])


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    chosen = _chosen_runs(path)
    if len(chosen) < 2:
        st.info(
            "Pick two or more runs of one grid on different placements: `collsweep sweep SPEC "
            "--ranks-per-node 0,1 --network bandwidth=1Gbit` makes one run each.",
            icon=":material/lan:",
        )
        return
    data = queries.placements_data(path, chosen)
    compared = compare_placements(data.runs)
    if not compared:
        st.warning("These runs have no winners stored: `collsweep analyze RUN` makes them.")
        return
    shown = _cell(compared)
    run_ids = [run_id for _, run_id, _, _ in data.runs]
    columns = column_names(shown, run_ids)
    st.markdown("**Each size's winner on each placement** (`a ~ b`: the launches disagree)")
    ui.table(winners_frame(shown, columns), key="placements_winners", human=False)
    collective, ranks, dtype, op = shown.cell
    medians = data.medians[
        (data.medians["collective"] == collective)
        & (data.medians["ranks"] == ranks)
        & (data.medians["dtype"] == dtype)
        & (data.medians["op"] == op)
    ]
    winners = {w for _, said in shown.winners for text in said for w in text.split(" ~ ")}
    algorithms = sorted(medians["algorithm"].unique().tolist())
    picked = ui.choose_many("Algorithms drawn", algorithms, "algs", sorted(winners))
    placements = list(zip(run_ids, columns, strict=True))
    ui.chart(charts.placements_figure(medians, placements, picked), "placements_chart")
    st.markdown("**Where each pair's measured order flips, on each placement**")
    if shown.flips:
        ui.table(flips_frame(shown, columns), key="placements_flips", human=False)
    else:
        st.caption("No measured crossover on any placement.")


ui.run_page("Placements", main)
