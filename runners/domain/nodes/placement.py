"""Which node each rank sits on: emulated on this host, and how MPICH is told; or real, placed
by a cluster's launcher (pure).

`ranks_per_node` 0 is today's sweep: every rank on one host, messages as shared-memory copies.
N > 0 splits each group's ranks into nodes of N ranks that never share memory: MPICH's cliques
(MPIR_CVAR_NUM_CLIQUES, in the wheel) with its TCP transport between them (ch4's ofi netmod,
libfabric's tcp provider), run in a private network namespace whose loopback is the network
(runners.process.network_namespace). `block` puts ranks 0..N-1 on node 0 (srun's default),
`round-robin` rank r on node r mod nodes (MPICH's default clique order). Open MPI and Intel MPI
have no way to split one host into nodes that MPICH's cliques have: refused, said so. With a
cluster's launcher the nodes are real: its template places the ranks (`--ntasks-per-node=
{ranks_per_node}`), any library, and the probes check where they sat.
"""

from __future__ import annotations

from dataclasses import dataclass

BLOCK, ROUND_ROBIN = "block", "round-robin"
PLACEMENTS = (BLOCK, ROUND_ROBIN)
EMULATING_LIBRARY = "mpich"
TRANSPORT = "MPICH ch4 ofi netmod, libfabric tcp provider, over the namespace's loopback"


@dataclass(frozen=True)
class Placement:
    """Ranks per node (0: every rank on one host, or wherever a cluster's launcher puts them)
    and the order ranks fill the nodes; `real`: a cluster's launcher places them on its nodes
    (told by the launcher template's {ranks_per_node}), else they are emulated on this host."""

    ranks_per_node: int = 0
    order: str = BLOCK
    real: bool = False

    @property
    def placed(self) -> bool:
        """Whether the ranks are asked to sit on nodes of ranks_per_node at all."""
        return self.ranks_per_node > 0

    @property
    def emulated(self) -> bool:
        """Whether the ranks are split into emulated nodes on this host."""
        return self.placed and not self.real

    def nodes(self, ranks: int) -> int:
        """How many nodes a group of `ranks` spans (1 unplaced)."""
        return ranks // self.ranks_per_node if self.placed else 1

    def node_of(self, rank: int, ranks: int) -> int:
        """The node rank `rank` of a group of `ranks` sits on."""
        if not self.placed:
            return 0
        if self.order == BLOCK:
            return rank // self.ranks_per_node
        return rank % self.nodes(ranks)

    def launcher_line(self) -> str:
        """Where a cluster's launcher was told to put the ranks, in one line for people."""
        per = f"{self.ranks_per_node} rank{'s' * (self.ranks_per_node > 1)}"
        return f"nodes of {per} ({self.order}), placed by the cluster's launcher"

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
    """Why these group sizes and libraries cannot run on these nodes ([]: they can)."""
    if placement.order not in PLACEMENTS:
        return [f"placement must be {' or '.join(PLACEMENTS)}, got {placement.order!r}"]
    if not placement.placed:
        return []
    problems = []
    uneven = [r for r in ranks if r % placement.ranks_per_node]
    if uneven:
        problems.append(
            f"ranks {uneven} do not fill nodes of ranks_per_node = {placement.ranks_per_node}"
        )
    if placement.real:
        return problems
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
    launcher_places: bool = False,
) -> list[str]:
    """Why a spec's nodes cannot run ([]: they can): its ranks_per_node, placement and
    `network` against its group sizes, libraries and launcher (`launcher_places`: a cluster's
    launcher template says {ranks_per_node})."""
    if placement.ranks_per_node < 0:
        return [f"ranks_per_node must be >= 0, got {placement.ranks_per_node}"]
    problems = placement_problems(placement, ranks, libraries)
    if network and not default_launcher:
        problems.append(
            "network is emulated between nodes on this host (the default launcher); a "
            "cluster's network is its own: leave network out"
        )
    elif network and not placement.emulated:
        problems.append("network is the one between emulated nodes: give ranks_per_node too")
    if placement.real and placement.placed and not launcher_places:
        problems.append(
            "on a cluster the launcher places the ranks: put {ranks_per_node} in it, e.g. "
            "'srun -n {ranks} --ntasks-per-node={ranks_per_node}'"
        )
    return problems
