"""The two-level (hierarchical) allreduce: reduce inside each node to its leader, a flat
allreduce among the leaders, broadcast inside each node. A family: `hierarchical(node=N)` for
nodes of N ranks, `leaders=` the flat allreduce the leaders run (recursive doubling unless
said), `order=` how ranks fill the nodes (block unless said), both as the sweep's emulated nodes
(runners.domain.nodes.placement) place them; in a sweep on emulated nodes `node` and `order`
default to the sweep's own.

Each phase is another algorithm's schedule on a subset of the ranks: the node-local reduce is
reduce.binomial_tree on the node's ranks in rank order, the leaders run their allreduce's
schedule with node i's leader (its lowest rank) as rank i, the broadcast is
bcast.binomial_tree. With block placement a node's ranks are contiguous and the nodes in rank
order, so noncommutative ops keep rank order (with the leaders' allreduce keeping node order);
round-robin interleaves them: commutative ops only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache, lru_cache

from runners.domain.algorithms.allreduce import (
    binomial_tree,
    rabenseifner,
    recursive_doubling,
    ring,
)
from runners.domain.algorithms.bcast import binomial_tree as bcast_tree
from runners.domain.algorithms.parameters import Family, Parameter
from runners.domain.algorithms.reduce import binomial_tree as reduce_tree
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import Schedule, Step
from runners.domain.nodes.placement import BLOCK, PLACEMENTS, Placement

LEADERS: Mapping[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in (
        recursive_doubling.DESCRIPTOR,
        rabenseifner.DESCRIPTOR,
        ring.DESCRIPTOR,
        binomial_tree.DESCRIPTOR,
    )
}
# A colour of their own per leaders' algorithm, far from every other allreduce's (the charts'
# test measures it).
SHADES = {
    "recursive_doubling": "#0000f0",
    "rabenseifner": "#323791",
    "ring": "#7dafaf",
    "binomial_tree": "#b96eff",
}
# Phase orders: the node-local reduce, the leaders' phases (their own 0..2 shifted), the bcast.
REDUCE_PHASE, LEADERS_PHASE, BCAST_PHASE = 0, 1, 4


def members(placement: Placement, size: int) -> tuple[tuple[int, ...], ...]:
    """Each node's ranks in rank order, nodes in order of their lowest rank (a last node of
    fewer ranks where `size` does not fill them)."""
    nodes = -(-size // placement.ranks_per_node)
    if placement.order == BLOCK:
        per = placement.ranks_per_node
        return tuple(tuple(range(n * per, min((n + 1) * per, size))) for n in range(nodes))
    return tuple(tuple(range(n, size, nodes)) for n in range(nodes))


def _on(steps: tuple[Step, ...] | list[Step], ranks: tuple[int, ...], phase: int) -> list[Step]:
    """`steps` of a schedule run on the subset `ranks` (its rank i is ranks[i]), their peers
    made communicator ranks and their rounds moved to `phase` (the leaders' own phases kept
    apart after it)."""
    return [
        replace(
            s,
            round=(phase + (s.round[0] if phase == LEADERS_PHASE else 0), s.round[1]),
            send_to=None if s.send_to is None else ranks[s.send_to],
            recv_from=None if s.recv_from is None else ranks[s.recv_from],
        )
        for s in steps
    ]


@cache
def schedule_for(node: int, leaders: str, order: str) -> Schedule:
    """The hierarchical schedule on nodes of `node` ranks placed in `order`, the leaders
    running `leaders`' schedule."""
    placement = Placement(node, order)
    flat = LEADERS[leaders].required_schedule

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        groups = members(placement, size)
        mine = next(g for g in groups if rank in g)
        local = mine.index(rank)
        whole = (0, count)
        steps = _on(reduce_tree.schedule(local, len(mine), count), mine, REDUCE_PHASE)
        if local == 0 and len(groups) > 1:
            heads = tuple(g[0] for g in groups)
            steps += _on(flat(heads.index(rank), len(heads), count), heads, LEADERS_PHASE)
        down = bcast_tree.tree_steps(local, len(mine), lambda a, b: whole, "node broadcast")
        return (*steps, *_on(down, mine, BCAST_PHASE))

    schedule.__doc__ = f"hierarchical allreduce, nodes of {node} ({order}), leaders {leaders}"
    return schedule


def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """The descriptor of one member of the family (parameters.Family.build)."""
    node, leaders, order = int(values["node"]), values["leaders"], values["order"]
    flat = LEADERS[leaders]
    return AlgorithmSpec(
        name,
        f"reduce inside nodes of {node} ({order}) to a leader, {leaders} among the leaders, "
        "broadcast inside each node",
        color=SHADES[leaders],
        short=f"h{node}/{flat.short or leaders}",
        schedule=schedule_for(node, leaders, order),
        parts=lambda ranks: flat.blocks(max(1, -(-ranks // node))),
        commutative_only=flat.commutative_only or order != BLOCK,
        other_p=f"{{alg}}'s leaders run {leaders} on the nodes: " + flat.other_p.format(alg="it"),
    )


FAMILY = Family(
    "hierarchical",
    (
        Parameter("node", from_run="ranks_per_node"),
        Parameter("leaders", tuple(LEADERS), recursive_doubling.DESCRIPTOR.name),
        Parameter("order", PLACEMENTS, BLOCK, from_run="placement"),
    ),
    build,
    help="two-level allreduce: node-local reduce, leaders' allreduce, node-local broadcast",
    example_values=(("node", "2"),),
)
