"""Which emulated node each rank sits on, and how MPICH is told (pure).

`ranks_per_node` 0 is today's sweep: every rank on one host, messages as shared-memory copies.
N > 0 splits each group's ranks into nodes of N ranks that never share memory: MPICH's cliques
(MPIR_CVAR_NUM_CLIQUES, in the wheel) with its TCP transport between them (ch4's ofi netmod,
libfabric's tcp provider), run in a private network namespace whose loopback is the network
(runners.process.network_namespace). `block` puts ranks 0..N-1 on node 0 (srun's default),
`round-robin` rank r on node r mod nodes (MPICH's default clique order). Open MPI and Intel MPI
have no way to split one host into nodes that MPICH's cliques have: refused, said so.
"""

from __future__ import annotations

from dataclasses import dataclass

BLOCK, ROUND_ROBIN = "block", "round-robin"
PLACEMENTS = (BLOCK, ROUND_ROBIN)
EMULATING_LIBRARY = "mpich"
TRANSPORT = "MPICH ch4 ofi netmod, libfabric tcp provider, over the namespace's loopback"


@dataclass(frozen=True)
class Placement:
    """Ranks per emulated node (0: no emulated nodes) and the order ranks fill them."""

    ranks_per_node: int = 0
    order: str = BLOCK

    @property
    def emulated(self) -> bool:
        """Whether the ranks are split into emulated nodes at all."""
        return self.ranks_per_node > 0

    def nodes(self, ranks: int) -> int:
        """How many emulated nodes a group of `ranks` spans (1 without emulation)."""
        return ranks // self.ranks_per_node if self.emulated else 1

    def node_of(self, rank: int, ranks: int) -> int:
        """The node rank `rank` of a group of `ranks` sits on."""
        if not self.emulated:
            return 0
        if self.order == BLOCK:
            return rank // self.ranks_per_node
        return rank % self.nodes(ranks)

    def node_map(self, ranks: int) -> tuple[int, ...]:
        """Every rank's node, in rank order."""
        return tuple(self.node_of(rank, ranks) for rank in range(ranks))

    def library_env(self, ranks: int) -> dict[str, str]:
        """MPICH's environment for a group of `ranks` on these nodes ({} without emulation)."""
        if not self.emulated:
            return {}
        env = {
            "MPIR_CVAR_NUM_CLIQUES": str(self.nodes(ranks)),
            "MPIR_CVAR_CH4_NETMOD": "ofi",
            "FI_PROVIDER": "tcp",
        }
        if self.order == BLOCK:
            env["MPIR_CVAR_CLIQUES_BY_BLOCK"] = "1"
        return env


def placement_problems(
    placement: Placement, ranks: tuple[int, ...], libraries: tuple[str, ...]
) -> list[str]:
    """Why these group sizes and libraries cannot run on these emulated nodes ([]: they can)."""
    if placement.order not in PLACEMENTS:
        return [f"placement must be {' or '.join(PLACEMENTS)}, got {placement.order!r}"]
    if not placement.emulated:
        return []
    problems = []
    uneven = [r for r in ranks if r % placement.ranks_per_node]
    if uneven:
        problems.append(
            f"ranks {uneven} do not fill nodes of ranks_per_node = {placement.ranks_per_node}"
        )
    others = [lib for lib in libraries if lib != EMULATING_LIBRARY]
    if others:
        problems.append(
            f"emulated nodes need MPICH's cliques; {', '.join(others)} cannot split one host "
            "into nodes (run it on a cluster, where the launcher places the ranks)"
        )
    return problems


def nodes_problems(
    placement: Placement,
    network: str,
    ranks: tuple[int, ...],
    libraries: tuple[str, ...],
    default_launcher: bool,
) -> list[str]:
    """Why a spec's emulated nodes cannot run ([]: they can): its ranks_per_node, placement and
    `network` against its group sizes, libraries and launcher."""
    if placement.ranks_per_node < 0:
        return [f"ranks_per_node must be >= 0, got {placement.ranks_per_node}"]
    problems = placement_problems(placement, ranks, libraries)
    if network and not placement.emulated:
        problems.append("network is the one between emulated nodes: give ranks_per_node too")
    if placement.emulated and not default_launcher:
        problems.append(
            "emulated nodes run on this host with the default launcher; on a cluster the "
            "launcher places the ranks (leave ranks_per_node out)"
        )
    return problems
