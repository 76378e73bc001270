"""Pieces every figure shares: checks and figures, MPI jobs with JSON output, tables, stats."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runners.domain.sweep import launcher
from runners.host.machine import physical_cores
from runners.jobs import launch

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "benchmarks" / "build"
KIB, MIB = 2**10, 2**20


@dataclass(frozen=True)
class Check:
    """One target of a figure: what was measured against what was wanted.

    `ok` is None for a number reported without a target.
    """

    name: str
    value: str
    target: str
    ok: bool | None

    @property
    def verdict(self) -> str:
        """PASS, MISS or INFO."""
        return "INFO" if self.ok is None else ("PASS" if self.ok else "MISS")


@dataclass
class Figure:
    """A figure's result: its table, its checks and notes, and how long it took."""

    number: int
    title: str
    baseline: str
    table: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""


class JobFailed(RuntimeError):
    """An MPI job of a figure exited badly or timed out."""


def worker_knobs(ranks: int, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """collsweep's default knobs for `ranks`, plus the repository on PYTHONPATH for workers."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    knobs = launcher.default_knobs(ranks, cores=physical_cores())
    return {**knobs, "PYTHONPATH": path, **(extra or {})}


def json_lines(text: str) -> list[dict]:
    """Every line of `text` that is a JSON object, decoded."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def run_python_job(
    ranks: int,
    module: str,
    args: Sequence[str] = (),
    knobs: Mapping[str, str] | None = None,
    timeout: float = 300.0,
) -> list[dict]:
    """Run `python -m module args` on `ranks` ranks; the JSON lines rank 0 printed."""
    job = launch.Job(ranks, module, list(args), worker_knobs(ranks, knobs))
    return _checked(launch.run(job, timeout), f"{module} on {ranks} ranks")


def run_command(
    argv: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 300.0
) -> launch.JobResult:
    """Run a plain command (no Python wrapper) in its own process group, with a timeout."""
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        return launch.JobResult(proc.returncode, out, err, timed_out=False)
    except subprocess.TimeoutExpired:
        launch.kill_group(proc)
        out, err = proc.communicate()
        return launch.JobResult(proc.returncode, out, err, timed_out=True)
    except BaseException:
        launch.kill_group(proc)
        proc.communicate()
        raise


def checked_lines(result: launch.JobResult, what: str) -> list[dict]:
    """The JSON lines of a finished command; JobFailed if it failed or timed out."""
    return _checked(result, what)


def _checked(result: launch.JobResult, what: str) -> list[dict]:
    if result.timed_out or result.returncode != 0:
        tail = " | ".join(result.stderr.strip().splitlines()[-4:])
        why = "timed out" if result.timed_out else f"exited with {result.returncode}"
        raise JobFailed(f"{what} {why}: {tail}")
    return json_lines(result.stdout)


def venv_tool(name: str) -> str:
    """A tool the mpich wheel installs beside this Python (mpiexec, mpicc), else from PATH."""
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def median(values: Iterable[float]) -> float:
    """The median of some numbers."""
    return statistics.median(list(values))


def us(seconds: float) -> str:
    """Seconds as microseconds with sensible digits."""
    value = seconds * 1e6
    return f"{value:.2f}" if value < 100 else f"{value:.1f}" if value < 10_000 else f"{value:.0f}"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A plain text table, right-aligned columns, as lines."""
    body = [[str(cell) for cell in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headers)
    ]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return [fmt.format(*headers), fmt.format(*("-" * w for w in widths))] + [
        fmt.format(*row) for row in body
    ]


def log(message: str) -> None:
    """Progress on stderr, so the report on stdout stays clean."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def median_time(work: Callable[[], object], repeat: int, warmup: bool = True) -> float:
    """Median wall time of ``work`` over ``repeat`` calls (after one warm-up call unless
    ``warmup`` is False: for work too long to do once more for nothing)."""
    if warmup:
        work()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)
