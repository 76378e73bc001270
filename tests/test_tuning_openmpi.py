"""An Open MPI rules file from collsweep's bands is honoured by real Open MPI ranks: the
counting user op shows the algorithm each rule names on both sides of a boundary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from fingerprints import calls_of

from runners.domain import tuning
from runners.domain.libraries.openmpi import LIBRARY as openmpi
from runners.domain.tuning import Band

pytestmark = pytest.mark.mpi

PROGRAM = ROOT / "tests" / "mpi_programs" / "library_fingerprint.py"


def reduction_calls(ranks: int, count: int, rules: Path | None) -> dict[int, list[int]]:
    """Per rank, the element counts Open MPI's MPI_Allreduce passed to a counting user op."""
    assert openmpi.installed(), f"Open MPI is not in {openmpi.prefix()}: run `make install`"
    mca = {}
    if rules is not None:
        mca = dict(zip(tuning.OPENMPI_RULE_KNOBS, ("1", str(rules)), strict=True))
    env = {**os.environ, **openmpi.launch_env()}
    env["PYTHONPATH"] = f"{ROOT / 'tests' / 'mpi_programs'}:{ROOT}"
    argv = [sys.executable, str(PROGRAM), str(count)]
    command = openmpi.command(ranks, argv, exports=["PYTHONPATH"], mca=mca)
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return calls_of(result.stdout)


def test_open_mpi_follows_the_rules_file_on_both_sides_of_a_boundary(tmp_path: Path) -> None:
    """p=4, float64: up to 4 KiB recursive doubling (the full count, twice), above it ring (a
    quarter of the count, three times); without the file Open MPI decides otherwise."""
    rules = tmp_path / "rules.txt"
    per_ranks = {4: [Band(4096, "openmpi:recursive_doubling"), Band(None, "openmpi:ring")]}
    rules.write_text(tuning.openmpi_rules(per_ranks))
    below, above = 256, 1024  # 2 KiB and 8 KiB of float64
    assert reduction_calls(4, below, rules) == {r: [256, 256] for r in range(4)}
    assert reduction_calls(4, above, rules) == {r: [256, 256, 256] for r in range(4)}
    assert reduction_calls(4, above, None) != reduction_calls(4, above, rules)
