"""Sweeps under a real one-node Slurm (tests/helpers/slurm_cluster.py): srun as the launcher."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, HeldPoint, wait_until
from helpers import slurm_cluster

from runners import store

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.mpi,
    pytest.mark.skipif(not slurm_cluster.installed(), reason="slurmctld/munged not installed"),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slurm_cluster.SlurmCluster]:
    """A one-node cluster of this host, up for the module, its daemons stopped afterwards."""
    cluster = slurm_cluster.SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def _cli(
    cluster: slurm_cluster.SlurmCluster,
    *args: str,
    prefix: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """`collsweep ARGS` run against the cluster (under `prefix`, e.g. salloc, if given), with
    `env` added to its environment (a job passes it on to its tasks)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "runners.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**cluster.env(), **(env or {})},
    )


def test_the_cluster_runs_mpi_ranks_through_srun(cluster: slurm_cluster.SlurmCluster) -> None:
    """srun --mpi=pmi2 starts MPICH ranks that find each other (PMI-2)."""
    code = (
        "from mpi4py import MPI; import numpy as np; c = MPI.COMM_WORLD; r = np.zeros(1); "
        "c.Allreduce(np.ones(1), r); print(c.Get_size(), int(r[0]))"
    )
    result = subprocess.run(
        ["srun", "--mpi=pmi2", "-n", "2", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=cluster.env(),
    )
    assert result.returncode == 0, result.stderr + cluster.log_tail()
    assert result.stdout.split("\n")[:2] == ["2 2", "2 2"]


def test_a_sweep_with_srun_as_its_launcher_stores_every_point(
    cluster: slurm_cluster.SlurmCluster, tmp_path: Path
) -> None:
    db = tmp_path / "s.duckdb"
    args = ["--sizes", "8,4096", "--ranks", "2", "--algorithms", "ring,mpi", "--budget-s", "0.05"]
    args += ["--launches", "2", "--launcher", "srun --mpi=pmi2 -n {ranks}", "--store", str(db)]
    result = _cli(cluster, "sweep", *args)
    assert result.returncode == 0, result.stderr[-3000:] + cluster.log_tail()
    points = store.query(db, "SELECT status, launches FROM points")
    assert len(points) == 4 and set(points.status) == {"ok"} and set(points.launches) == {2}
    assert store.query(db, "SELECT status FROM runs").status.item() == "complete"
    jobs = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=cluster.env())
    assert jobs.returncode == 0 and jobs.stdout.strip() == ""  # no step left behind


def test_a_sweep_inside_an_allocation_takes_single_node_from_it(
    cluster: slurm_cluster.SlurmCluster, tmp_path: Path
) -> None:
    """salloc -N1: the run records the allocation (SLURM_ variables) and single_node holds
    from the ranks' own host names, naming the job, where the srun launcher's text alone
    leaves it unknown; every probe says one host."""
    db = tmp_path / "s.duckdb"
    sweep = ["sweep", "--sizes", "8", "--ranks", "2", "--algorithms", "ring", "--budget-s"]
    sweep += ["0.02", "--launches", "1", "--launcher", "srun --mpi=pmi2 -n {ranks}"]
    result = _cli(cluster, *sweep, "--store", str(db), prefix=("salloc", "-N1", "-n2"))
    assert result.returncode == 0, result.stderr[-3000:] + cluster.log_tail()
    check = store.query(db, "SELECT state, detail FROM assumptions WHERE name = 'single_node'")
    assert check.state.item() == "holds" and "Slurm job" in check.detail.item()
    assert f"({cluster.host})" in check.detail.item()
    placement = store.query(db, "SELECT DISTINCT nodes, ranks_per_node, hosts FROM probes")
    assert placement.to_dict("records") == [
        {"nodes": 1, "ranks_per_node": 2, "hosts": cluster.host}
    ]


def _wait_for_job(cluster: slurm_cluster.SlurmCluster, job: str, limit_s: float = 240) -> None:
    """Until the job has left the queue (bounded)."""

    def gone() -> bool:
        queue = subprocess.run(
            ["squeue", "-h", "-j", job], capture_output=True, text=True, env=cluster.env()
        )
        return queue.returncode == 0 and not queue.stdout.strip()

    if not wait_until(gone, limit_s, 0.25):
        pytest.fail(f"job {job} still queued after {limit_s:g} s:\n{cluster.log_tail()}")


