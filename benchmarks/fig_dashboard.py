"""Figure 4: dashboard data, run as `python benchmarks/dashboard_data.py` when that file exists.

That script belongs to the dashboard's owner; this module only runs it and passes its output
through. Its own report says what it measured and against what. A smoke run hands it a small
synthetic store of the same runs, one repeat and no whole-page (AppTest) runs.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from benchmarks.common import ROOT, Figure, JobFailed, log, run_command
from benchmarks.mode import Mode

SCRIPT = ROOT / "benchmarks" / "dashboard_data.py"
TIMEOUT_S = 300
# The smoke store: dashboard_data.py's runs on a grid that still has its views' group size (3),
# a hand-written algorithm and the two its override page compares (mpi:ring against mpi).
SMOKE_GRID = {
    "ranks": (2, 3),
    "sizes": (8, 65536),
    "algorithms": ("ring", "mpi", "mpi:ring"),
    "samples": 4,
    "launches": 2,
}


def smoke_store(folder: Path) -> Path:
    """A small synthetic store with the runs and calibration dashboard_data.py reads."""
    from benchmarks import dashboard_data  # imports tests/helpers/synthetic.py, a test fixture

    path = folder / "smoke.duckdb"
    specs = [replace(spec, **SMOKE_GRID) for spec in dashboard_data.specs(0)]
    dashboard_data.synthetic.build_store(path, specs)
    return path


def script_args(mode: Mode, folder: Path) -> list[str]:
    """The script's options: its defaults, or a small store and one repeat in a smoke run."""
    if mode is not Mode.SMOKE:
        return []  # the same in --quick: it takes under a minute
    return ["--store", str(smoke_store(folder)), "--repeat", "1", "--no-app", "--examples", "1"]


def run(mode: Mode) -> Figure:
    """Run the dashboard's figure if present; its stdout becomes this figure's table.

    JobFailed when the script fails or times out.
    """
    figure = Figure(4, "Dashboard data", "whatever benchmarks/dashboard_data.py compares against")
    if not SCRIPT.exists():
        figure.notes.append(f"{SCRIPT.relative_to(ROOT)} is not in this checkout: skipped")
        return figure
    log("figure 4: benchmarks/dashboard_data.py")
    with tempfile.TemporaryDirectory(prefix="collsweep-bench-") as folder:
        argv = [sys.executable, str(SCRIPT), *script_args(mode, Path(folder))]
        result = run_command(argv, timeout=TIMEOUT_S)
    if result.returncode != 0 or result.timed_out:
        status = "timed out" if result.timed_out else f"exited with {result.returncode}"
        tail = " | ".join(result.stderr.strip().splitlines()[-5:])
        raise JobFailed(f"benchmarks/dashboard_data.py {status}: {tail}")
    figure.table = result.stdout.rstrip("\n").splitlines()
    return figure
