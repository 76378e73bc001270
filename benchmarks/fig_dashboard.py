"""Figure 4: dashboard data, run as `python benchmarks/dashboard_data.py` when that file exists.

That script belongs to the dashboard's owner; this module only runs it and passes its output
through. Its own report says what it measured and against what.
"""

from __future__ import annotations

import sys

from benchmarks.common import ROOT, Check, Figure, log, run_command

SCRIPT = ROOT / "benchmarks" / "dashboard_data.py"
TIMEOUT_S = 300


def run(quick: bool) -> Figure:
    """Run the dashboard's figure if present; its stdout becomes this figure's table."""
    figure = Figure(4, "Dashboard data", "whatever benchmarks/dashboard_data.py compares against")
    if not SCRIPT.exists():
        figure.notes.append(f"{SCRIPT.relative_to(ROOT)} is not in this checkout: skipped")
        return figure
    log("figure 4: benchmarks/dashboard_data.py")
    argv = [sys.executable, str(SCRIPT)]  # the same in --quick: it takes under a minute
    result = run_command(argv, timeout=TIMEOUT_S)
    figure.table = result.stdout.rstrip("\n").splitlines()
    ok = result.returncode == 0 and not result.timed_out
    status = "timed out" if result.timed_out else f"exit status {result.returncode}"
    figure.checks.append(Check("benchmarks/dashboard_data.py ran", status, "exit status 0", ok))
    if not ok:
        figure.notes += result.stderr.strip().splitlines()[-5:]
    return figure
