"""Streamlit helpers shared by the dashboard's pages: the store, URL-synced widgets, badges.

Selections live in the URL: a widget made here starts from its query parameter (when the
value is valid) and writes its value back after every run, so a view can be shared by its
address. The store comes from the session (tests), ``--store`` after ``--`` on the
``streamlit run`` command line, or $COLLSWEEP_STORE / data/collsweep.duckdb.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import badges, queries, run_banners
from dashboard.serve import store_from_args
from runners import store
from runners.domain.sweep.run_labels import run_title
from runners.domain.units import seconds_column

STORE_KEY = "collsweep_store"
LAST_RUN_KEY = "_collsweep_last_run"
COLLECTIVE_HELP = (
    "Each collective's algorithms compete with each other only; sizes mean the whole vector "
    "(allgather, bcast: what every rank holds at the end; reduce_scatter, reduce: at the start)."
)

EMPTY_STORE = (
    "The results store `{path}` holds no runs yet. Run a first sweep (about a minute on two "
    "cores), then reload this page:\n\n"
    "```sh\n.venv/bin/collsweep sweep data/quick.toml --store {path}\n```"
)


# --- the store ---------------------------------------------------------------------------------


def store_path() -> Path:
    """The store to read: session override, then ``--store`` of this app, then the default."""
    override = st.session_state.get(STORE_KEY)
    if override:
        return Path(override)
    return store_from_args(sys.argv) or store.default_store()


def run_page(
    title: str, body: Callable[[Path, queries.Overview], None], allow_empty: bool = False
) -> None:
    """Show the title, then run the page body with the store's path and overview, on one
    shared read connection.

    A missing, corrupt, older or newer store shows st.error with the StoreError text (also
    when the problem appears halfway, e.g. the file was replaced); an empty store explains
    how to run the first sweep, and the body runs anyway only when ``allow_empty``.
    """
    st.title(title)
    path = store_path()
    try:
        with queries.reading(path):
            overview = queries.overview(path)
            if overview.empty:
                st.info(EMPTY_STORE.format(path=path))
                if not allow_empty:
                    return
            body(path, overview)
    except store.StoreError as exc:
        st.error(str(exc))


# --- URL-synced widgets ------------------------------------------------------------------------


def _matching(raw: Any, options: Sequence[Any]) -> Any:
    """The option whose text is ``raw`` (query parameters are strings), or None."""
    if raw is None:
        return None
    return next((o for o in options if str(o) == str(raw)), None)


def _seed(key: str, options: Sequence[Any], default: Any) -> None:
    """Give the widget its starting value: kept if still valid, else the URL's, else default."""
    current = st.session_state.get(key)
    if key in st.session_state and current in options:
        st.session_state[key] = current  # the widget of another page may have owned the key
        return
    from_url = _matching(st.query_params.get(key), options)
    st.session_state[key] = from_url if from_url is not None else default


def choose(
    label: str,
    options: Sequence[Any],
    key: str,
    default: Any = None,
    *,
    kind: str = "selectbox",
    container: Any = None,
    format_func: Callable[[Any], str] = str,
    help: str | None = None,
) -> Any:
    """A selectbox (or horizontal radio with kind='radio') whose value lives in ?key=...

    None when there are no options.
    """
    options = list(options)
    if not options:
        st.query_params.pop(key, None)
        return None
    _seed(key, options, default if default in options else options[0])
    where = container or st
    widget = where.radio if kind == "radio" else where.selectbox
    extra = {"horizontal": True} if kind == "radio" else {}
    value = widget(label, options, key=key, format_func=format_func, help=help, **extra)
    st.query_params[key] = str(value)
    return value


def choose_many(
    label: str,
    options: Sequence[Any],
    key: str,
    default: Sequence[Any] | None = None,
    *,
    container: Any = None,
    format_func: Callable[[Any], str] = str,
    max_selections: int | None = None,
    help: str | None = None,
) -> list[Any]:
    """A multiselect whose values live in repeated ?key=... (absent while at the default)."""
    options = list(options)
    default = list(options if default is None else [d for d in default if d in options])
    current = st.session_state.get(key)
    if not (isinstance(current, list) and all(v in options for v in current)):
        from_url = [_matching(raw, options) for raw in st.query_params.get_all(key)]
        chosen = [v for v in from_url if v is not None]
        st.session_state[key] = (chosen or default)[:max_selections]
    value = (container or st).multiselect(
        label,
        options,
        key=key,
        format_func=format_func,
        max_selections=max_selections,
        help=help,
    )
    if list(value) == default:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = [str(v) for v in value]
    return list(value)