def test_submit_runs_one_task_per_group_into_shards_of_one_run(
    cluster: slurm_cluster.SlurmCluster, tmp_path: Path
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'sizes = [8, 64]\nranks = [1, 2]\nalgorithms = ["ring", "mpi"]\n'
        "budget_s = 0.02\nlaunches = 1\nlaunch_calibration = false\n"
    )
    main = tmp_path / "main.duckdb"
    result = _cli(cluster, "submit", str(spec), "--store", str(main))
    assert result.returncode == 0, result.stderr + cluster.log_tail()
    job = result.stdout.split("submitted job ")[1].split(":")[0]
    assert f"collsweep merge --job {job}" in result.stdout
    _wait_for_job(cluster, job)
    [folder] = (tmp_path / "main.duckdb.shards").iterdir()
    shards = sorted(folder.glob(f"{job}_*.duckdb"))
    logs = "\n".join(p.read_text()[-1500:] for p in folder.glob("*.out"))
    assert len(shards) == 2, logs
    for task, shard in enumerate(shards):
        run = store.query(shard, "SELECT run_id, status, environment FROM runs")
        assert run.run_id.item() == folder.name and run.status.item() == "complete", logs
        inherited = json.loads(run.environment.item())["inherited"]
        assert inherited["SLURM_ARRAY_JOB_ID"] == job
        assert inherited["SLURM_ARRAY_TASK_ID"] == str(task)
        assert inherited["SLURM_JOB_NODELIST"] == cluster.host
        points = store.query(shard, "SELECT ranks, status FROM points")
        assert set(points.ranks) == {(1, 2)[task]} and set(points.status) == {"ok"}
    assert not main.exists()  # the tasks never write the main store
    merged = _cli(cluster, "merge", "--job", job, "--store", str(main))
    assert merged.returncode == 0, merged.stderr
    assert f"run {folder.name}: complete" in merged.stdout
    points = store.query(main, "SELECT ranks, status FROM points")
    assert len(points) == 8 and set(points.ranks) == {1, 2} and set(points.status) == {"ok"}
    again = _cli(cluster, "merge", "--job", job, "--store", str(main))
    assert again.stdout.count("0 points added, 0 replaced") == 2
    assert len(store.query(main, "SELECT point_id FROM points")) == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--partition", "nope"), "unknown partition 'nope'; sinfo lists debug"),
        (("--nodes", "1"), "the largest group (64 ranks) exceeds the allocation's"),
    ],
)
def test_submit_refuses_what_the_cluster_cannot_run(
    cluster: slurm_cluster.SlurmCluster, tmp_path: Path, args: tuple, message: str
) -> None:
    spec = tmp_path / "spec.toml"
    ranks = 64 if "--nodes" in args else 2
    spec.write_text(f"sizes = [8]\nranks = [{ranks}]\n")
    main = tmp_path / "main.duckdb"
    result = _cli(cluster, "submit", str(spec), "--store", str(main), *args)
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "main.duckdb.shards").exists()


def test_a_failing_tasks_error_reaches_the_user_at_merge(
    cluster: slurm_cluster.SlurmCluster, tmp_path: Path
) -> None:
    """A task whose sweep cannot start (no srun on its PATH) leaves its message in its log,
    and merge --job shows it."""
    spec = tmp_path / "spec.toml"
    spec.write_text('sizes = [8]\nranks = [2]\nalgorithms = ["ring"]\n')
    main = tmp_path / "main.duckdb"
    submitted = _cli(
        cluster, "submit", str(spec), "--store", str(main),
        "--sbatch-arg=--export=NONE,PATH=/nonexistent",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.split("submitted job ")[1].split(":")[0]
    _wait_for_job(cluster, job)
    merged = _cli(cluster, "merge", "--job", job, "--store", str(main))
    assert merged.returncode == 1
    assert f"task {job}_0:" in merged.stderr and "srun" in merged.stderr


def _wait_for_progress(
    cluster: slurm_cluster.SlurmCluster, log: Path, count: int, limit_s: float = 120
) -> None:
    """Until a task's log shows `count` finished points (its progress lines), bounded."""

    def shown() -> bool:
        return log.exists() and log.read_text().count("] L1 p=") >= count

    if not wait_until(shown, limit_s, 0.2):
        pytest.fail(f"{log} never showed {count} points:\n{cluster.log_tail()}")


def test_a_cancelled_task_keeps_its_finished_points_and_resume_completes_them(
    cluster: slurm_cluster.SlurmCluster, tmp_path: Path
) -> None:
    """scancel of a task midway (one rank: see README, a p=2 step here sometimes starts one of
    its two tasks): merge keeps the points it finished and says the run is not complete, with
    the command that finishes it; no rank outlives the cancel; the resume under srun measures
    only what is missing, every point once. The task's ring parks in its third cell (never
    released), so the cancel lands midway on any machine: after exactly four points."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        "sizes = [8, 64, 512, 4096, 32768, 262144]\nranks = [1]\n"
        'algorithms = ["ring", "mpi"]\nbudget_s = 0.05\n'
        "launches = 1\nlaunch_calibration = false\n"
    )
    main = tmp_path / "main.duckdb"
    held = HeldPoint(tmp_path, "ring", 3)
    result = _cli(cluster, "submit", str(spec), "--store", str(main), env=held.env)
    assert result.returncode == 0, result.stderr + cluster.log_tail()
    job = result.stdout.split("submitted job ")[1].split(":")[0]
    [folder] = (tmp_path / "main.duckdb.shards").iterdir()
    _wait_for_progress(cluster, folder / f"{job}_0.out", 4)
    cancel = subprocess.run(["scancel", job], capture_output=True, text=True, env=cluster.env())
    assert cancel.returncode == 0, cancel.stderr
    _wait_for_job(cluster, job)
    wait_until(lambda: not _rank_processes(), 30, 0.5)
    assert _rank_processes() == [], "ranks outlived the cancelled task"
    merged = _cli(cluster, "merge", "--job", job, "--store", str(main))
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert f"collsweep sweep --resume {folder.name}" in merged.stdout + merged.stderr
    kept = store.query(main, "SELECT point_id FROM points WHERE status = 'ok'")
    assert len(kept) == 4
    resume = ["sweep", "--resume", folder.name, "--store", str(main)]
    resumed = _cli(cluster, *resume, "--launcher", "srun --mpi=pmi2 -n {ranks}")
    assert resumed.returncode == 0, resumed.stderr[-3000:] + cluster.log_tail()
    assert "points 8/8" in resumed.stderr  # only the missing points
    final = store.query(main, "SELECT point_id, status FROM points")
    assert len(final) == 12 and final.point_id.is_unique and set(final.status) == {"ok"}
    assert set(kept.point_id) <= set(final.point_id)
    assert store.query(main, "SELECT status FROM runs").status.item() == "complete"


def _rank_processes() -> list[str]:
    """Command lines of rank programs still running on this host."""
    found = subprocess.run(["pgrep", "-af", "runners.ranks"], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]
