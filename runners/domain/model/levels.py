"""A calibration of two levels: inside a node (shared memory) and across the network between
nodes, measured by two ping-pongs and kept as one calibration (pure).

The network's ping-pong is the calibration's row (its alpha, beta, curves and gammas: every
message of a group of one rank per node crosses it); the node's is this host's shared-memory
calibration, named and summarised in the row's details['levels'] beside the network as stated.

A run's own predictions on its nodes are the `two_level` variant (runners.domain.model.pricing:
round by round, each step on its level, the network a bus). Here the same two levels as a
platform (emulated_platform: what `collsweep simulate --platform emulated-nodes` runs in
SimGrid) and a schedule walked on it with each message on its own route (two_level_s, the
contention-free lower bound: two_level's price without the bus).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from runners.domain.collectives.datatypes import DTYPES
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.contention_free import contention_free_s
from runners.domain.model.platform import Link, Platform, calibrated_gammas, checked
from runners.domain.nodes.network import Network
from runners.domain.nodes.placement import Placement

NODE, NETWORK = "node", "network"


def _level(calibration: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "calibration_id": calibration["calibration_id"],
        "alpha_s": calibration["alpha_s"],
        "beta_s_per_byte": calibration["beta_s_per_byte"],
        "r_squared": calibration["r_squared"],
    }


def two_levels(
    node: Mapping[str, Any], network: Mapping[str, Any], stated: Network
) -> dict[str, Any]:
    """details['levels'] of a calibration across emulated nodes: each level's fit, and what
    the network was asked to be (its added latency and shared rate; 0: none added)."""
    return {
        NODE: _level(node),
        NETWORK: _level(network)
        | {
            "stated": stated.text() or "unshaped",
            "added_latency_s": stated.latency_s,
            "shared_bandwidth_bps": stated.bandwidth_bps,
            "described": stated.describe(),
        },
    }


EMULATED_PLATFORM = "emulated-nodes"


def emulated_platform(calibration: Mapping[str, Any], ranks_per_node: int) -> Platform:
    """The emulated nodes a calibration of two levels measured, as a platform: a bus (the one
    loopback every message between nodes shares) whose link is the network level and whose
    nodes' inside is the node level, `ranks_per_node` ranks a node (block placement), the
    calibration's gammas. Raises ValueError for a calibration without levels."""
    levels = (calibration.get("details") or {}).get("levels")
    if not levels:
        raise ValueError(f"calibration {calibration['calibration_id']} has no levels")
    gamma, gammas = calibrated_gammas(calibration)
    return checked(
        Platform(
            EMULATED_PLATFORM,
            "bus",
            _link(levels[NETWORK]),
            gamma,
            ranks_per_node=ranks_per_node,
            intra_node=_link(levels[NODE]),
            source=f"calibration of two levels {calibration['calibration_id']} "
            f"(network {levels[NETWORK].get('stated', '?')})",
            gammas=gammas,
        )
    )


def _link(level: Mapping[str, Any]) -> Link:
    return Link(float(level["alpha_s"]), 1.0 / float(level["beta_s_per_byte"]))


def two_level_s(
    algorithm: str, ranks: int, nbytes: int, dtype: str, op: str, platform: Platform,
    placement: Placement,
) -> float:  # fmt: skip
    """The algorithm's schedule priced with the level each message crosses: inside a node or
    over the network, from the rank-to-node map of `placement` (block or round-robin), each
    message on its own route (contention_free.py)."""
    spec, itemsize = ALGORITHMS[algorithm], DTYPES[dtype].itemsize
    count = nbytes // itemsize
    steps = tuple(spec.schedule_at(itemsize)(rank, ranks, count) for rank in range(ranks))
    placed = dataclasses.replace(platform, node_map=placement.node_map(ranks))
    return contention_free_s(steps, itemsize, placed, platform.gamma(dtype, op))