def number(
    label: str,
    key: str,
    default: float,
    *,
    min_value: float,
    max_value: float,
    step: float,
    container: Any = None,
    help: str | None = None,
) -> float:
    """A number input whose value lives in ?key=..."""
    if key not in st.session_state:
        try:
            raw = float(st.query_params.get(key, default))
        except ValueError:
            raw = default
        st.session_state[key] = raw if min_value <= raw <= max_value else default
    value = (container or st).number_input(
        label, min_value=min_value, max_value=max_value, step=step, key=key, help=help
    )
    st.query_params[key] = f"{value:g}"
    return float(value)


def toggle(label: str, key: str, *, container: Any = None, help: str | None = None) -> bool:
    """A toggle whose value lives in ?key=1 (absent when off)."""
    if key not in st.session_state:
        st.session_state[key] = st.query_params.get(key) in ("1", "true", "True")
    value = (container or st).toggle(label, key=key, help=help)
    if value:
        st.query_params[key] = "1"
    else:
        st.query_params.pop(key, None)
    return bool(value)


def run_label(runs: pd.DataFrame) -> Callable[[str], str]:
    """format_func for run ids, the one label of every run picker: 'name (id) [tags] · host ·
    start · status' ('id · host ...' for a run without a name; run_labels.run_title)."""
    info = {
        row.run_id: f"{run_title(row.run_id, row.name, _tags(row.tags))} · {row.host} · "
        f"{str(row.started_at)[:16]} · {row.status}"
        for row in runs.itertuples(index=False)
    }
    return lambda run_id: info.get(run_id, str(run_id))


def run_title_of(runs: pd.DataFrame, run_id: str) -> str:
    """A run of runs_table as headers name it: 'name (id) [tags]', or its id; escaped for
    Markdown (a name is the user's text: `*` or `[...](...)` stay as typed)."""
    rows = runs[runs["run_id"] == run_id]
    if rows.empty:
        return str(run_id)
    title = run_title(run_id, rows["name"].iloc[0], _tags(rows["tags"].iloc[0]))
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", title)


def _tags(cell: object) -> list[str]:
    """The tags of a runs_table cell ('a,b')."""
    return [tag for tag in str(cell or "").split(",") if tag]


def choose_run(
    runs: pd.DataFrame,
    key: str = "run",
    label: str = "Run",
    default: str | None = None,
    container: Any = None,
) -> str:
    """Pick a run (newest first); the last run picked on any page is the default."""
    options = runs["run_id"].tolist()
    fallback = default or st.session_state.get(LAST_RUN_KEY)
    value = choose(
        label,
        options,
        key,
        fallback if fallback in options else options[0],
        container=container,
        format_func=run_label(runs),
    )
    if key == "run":
        st.session_state[LAST_RUN_KEY] = value
    return value


# --- display -----------------------------------------------------------------------------------


def choose_run_with_points(
    path: Path, one_collective: bool = True
) -> tuple[str, pd.DataFrame] | None:
    """Pick a run and return it with its grid (run_grid); None, said so, when it has no points.
    With `one_collective`, a run of several collectives asks which one (?coll=, allreduce
    first) and the grid keeps that one's points only."""
    run_id = choose_run(queries.runs_table(path))
    grid = queries.run_grid(path, run_id)
    if grid.empty:
        st.info("This run has no points yet.")
        return None
    run_banners.show_kind(path, run_id)
    if one_collective:
        _, grid = choose_collective(grid)
    return run_id, grid


