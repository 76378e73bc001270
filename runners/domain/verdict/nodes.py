"""Assumption checks of a run on emulated nodes (pure): that the ranks sat on the nodes asked
for, as the library itself saw them, and that their traffic crossed the shaped network; and
what that network is to the model (one loopback: concurrent transfers share its rate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runners.domain.algorithms.library import is_composition
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.nodes.network import parse_network
from runners.domain.nodes.placement import TRANSPORT, Placement
from runners.domain.units import format_bytes
from runners.domain.verdict.assumptions import HOLDS, UNKNOWN, VIOLATED, check
from runners.domain.verdict.topology import host_names


def _wrong_placements(placement: Placement, probes: Sequence[Mapping[str, Any]]) -> list[str]:
    wrong = []
    for probe in probes:
        asked = ",".join(map(str, placement.node_map(int(probe["ranks"]))))
        if probe.get("node_map") != asked:
            wrong.append(
                f"launch {int(probe['launch']) + 1} of p={probe['ranks']}: the library saw nodes "
                f"{probe.get('node_map') or 'unrecorded'} where {asked} was asked"
            )
    return wrong


def _network_bytes(probes: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], int]:
    """Bytes the network carried in each (job, launch), from its start and end probes."""
    seen: dict[tuple[str, int], list[int]] = {}
    for probe in probes:
        count = probe.get("network_bytes")
        if count is not None and count == count:  # NaN: a probe outside a namespace
            seen.setdefault((probe["job"], int(probe["launch"])), []).append(int(count))
    return {key: max(values) - min(values) for key, values in seen.items() if len(values) > 1}


def emulated_nodes(placement: Placement, probes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Whether every launch's ranks sat on the nodes asked for (MPI_Comm_split_type SHARED)
    and the launches of several nodes moved bytes over the namespace's loopback."""
    if not probes:
        return check("emulated_nodes", UNKNOWN, "no launch recorded where its ranks were")
    wrong = _wrong_placements(placement, probes)
    carried = _network_bytes(probes)
    several = {(p["job"], int(p["launch"])) for p in probes if placement.nodes(int(p["ranks"])) > 1}
    silent = sorted(key for key in several if carried.get(key, 0) <= 0)
    if wrong or silent:
        said = wrong[:3] + [
            f"{job} launch {launch + 1}: no byte crossed the network" for job, launch in silent[:3]
        ]
        return check("emulated_nodes", VIOLATED, "; ".join(said))
    total = sum(carried.values())
    return check(
        "emulated_nodes",
        HOLDS,
        f"every launch's ranks sat on the emulated nodes asked for ({placement.ranks_per_node} "
        f"a node, {placement.order}) as MPICH saw them (MPI_Comm_split_type SHARED); "
        f"{format_bytes(total)} crossed "
        f"the namespace's loopback between them over {len(carried)} launches ({TRANSPORT})",
    )


def shared_network(network_text: str) -> dict[str, Any]:
    """What the network between emulated nodes is to the alpha-beta model: with a stated rate,
    one link every concurrent transfer shares (a bus), where the model gives each message its
    own; unshaped, the TCP transport's own costs on the host's cores."""
    network = parse_network(network_text) if network_text else None
    if network is None or not network.bandwidth_bps:
        detail = "unshaped loopback: the TCP transport's own latency and rate, on this host's cores"
        if network is not None:
            detail = f"{network.describe()}; {detail}"
        return check("shared_network", UNKNOWN, f"{detail} ({TRANSPORT})")
    return check(
        "shared_network",
        VIOLATED,
        f"{network.describe()}: messages sent at once share it, where the model gives each "
        f"its own link; the contention variant's exchange curve, measured on this network, "
        f"prices two at once ({TRANSPORT})",
    )


def node_checks(
    placement: Placement, network_text: str, probes: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The node checks of a run: emulated nodes and their network, or the nodes a cluster's
    launcher was told ([] for a run on one host, or placed as the launcher liked)."""
    if placement.real and placement.placed:
        return [placed_nodes(placement, probes)]
    if not placement.emulated:
        return []
    return [emulated_nodes(placement, probes), shared_network(network_text)]


def placed_nodes(placement: Placement, probes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Whether every launch's ranks sat on the nodes a cluster's launcher was told to put them
    on, as the library saw them (MPI_Comm_split_type SHARED)."""
    if not probes:
        return check("placed_nodes", UNKNOWN, "no launch recorded where its ranks were")
    wrong = _wrong_placements(placement, probes)
    if wrong:
        return check("placed_nodes", VIOLATED, "; ".join(wrong[:3]))
    return check(
        "placed_nodes",
        HOLDS,
        f"every launch's ranks sat on nodes of {placement.ranks_per_node} ({placement.order}) "
        f"as the launcher was told and the library saw them (MPI_Comm_split_type SHARED); "
        f"hosts {host_names(probes) or 'unrecorded'}",
    )


def spinning_note(algorithms: Sequence[str], ranks: Sequence[int], cores: int) -> str | None:
    """What oversubscription does to MPICH's compositions (mpi:composition_*): they need its
    device collectives, whose shared-memory parts spin-wait (milliseconds a call when ranks
    outnumber cores), so their times there measure the spinning; None where none is at risk."""
    composed = [a for a in algorithms if is_composition(ALGORITHMS[a])]
    over = [r for r in ranks if r > cores]
    if not composed or not over:
        return None
    return (
        f"{', '.join(composed)} at {', '.join(f'p={r}' for r in over)}: MPICH's compositions "
        "need its device collectives, whose shared-memory parts spin on oversubscribed cores "
        "(milliseconds a call): their times measure the spinning, not the composition"
    )
