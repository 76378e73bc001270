"""Shared test helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    *args: str, timeout: float = 600, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the real `collsweep` console entry point in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "runners.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def cli():
    """The run_cli helper as a fixture."""
    return run_cli
