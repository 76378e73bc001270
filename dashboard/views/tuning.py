"""Tuning page: does the library, following a collsweep tuning file (mpi:tuned), beat its own
autotuned choice (mpi) at every validated size? Where it is slower, it says so in red."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.tuning import band_ranges
from runners.domain.units import counted, format_bytes

HOW_TO = (
    "No run has timed **mpi:tuned** yet. Make a tuning file from a run and validate it "
    "between the swept sizes:\n\n"
    "```\ncollsweep tune RUN --out tuned.json --validate-spec validate.toml\n"
    "collsweep sweep validate.toml\n```"
)


def _headline(ratios: pd.DataFrame) -> None:
    """One line: where tuned is slower (red), else where it is faster."""
    slower = ratios[ratios["verdict"] == "slower"]
    faster = int((ratios["verdict"] == "faster").sum())
    sizes = counted(len(ratios), "validated size")
    if len(slower):
        where = ", ".join(f"p={r.ranks} {format_bytes(r.bytes)}" for r in slower.itertuples())
        st.error(
            f"mpi:tuned is slower than the autotuned mpi (decided by the paired launches) at "
            f"{len(slower)} of {sizes}: {where}. An override can improve one point and "
            "worsen the rest.",
            icon=":material/trending_down:",
        )
    else:
        st.success(
            f"mpi:tuned is nowhere slower than the autotuned mpi (decided by the paired "
            f"launches, {sizes}); faster at {faster}.",
            icon=":material/check_circle:",
        )


def _bands(provenance: dict) -> pd.DataFrame:
    """The file's choices per group size, from its provenance: size range and algorithm."""
    rows = []
    for ranks, group in (provenance.get("groups") or {}).items():
        items = group.get("bands", [])
        ranges = band_ranges([band["upto_bytes"] for band in items])
        rows += [
            {"ranks": int(ranks), "sizes": where, "algorithm": band["algorithm"]}
            for where, band in zip(ranges, items, strict=True)
        ]
    return pd.DataFrame(rows)


def _file(path: Path, run_id: str) -> None:
    """The tuning file the run followed: what it chooses where, its rules, where it came from
    and a download."""
    record = queries.tuning_file_of(path, run_id)
    st.subheader("The tuning file")
    st.caption(f"`{record.get('file', 'not recorded')}` · SHA-256 `{record.get('file_sha256')}`")
    provenance = record.get("provenance") or {}
    if provenance.get("groups"):
        ui.table(_bands(provenance), key="tuning_bands")
    if record["text"] is None:
        st.info(f"Its text is not shown: {record['why'] or 'the run did not record it'}.")
    else:
        table = json.loads(record["text"])
        with st.expander("The allreduce rules as MPICH reads them"):
            st.code(json.dumps(table.get("collective=allreduce"), indent=1), language="json")
        name = Path(record["file"]).name
        st.download_button("Download the tuning file", record["text"], name, "application/json")
    with st.expander("Where it came from (provenance)"):
        st.json(provenance)


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    runs = queries.runs_table(path)
    tuned = queries.tuned_runs(path)
    if not tuned:
        st.info(HOW_TO)
        return
    run_id = ui.choose_run(runs[runs["run_id"].isin(tuned)])
    grid = queries.run_grid(path, run_id)
    left, right = st.columns(2)
    dtype = ui.choose("Datatype", sorted(grid["dtype"].unique()), "dtype", container=left)
    ops = sorted(grid[grid["dtype"] == dtype]["op"].unique())
    op = ui.choose("Op", ops, "op", container=right)
    scope = queries.Scope(run_id, dtype=dtype, op=op, algorithms=("mpi:tuned", "mpi"))
    ratios = queries.tuning_ratios(path, scope)
    if ratios.empty:
        st.info("This run has no size where both mpi:tuned and mpi were measured.")
        return
    _headline(ratios)
    speedups = ratios.assign(speedup=1 / ratios["ratio"])
    ui.chart(charts.override_figure(speedups, "mpi:tuned"), "tuning_chart")
    st.caption(
        "Speed-up = mpi time / mpi:tuned time from paired rounds of launches (above 1: the "
        "file helps). Triangles down, in the red band: slower, the interval excluding 1."
    )
    ui.table(ratios, key="tuning_ratios")
    _file(path, run_id)


ui.run_page("Tuning", main)
