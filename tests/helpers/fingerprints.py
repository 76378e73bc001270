"""Which allreduce algorithm a library ran, from the calls a counting user op received
(tests/mpi_programs/library_fingerprint.py prints them, gathered from every rank)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import ROOT

from runners.domain.collectives.schedule import Schedule
from runners.domain.sweep import launcher
from runners.domain.sweep.job_file import SweepJob
from runners.domain.sweep.plan import plan_groups
from runners.domain.sweep.records import TimingPolicy
from runners.domain.sweep.spec import parse_spec
from runners.host.machine import physical_cores
from runners.jobs import launch


def calls_of(stdout: str) -> dict[int, list[int]]:
    """Per rank, the element counts of each local reduction, from the program's output; every
    rank's result must be right."""
    [line] = [line for line in stdout.splitlines() if line.startswith("[")]
    rows = json.loads(line)
    assert all(row["ok"] for row in rows), rows
    return {row["rank"]: row["calls"] for row in rows}


def mpich_calls(
    ranks: int, count: int, knobs: dict[str, str], collective: str = "allreduce"
) -> dict[int, list[int]]:
    """The counting op's calls in one MPICH MPI_Allreduce (or `collective`: reduce,
    reduce_scatter) of `count` float64 on `ranks` ranks, the library configured by `knobs`
    (environment read at start-up)."""
    knobs = {
        **launcher.default_knobs(ranks, cores=physical_cores()),
        **knobs,
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
    }
    argv = [str(count), collective]
    result = launch.run(launch.Job(ranks, "library_fingerprint", argv, knobs), 120)
    assert result.returncode == 0, result.stderr
    return calls_of(result.stdout)


def planned_calls(
    library: str,
    ranks: int,
    count: int,
    algorithms: tuple[str, ...],
    how: str = "runtime",
    planned: int = 0,
    collective: str = "allreduce",
) -> dict[str, dict[int, list[int]]]:
    """Per algorithm, per rank, the element counts of each local reduction in one allreduce of
    `count` float64 on `library`'s ranks, every algorithm in the job and on the communicator
    the sweep's plan and ranks make for it (`how`: the spec's library_switching; the plan made
    for `planned` elements, where the sweep would not skip them; `collective`: reduce or
    reduce_scatter instead of allreduce); every result must be right."""
    size = (planned or count) * 8
    text = f"sizes=[{size}]\nranks=[{ranks}]\ndtypes=['float64']\nalgorithms={list(algorithms)}"
    spec = parse_spec(text + f"\nlibraries=['{library}']\nlibrary_switching='{how}'")
    out = {}
    for group in plan_groups(spec, "x", switching=how, cores=physical_cores()):
        payload = SweepJob("x", 0, group.library, group.switches, (group.cells[0],), TimingPolicy())
        knobs = {**group.knobs, "PYTHONPATH": f"{ROOT / 'tests' / 'mpi_programs'}:{ROOT}"}
        with launch.job_file(payload) as path:
            argv = [str(count), path, collective]
            job = launch.Job(ranks, "sweep_fingerprints", argv, knobs, library=library)
            result = launch.run(job, 120)
        assert result.returncode == 0, result.stderr
        [line] = [line for line in result.stdout.splitlines() if line.startswith("{")]
        for algorithm, rows in json.loads(line).items():
            assert all(row["ok"] for row in rows), (algorithm, rows)
            out[algorithm] = {row["rank"]: row["calls"] for row in rows}
    return out


Sends = dict[int, dict[int, tuple[int, int]]]  # rank -> peer -> (messages, bytes)
MONITORED = re.compile(r"I\t(\d+)\t(\d+)\t(\d+) bytes\t(\d+) msgs sent")


def openmpi_sends(ranks: int, count: int, knobs: dict[str, str], folder: Path) -> Sends:
    """Per rank, the messages and bytes Open MPI sent to each peer in one MPI_Bcast of `count`
    float64 from rank 0 (tests/mpi_programs/one_bcast.py), as its pml/monitoring counts them
    (its internal, collective-made messages), the library configured by `knobs`."""
    knobs = {
        **launcher.default_knobs(ranks, cores=physical_cores()),
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
        "OMPI_MCA_pml_monitoring_enable": "2",  # user and internal messages apart
        "OMPI_MCA_pml_monitoring_enable_output": "3",  # a file per rank at MPI_Finalize
        "OMPI_MCA_pml_monitoring_filename": str(folder / "prof"),
        **knobs,
    }
    job = launch.Job(ranks, "one_bcast", [str(count)], knobs, library="openmpi")
    result = launch.run(job, 120)
    assert result.returncode == 0, result.stderr
    sends: Sends = {}
    for profile in folder.glob("prof*"):
        for found in MONITORED.finditer(profile.read_text()):
            rank, peer, nbytes, messages = map(int, found.groups())
            sends.setdefault(rank, {})[peer] = (messages, nbytes)
    return sends


def schedule_sends(schedule: Schedule, ranks: int, count: int, itemsize: int = 8) -> Sends:
    """Per rank, the messages and bytes `schedule` sends to each peer for `count` elements."""
    sends: Sends = {}
    for rank in range(ranks):
        for step in schedule(rank, ranks, count):
            if step.send_to is not None and step.send is not None:
                messages, nbytes = sends.setdefault(rank, {}).get(step.send_to, (0, 0))
                sends[rank][step.send_to] = (messages + 1, nbytes + step.sent * itemsize)
    return sends
