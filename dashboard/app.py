"""The collsweep dashboard's pages; `collsweep dashboard` serves them on 127.0.0.1.

`collsweep dashboard` (dashboard.serve.serve) runs dashboard/asgi.py, which puts this app
behind a Host-header check; started by hand (``streamlit run dashboard/app.py``) it warns on
every page unless served on loopback with that check. Every page reads the
store through short read-only connections (dashboard.queries). The page scripts live in
dashboard/views/, not dashboard/pages/: Streamlit treats a pages/ folder beside the main
script as a legacy multipage app and, on a server's first request, runs a deep-linked page
from that folder without this script (no navigation, no page config). The Modular lab, which
does not read the store, lives apart in dashboard/lab/ (its pure logic and its page).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import streamlit as st

try:
    from dashboard import hostcheck, ui
except ModuleNotFoundError:  # a checkout that is not pip-installed: add the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from dashboard import hostcheck, ui

# (script, title, url path, icon)
PAGES = (
    ("views/verdict.py", "Verdict", "verdict", ":material/emoji_events:"),
    ("views/runs.py", "Runs", "runs", ":material/table_rows:"),
    ("views/curves.py", "Curves", "curves", ":material/show_chart:"),
    ("views/crossovers.py", "Crossovers", "crossovers", ":material/compare_arrows:"),
    ("views/scale.py", "Scale", "scale", ":material/lan:"),
    ("views/assumptions.py", "Assumptions", "assumptions", ":material/fact_check:"),
    ("views/override.py", "Override impact", "override", ":material/tune:"),
    ("views/tuning.py", "Tuning", "tuning", ":material/settings_suggest:"),
    ("views/workload.py", "Workload", "workload", ":material/work:"),
    ("views/model_fit.py", "Model fit", "model-fit", ":material/functions:"),
    ("views/compare.py", "Compare runs", "compare", ":material/difference:"),
    ("views/placements.py", "Placements", "placements", ":material/lan:"),
    ("views/parameters.py", "Parameters", "parameters", ":material/tune:"),
    ("views/sql.py", "SQL", "sql", ":material/terminal:"),
    ("lab/page.py", "Modular lab", "modular-lab", ":material/science:"),
)


def main() -> None:
    """Configure the page, register the navigation and run the chosen page."""
    st.set_page_config(page_title="collsweep", page_icon=":material/hub:", layout="wide")
    pages = [
        st.Page(script, title=title, url_path=url, icon=icon, default=i == 0)
        for i, (script, title, url, icon) in enumerate(PAGES)
    ]
    page = st.navigation(pages, expanded=True)  # every page listed, no "View more"
    st.sidebar.caption(f"Store: `{ui.store_path()}`")
    exposed = hostcheck.exposure_warning(
        st.get_option("server.address"),
        st.context.headers.get("Host", ""),
        os.environ.get(hostcheck.HOST_CHECK_ENV) == "on",
    )
    if exposed:
        st.warning(exposed, icon=":material/public:")
    page.run()


main()
