"""Schedule-exact prediction: every round of an algorithm's real schedule priced at its own size.

The closed-form model (runners.domain.model.closed_form, the `textbook` variant) charges every
message alpha + m * beta with one (alpha, beta) chosen by the payload n. Here each round of the
descriptor's schedule (folds and uneven blocks included) is priced with the calibrated
point-to-point curve itself at that round's message size (`MessageCost`: measured medians,
made monotone and interpolated), plus gamma for the bytes that round reduces. Ranks run a round
at the same time, so a round costs what its slowest rank pays; rounds add up.

The variants, each adding one term to the one before (`Costs` holds what a variant knows):
- `schedule`: every message priced on the ping-pong's one-way curve;
- `overheads`: the implementation family's measured per-call and per-round costs
  (runners.domain.model.overheads) replace the curve's start-up: a round costs round_s plus
  what its message costs beyond an empty one, a call adds call_s (the `software_s` term);
- `contention`: a step that sends and receives at once is priced on the exchange curve (both
  ranks copying through the same memory at once) instead of the one-way curve, and the call's
  copy of its input into the result buffer on the copy curve (both ranks copying at once),
  counted in bandwidth_s.

`two_level` is not one more term but `schedule` on ranks split into nodes (`Levels`): a step
whose partners sit on its own node is priced on the node's curve, one that crosses on the
network's, and on a shared network (emulated nodes' one loopback, a bus) a rank's messages
across take at least what all of the round's bytes between nodes cost on the network's curve.

Pure: no MPI, no store.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from runners.domain.collectives.schedule import Schedule, Step
from runners.domain.model.closed_form import Prediction
from runners.domain.model.message_cost import MessageCost
from runners.domain.model.sampled import sampled

TEXTBOOK, SCHEDULE, OVERHEADS, CONTENTION = "textbook", "schedule", "overheads", "contention"
TWO_LEVEL = "two_level"
VARIANTS = (TEXTBOOK, SCHEDULE, OVERHEADS, CONTENTION, TWO_LEVEL)


def stand_ins(wanted: str) -> tuple[str, ...]:
    """The variants that may price a point asked for in `wanted` (the most complete first): it
    and those before it, except that two_level's skip contention (one node's memory, not a
    network between nodes)."""
    before = VARIANTS[: VARIANTS.index(wanted) + 1]
    return tuple(v for v in reversed(before) if not (wanted == TWO_LEVEL and v == CONTENTION))


# (elements moved, reduced, both ways at once, both partners on the rank's node) of one MPI call
StepLoad = tuple[int, int, bool, bool]
NodeMap = tuple[int, ...]  # every rank's node, in rank order
RankRound = tuple[StepLoad, ...]  # one rank's steps in one round


@dataclass(frozen=True)
class Levels:
    """Ranks on nodes (two_level): the costs of a message inside a node, where each rank of a
    group sits (`node_map(ranks)`: every rank's node), and whether the network is one shared
    bus (every message between nodes shares its bandwidth) rather than a port per node."""

    node: Costs
    node_map: Callable[[int], NodeMap]
    bus: bool = True


@dataclass(frozen=True)
class Costs:
    """What one variant knows of a message, a round and a call on one calibration.

    `exchange` (contention) prices steps that send and receive at once; `round_s` and `call_s`
    (overheads) are the implementation family's, round_s None where unknown: then a message's
    start-up is the curve's own; `copy` (contention) prices the call's copy of its input;
    `levels` (two_level): the curves above are the network's, these the node's.
    """

    one_way: MessageCost
    exchange: MessageCost | None = None
    round_s: float | None = None
    call_s: float = 0.0
    copy: MessageCost | None = None
    levels: Levels | None = None

    def node_map(self, ranks: int) -> NodeMap | None:
        """Every rank's node in a group of `ranks` (None: one level, no nodes)."""
        return None if self.levels is None else self.levels.node_map(ranks)

    def shared(self) -> bool:
        """Whether the round's messages between nodes share one network (a bus)."""
        return self.levels is not None and self.levels.bus

    def input_copy(self, nbytes: float) -> float:
        """What copying the input costs beyond an empty copy (0 without a copy curve)."""
        return 0.0 if self.copy is None else self.copy(nbytes) - self.copy(0)

    def input_copies(self, nbytes: np.ndarray) -> np.ndarray:
        """input_copy at every size of `nbytes`."""
        if self.copy is None:
            return np.zeros(nbytes.shape)
        return self.copy.many(nbytes) - self.copy(0)

    def curve(self, both_ways: bool) -> MessageCost:
        """The curve a message is priced on: the exchange curve for a step that sends and
        receives at once (where known), else the one-way curve."""
        return self.exchange if both_ways and self.exchange is not None else self.one_way

    def message(self, nbytes: float, both_ways: bool) -> tuple[float, float]:
        """(start-up s, the rest s) of one message: the start-up is what an empty one costs."""
        curve = self.curve(both_ways)
        empty = curve(0)
        return empty, curve(nbytes) - empty

    def at(self, inside: bool) -> Costs:
        """The costs of a step inside a node (the node's, with levels) or across (these)."""
        return self.levels.node if inside and self.levels is not None else self

    def of_rank(self, steps: RankRound) -> Costs:
        """Whose round start-up a rank's steps of one round pay: the node's when all of them
        stay inside it, else these."""
        return self.at(all(inside for _, _, _, inside in steps))


@lru_cache(maxsize=4096)
def round_loads(
    schedule: Schedule, size: int, count: int, node_map: NodeMap | None = None
) -> tuple[tuple[RankRound, ...], ...]:
    """Per round (in order), the distinct step loads of the ranks taking part in it.

    A step moves max(sent, received) elements (a full-duplex exchange; an empty block is still
    a message), reduces what it received when it reduces, is an exchange when it both sends
    and receives, and stays inside its node when every partner sits on the rank's node (by
    `node_map`; without one, no step does).
    """
    rounds: dict[tuple[int, int], dict[int, RankRound]] = {}
    for rank in range(size):
        for step in schedule(rank, size, count):
            both_ways = step.send is not None and step.recv is not None
            inside = node_map is not None and not _crosses(step, rank, node_map)
            moved = max(step.sent, step.received)
            load = (moved, step.received if step.reduce else 0, both_ways, inside)
            steps = rounds.setdefault(step.round, {})
            steps[rank] = (*steps.get(rank, ()), load)
    return tuple(tuple(sorted(set(rounds[key].values()))) for key in sorted(rounds))


@lru_cache(maxsize=4096)
def round_crossings(
    schedule: Schedule, size: int, count: int, node_map: NodeMap
) -> tuple[int, ...]:
    """Per round (in the order of round_loads), the elements all ranks send to other nodes."""
    sent: dict[tuple[int, int], int] = {}
    for rank in range(size):
        for step in schedule(rank, size, count):
            across = step.send_to is not None and node_map[step.send_to] != node_map[rank]
            sent[step.round] = sent.get(step.round, 0) + (step.sent if across else 0)
    return tuple(sent[key] for key in sorted(sent))


def _crosses(step: Step, rank: int, node_map: NodeMap) -> bool:
    return any(
        peer is not None and node_map[peer] != node_map[rank]
        for peer in (step.send_to, step.recv_from)
    )


def _schedule_loads(
    schedule: Schedule, ranks: int, count: int, costs: Costs
) -> tuple[tuple[tuple[RankRound, ...], ...], tuple[int, ...]]:
    """round_loads of `count` elements on the costs' nodes, and each round's elements between
    nodes where they share one network (zeros where they do not)."""
    node_map = costs.node_map(ranks)
    loads = round_loads(schedule, ranks, count, node_map)
    if node_map is None or not costs.shared():
        return loads, (0,) * len(loads)
    return loads, round_crossings(schedule, ranks, count, node_map)


def schedule_prediction(
    schedule: Schedule,
    parts: int,
    ranks: int,
    nbytes: float,
    itemsize: int,
    costs: Costs,
    gamma: float,
    *,
    smooth: bool = False,
) -> Prediction:
    """The schedule's time on `ranks` ranks for `nbytes` bytes, each round priced on its own.

    Exact for a whole number of elements; with `smooth` (or a fractional count) the schedule is
    walked with one element per block and every round's load scaled with the payload, as
    models.predict(smooth=True) scales its counts. The split: latency_s is the rounds'
    start-up (round_s each, or their messages' empty cost), bandwidth_s what the messages cost
    beyond it, reduction_s gamma times the reduced bytes, all on each round's slowest rank;
    software_s the call's overhead.
    """
    if ranks == 1:
        return Prediction(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    count = nbytes / itemsize
    if not smooth and count == int(count):
        walked, scale = int(count), 1.0
    elif not parts:  # its rounds depend on the count (descriptor.by_count)
        walked = max(1, math.ceil(count))
        scale = count / walked
    elif count >= parts or parts == 1:
        walked, scale = parts, count / parts
    else:
        walked, scale = max(1, math.ceil(count)), 1.0
    loads, crossing = _schedule_loads(schedule, ranks, walked, costs)
    per_element = scale * itemsize
    terms = [
        _round_terms(load, per_element, costs, gamma, across * per_element)
        for load, across in zip(loads, crossing, strict=True)
    ]
    return Prediction(
        latency_s=sum(t.startup_s for t in terms),
        bandwidth_s=sum(t.message_s for t in terms) + costs.input_copy(nbytes),
        reduction_s=sum(t.reduction_s for t in terms),
        messages=float(sum(t.messages for t in terms)),
        bytes_sent=sum(t.moved for t in terms),
        bytes_reduced=sum(t.reduced for t in terms),
        software_s=costs.call_s,
    )


def smooth_totals(
    schedule: Schedule,
    parts: int,
    ranks: int,
    nbytes: np.ndarray,
    itemsize: int,
    costs: Costs,
    gamma: float,
) -> np.ndarray:
    """schedule_prediction(..., smooth=True).total_s at every size in `nbytes`, priced over
    the whole array at once. Where every part holds an element the round loads are the same
    for every size and only the bytes per element scale (block = nbytes / parts); below that
    the schedule of ceil(count) elements is priced at whole elements (block = itemsize), one
    numpy evaluation per distinct count."""
    nbytes = np.asarray(nbytes, dtype=float)
    totals = np.zeros(nbytes.shape)
    if ranks == 1:
        return totals
    count = nbytes / itemsize
    if not parts:  # its rounds depend on the count (descriptor.by_count): sampled.py
        return sampled(functools.partial(_walked, schedule, ranks, itemsize, costs, gamma), count)[
            :, 0
        ]
    scaled = (count >= parts) | (parts == 1)
    if scaled.any():
        walked = _schedule_loads(schedule, ranks, parts, costs)
        totals[scaled] = _loads_totals(walked, nbytes[scaled], nbytes[scaled] / parts, costs, gamma)
    whole = np.maximum(1, np.ceil(count)).astype(int)
    for elements in np.unique(whole[~scaled]):
        here = ~scaled & (whole == elements)
        walked = _schedule_loads(schedule, ranks, int(elements), costs)
        block = np.full(int(here.sum()), float(itemsize))
        totals[here] = _loads_totals(walked, nbytes[here], block, costs, gamma)
    return totals


def _walked(
    schedule: Schedule, ranks: int, itemsize: int, costs: Costs, gamma: float, elements: int
) -> np.ndarray:
    """The schedule's total at a whole count (one walk, kept by round_loads' cache)."""
    at, block = np.array([float(elements * itemsize)]), np.array([float(itemsize)])
    return _loads_totals(_schedule_loads(schedule, ranks, elements, costs), at, block, costs, gamma)


def _loads_totals(
    walked: tuple[tuple[tuple[RankRound, ...], ...], tuple[int, ...]],
    nbytes: np.ndarray,
    block: np.ndarray,
    costs: Costs,
    gamma: float,
) -> np.ndarray:
    """Every round's slowest rank, summed, with `block` bytes per element moved or reduced,
    plus the call's costs for payloads of `nbytes` (see smooth_totals); `walked`: the rounds'
    loads and elements between nodes (_schedule_loads)."""
    total = costs.call_s + costs.input_copies(nbytes)
    for ranks, across in zip(*walked, strict=True):
        bus = costs.one_way.many(across * block) if across else None
        paid = [_rank_totals(steps, block, costs, gamma, bus) for steps in ranks]
        total = total + functools.reduce(np.maximum, paid)
    return total


def _rank_totals(
    steps: RankRound, block: np.ndarray, costs: Costs, gamma: float, bus: np.ndarray | None
) -> np.ndarray:
    """One rank's round at every size (see _loads_totals): its start-up (its level's round_s,
    or its messages' own), its messages beyond that, at least the bus when it crosses, and its
    reductions."""
    own = costs.of_rank(steps)
    round_s = own.round_s
    fixed = round_s is not None  # a round's start-up is round_s, not its messages' own

    def beyond(curve: MessageCost, nbytes: np.ndarray) -> np.ndarray:
        return curve.many(nbytes) - (curve(0) if fixed else 0.0)

    curves = [costs.at(inside).curve(both) for _, _, both, inside in steps]
    sent = sum(beyond(c, m * block) for c, (m, _, _, _) in zip(curves, steps, strict=True))
    if bus is not None and own is costs:  # a rank crossing waits for all that crosses
        sent = np.maximum(sent, bus - (costs.one_way(0) if fixed else 0.0))
    reduced = sum(r for _, r, _, _ in steps) * block * gamma
    return sent + reduced + (round_s or 0.0)


@dataclass(frozen=True)
class _Priced:
    """One rank's round, priced: its start-up (its level's round_s, else its messages' empty
    cost) and the rest, reduction, bytes."""

    messages: int
    startup_s: float
    message_s: float
    reduction_s: float
    moved: float
    reduced: float


def _round_terms(
    ranks: tuple[RankRound, ...],
    bytes_per_element: float,
    costs: Costs,
    gamma: float,
    bus_bytes: float = 0.0,
) -> _Priced:
    """The round as its slowest rank pays it; a rank with a message between nodes waits at
    least for all of the round's `bus_bytes` to cross the shared network."""
    bus = costs.one_way(bus_bytes) if bus_bytes else 0.0

    def priced(steps: RankRound) -> _Priced:
        own = costs.of_rank(steps)
        moved = [m * bytes_per_element for m, _, _, _ in steps]
        parts = [
            costs.at(inside).message(nbytes, both)
            for nbytes, (_, _, both, inside) in zip(moved, steps, strict=True)
        ]
        empties, rest = sum(p[0] for p in parts), sum(p[1] for p in parts)
        startup = empties if own.round_s is None else own.round_s
        if bus and own is costs:
            rest = max(rest, bus - (empties if own.round_s is None else costs.one_way(0)))
        reduced = sum(r for _, r, _, _ in steps) * bytes_per_element
        return _Priced(len(steps), startup, rest, reduced * gamma, sum(moved), reduced)

    return max(
        (priced(steps) for steps in ranks), key=lambda t: t.startup_s + t.message_s + t.reduction_s
    )
