"""Tuning page: does the library, following a collsweep tuning file (its tuned entry: mpi:tuned,
openmpi:tuned, impi:tuned), beat its own autotuned choice at every validated size? Where it is
slower, it says so in red."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import ALGORITHMS, autotuned_of
from runners.domain.libraries.mpich_tuning import MPICH_COLLECTIVES
from runners.domain.libraries.tuning import band_ranges
from runners.domain.units import counted, format_bytes

HOW_TO = (
    "No run has timed a tuned entry (**mpi:tuned**, **openmpi:tuned**, **impi:tuned**) yet. "
    "Make a tuning file from a run and validate it between the swept sizes:\n\n"
    "```\ncollsweep tune RUN --library mpich --out tuned.json --validate-spec validate.toml\n"
    "collsweep sweep validate.toml\n```"
)


def _headline(ratios: pd.DataFrame, tuned: str, default: str) -> None:
    """One line: where tuned is slower (red), else where it is faster."""
    slower = ratios[ratios["verdict"] == "slower"]
    faster = int((ratios["verdict"] == "faster").sum())
    sizes = counted(len(ratios), "validated size")
    if len(slower):
        where = ", ".join(f"p={r.ranks} {format_bytes(r.bytes)}" for r in slower.itertuples())
        st.error(
            f"{tuned} is slower than the autotuned {default} (decided by the paired launches) "
            f"at {len(slower)} of {sizes}: {where}. An override can improve one point and "
            "worsen the rest.",
            icon=":material/trending_down:",
        )
    else:
        st.success(
            f"{tuned} is nowhere slower than the autotuned {default} (decided by the paired "
            f"launches, {sizes}); faster at {faster}.",
            icon=":material/check_circle:",
        )


def _bands(provenance: dict) -> pd.DataFrame:
    """The file's choices per group size, from its provenance: size range and algorithm."""
    rows = []
    for collective, tuned in (provenance.get("collectives") or {}).items():
        for ranks, group in (tuned.get("groups") or {}).items():
            items = group.get("bands", [])
            ranges = band_ranges([band["upto_bytes"] for band in items])
            rows += [
                {
                    "collective": collective,
                    "ranks": int(ranks),
                    "sizes": where,
                    "algorithm": band["algorithm"],
                }
                for where, band in zip(ranges, items, strict=True)
            ]
    return pd.DataFrame(rows)


def _rules(text: str, title: str, collective: str) -> None:
    """The file's rules of a collective as the library reads them: MPICH's subtree of it,
    Intel MPI's whole tree, Open MPI's rules text."""
    try:
        table = json.loads(text)
    except ValueError:
        table = None
    with st.expander(f"The {collective} rules as {title} reads them"):
        if isinstance(table, dict):
            shown = table.get(MPICH_COLLECTIVES[collective].key, table)
            st.code(json.dumps(shown, indent=1), language="json")
        else:
            st.code(text, language="text")


def _file(path: Path, run_id: str, title: str, collective: str) -> None:
    """The tuning file the run followed: what it chooses where, its rules, where it came from
    and a download."""
    record = queries.tuning_file_of(path, run_id)
    st.subheader("The tuning file")
    st.caption(f"`{record.get('file', 'not recorded')}` · SHA-256 `{record.get('file_sha256')}`")
    provenance = record.get("provenance") or {}
    if provenance.get("collectives"):
        ui.table(_bands(provenance), key="tuning_bands")
    if record["text"] is None:
        st.info(f"Its text is not shown: {record['why'] or 'the run did not record it'}.")
    else:
        _rules(record["text"], title, collective)
        name = Path(record["file"]).name
        st.download_button("Download the tuning file", record["text"], name, "text/plain")
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
    entries = queries.tuned_entries(path, run_id)
    grid = queries.run_grid(path, run_id)
    collective, grid = ui.choose_collective(grid[grid["collective"].isin(list(entries))])
    entry = entries[collective]
    library = LIBRARIES[ALGORITHMS[entry].runs_on]
    default = autotuned_of(library.name, collective)
    left, right = st.columns(2)
    dtype = ui.choose("Datatype", sorted(grid["dtype"].unique()), "dtype", container=left)
    ops = sorted(grid[grid["dtype"] == dtype]["op"].unique())
    op = ui.choose("Op", ops, "op", container=right)
    scope = queries.Scope(
        run_id, dtype=dtype, op=op, algorithms=(entry, default), collective=collective
    )
    ratios = queries.tuning_ratios(path, scope, entry)
    if ratios.empty:
        st.info(f"This run has no size where both {entry} and {default} were measured.")
        return
    _headline(ratios, entry, default)
    ui.chart(charts.override_figure(ratios, entry, default), "tuning_chart")
    st.caption(
        f"Speed-up = {default} time / {entry} time from paired rounds of launches "
        f"({library.title}; above 1: the file helps). Triangles down, in the red band: slower, "
        "the interval excluding 1."
    )
    ui.table(queries.readable(ratios), key="tuning_ratios")
    _file(path, run_id, library.title, collective)


ui.run_page("Tuning", main)
