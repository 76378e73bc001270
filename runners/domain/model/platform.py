"""Platforms to simulate on (TOML files, docs/guide/simulation.md), and a schedule's
contention-free price on one (pure: no SimGrid).

A platform is nodes joined by a network, `ranks_per_node` ranks on each (block placement: rank
r on node r // ranks_per_node), a reduction costing gamma per byte:
- `crossbar`: every pair of nodes joined by a full-duplex path of its own: no contention; its
  link's latency and bandwidth are the whole path's, so a message costs alpha + m * beta;
- `bus`: every pair of nodes joined by the one link, which every message in flight shares
  whatever its direction (emulated nodes' loopback, runners.domain.model.levels); alone on it,
  a message costs alpha + m * beta;
- `fat_tree`: SimGrid's k-level fat-tree (levels, down, up and link counts per level: fewer up
  than down links is a taper, e.g. down 4, up 2 is 2:1), every link the same latency and
  bandwidth, a message crossing 2 links within a leaf switch, 4 through the next level, ...;
- `torus`: nodes on a wrap-around grid, a message crossing one link per hop in each dimension;
- `dragonfly`: SimGrid's dragonfly (groups of chassis of routers, each router holding nodes),
  a message crossing its node's link, the routers' links of SimGrid's minimal route, and the
  target node's link.
Ranks of one node talk over `intra_node`.

`route` gives a message's latency and bandwidth alone on the network, which
contention_free.py walks along a schedule's dependencies; on the crossbar that is exactly the
alpha-beta-gamma model (pricing.schedule_prediction, which `schedule_exact` calls).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.errors import BadInput
from runners.domain.model.calibration_id import GammaKey
from runners.domain.model.pricing import Costs, MessageCost, schedule_prediction

TOPOLOGIES = ("crossbar", "bus", "fat_tree", "torus", "dragonfly")
# a dragonfly's shape: (groups, blue links between two groups), (chassis a group, black links
# between two of them), (routers a chassis, green links between two of them), nodes a router
Dragonfly = tuple[tuple[int, int], tuple[int, int], tuple[int, int], int]
MAX_FILE_BYTES = 64 * 1024
MAX_NODES = 65536
MAX_RANKS_PER_NODE = 4096
DEFAULT_GAMMA_S_PER_BYTE = 1e-9


class PlatformError(BadInput):
    """A platform file or flag that cannot describe a machine: one line, exit 2."""


@dataclass(frozen=True)
class Link:
    """A link's latency (s) and bandwidth (bytes/s)."""

    latency_s: float
    bandwidth_Bps: float

    @property
    def beta_s_per_byte(self) -> float:
        return 1.0 / self.bandwidth_Bps


