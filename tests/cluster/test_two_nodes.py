"""A Slurm of two nodes on this host (tests/helpers/slurm_cluster.py: a slurmd each, inside a
network namespace of their own): srun spreads one rank a node, MPICH sees two nodes, and
`collsweep submit` runs a sweep whose tasks span both, told its ranks per node; the shard
merges into one run whose placement check holds."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, wait_until
from helpers import slurm_cluster

from runners import store

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.mpi,
    pytest.mark.skipif(not slurm_cluster.installed(), reason="slurmctld/munged not installed"),
]

# between the nodes MPICH's TCP transport, on the namespace's loopback (the wheel's UCX would
# find the other "node" is this host and copy through shared memory)
TCP = {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slurm_cluster.SlurmCluster]:
    """Two nodes of one core each, up for the module, stopped (namespace and all) after."""
    cluster = slurm_cluster.SlurmCluster(tmp_path_factory.mktemp("slurm2"), cpus=1, nodes=2)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def _run(cluster: slurm_cluster.SlurmCluster, *words: str) -> subprocess.CompletedProcess:
    """A command inside the cluster's namespace, with its configuration and TCP between nodes."""
    return subprocess.run(
        [*cluster.prefix(), *words],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**cluster.env(), **TCP},
    )


def test_srun_puts_one_rank_on_each_node_and_mpich_sees_two_nodes(
    cluster: slurm_cluster.SlurmCluster,
) -> None:
    code = (
        "import os; from mpi4py import MPI; c = MPI.COMM_WORLD; "
        "local = c.Split_type(MPI.COMM_TYPE_SHARED).Get_size(); "
        "print(c.Get_rank(), os.environ['SLURMD_NODENAME'], local, flush=True)"
    )
    done = _run(cluster, "srun", "--mpi=pmi2", "-N", "2", "-n", "2", sys.executable, "-c", code)
    assert done.returncode == 0, done.stderr + cluster.log_tail()
    ranks = sorted(line.split() for line in done.stdout.splitlines())
    assert ranks == [["0", "n1", "1"], ["1", "n2", "1"]]  # each rank alone on its node


def test_submit_runs_a_sweep_whose_tasks_span_two_nodes(
    cluster: slurm_cluster.SlurmCluster, tmp_path: Path
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'sizes = [8, 4096]\nranks = [2]\nranks_per_node = 1\nalgorithms = ["ring", "mpi"]\n'
        "budget_s = 0.02\nlaunches = 1\nlaunch_calibration = false\n"
    )
    main = tmp_path / "main.duckdb"
    cli = (sys.executable, "-m", "runners.cli")
    submitted = _run(cluster, *cli, "submit", str(spec), "--store", str(main), "--nodes", "2")
    assert submitted.returncode == 0, submitted.stderr + cluster.log_tail()
    job = submitted.stdout.split("submitted job ")[1].split(":")[0]

    def gone() -> bool:
        queue = _run(cluster, "squeue", "-h", "-j", job)
        return queue.returncode == 0 and not queue.stdout.strip()

    [folder] = (tmp_path / "main.duckdb.shards").iterdir()
    logs = lambda: "\n".join(p.read_text()[-2000:] for p in folder.glob("*.out"))  # noqa: E731
    assert wait_until(gone, 240, 0.25), f"job {job} still queued:\n{cluster.log_tail()}"
    merged = _run(cluster, *cli, "merge", "--job", job, "--store", str(main))
    assert merged.returncode == 0, merged.stderr + logs()
    points = store.query(main, "SELECT status, ranks_per_node FROM points")
    assert len(points) == 4 and set(points.status) == {"ok"}
    assert set(points.ranks_per_node) == {1}
    probes = store.query(main, "SELECT node_map, nodes FROM probes")
    assert set(probes.node_map) == {"0,1"} and set(probes.nodes) == {2}
    check = store.query(main, "SELECT state, detail FROM assumptions WHERE name = 'placed_nodes'")
    assert check.state.item() == "holds", check.detail.item()
    verdict = _run(cluster, *cli, "crossovers", folder.name, "--store", str(main), "--summary")
    assert "nodes of 1 rank (block), placed by the cluster's launcher" in verdict.stdout