def choose_collective(grid: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The collective a page shows (?coll=, allreduce first; a picker only when the run has
    several) and the grid's rows of it."""
    collectives = sorted(grid["collective"].unique(), key=lambda c: (c != "allreduce", c))
    chosen = collectives[0] if collectives else "allreduce"
    if len(collectives) > 1:
        chosen = choose("Collective", collectives, "coll", help=COLLECTIVE_HELP)
    return str(chosen), grid[grid["collective"] == chosen]


def show_verdict(lines: Sequence[str], run_id: str) -> None:
    """The verdict of the view's groups, first thing on the page: per group, winners by size,
    then the pairs where the decided winner changes (measured beside predicted) as a list."""
    if not lines:
        st.caption(f"No verdict yet: `collsweep analyze {run_id}` makes one.")
        return
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith("    ") and blocks:
            blocks[-1].append(f"- {line.strip()}")
        else:
            group, _, answer = line.partition(": ")
            blocks.append([f"**{group}**: {answer}", ""])
    st.markdown("\n\n".join("\n".join(block).rstrip() for block in blocks))


def show_assumptions(
    summary: pd.DataFrame, details: bool = True, over: str = ""
) -> list[badges.Badge]:
    """The view's assumptions as one line (a warning icon when any is violated) that opens onto
    a table of each assumption's state and what it means for the model (details=False: the
    line alone, for a page that shows the table itself). `over` names the points the line
    counts (Scope.words), so two pages that sum different scopes say so."""
    items = badges.badges(summary)
    if not items:
        st.caption("No assumption checks recorded for this view.")
        return items
    broken = bool(badges.violations(items))
    icon = ":material/warning:" if broken else ":material/check_circle:"
    line = badges.headline(items) + (f" (over {over})" if over else "")
    if not details:
        (st.warning if broken else st.success)(line, icon=icon)
        return items
    with st.expander(line, icon=icon):
        table(badges.meaning_table(items), key=None)
    return items


def show_run_assumptions(
    path: Path,
    run_id: str,
    view: pd.DataFrame | None = None,
    words: str = "",
    details: bool = True,
) -> list[badges.Badge]:
    """The run's one assumption line, the same on every page (queries.run_assumptions: the
    stored run-level rows and the run's calibration, named), opening onto what each break
    means; below it, for a page whose view is narrower than the run, what the view's own
    points break (`view`: its assumption_summary, `words`: Scope.words)."""
    found = queries.run_assumptions(path, run_id)
    items = show_assumptions(found.summary, details=details, over=found.words())
    if view is not None:
        line = badges.view_line(badges.badges(view), words, items)
        if line:
            st.caption(line)
    return items


def number_formats(frame: pd.DataFrame) -> dict[str, Any]:
    """Column configs showing every float column with four significant digits (1.25e-06)."""
    return {
        column: st.column_config.NumberColumn(format="%.4g")
        for column in frame.columns
        if pd.api.types.is_float_dtype(frame[column])
    }


BYTE_COLUMNS = ("bytes", "low_bytes", "high_bytes", "min_bytes", "max_bytes")


def human_units(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as people read it: seconds columns (`*_s`) in the unit that suits each, named in
    its header (units.seconds_column: `median (us)`, `duration (s)`);
    per-byte costs (`*_s_per_byte`) in ns/B; byte counts as whole numbers; missing text blank
    instead of None."""
    shown = frame.copy()
    renames = {}
    for column in shown.columns:
        values = shown[column]
        if str(column).endswith("_s") and pd.api.types.is_numeric_dtype(values):
            header, scale = seconds_column(str(column), values.dropna().tolist())
            shown[column] = values / scale
            renames[column] = header
        elif str(column).endswith("_s_per_byte") and pd.api.types.is_float_dtype(values):
            shown[column] = values * 1e9
            renames[column] = f"{str(column)[: -len('_s_per_byte')]} (ns/B)"
        elif column in BYTE_COLUMNS and pd.api.types.is_float_dtype(values):
            shown[column] = values.round().astype("Int64")
        elif pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
            shown[column] = values.fillna("")
    return shown.rename(columns=renames)


def table(frame: pd.DataFrame, key: str | None = None, human: bool = True, **kwargs: Any) -> None:
    """st.dataframe without the index, in human units (human_units; not for a user's own SQL,
    whose columns are as asked), floats to four significant digits; exotic column types fall
    back to text."""
    if human:
        frame = human_units(frame)
    try:
        st.dataframe(frame, hide_index=True, key=key, column_config=number_formats(frame), **kwargs)
    except Exception:  # e.g. a type Arrow cannot convert: show it as text
        st.dataframe(frame.astype(str), hide_index=True, key=key, **kwargs)


def chart(fig: Any, key: str) -> None:
    """A Plotly figure at full width, without the Plotly logo."""
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
