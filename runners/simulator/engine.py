"""Running schedules in SimGrid on a platform (runners.domain.model.platform).

Two ways to run a point, both on the same simulated network (`auto`: actors up to 64 ranks,
rounds above):
- `actors` (the default): every rank an actor executing its steps one by one. A step sends
  its block to its partner and receives its partner's at once (both started, then both
  awaited, as MPI_Sendrecv), then reduces what it received: gamma * bytes seconds of
  computation on one of its node's cores. Nothing synchronises the ranks between rounds; a
  rank goes on as soon as its own messages are done, as real ranks do.
- `rounds` (the approximation that buys speed at large p): one actor per point issues every
  message of a round at once as a flow between the ranks' nodes (no actor per rank), waits
  for all of them, then for the round's longest reduction. Every round ends on its slowest
  rank, as the schedule-exact model assumes; contention between the round's flows is
  simulated. Its error against `actors` is measured by tests/simulator/ and `make bench`.

Topologies: the crossbar is SimGrid's star zone (every node a full-duplex link of its own to a
non-blocking centre, latency alpha / 2 each, so a message pays alpha in all and a node's
sending and receiving never share a link); fat_tree and torus are SimGrid's cluster zones.
Ranks of one node share its cores and talk over its loopback link (`intra_node`).

SimGrid's default network model adds latency and bandwidth factors, a TCP window bound and the
acknowledgements' reverse traffic; CM02 without a window and without cross traffic is the
alpha-beta model exactly (network/model:CM02, network/TCP-gamma:0, network/crosstraffic:0).

SimGrid's engine runs once per process: `simulate` takes every point and runs them one after
another in simulated time, each timed from its start to its last rank's end, making each
point's steps only when its turn comes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from runners.domain.collectives.schedule import Step, exchange_first
from runners.domain.collectives.schedule import rounds_of as steps_by_round
from runners.domain.model.platform import Link, Platform
from runners.domain.sweep.simulation import SimulatedCall
from runners.simulator.simgrid_module import simgrid

CORE_SPEED = 1e9  # flop/s: a reduction of s seconds is s * CORE_SPEED flops
NETWORK_MODEL = (
    "--cfg=network/model:CM02",
    "--cfg=network/TCP-gamma:0",
    "--cfg=network/crosstraffic:0",
    "--cfg=surf/precision:1e-12",  # the defaults (1e-9 s, 1e-5) round sub-microsecond steps
    "--cfg=maxmin/precision:1e-9",
)
AUTO, ACTORS, ROUNDS = "auto", "actors", "rounds"
MODES = (AUTO, ACTORS, ROUNDS)
ACTORS_UP_TO = 64  # auto: an actor per rank up to this many ranks, rounds above


@dataclass(frozen=True)
class SimPoint:
    """One simulated call: each rank's steps (rank i's at index i), element size, gamma."""

    steps: tuple[tuple[Step, ...], ...]
    itemsize: int
    gamma_s_per_byte: float

    @property
    def ranks(self) -> int:
        return len(self.steps)


def point_of(call: SimulatedCall, platform: Platform) -> SimPoint:
    """What the simulator runs for ``call``: its schedule's steps, on the platform's gamma."""
    return SimPoint(call.steps(), call.itemsize, call.gamma(platform))


def mode_for(ranks: int, mode: str) -> str:
    """The way a point of ``ranks`` ranks runs: ``mode``, or for auto actors up to
    ACTORS_UP_TO ranks, rounds above."""
    if mode != AUTO:
        return mode
    return ACTORS if ranks <= ACTORS_UP_TO else ROUNDS


Told = Callable[[SimPoint, float], None]


def simulate(
    points: Iterable[SimPoint],
    platform: Platform,
    mode: str = AUTO,
    *,
    ranks: int,
    told: Told | None = None,
) -> list[float]:
    """Simulated seconds of each point on ``platform`` (at most ``ranks`` ranks each), in
    order. Points are taken one at a time and ``told`` (point, seconds) as each ends, so a
    large grid never holds every point's steps at once."""
    sg = simgrid()
    engine = sg.Engine(["collsweep", *NETWORK_MODEL, "--log=root.thres:critical"])
    hosts = build(sg, platform, ranks)
    seconds: list[float] = []

    def controller() -> None:
        for point in points:
            start = sg.Engine.clock
            run_one = _by_actors if mode_for(point.ranks, mode) == ACTORS else _by_rounds
            run_one(sg, point, hosts, platform)
            seconds.append(sg.Engine.clock - start)
            if told is not None:
                told(point, seconds[-1])

    sg.Actor.create("controller", hosts[0], controller)
    engine.run()
    return seconds


