"""The job-array script of `collsweep submit` and its checks that need no cluster."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from runners.cli.main import main
from runners.domain.sweep import slurm


def _submission(**extra) -> slurm.Submission:
    folder = Path("/data/main.duckdb.shards/r1")
    fields = {
        "run_id": "r1",
        "spec_file": folder / "spec.toml",
        "ranks": (2, 3, 8),
        "shard_dir": folder,
        "python": "/venv/bin/python",
        "workdir": Path("/work dir"),
    }
    return slurm.Submission(**(fields | extra))


def test_the_script_is_an_array_of_one_sweep_per_group_into_its_own_shard() -> None:
    script = slurm.batch_script(_submission(partition="short", time="00:10:00"))
    assert "#SBATCH --array=0-2" in script and "#SBATCH --ntasks=8" in script
    assert '#SBATCH --partition="short"' in script and '#SBATCH --time="00:10:00"' in script
    assert '#SBATCH --output="/data/main.duckdb.shards/r1/%A_%a.out"' in script
    assert "SIZES=(2 3 8)" in script and "cd '/work dir'" in script
    assert "--run-id r1" in script and "--launcher 'srun --mpi=pmi2 -n {ranks}'" in script
    assert "/${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}.duckdb" in script
    assert "--overcommit" not in script
    over = slurm.batch_script(_submission(oversubscribe=True, sbatch_args=("--account=abc",)))
    assert "#SBATCH --overcommit" in over and "srun --mpi=pmi2 --overcommit -n {ranks}" in over
    assert '#SBATCH "--account=abc"' in over


@pytest.mark.parametrize(
    "extra",
    [
        {"time": "1:00\necho pwned"},
        {"partition": "debug\nrm -rf ~"},
        {"sbatch_args": ("--account=a\r\nid",)},
        {"workdir": Path("/work\ndir")},
    ],
)
def test_values_with_control_characters_never_reach_the_script(extra: dict) -> None:
    problem = slurm.submission_problem(_submission(**extra))
    assert problem and "control character" in problem
    assert slurm.submission_problem(_submission(partition="a b", time="1:00")) is None


def test_sbatch_values_are_quoted_as_sbatch_reads_them() -> None:
    script = slurm.batch_script(
        _submission(shard_dir=Path('/st ore"#x/r1'), sbatch_args=("--comment=a # b",))
    )
    assert '#SBATCH --output="/st ore\\"#x/r1/%A_%a.out"' in script
    assert '#SBATCH "--comment=a # b"' in script


def test_the_script_is_valid_bash_that_picks_the_tasks_group(tmp_path: Path) -> None:
    """Run the script's body with `exec` replaced by echo: task 1 sweeps p=3."""
    body = slurm.batch_script(_submission()).replace("exec ", "echo ").replace("cd ", ": ")
    result = subprocess.run(
        ["bash", "-c", body],
        capture_output=True,
        text=True,
        env={"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_JOB_ID": "77", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "--ranks 3 " in result.stdout and "/r1/77_1.duckdb" in result.stdout


def test_sinfo_partitions_and_capacity() -> None:
    listing = "debug* 2\nbig 64\nbig 32\n"
    assert slurm.partitions(listing) == {"debug": 2, "big": 64}
    assert slurm.default_partition(listing) == "debug"
    assert slurm.capacity_problem([2, 4], 2, 1, False).startswith("the largest group (4 ranks)")
    assert slurm.capacity_problem([2, 4], 2, 2, False) == ""
    assert slurm.capacity_problem([2, 4], 2, 1, True) == ""


def test_dry_run_prints_the_script_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text("sizes = [8]\nranks = [2, 4]\n")
    store = tmp_path / "main.duckdb"
    assert main(["submit", str(spec), "--store", str(store), "--dry-run"]) == 0
    script = capsys.readouterr().out
    assert script.startswith("#!/bin/bash") and "SIZES=(2 4)" in script
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


def test_submit_without_sbatch_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no Slurm client here
    spec = tmp_path / "spec.toml"
    spec.write_text("sizes = [8]\nranks = [2]\n")
    assert main(["submit", str(spec), "--store", str(tmp_path / "m.duckdb")]) == 2
    assert "no sbatch on PATH" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


def test_ranks_per_node_are_told_to_srun_and_checked_against_the_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec's ranks per node reach srun (--ntasks-per-node; round-robin as its cyclic
    distribution); a group spanning more nodes than asked for, or a network to emulate on a
    cluster, is refused before anything is written."""
    from runners.domain.nodes.placement import Placement

    block = slurm.batch_script(_submission(placement=Placement(2, real=True)))
    assert "-n {ranks} --ntasks-per-node={ranks_per_node}'" in block
    cyclic = slurm.batch_script(_submission(placement=Placement(2, "round-robin", real=True)))
    assert "--ntasks-per-node={ranks_per_node} --distribution=cyclic'" in cyclic
    told = Placement(1, real=True)
    assert slurm.capacity_problem([2, 4], 8, 2, False, told).endswith("ask for --nodes 4")
    assert slurm.capacity_problem([2, 4], 8, 4, False, told) == ""
    spec = tmp_path / "spec.toml"
    spec.write_text("sizes = [8]\nranks = [2, 4]\nranks_per_node = 2\n")
    store = tmp_path / "main.duckdb"
    assert main(["submit", str(spec), "--store", str(store), "--dry-run"]) == 0
    assert "--ntasks-per-node={ranks_per_node}'" in capsys.readouterr().out
    spec.write_text("sizes = [8]\nranks = [2]\nranks_per_node = 1\nnetwork = 'bandwidth=1Gbit'\n")
    assert main(["submit", str(spec), "--store", str(store), "--dry-run"]) == 2
    assert "a cluster's network is its own" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


def test_an_adaptive_spec_is_refused_with_the_reason_and_the_way_that_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each round follows from the merged one before: a job array cannot wait for that."""
    spec = tmp_path / "spec.toml"
    spec.write_text("sizes = [8, 64]\nranks = [2]\nadaptive = true\n")
    assert main(["submit", str(spec), "--store", str(tmp_path / "m.duckdb"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "adaptive: not under submit yet" in err and "--launcher 'srun -n {ranks}'" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]
