"""Emulated nodes asked for in ways that cannot run: one line, exit 2, no store, no rank."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

CASES = {
    "ranks that do not fill their nodes": (["--ranks", "3", "--ranks-per-node", "2"],
                                           "do not fill nodes"),
    "a network without nodes": (["--ranks", "2", "--network", "bandwidth=1Gbit"],
                                "give ranks_per_node too"),
    "Open MPI on emulated nodes": (["--ranks", "2", "--ranks-per-node", "1", "--libraries",
                                    "openmpi"], "cannot split one host into nodes"),
    "a placement that does not exist": (["--ranks", "2", "--ranks-per-node", "1",
                                         "--placement", "zigzag"], "block or round-robin"),
    "a bandwidth in bytes": (["--ranks", "2", "--ranks-per-node", "1", "--network",
                              "bandwidth=1GB"], "give bits a second"),
    "a cluster launcher not told the ranks per node": (["--ranks", "2", "--ranks-per-node",
                                                        "1", "--launcher", "srun -n {ranks}"],
                                                       "put {ranks_per_node} in it"),
    "a hierarchical allreduce without a node size": (["--ranks", "2", "--algorithms",
                                                       "ring,hierarchical"],
                                                      "hierarchical needs node="),
    "a hierarchical allreduce with a parameter it lacks": (["--ranks", "2", "--algorithms",
                                                            "hierarchical(node=2,radix=4)"],
                                                           "has no parameter radix"),
    "a hierarchical allreduce's leaders not an allreduce": (["--ranks", "2", "--algorithms",
                                                             "hierarchical(node=2,leaders=mpi)"],
                                                            "leaders must be one of"),
    "several placements with one run id": (["--ranks", "2", "--ranks-per-node", "0,1",
                                            "--run-id", "r20261206-000000-abcd"],
                                           "several ranks_per_node make a run each"),
    "hierarchical's node from several placements": (["--ranks", "4", "--ranks-per-node",
                                                     "1,2", "--algorithms", "hierarchical"],
                                                    "one of several ranks_per_node: name it"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_emulated_nodes_that_cannot_run_are_one_line(
    case: str, tmp_path: Path, reliability
) -> None:
    flags, said = CASES[case]
    db = tmp_path / "s.duckdb"
    done = run_cli("sweep", "--store", str(db), "--sizes", "8", *flags, timeout=60)
    clean = done.returncode == 2 and done.stderr.count("\n") == 1 and not db.exists()
    reliability.bad_input(f"sweep with {case}", clean)
    assert clean and said in done.stderr, done.stderr


def _has_netem() -> bool:
    probe = ["unshare", "-n", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1us"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def test_a_latency_this_kernel_cannot_add_is_one_line(tmp_path: Path, reliability) -> None:
    if _has_netem():
        pytest.skip("this kernel has netem: a latency can be added here")
    db = tmp_path / "s.duckdb"
    done = run_cli("sweep", "--store", str(db), "--sizes", "8", "--ranks", "2",
                   "--ranks-per-node", "1", "--network", "latency=20us", timeout=60)  # fmt: skip
    clean = done.returncode == 2 and done.stderr.count("\n") == 1 and not db.exists()
    reliability.bad_input("sweep with a latency and no netem", clean)
    assert clean and "no netem qdisc; leave latency out" in done.stderr, done.stderr