# --- platforms ----------------------------------------------------------------------------------


def build(sg: Any, platform: Platform, ranks: int) -> list[Any]:
    """The platform's nodes as SimGrid hosts (a core per rank of a node), enough for ``ranks``
    ranks; the list has each rank's host at its index."""
    nodes = -(-ranks // platform.ranks_per_node)
    if platform.topology == "crossbar":
        node_hosts = _star(sg, platform, nodes)
    elif platform.topology == "bus":
        node_hosts = _bus(sg, platform, nodes)
    else:
        node_hosts = _cluster(sg, platform)
    return [node_hosts[platform.node_of(rank)] for rank in range(ranks)]


def _new_host(zone: Any, name: str, platform: Platform) -> Any:
    host = zone.create_host(name, CORE_SPEED)
    host.core_count = platform.ranks_per_node
    return host


def _loopback(sg: Any, zone: Any, name: str, platform: Platform) -> Any:
    inside = platform.intra_node or platform.link
    return zone.create_link(name, inside.bandwidth_Bps).set_latency(inside.latency_s)


def _inside(sg: Any, zone: Any, host: Any, node: int, platform: Platform) -> None:
    """The route between the ranks of one node, over its own loopback (nodes of one rank
    have none)."""
    if platform.ranks_per_node > 1:
        loop = sg.LinkInRoute(_loopback(sg, zone, f"loop{node}", platform))
        zone.add_route(host.netpoint, host.netpoint, None, None, [loop], False)


def _star(sg: Any, platform: Platform, nodes: int) -> list[Any]:
    """The crossbar: a star zone, each node's full-duplex link to the centre alpha / 2 long."""
    zone = sg.NetZone.create_star_zone("crossbar")
    hosts = []
    for node in range(nodes):
        host = _new_host(zone, f"node{node}", platform)
        link = zone.create_split_duplex_link(f"link{node}", platform.link.bandwidth_Bps)
        link.set_latency(platform.link.latency_s / 2)
        up = sg.LinkInRoute(link, sg.LinkInRoute.Direction.UP)
        zone.add_route(host.netpoint, None, None, None, [up], True)
        _inside(sg, zone, host, node, platform)
        hosts.append(host)
    zone.seal()
    return hosts


def _bus(sg: Any, platform: Platform, nodes: int) -> list[Any]:
    """The bus: every pair of nodes joined by the one shared link, so messages in flight at
    once share its bandwidth, whatever their direction (emulated nodes' loopback)."""
    zone = sg.NetZone.create_full_zone("bus")
    hosts = [_new_host(zone, f"node{node}", platform) for node in range(nodes)]
    bus = zone.create_link("bus", platform.link.bandwidth_Bps).set_latency(platform.link.latency_s)
    for node, host in enumerate(hosts):
        _inside(sg, zone, host, node, platform)
        for other in hosts[node + 1 :]:
            zone.add_route(host.netpoint, other.netpoint, None, None, [sg.LinkInRoute(bus)], True)
    zone.seal()
    return hosts


def _cluster(sg: Any, platform: Platform) -> list[Any]:
    """A fat-tree, torus or dragonfly cluster zone of SimGrid's, every link the platform's
    link."""
    root = sg.NetZone.create_full_zone("platform")
    made: dict[int, Any] = {}

    def netpoint(zone: Any, _coordinates: list[int], ident: int) -> tuple[Any, None]:
        made[ident] = _new_host(zone, f"node{ident}", platform)
        return made[ident].netpoint, None

    def loopback(zone: Any, _coordinates: list[int], ident: int) -> Any:
        return _loopback(sg, zone, f"loop{ident}", platform)

    callbacks = sg.ClusterCallbacks(netpoint, loopback, None)
    link: Link = platform.link
    duplex = sg.Link.SharingPolicy.SPLITDUPLEX
    if platform.fat_tree is not None:
        levels, down, up, count = platform.fat_tree
        params = sg.FatTreeParams(levels, list(down), list(up), list(count))
        zone = sg.NetZone.create_fatTree_zone(
            "fat_tree", root, params, callbacks, link.bandwidth_Bps, link.latency_s, duplex
        )
    elif platform.dragonfly is not None:
        groups, chassis, routers, nodes = platform.dragonfly
        shape = sg.DragonflyParams(groups, chassis, routers, nodes)
        zone = sg.NetZone.create_dragonfly_zone(
            "dragonfly", root, shape, callbacks, link.bandwidth_Bps, link.latency_s, duplex
        )
    else:
        dims = list(platform.torus or ())
        zone = sg.NetZone.create_torus_zone(
            "torus", root, dims, callbacks, link.bandwidth_Bps, link.latency_s, duplex
        )
    zone.seal()
    root.seal()
    return [made[i] for i in sorted(made)]


# --- running a point ----------------------------------------------------------------------------


def _by_actors(sg: Any, point: SimPoint, hosts: list[Any], platform: Platform) -> None:
    actors = [
        sg.Actor.create(f"rank{rank}", hosts[rank], _rank, sg, point, rank)
        for rank in range(point.ranks)
    ]
    for actor in actors:
        actor.join()


def _rank(sg: Any, point: SimPoint, rank: int) -> None:
    """One rank's steps: send and receive at once, then reduce what arrived; a round that
    moves everything before it reduces (exchange_first), all its messages at once first."""
    for group in steps_by_round(point.steps[rank]):
        for steps in [group] if exchange_first(group) else [(step,) for step in group]:
            sending = [
                sg.Mailbox.by_name(f"{rank}>{s.send_to}").put_async(rank, s.sent * point.itemsize)
                for s in steps
                if s.send_to is not None
            ]
            for s in steps:
                if s.recv_from is not None:
                    sg.Mailbox.by_name(f"{s.recv_from}>{rank}").get()
            for comm in sending:
                comm.wait()
            for s in steps:
                if s.reduce and s.received:
                    seconds = s.received * point.itemsize * point.gamma_s_per_byte
                    sg.this_actor.execute(seconds * CORE_SPEED)


def _by_rounds(sg: Any, point: SimPoint, hosts: list[Any], platform: Platform) -> None:
    """Each distinct round simulated once: a round starts on an idle network, so a round
    whose flows and reduction equal an earlier one's takes the same time (a ring's 2(p-1)
    rounds are two or three distinct ones), which is then waited again without its flows.
    On a uniform crossbar the flows' sizes alone make a round: every pair of nodes has a path
    of its own at one cost, so which pair moves which block cannot change the round's time."""
    seen: dict[tuple, float] = {}
    for flows, reduction_s in rounds_of(point):
        key = (_round_key(flows, platform), reduction_s)
        if key in seen:
            sg.this_actor.sleep_for(seen[key])
            continue
        start = sg.Engine.clock
        # an empty block goes as 1 byte: SimGrid 3.32's zero-byte flows started together do
        # not overlap (two take twice the latency); one byte more is beta, under a nanosecond
        flowing = [sg.Comm.sendto_async(hosts[a], hosts[b], max(n, 1)) for a, b, n in flows]
        sg.Comm.wait_all(flowing)
        if reduction_s > 0:
            sg.this_actor.sleep_for(reduction_s)
        seen[key] = sg.Engine.clock - start


def _round_key(flows: list[tuple[int, int, int]], platform: Platform) -> tuple:
    """What decides a round's time: its flows, or on a uniform crossbar their sizes."""
    if platform.uniform:
        return tuple(sorted(n for _, _, n in flows))
    return tuple(flows)


def rounds_of(point: SimPoint) -> list[tuple[list[tuple[int, int, int]], float]]:
    """Per round (a rank's second step in a round is a round of its own), its flows (from
    rank, to rank, bytes) and its longest reduction in seconds."""
    rounds: dict[tuple[int, int, int], tuple[list[tuple[int, int, int]], list[float]]] = {}
    for rank, mine in enumerate(point.steps):
        seen: dict[tuple[int, int], int] = {}
        for step in mine:
            index = seen.get(step.round, 0)
            seen[step.round] = index + 1
            flows, reductions = rounds.setdefault((*step.round, index), ([], [0.0]))
            if step.send_to is not None:
                flows.append((rank, step.send_to, step.sent * point.itemsize))
            if step.reduce and step.received:
                reductions.append(step.received * point.itemsize * point.gamma_s_per_byte)
    return [(rounds[key][0], max(rounds[key][1])) for key in sorted(rounds)]
