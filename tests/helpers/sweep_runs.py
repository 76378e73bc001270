"""Sweeps started from tests and what they left: a spec file, a sweep in the background, its
progress lines, the points it stored, whether its status tells the truth, its ranks."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, processes_with, wait_until

from runners import store
from runners.domain.units import parse_bytes


def write_spec(tmp_path: Path, text: str) -> Path:
    """The spec text as tmp_path/spec.toml."""
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    return spec


def points(db: Path, run_id: str | None = None):
    """Every stored point (of one run if given), in point_id order."""
    where = f"WHERE run_id = '{run_id}'" if run_id else ""
    return store.query(db, f"SELECT * FROM points {where} ORDER BY point_id")


def only_run(db: Path) -> str:
    """The id of the store's one run."""
    return store.query(db, "SELECT run_id FROM runs")["run_id"].item()


# (no launch calibrations: what these sweeps test is how they run, stop and resume)
QUICK = (
    'ranks = [2]\nalgorithms = ["recursive_doubling", "ring", "mpi"]\n'
    "budget_s = 0.05\nmin_iterations = 4\nmax_iterations = 40\nwarmup = 1\n"
    "launch_calibration = false\n"
)


# Every point takes its whole budget, in one launch: the CI target is out of reach at these
# sizes (at a few bytes the clock's resolution can make a 100-sample CI exactly zero wide).
SLOW = (
    'ranks = [2]\nalgorithms = ["recursive_doubling", "ring", "mpi"]\n'
    "budget_s = 0.3\nmin_iterations = 200\nmax_iterations = 2000000\n"
    "target_rel_ci = 0.00001\nwarmup = 1\nlaunches = 1\nlaunch_calibration = false\n"
)


# "[   3/490] L1 p=2   ring        256 KiB float32 sum      70.6 us   ETA 6:50"
PROGRESS = re.compile(r"\] L\d+ p=(\d+)\s+(\S+)\s+([\d.]+ (?:B|KiB|MiB|GiB)) (\S+)\s+(\S+)\s+\S")


def start(db: Path, spec: Path, *extra: str, env: dict | None = None, log: Path | None = None):
    """A sweep in the background, its stderr into ``log`` (read while it runs), a progress line
    per point (--verbose): the events these tests wait for and count."""
    err = open(log or db.with_suffix(".err"), "w")  # noqa: SIM115 - closed by the child's end
    command = ["sweep", str(spec), "--store", str(db), "--verbose", *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "runners.cli", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        env={**os.environ, **(env or {})},
    )


def wait_for_text(log: Path, text: str, limit: float = 120) -> None:
    """Wait until ``text`` appears in the log file."""
    if not wait_until(lambda: log.exists() and text in log.read_text(), limit):
        raise AssertionError(f"{text!r} never appeared in {log}:\n{log.read_text()[-2000:]}")


def hold_store(db: Path, seconds: float) -> subprocess.Popen:
    """Another process holding a read connection on the store (the writer must wait)."""
    code = (
        "import sys, time\nfrom pathlib import Path\nfrom runners import store\n"
        "with store.open_readonly(Path(sys.argv[1]), timeout=120):\n"
        "    print('held', flush=True)\n    time.sleep(float(sys.argv[2]))\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(db), str(seconds)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def reported(log: Path) -> set[tuple]:
    """The points the sweep said it finished (its progress lines); every progress line must
    parse, so a change of their format cannot quietly empty this set."""
    text = log.read_text()
    found = {(int(m[1]), m[2], parse_bytes(m[3]), m[4], m[5]) for m in PROGRESS.finditer(text)}
    lines = sum(1 for line in text.splitlines() if re.match(r"\[\s*\d+/\d+\] L\d", line))
    assert len(PROGRESS.findall(text)) == lines, "a progress line no longer parses"
    return found


def lost_points(db: Path, log: Path) -> int:
    """Points reported finished on the terminal but absent from the store."""
    frame = store.query(db, "SELECT ranks, algorithm, bytes, dtype, op FROM points")
    stored = set(frame.itertuples(index=False, name=None))
    return len(reported(log) - stored)


def status_is_true(db: Path, run_id: str, planned: int) -> bool:
    """complete exactly when every planned point is stored ok or skipped."""
    run = store.get_run(db, run_id)
    good = store.query(
        db,
        "SELECT count(*) n FROM points WHERE run_id = ? AND status IN ('ok', 'skipped')",
        [run_id],
    )["n"].item()
    return (run["status"] == "complete") == (good == planned)


def rank_processes(parent_pid: int) -> list[int]:
    """Processes started for a sweep whose parent was ``parent_pid`` (ranks, launcher)."""
    return processes_with("COLLSWEEP_PARENT_PID", f"{socket.gethostname()}:{parent_pid}")
