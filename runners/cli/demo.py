"""`collsweep demo`: what `make demo` runs before it opens the dashboard, a line a step.

Each step is one of collsweep's own commands, its whole output kept in a log file under
--logs; the terminal gets what the step did in one line (the run it made, its points, its
time), the workload's answer once, and last the quick sweep's verdict, so that the newest run,
the one the dashboard opens on, is the sweep the README describes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from runners import store
from runners.cli.common import add_store_option, store_path
from runners.domain.units import counted, format_duration, wrapped
from runners.process.children import python
from runners.store import across_runs

DATA = Path(__file__).resolve().parents[2] / "data"  # the presets beside the code


@dataclass(frozen=True)
class Step:
    """One command of the demo: what it does, in words, and its arguments."""

    doing: str
    argv: tuple[str, ...]
    shows: str = ""  # "output": print the command's output; "verdict": the run's verdict


def demo_steps(stamp: str, db: Path) -> list[Step]:
    """The demo's commands, in order; `stamp` names its workload run."""
    job = f"demo-workload-{stamp}"
    where = ("--store", str(db))
    return [
        Step(
            "sweeping the preset job's calls (data/workload.json) on real ranks",
            ("sweep", str(DATA / "quick.toml"), "--workload", str(DATA / "workload.json"),
             "--dedicated", "--run-id", job, *where),
        ),
        Step(
            "the job under each policy, its calls replayed in 3 launches",
            ("workload", "report", str(DATA / "workload.json"), "--run", job, "--replay",
             "--launches", "3", *where),
            shows="output",
        ),
        Step(
            "simulating allreduce at 8 to 1024 ranks in SimGrid (data/scale.toml)",
            ("simulate", str(DATA / "scale.toml"), *where),
        ),
        Step(
            "the quick sweep (data/quick.toml): every algorithm, 8 B to 2 MiB",
            ("sweep", str(DATA / "quick.toml"), "--dedicated", *where),
            shows="verdict",
        ),
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the demo's steps, a line each; exit 1 (with the step's last lines) when one fails."""
    db, logs = store_path(args), Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    steps = demo_steps(datetime.now(UTC).strftime("%Y%m%d-%H%M%S"), db)
    for number, step in enumerate(steps, 1):
        log = logs / f"{number}-{step.argv[0]}.log"
        print(f"[{number}/{len(steps)}] {step.doing} ...", flush=True)
        before = _run_ids(db)
        started = time.monotonic()
        done = _run_logged(step.argv, log)
        if done.returncode != 0:
            tail = log.read_text(errors="replace").splitlines()[-8:]
            print("\n".join(["    " + line for line in tail]), file=sys.stderr)
            print(f"collsweep demo: step {number} failed (exit {done.returncode}); see {log}")
            return 1
        made = sorted(_run_ids(db) - before)
        said = _made(db, made, time.monotonic() - started, log)
        print(wrapped(f"    {said}"), flush=True)
        _show(step, db, made, log)
    print(f"store: {db}; logs: {logs}")
    return 0


def _run_logged(argv: tuple[str, ...], log: Path) -> subprocess.CompletedProcess:
    """One collsweep command, stdout and stderr into `log`."""
    with log.open("w") as out:
        return subprocess.run(python("-m", "runners.cli", *argv), stdout=out, stderr=out)


def _run_ids(db: Path) -> set[str]:
    return set(across_runs.run_ids(db))


def _made(db: Path, made: list[str], seconds: float, log: Path) -> str:
    """The step's line: the run it made, its status and points, its time, its log."""
    took = f"{format_duration(seconds)}, log {log}"
    if not made:
        return f"done in {took}"
    run_id = made[-1]
    points = len(store.point_ids(db, run_id))
    status = (store.get_run(db, run_id) or {}).get("status", "?")
    return f"run {run_id}: {status}, {counted(points, 'point')} in {took}"


def _show(step: Step, db: Path, made: list[str], log: Path) -> None:
    """What the step shows beyond its line: its output, or its run's verdict."""
    if step.shows == "output":
        print("\n".join("    " + line for line in log.read_text().splitlines()), flush=True)
    if step.shows == "verdict" and made:
        verdict = python("-m", "runners.cli", "crossovers", made[-1], "--summary",
                         "--store", str(db))  # fmt: skip
        subprocess.run(verdict, check=False)


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "demo",
        help="what `make demo` runs: a workload, a simulation and the quick sweep, a line a step",
        description="Sweep the preset job's calls and report the job under each policy, "
        "simulate allreduce at 8 to 1024 ranks, then run the quick sweep and print its "
        "verdict: a line a step, each command's whole output in a log file. Takes a few "
        "minutes on a 2-core machine; then `collsweep dashboard` opens on the quick sweep.",
    )
    parser.add_argument(
        "--logs", default="data/demo-logs", help="folder for the steps' logs (data/demo-logs)"
    )
    add_store_option(parser)
    parser.set_defaults(handler=run)
