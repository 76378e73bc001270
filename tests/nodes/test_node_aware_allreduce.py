"""Node-aware allreduces on emulated nodes: MPICH's compositions (forced by
MPIR_CVAR_ALLREDUCE_COMPOSITION) run what they claim, proven by a counting user op whose calls
per rank must be those of collsweep's own hierarchical schedule for alpha (reduce inside the
node, the leaders' allreduce, a broadcast inside), of flat recursive doubling for beta (a sweep
of them beside the flat ones: tests/nodes/test_emulated_nodes.py); and MPICH follows a tuning
file keyed by ranks per node only on such nodes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT
from helpers.fingerprints import calls_of

from runners.domain.collectives.schedule import Schedule
from runners.domain.libraries import mpich_tuning
from runners.domain.libraries.catalog import ALGORITHMS, library_knobs
from runners.domain.libraries.tuning import Band
from runners.domain.nodes.placement import PLACEMENTS, Placement
from runners.domain.sweep import launcher
from runners.host.machine import physical_cores
from runners.jobs import launch
from runners.process.network_namespace import wrapper

pytestmark = pytest.mark.mpi

COUNT, RANKS = 1024, 4


def fingerprint(algorithm: str, placement: Placement) -> dict[int, list[int]]:
    """The counting op's calls per rank in one MPI_Allreduce of COUNT float64 on 2 emulated
    nodes of 2, the library forced to `algorithm`."""
    return _calls(RANKS, placement, library_knobs(algorithm), wrap=True)


def reductions(schedule: Schedule) -> dict[int, list[int]]:
    """Per rank, the sizes a schedule reduces, in order: what a counting op would see."""
    return {
        rank: [s.received for s in schedule(rank, RANKS, COUNT) if s.reduce]
        for rank in range(RANKS)
    }


@pytest.mark.parametrize("order", PLACEMENTS)
def test_composition_alpha_is_the_hierarchical_schedule_on_mpichs_own_nodes(order: str) -> None:
    """Only the node leaders reduce (the leaders of the block and round-robin nodes differ:
    ranks 0, 2 against 0, 1), each twice: exactly hierarchical(node=2)'s reductions."""
    own = ALGORITHMS[f"hierarchical(node=2{'' if order == 'block' else ',order=' + order})"]
    expected = reductions(own.required_schedule)
    assert sum(bool(c) for c in expected.values()) == 2  # two leaders, two idle ranks
    assert fingerprint("mpi:composition_alpha", Placement(2, order)) == expected


def test_compositions_beta_and_delta_leave_other_fingerprints() -> None:
    block = Placement(2, "block")
    flat = reductions(ALGORITHMS["recursive_doubling"].required_schedule)
    assert fingerprint("mpi:composition_beta", block) == flat  # the netmod's flat allreduce
    delta = fingerprint("mpi:composition_delta", block)
    assert all(delta.values()) and delta != flat  # every rank a leader of a share


RING_ON_NODES = {1: {"allreduce": {2: [Band(None, "mpi:ring")]}}}
TREE_ON_HOST = {0: {"allreduce": {2: [Band(None, "mpi:tree")]}}}


def _follows(tmp_path: Path, placements: dict) -> dict[str, str]:
    """The knobs that make MPICH follow a file of these placements' bands (as `tune` writes)."""
    mpir, posix = mpich_tuning.mpich_tables(placements)
    table = tmp_path / "tuned.json"
    table.write_text(json.dumps(mpir))
    mpich_tuning.posix_path(table).write_text(json.dumps(posix))
    return mpich_tuning.tuning_knobs(table)


def test_a_tuning_file_keyed_by_ranks_per_node_is_followed_only_on_such_nodes(
    tmp_path: Path,
) -> None:
    """MPICH's table keyed by comm_avg_ppn (what `tune` writes for a run on nodes): at p=2 the
    ring on 2 nodes of 1 rank (its calls: half the vector, once), MPICH's own choice (recursive
    doubling: the whole vector, once) on one host, its 2 ranks on one node; the device
    collectives on, as in a dedicated sweep."""
    follows = _follows(tmp_path, RING_ON_NODES)
    on_nodes = _calls(2, Placement(1), follows, wrap=True)
    on_host = _calls(2, Placement(), follows, wrap=False)
    assert on_nodes == {0: [512], 1: [512]} and on_host == {0: [1024], 1: [1024]}


def test_one_file_of_two_placements_is_followed_on_each(tmp_path: Path) -> None:
    """One file tuned from two placements' runs: the ring where the communicator has 1 rank
    a node, MPICH's tree (reduce to a root, then broadcast: only the root reduces) where it
    has both ranks on one node."""
    follows = _follows(tmp_path, {**RING_ON_NODES, **TREE_ON_HOST})
    on_nodes = _calls(2, Placement(1), follows, wrap=True)
    on_host = _calls(2, Placement(), follows, wrap=False)
    assert on_nodes == {0: [512], 1: [512]}
    assert on_host == {0: [1024], 1: []}


def _calls(ranks: int, placement: Placement, knobs: dict, wrap: bool) -> dict[int, list[int]]:
    """The counting op's calls per rank in one MPI_Allreduce of COUNT float64."""
    env = {
        **launcher.default_knobs(ranks, cores=physical_cores()),
        **placement.library_env(ranks),
        **knobs,
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
    }
    job = launch.Job(ranks, "library_fingerprint", [str(COUNT), "allreduce"], env)
    done = launch.run(replace(job, wrap=tuple(wrapper(()))) if wrap else job, 120)
    assert done.returncode == 0, done.stderr
    return calls_of(done.stdout)
