"""A calibration of two levels: inside a node (shared memory) and across the network between
nodes, measured by two ping-pongs and kept as one calibration (pure).

The network's ping-pong is the calibration's row (its alpha, beta, curves and gammas: every
message of a group of one rank per node crosses it); the node's is this host's shared-memory
calibration, named and summarised in the row's details['levels'] beside the network as stated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runners.domain.nodes.network import Network

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
