"""Runs page: the runs with their provenance; pick one to inspect or two to compare."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui

COLUMNS = [
    "run_id",
    "name",
    "tags",
    "status",
    "started_at",
    "duration_s",
    "host",
    "library",
    "ranks",
    "dtypes",
    "ops",
    "algorithms",
    "ok",
    "failed",
    "skipped",
    "samples",
    "oversubscribed",
    "code_version",
    "calibration_id",
]
LONG_FIELDS = ("spec_toml", "mpi_library", "environment", "command_line")


def _listed(cell: object) -> set[str]:
    """The values of a comma-separated cell ('2, 3, 4' -> {'2', '3', '4'})."""
    return {part.strip() for part in str(cell or "").split(",") if part.strip()}


def _by_value(runs: pd.DataFrame, cols: Sequence[Any]) -> pd.Series:
    """Host, library and status filters: keep runs whose value is chosen."""
    keep = pd.Series(True, index=runs.index)
    for col, (label, key, column) in zip(
        cols,
        (("Host", "host", "host"), ("Library", "lib", "library"), ("Status", "status", "status")),
        strict=True,
    ):
        values = sorted(runs[column].dropna().astype(str).unique())
        chosen = ui.choose_many(label, values, key, container=col)
        keep &= runs[column].astype(str).isin(chosen) | runs[column].isna()
    return keep


def _by_grid(runs: pd.DataFrame, cols: list) -> pd.Series:
    """Ranks and datatype filters: keep runs that measured any of the chosen ones."""
    keep = pd.Series(True, index=runs.index)
    filters = (("Ranks", "with_ranks", "ranks"), ("Datatypes", "with_dtypes", "dtypes"))
    for col, (label, key, column) in zip(cols, filters, strict=True):
        cells = runs[column].map(_listed)
        values = sorted(set().union(*cells), key=lambda v: (len(v), v)) if len(cells) else []
        chosen = set(ui.choose_many(label, values, key, container=col))
        keep &= cells.map(lambda have, chosen=chosen: not have or bool(have & chosen))
    return keep


def _by_text(runs: pd.DataFrame, col) -> pd.Series:
    """Free-text search over run id, name, tags, command line and code version
    (?search=...)."""
    if "search" not in st.session_state:
        st.session_state["search"] = st.query_params.get("search", "")
    text = col.text_input("Search run id, name, tag, command or code version", key="search")
    if not text:
        st.query_params.pop("search", None)
        return pd.Series(True, index=runs.index)
    st.query_params["search"] = text
    haystack = runs["run_id"] + " " + runs["name"] + " " + runs["tags"]
    haystack += " " + runs["command_line"].fillna("")
    haystack += " " + runs["code_version"].fillna("")
    return haystack.str.contains(text, case=False, regex=False)


def _filtered(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that pass every filter; all filters live in the URL."""
    top, bottom = st.columns(3), st.columns([1, 1, 2])
    keep = _by_value(runs, top) & _by_grid(runs, bottom[:2]) & _by_text(runs, bottom[2])
    return runs[keep]


def _provenance(path, run_id: str) -> None:
    """Every provenance field of one run; long ones (spec, library, environment) below."""
    details = queries.run_details(path, [run_id])
    if details.empty:
        return
    row = details.iloc[0]
    short = {k: str(v) for k, v in row.items() if k not in LONG_FIELDS}
    ui.table(pd.DataFrame({"field": list(short), "value": list(short.values())}))
    left, right = st.columns(2)
    left.markdown("**Sweep specification**")
    left.code(row["spec_toml"] or "", language="toml")
    right.markdown("**Command line**")
    right.code(row["command_line"] or "", language="sh")
    right.markdown("**MPI library**")
    right.code(row["mpi_library"] or "")
    right.markdown("**Environment**")
    right.code(row["environment"] or "{}", language="json")


def _one(path, run_id: str, title: str) -> None:
    """Provenance of the selected run (`title`: as pickers name it) and links to its views."""
    st.subheader(f"Run {title}")
    links = st.columns(4)
    for col, (page, label) in zip(
        links,
        (
            ("views/curves.py", "Curves"),
            ("views/crossovers.py", "Crossovers"),
            ("views/assumptions.py", "Assumptions"),
            ("views/model_fit.py", "Model fit"),
        ),
        strict=True,
    ):
        col.page_link(page, label=f"{label} of this run", query_params={"run": run_id})
    span = queries.time_span_note(path, run_id)
    if span:
        st.info(span[0].upper() + span[1:] + ".", icon=":material/schedule:")
    _machine_state(path, run_id)
    _provenance(path, run_id)


def _machine_state(path, run_id: str) -> None:
    """The machine-state probe over the run's launches, if it recorded any."""
    probes = queries.machine_probes(path, run_id)
    if probes.empty:
        st.caption("No machine-state probes recorded for this run (swept before they existed).")
        return
    st.markdown("**Machine state during the run** (the probe at the start and end of every launch)")
    st.plotly_chart(charts.probes_figure(probes), key="probes_chart")


def _two(path, runs: pd.DataFrame, run_a: str, run_b: str) -> None:
    """How the two selected runs' provenance differs, and a link to compare their timings."""
    st.subheader(f"{ui.run_title_of(runs, run_a)} vs {ui.run_title_of(runs, run_b)}")
    st.page_link(
        "views/compare.py",
        label="Compare their timings",
        icon=":material/difference:",
        query_params={"a": run_a, "b": run_b},
    )
    diff = queries.provenance_diff(path, run_a, run_b)
    if diff.empty:
        st.success("Same provenance: host, library, versions and environment all match.")
    else:
        st.markdown("**Provenance that differs**")
        ui.table(diff)


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    st.caption(
        f"{overview.runs} runs, {overview.points} points, {overview.samples} samples "
        f"(schema {overview.schema_version})"
    )
    runs = _filtered(queries.runs_table(path))
    ui.table(runs[COLUMNS], key="runs_table")
    picked = ui.choose_many(
        "Select one run to inspect, or two to compare",
        runs["run_id"].tolist(),
        "sel",
        default=[],
        max_selections=2,
        format_func=ui.run_label(runs),
    )
    if len(picked) == 1:
        _one(path, picked[0], ui.run_title_of(runs, picked[0]))
    elif len(picked) == 2:
        older, newer = sorted(picked, key=runs.set_index("run_id")["started_at"].get)
        _two(path, runs, older, newer)


ui.run_page("Runs", main)
