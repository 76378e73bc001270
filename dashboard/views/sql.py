"""SQL page: read-only queries against the store, with the schema's example queries."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import queries, ui
from runners import store
from runners.domain.units import format_seconds
from runners.store import storefile

OWN = "(your own query)"
ASKED = "_sql_asked"  # set once the user asks for a query to run in this session


def _ask() -> None:
    """Remember that the user asked to run the SQL in the editor."""
    st.session_state[ASKED] = True


def _load_example() -> None:
    """Put the chosen example's SQL into the editor and run it (choosing is asking)."""
    examples = {e.title: e.sql for e in queries.example_queries()}
    chosen = st.session_state.get("ex")
    if chosen in examples:
        st.session_state["sql"] = examples[chosen]
        _ask()


def _match_example() -> None:
    """After an edit (Ctrl+Enter), show the example the SQL still is, and run it."""
    current = st.session_state.get("sql", "").strip()
    titles = {e.sql: e.title for e in queries.example_queries()}
    st.session_state["ex"] = titles.get(current, OWN)
    _ask()


def _editor() -> str:
    """Example picker and SQL editor; the SQL lives in ?q=..."""
    examples = queries.example_queries()
    if "sql" not in st.session_state:
        st.session_state["sql"] = st.query_params.get("q") or examples[0].sql
    titles = [e.title for e in examples]
    if "ex" not in st.session_state:
        current = st.session_state["sql"].strip()
        st.session_state["ex"] = next((e.title for e in examples if e.sql == current), OWN)
    st.selectbox(
        "Example queries (docs/schema.md)", [OWN, *titles], key="ex", on_change=_load_example
    )
    sql = st.text_area(
        "SQL (read-only; Ctrl+Enter runs it)", key="sql", height=220, on_change=_match_example
    )
    st.query_params["q"] = sql
    st.button("Run query", key="run_sql", type="primary", on_click=_ask)
    return sql


def _result(path, sql: str) -> None:
    """Run the SQL and show the table and a CSV download, or the error."""
    try:
        result = queries.run_user_sql(path, sql)
    except store.QueryError as exc:
        st.error(f"Query failed: {exc}")
        return
    more = f"; only the first {len(result.frame)} are shown" if result.truncated else ""
    st.caption(f"{len(result.frame)} rows in {format_seconds(result.seconds)}{more}.")
    ui.table(result.frame, key="sql_result", human=False)
    st.download_button(
        "Download CSV",
        result.frame.to_csv(index=False).encode(),
        file_name="collsweep-query.csv",
        mime="text/csv",
        key="sql_csv",
        on_click="ignore",
    )


MONOSPACE = (
    "<style>textarea[aria-label^='SQL'] {font-family: ui-monospace, 'DejaVu Sans Mono', "
    "monospace; font-size: 0.9rem;}</style>"
)


def _reference() -> None:
    """The tables and their columns, with what each means (docs/schema.md)."""
    tables = queries.schema_reference()
    if not tables:
        return
    with st.expander("Tables and columns"):
        table = st.selectbox("Table", list(tables), key="ref_table")
        rows = tables[table].itertuples(index=False)
        lines = ["| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c}` | {t} | {m.replace('|', '/')} |" for c, t, m in rows]
        st.markdown("\n".join(lines))


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    st.html(MONOSPACE)
    st.caption(
        "Runs on a read-only connection with file access disabled: no writes, no ATTACH, no "
        f"reading other files; stopped after {queries.USER_SQL_TIMEOUT_S:g} s or at the "
        f"{storefile.read_only_config()['memory_limit']} memory limit. Tables: docs/schema.md."
    )
    sql = _editor()
    _reference()
    if not st.session_state.get(ASKED):
        st.info(
            "Press **Run query** (or Ctrl+Enter in the box) to run it: opening a link never "
            "runs its SQL by itself."
        )
    elif sql.strip():
        _result(path, sql)


ui.run_page("SQL", main, allow_empty=True)
