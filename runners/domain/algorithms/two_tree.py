"""The two-tree (double binary tree: Sanders, Speck & Traff 2009; NCCL's trees): the shapes
of the two trees and the rounds that move a pipeline through both (pure).

The vector is cut in two halves, each half in segments, and each half travels through a
binary tree of its own. The trees are NCCL's in-order binary trees (ncclGetBtree: a node's
subtree is a run of consecutive positions, so a reduction keeps rank order), the second
the first mirrored where the number of positions is even and shifted by one where it is
odd, so a node that is interior in one tree is a leaf in the other (for almost every node):
every node then sends about as much as it receives, and with one send and one receive a
round (a full-duplex port) both halves move at the speed of one.

The rounds follow the paper's edge colouring: the edges are coloured so that no rank sends
on two edges of one colour nor receives on two (a bipartite edge colouring, senders against
receivers), and an edge of colour c carries its next segment in rounds c, c + k, ... once its
sender holds it. The result is a valid schedule for any p by construction, one send and one
receive a rank a round (tests/domain/algorithms/test_two_tree.py counts its rounds against
the paper's n/b + 2 log2 p).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from runners.domain.algorithms.segments import segment_ranges
from runners.domain.collectives.schedule import (
    CORE,
    CriticalPath,
    Range,
    Schedule,
    Step,
    block_bounds,
    counted_by,
)


def btree(positions: int, node: int) -> tuple[int, tuple[int, ...]]:
    """(parent, children) of `node` in NCCL's in-order binary tree of `positions` nodes
    rooted at 0 (parent -1 for the root): node r whose lowest set bit is b has children
    r - b/2 and the first of r + b/2, r + b/4, ... that exists."""
    bit = 1
    while bit < positions and not bit & node:
        bit <<= 1
    if node == 0:
        return -1, ((bit >> 1,) if positions > 1 else ())
    parent = (node ^ bit) | (bit << 1)
    if parent >= positions:
        parent = node ^ bit
    low = bit >> 1
    children = [node - low] if low else []
    while low and node + low >= positions:
        low >>= 1
    if low:
        children.append(node + low)
    return parent, tuple(children)


def second_tree_rank(position: int, positions: int) -> int:
    """The position in the first tree of the node at `position` of the second: the mirror
    where `positions` is even, the shift by one where it is odd (NCCL's ncclGetDtree)."""
    if positions % 2 == 0:
        return positions - 1 - position
    return (position + 1) % positions


@dataclass(frozen=True)
class Edge:
    """One edge of one tree: `sender` passes the tree's segments to `receiver`, upward (a
    reduction toward the tree's root) or downward (a broadcast from it)."""

    sender: int
    receiver: int
    tree: int
    up: bool


def tree_edges(ranks: Sequence[int], tree: int, up: bool) -> list[Edge]:
    """The edges of tree `tree` (0: the first, 1: the second) over `ranks` (position i is
    ranks[i] in the first tree), upward or downward."""
    positions = len(ranks)

    def rank_at(position: int) -> int:
        return ranks[position if tree == 0 else second_tree_rank(position, positions)]

    edges = []
    for position in range(positions):
        for child in btree(positions, position)[1]:
            parent_rank, child_rank = rank_at(position), rank_at(child)
            if up:
                edges.append(Edge(child_rank, parent_rank, tree, True))
            else:
                edges.append(Edge(parent_rank, child_rank, tree, False))
    return edges


def tree_root(ranks: Sequence[int], tree: int) -> int:
    """The rank at the root of tree `tree` over `ranks`."""
    return ranks[0 if tree == 0 else second_tree_rank(0, len(ranks))]


Transfer = tuple[Edge, int]  # an edge and the index of the segment it carries
Plan = tuple[tuple[Transfer, ...], ...]  # the transfers of every round, in order


def dependencies(edges: Sequence[Edge]) -> dict[Edge, tuple[Edge, ...]]:
    """For each edge, the edges whose segment i its sender must have received before it can
    pass segment i on: a downward edge waits for its sender's downward edge in (none at the
    source), or, at a tree's root, for the upward ones into it; an upward edge for the upward
    edges into its sender (its subtree's contributions)."""
    into: dict[tuple[int, int, bool], list[Edge]] = {}
    for edge in edges:
        into.setdefault((edge.receiver, edge.tree, edge.up), []).append(edge)
    needs = {}
    for edge in edges:
        ups = tuple(into.get((edge.sender, edge.tree, True), ()))
        downs = tuple(into.get((edge.sender, edge.tree, False), ()))
        needs[edge] = ups if edge.up or not downs else downs
    return needs


def edge_colours(edges: Sequence[Edge]) -> dict[Edge, int]:
    """A colour for every edge such that no rank sends on two edges of one colour, nor
    receives on two (a bipartite edge colouring, senders on one side and receivers on the
    other, with as many colours as the most edges at one rank: Konig's theorem, by
    swapping two colours along an alternating path where the free ones differ)."""
    sends: dict[int, dict[int, Edge]] = {}
    receives: dict[int, dict[int, Edge]] = {}
    colour: dict[Edge, int] = {}
    for edge in edges:
        out, into = sends.setdefault(edge.sender, {}), receives.setdefault(edge.receiver, {})
        free_out = next(c for c in range(len(out) + 1) if c not in out)
        free_in = next(c for c in range(len(into) + 1) if c not in into)
        if free_out in into:
            _swap_along_path(edge.receiver, free_out, free_in, sends, receives, colour)
        colour[edge] = free_out
        out[free_out] = into[free_out] = edge
    return colour


def _swap_along_path(
    receiver: int,
    a: int,
    b: int,
    sends: dict[int, dict[int, Edge]],
    receives: dict[int, dict[int, Edge]],
    colour: dict[Edge, int],
) -> None:
    """Swap colours a and b on the path leaving `receiver` by its a-coloured edge in, then
    alternating b-coloured edges out and a-coloured edges in, so that a is free at it."""
    path, into, want = [], True, a
    node = receiver
    while True:
        edge = (receives if into else sends).get(node, {}).get(want)
        if edge is None:
            break
        path.append(edge)
        node = edge.sender if into else edge.receiver
        into, want = not into, b if want == a else a
    for edge in path:
        old = colour[edge]
        del sends[edge.sender][old], receives[edge.receiver][old]
    for edge in path:
        new = b if colour[edge] == a else a
        colour[edge] = new
        sends[edge.sender][new] = receives[edge.receiver][new] = edge


def coloured_plan(edges: Sequence[Edge], segments: tuple[int, int]) -> Plan:
    """The rounds moving `segments[t]` segments through every edge of tree t: an edge of
    colour c (edge_colours, k colours) may carry its next segment in rounds c, c + k, ...,
    once its sender holds that segment, so no rank sends or receives twice in a round
    (rounds in which nothing can move are left out)."""
    index = {edge: n for n, edge in enumerate(edges)}
    needs = [tuple(index[d] for d in ds) for ds in dependencies(edges).values()]
    colours = edge_colours(edges)
    period = max(colours.values(), default=0) + 1
    total = [segments[edge.tree] for edge in edges]
    sent = [0] * len(edges)  # segments each edge has delivered before this round
    by_colour = [[n for n, e in enumerate(edges) if colours[e] == c] for c in range(period)]
    waiting = [[n for n in ns if total[n]] for ns in by_colour]
    rounds: list[tuple[Transfer, ...]] = []
    idle = 0
    while any(waiting) and idle < period:
        now = len(rounds) % period
        taken = [n for n in waiting[now] if all(sent[d] > sent[n] for d in needs[n])]
        rounds.append(tuple((edges[n], sent[n]) for n in taken))
        for n in taken:
            sent[n] += 1
        waiting[now] = [n for n in waiting[now] if sent[n] < total[n]]
        idle = 0 if taken else idle + 1
    if any(waiting):
        raise RuntimeError("two-tree plan stalled")  # dependencies are a tree's: never
    return tuple(r for r in rounds if r)


RankRound = tuple[int, Transfer | None, Transfer | None]  # (round, what it sends, receives)
Halves = tuple[tuple[Range, ...], tuple[Range, ...]]  # each half's segments


@dataclass(frozen=True)
class Rounds:
    """A plan and every rank's part of it: each of its rounds with its send and receive."""

    plan: Plan
    by_rank: tuple[tuple[RankRound, ...], ...]


def rounds_of_plan(plan: Plan, size: int) -> Rounds:
    """`plan` with every rank's rounds, each with its send and its receive (None: none)."""
    mine: list[list[RankRound]] = [[] for _ in range(size)]
    for when, transfers in enumerate(plan):
        sends = {edge.sender: (edge, i) for edge, i in transfers}
        receives = {edge.receiver: (edge, i) for edge, i in transfers}
        for rank in sends.keys() | receives.keys():
            mine[rank].append((when, sends.get(rank), receives.get(rank)))
    return Rounds(plan, tuple(tuple(rounds) for rounds in mine))


def plan_path(plan: Plan, halves: Halves) -> CriticalPath:
    """The critical path of `plan` without walking every rank (as walked_path counts it: a
    rank takes one step a round, so a round costs its largest segment)."""
    sent = reduced = 0
    for transfers in plan:
        sizes = [(halves[e.tree][i][1] - halves[e.tree][i][0], e.up) for e, i in transfers]
        sent += max(n for n, _ in sizes)
        reduced += max((n for n, up in sizes if up), default=0)
    return CriticalPath(len(plan), sent, reduced)


def rank_steps(rounds: tuple[RankRound, ...], rank: int, halves: Halves) -> tuple[Step, ...]:
    """A rank's steps: each round's send and receive as one step, segment i of half t the
    range halves[t][i]; a receive on an upward edge is reduced, the sender's data the left
    operand when the sender's rank is lower (a subtree holds consecutive ranks)."""
    steps = []
    for when, send, recv in rounds:
        step_up = recv is not None and recv[0].up
        steps.append(
            Step(
                (CORE, when),
                "reduce" if step_up else "broadcast",
                send_to=None if send is None else send[0].receiver,
                send=None if send is None else halves[send[0].tree][send[1]],
                recv_from=None if recv is None else recv[0].sender,
                recv=None if recv is None else halves[recv[0].tree][recv[1]],
                reduce=step_up,
                mine_is_left=recv is not None and recv[0].sender > rank,
            )
        )
    return tuple(steps)


def halves(count: int, segment: int) -> Halves:
    """The segments of each half of a `count`-element vector (none for an empty half)."""
    bounds = block_bounds(count, 2)

    def cut(start: int, stop: int) -> tuple[Range, ...]:
        if stop == start:
            return ()
        return tuple((start + a, start + b) for a, b in segment_ranges(stop - start, segment))

    return cut(bounds[0], bounds[1]), cut(bounds[1], bounds[2])


def two_tree_schedule(
    segment: int, rounds: Callable[[int, int, int], Rounds], doc: str
) -> Schedule:
    """The schedule of a two-tree of `segment`-element segments whose plan for p ranks and
    two halves of s1 and s2 segments is `rounds(p, s1, s2)` (cached there), with its critical
    path counted from the plan (counted_by: a walk of every rank is O(p) times longer)."""

    @lru_cache(maxsize=1024)
    def schedule(rank: int, size: int, count: int) -> tuple[Step, ...]:
        cut = halves(count, segment)
        return rank_steps(rounds(size, len(cut[0]), len(cut[1])).by_rank[rank], rank, cut)

    def count(size: int, elements: int) -> CriticalPath:
        cut = halves(elements, segment)
        return plan_path(rounds(size, len(cut[0]), len(cut[1])).plan, cut)

    schedule.__doc__ = doc
    counted_by(schedule)(count)
    return schedule
