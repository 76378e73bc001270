"""Node-aware allreduces on emulated nodes: MPICH's compositions (forced by
MPIR_CVAR_ALLREDUCE_COMPOSITION) run what they claim, proven by a counting user op whose calls
per rank must be those of collsweep's own hierarchical schedule for alpha (reduce inside the
node, the leaders' allreduce, a broadcast inside), of flat recursive doubling for beta; and
collsweep's hierarchical allreduce sweeps there beside the flat ones."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import ROOT
from helpers.fingerprints import calls_of

from runners.domain.collectives.schedule import Schedule
from runners.domain.libraries.catalog import ALGORITHMS, library_knobs
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
    knobs = {
        **launcher.default_knobs(RANKS, cores=physical_cores()),
        **placement.library_env(RANKS),
        **library_knobs(algorithm),
        "PYTHONPATH": str(ROOT / "tests" / "mpi_programs"),
    }
    job = launch.Job(RANKS, "library_fingerprint", [str(COUNT), "allreduce"], knobs)
    done = launch.run(replace(job, wrap=tuple(wrapper(()))), 120)
    assert done.returncode == 0, done.stderr
    return calls_of(done.stdout)


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
