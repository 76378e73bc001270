"""Which allreduce algorithm a library ran, from the calls a counting user op received
(tests/mpi_programs/library_fingerprint.py prints them, gathered from every rank)."""

from __future__ import annotations

import json

from conftest import ROOT

from runners.domain import launcher
from runners.jobs import launch


def calls_of(stdout: str) -> dict[int, list[int]]:
    """Per rank, the element counts of each local reduction, from the program's output; every
    rank's result must be right."""
    [line] = [line for line in stdout.splitlines() if line.startswith("[")]
    rows = json.loads(line)
    assert all(row["ok"] for row in rows), rows
    return {row["rank"]: row["calls"] for row in rows}


def mpich_calls(ranks: int, count: int, knobs: dict[str, str]) -> dict[int, list[int]]:
    """The counting op's calls in one MPICH MPI_Allreduce of `count` float64 on `ranks` ranks,
    the library configured by `knobs` (environment read at start-up)."""
    knobs = {
        **launcher.default_knobs(ranks),
        **knobs,
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
    }
    result = launch.run(launch.Job(ranks, "library_fingerprint", [str(count)], knobs), 120)
    assert result.returncode == 0, result.stderr
    return calls_of(result.stdout)