@dataclass(frozen=True)
class Platform:
    """A modelled machine (see the module's docstring)."""

    name: str
    topology: str
    link: Link
    gamma_s_per_byte: float = DEFAULT_GAMMA_S_PER_BYTE
    ranks_per_node: int = 1
    intra_node: Link | None = None
    source: str = ""
    fat_tree: tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None = None
    torus: tuple[int, ...] | None = None
    dragonfly: Dragonfly | None = None
    gammas: dict[str, float] = field(default_factory=dict)  # per GammaKey ('float32/sum')
    node_map: tuple[int, ...] = ()  # each rank's node where not in blocks (emulated nodes)

    @property
    def nodes(self) -> int | None:
        """How many nodes it has (None: as many as the ranks need)."""
        if self.fat_tree is not None:
            return math.prod(self.fat_tree[1])
        if self.torus is not None:
            return math.prod(self.torus)
        if self.dragonfly is not None:
            (groups, _), (chassis, _), (routers, _), nodes = self.dragonfly
            return groups * chassis * routers * nodes
        return None

    @property
    def uniform(self) -> bool:
        """Whether every message takes the same route cost (a crossbar, one rank per node):
        then the contention-free price is pricing.py's schedule-exact one."""
        return self.topology == "crossbar" and self.ranks_per_node == 1

    def node_of(self, rank: int) -> int:
        """The node rank `rank` sits on: its node_map's, else block placement's."""
        return self.node_map[rank] if self.node_map else rank // self.ranks_per_node

    def gamma(self, dtype: str, op: str) -> float:
        """Seconds per reduced byte of ``dtype`` under ``op`` (the calibration's, where the
        platform was made from one; else the platform's one gamma)."""
        return self.gammas.get(str(GammaKey(dtype, op)), self.gamma_s_per_byte)

    def room_problem(self, ranks: int) -> str | None:
        """Why ``ranks`` ranks do not fit, or None."""
        nodes = self.nodes
        if nodes is not None and ranks > nodes * self.ranks_per_node:
            return (
                f"platform {self.name} holds {nodes * self.ranks_per_node} ranks "
                f"({nodes} nodes x {self.ranks_per_node}); {ranks} asked"
            )
        if ranks > self.ranks_per_node and self.ranks_per_node > 1 and self.intra_node is None:
            return f"platform {self.name} has {self.ranks_per_node} ranks per node: give intra_node"
        return None

    def route(self, src: int, dst: int) -> tuple[float, float]:
        """(latency s, seconds per byte) of a message from rank ``src`` to rank ``dst`` alone on
        the network."""
        a, b = self.node_of(src), self.node_of(dst)
        if a == b:
            inside = self.intra_node or self.link
            return inside.latency_s, inside.beta_s_per_byte
        return self.link.latency_s * self._links_between(a, b), self.link.beta_s_per_byte

    def _links_between(self, a: int, b: int) -> int:
        if self.fat_tree is not None:
            span = 1
            for level, down in enumerate(self.fat_tree[1]):
                span *= down
                if a // span == b // span:
                    return 2 * (level + 1)
            return 2 * self.fat_tree[0]
        if self.dragonfly is not None:
            return dragonfly_links(self.dragonfly, a, b)
        if self.torus is not None:
            hops, stride = 0, 1
            for size in self.torus:
                i, j = (a // stride) % size, (b // stride) % size
                hops += min(abs(i - j), size - abs(i - j))
                stride *= size
            return hops
        return 1

    def with_parameters(
        self, alpha: float | None, beta: float | None, gamma: float | None
    ) -> Platform:
        """The platform with its network link's latency and seconds per byte and its gamma
        replaced where given (`--alpha/--beta/--gamma`)."""
        link = Link(
            self.link.latency_s if alpha is None else alpha,
            self.link.bandwidth_Bps if beta is None else 1.0 / _positive("beta", beta),
        )
        changed = dataclasses.replace(self, link=link)
        if gamma is not None:
            changed = dataclasses.replace(changed, gamma_s_per_byte=gamma, gammas={})
        return checked(changed)


def _dragonfly_of(raw: Any) -> Dragonfly | None:
    """A dragonfly's shape from JSON's lists."""
    if not raw:
        return None
    groups, chassis, routers, nodes = raw
    return (groups[0], groups[1]), (chassis[0], chassis[1]), (routers[0], routers[1]), int(nodes)


def dragonfly_coordinates(shape: Dragonfly, node: int) -> tuple[int, int, int]:
    """(group, chassis, router) of a node, numbered as SimGrid's dragonfly zone numbers them."""
    (_, _), (chassis, _), (routers, _), nodes = shape
    router = node // nodes
    return router // (chassis * routers), router // routers % chassis, router % routers


def dragonfly_links(shape: Dragonfly, a: int, b: int) -> int:
    """Links a message crosses between two nodes of a dragonfly on SimGrid's minimal route."""
    here, there = dragonfly_coordinates(shape, a), dragonfly_coordinates(shape, b)
    return 2 + _router_hops(here, there)


def _router_hops(here: tuple[int, int, int], there: tuple[int, int, int]) -> int:
    """Router-to-router links between two routers (group, chassis, router) as SimGrid 3.32's
    dragonfly zone routes (DragonflyZone::get_local_route, checked against its routes for
    every pair in tests/simulator/): toward another group, a green link to the router of the
    chassis numbered as that group, a black link to chassis 0 where not there yet, then the
    blue link, landing on router (target group, chassis 0, numbered as the source group);
    then a green link to the target's router number and a black link to its chassis. After
    that green link SimGrid's route continues from that router number in chassis 0,
    whichever chassis the link was in, so a black link is then taken only toward a chassis
    other than 0."""
    hops = 0
    group, chassis, router = here
    if group != there[0]:
        hops += int(router != there[0]) + int(chassis != 0) + 1
        group, chassis, router = there[0], 0, here[0]
    if router != there[2]:
        hops, chassis = hops + 1, 0
    return hops + int(chassis != there[1])


def _positive(what: str, value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise PlatformError(f"{what} = {value!r}: give a number above 0")
    return value


def checked(platform: Platform) -> Platform:
    """The platform, or PlatformError naming what no machine has."""
    links = [("link", platform.link)]
    if platform.intra_node is not None:
        links.append(("intra_node", platform.intra_node))
    for what, link in links:
        if not (math.isfinite(link.latency_s) and 0 <= link.latency_s <= 1.0):
            raise PlatformError(f"{what} latency {link.latency_s!r} s: give 0 to 1 s")
        if not (math.isfinite(link.bandwidth_Bps) and 1e3 <= link.bandwidth_Bps <= 1e15):
            raise PlatformError(
                f"{what} bandwidth {link.bandwidth_Bps!r} B/s: give 1 KB/s to 1 PB/s"
            )
    for gamma in (platform.gamma_s_per_byte, *platform.gammas.values()):
        if not (math.isfinite(gamma) and 0 <= gamma <= 1.0):
            raise PlatformError(f"gamma {gamma!r} s per byte: give 0 to 1 s")
    if not 1 <= platform.ranks_per_node <= MAX_RANKS_PER_NODE:
        raise PlatformError(
            f"ranks_per_node {platform.ranks_per_node}: give 1 to {MAX_RANKS_PER_NODE}"
        )
    if platform.topology not in TOPOLOGIES:
        raise PlatformError(f"topology {platform.topology!r}: give one of {', '.join(TOPOLOGIES)}")
    nodes = platform.nodes
    if nodes is not None and not 1 <= nodes <= MAX_NODES:
        raise PlatformError(f"platform {platform.name} has {nodes} nodes: give 1 to {MAX_NODES}")
    return platform


def crossbar(alpha: float = 2e-6, beta: float = 8e-11, gamma: float = 1e-9) -> Platform:
    """The contention-free crossbar: alpha per message, beta per byte, gamma per reduced byte."""
    return checked(
        Platform(
            "crossbar",
            "crossbar",
            Link(alpha, 1.0 / _positive("beta", beta)),
            gamma,
            source="no machine: the alpha-beta-gamma model itself",
        )
    )


def calibrated_gammas(calibration: Mapping[str, Any]) -> tuple[float, dict[str, float]]:
    """A calibration's gammas per GammaKey, and the one a platform takes where a datatype and
    op have none (the first; the default without any)."""
    gammas = {str(k): float(v) for k, v in (calibration.get("gammas") or {}).items()}
    return next(iter(gammas.values()), DEFAULT_GAMMA_S_PER_BYTE), gammas


def from_calibration(calibration: Mapping[str, Any]) -> Platform:
    """`this-host`: the machine the calibration measured, as one node holding every rank, its
    ranks talking over one link of the ping-pong's alpha and beta that all their messages
    share (as their copies share the host's memory: an exchange's two directions take turns),
    its gammas the calibration's, per datatype and op."""
    gamma, gammas = calibrated_gammas(calibration)
    when = calibration.get("created_at")
    link = Link(float(calibration["alpha_s"]), 1.0 / float(calibration["beta_s_per_byte"]))
    return checked(
        Platform(
            "this-host",
            "crossbar",
            link,
            gamma,
            ranks_per_node=MAX_RANKS_PER_NODE,
            intra_node=link,
            source=f"ping-pong calibration {calibration['calibration_id']} of "
            f"{calibration.get('host') or 'this host'} ({when:%Y-%m-%d %H:%M} UTC)"
            if when is not None
            else f"ping-pong calibration {calibration['calibration_id']}",
            gammas=gammas,
        )
    )


def platform_json(platform: Platform) -> dict[str, Any]:
    """The platform as JSON-ready data (platform_of_json reads it back)."""
    data = dataclasses.asdict(platform)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}


def platform_of_json(data: Mapping[str, Any]) -> Platform:
    """A platform from platform_json's data, checked."""
    inside = data.get("intra_node")
    tree = data.get("fat_tree")
    return checked(
        Platform(
            **{
                **data,
                "link": Link(**data["link"]),
                "intra_node": Link(**inside) if inside else None,
                "fat_tree": (tree[0], *(tuple(level) for level in tree[1:])) if tree else None,
                "torus": tuple(data["torus"]) if data.get("torus") else None,
                "dragonfly": _dragonfly_of(data.get("dragonfly")),
                "gammas": dict(data.get("gammas") or {}),
                "node_map": tuple(data.get("node_map") or ()),
            }
        )
    )


# --- prices -------------------------------------------------------------------------------------


def schedule_exact(
    algorithm: AlgorithmSpec,
    ranks: int,
    nbytes: int,
    itemsize: int,
    platform: Platform,
    gamma: float | None = None,
) -> float:
    """The alpha-beta-gamma model's schedule-exact price on the platform's link (pricing.py):
    every message alpha + m * beta whatever its route; gamma the platform's unless given."""
    big = 1e9
    alpha, beta = platform.link.latency_s, platform.link.beta_s_per_byte
    costs = Costs(one_way=MessageCost((0.0, big), (alpha, alpha + big * beta)))
    price = schedule_prediction(
        algorithm.schedule_at(itemsize),
        algorithm.blocks(ranks),
        ranks,
        nbytes,
        itemsize,
        costs,
        platform.gamma_s_per_byte if gamma is None else gamma,
    )
    return price.total_s
