"""Printing the benchmark report: a header with the machine, each figure, and a summary."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Iterable
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

from benchmarks.common import ROOT, Figure
from runners.host.machine import cpu_model, hostname, physical_cores

RULE = "=" * 100


def package_version(name: str) -> str:
    """An installed distribution's version, or '?'."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def code_version() -> str:
    """The checkout's commit, '+dirty' when tracked files differ (read-only git calls)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head}{'+dirty' if dirty else ''}" if head else "unknown"


def header(mode: str) -> list[str]:
    """Who, where and with what this report was measured."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return [
        RULE,
        f"collsweep benchmarks ({mode} run, {stamp})",
        f"host {hostname()}: {cpu_model()}, {physical_cores()} physical cores; "
        f"Python {platform.python_version()}, mpich wheel {package_version('mpich')}, "
        f"mpi4py {package_version('mpi4py')}, numpy {package_version('numpy')}; "
        f"code {code_version()}",
        "each figure is a ratio against a baseline measured in the same run; "
        "PASS/MISS against the issue's targets, INFO where there is none",
        RULE,
    ]


def figure_lines(figure: Figure, load: tuple[float, float]) -> list[str]:
    """One figure: title, baseline, table, checks, notes."""
    before, during = load
    lines = [
        f"Figure {figure.number}: {figure.title}  [{figure.seconds:.0f} s; other processes kept "
        f"{before:.1f} cores busy before, {during:.1f} during]",
        f"  baseline: {figure.baseline}",
    ]
    if figure.error:
        return [*lines, f"  ERROR: {figure.error}", ""]
    lines += [f"  {line}" for line in figure.table]
    if figure.checks:
        lines.append("  checks:")
        width = max(len(c.name) for c in figure.checks)
        lines += [
            f"    {c.verdict:<4}  {c.name:<{width}}  {c.value:>26}  target {c.target}"
            for c in figure.checks
        ]
    lines += [f"  note: {note}" for note in figure.notes]
    if during > 0.5:
        lines.append(
            f"  note: other processes kept {during:.1f} of {physical_cores()} cores busy while "
            "this figure ran: its times are slower and noisier than on a quiet machine"
        )
    return [*lines, ""]


def summary(figures: Iterable[Figure], total_s: float) -> list[str]:
    """Counts of PASS/MISS/INFO, and every MISS and error by name."""
    figures = list(figures)
    checks = [(f.number, c) for f in figures for c in f.checks]
    counts = {v: sum(c.verdict == v for _, c in checks) for v in ("PASS", "MISS", "INFO")}
    lines = [
        RULE,
        f"summary: {counts['PASS']} PASS, {counts['MISS']} MISS, {counts['INFO']} INFO "
        f"in {len(figures)} figures, {total_s / 60:.1f} min",
    ]
    lines += [
        f"  MISS figure {n}: {c.name}: {c.value} (target {c.target})"
        for n, c in checks
        if c.verdict == "MISS"
    ]
    lines += [f"  ERROR figure {f.number}: {f.error}" for f in figures if f.error]
    return [*lines, RULE]
