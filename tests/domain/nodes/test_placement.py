"""Which emulated node each rank sits on, MPICH's knobs for it, and what cannot be emulated."""

from __future__ import annotations

import pytest

from runners.domain.nodes.placement import BLOCK, ROUND_ROBIN, Placement, placement_problems
from runners.domain.sweep.spec import parse_spec
from runners.domain.sweep.spec_keys import SpecError


def test_block_fills_a_node_before_the_next_and_round_robin_deals_ranks_out() -> None:
    assert Placement(2, BLOCK).node_map(6) == (0, 0, 1, 1, 2, 2)
    assert Placement(2, ROUND_ROBIN).node_map(6) == (0, 1, 2, 0, 1, 2)
    assert Placement(1).node_map(3) == (0, 1, 2)
    assert Placement().node_map(4) == (0, 0, 0, 0) and Placement().nodes(4) == 1


def test_mpich_gets_a_clique_per_node_its_tcp_transport_and_the_order() -> None:
    block = Placement(2, BLOCK).library_env(8)
    assert block["MPIR_CVAR_NUM_CLIQUES"] == "4" and block["MPIR_CVAR_CLIQUES_BY_BLOCK"] == "1"
    assert block["MPIR_CVAR_CH4_NETMOD"] == "ofi" and block["FI_PROVIDER"] == "tcp"
    assert "MPIR_CVAR_CLIQUES_BY_BLOCK" not in Placement(2, ROUND_ROBIN).library_env(8)
    assert Placement().library_env(8) == {}


def test_groups_that_do_not_fill_their_nodes_and_other_libraries_are_refused() -> None:
    problems = placement_problems(Placement(2), (2, 3, 5), ("mpich", "openmpi"))
    assert "ranks [3, 5] do not fill nodes of ranks_per_node = 2" in problems[0]
    assert "openmpi cannot split one host into nodes" in problems[1]
    assert placement_problems(Placement(2), (2, 4), ("mpich",)) == []
    assert (
        "placement must be block or round-robin"
        in placement_problems(Placement(0, "zigzag"), (2,), ("mpich",))[0]
    )


SPEC = "sizes = [8]\nranks = [2, 4]\n"


def test_the_spec_carries_nodes_and_network_and_writes_them_back() -> None:
    spec = parse_spec(SPEC + 'ranks_per_node = 2\nplacement = "round-robin"\n'
                      'network = "bandwidth=10Gbit"\n')  # fmt: skip
    assert spec.nodes == Placement(2, ROUND_ROBIN)
    assert spec.shaped_network.bandwidth_bps == 10e9
    assert parse_spec(spec.to_toml()) == spec


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('network = "bandwidth=1Gbit"\n', "give ranks_per_node too"),
        ("ranks_per_node = -1\n", "ranks_per_node must be >= 0"),
        ("ranks_per_node = 3\n", "do not fill nodes"),
        ('ranks_per_node = 1\nlauncher = "srun -n {ranks}"\n', "put {ranks_per_node} in it"),
        (
            'ranks_per_node = 1\nnetwork = "bandwidth=1Gbit"\nlauncher = "srun -n {ranks} '
            '--ntasks-per-node={ranks_per_node}"\n',
            "a cluster's network is its own",
        ),
        ('ranks_per_node = 1\nnetwork = "latency=9s"\n', "latency must be between"),
        ("ranks_per_node = 1\nnetwork = 5\n", "network must be text"),
    ],
)
def test_a_spec_that_cannot_run_on_emulated_nodes_says_why(extra: str, said: str) -> None:
    with pytest.raises(SpecError, match=said):
        parse_spec(SPEC + extra)


def test_a_cluster_launcher_told_the_ranks_per_node_places_real_nodes() -> None:
    """No emulation (no cliques, no namespace): the launcher is told, and the same node map
    is what the probes must find."""
    srun = 'launcher = "srun -n {ranks} --ntasks-per-node={ranks_per_node}"\n'
    spec = parse_spec(SPEC + srun + "ranks_per_node = 1\n")
    assert spec.nodes.real and spec.nodes.placed and not spec.nodes.emulated
    assert spec.nodes.library_env(2) == {}
    assert spec.nodes.node_map(2) == (0, 1)
    assert parse_spec(SPEC + srun).nodes.placed is False  # no ranks per node asked: anywhere


def test_a_cluster_launcher_without_ranks_per_node_needs_no_placeholder() -> None:
    spec = parse_spec(SPEC + 'launcher = "srun --mpi=pmi2 -n {ranks}"\n')
    assert spec.nodes.real and not spec.nodes.placed
