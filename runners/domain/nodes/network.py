"""A network between emulated nodes as a spec states it, `latency=20us,bandwidth=10Gbit`, and
the traffic shaping that gives it to one loopback (pure: the tc words, never run here).

Latency is added per packet by netem's delay, bandwidth by a rate: netem's own when there is a
delay, else a token bucket (tbf). One loopback carries all traffic between the emulated nodes,
so its rate is shared by every direction and every pair of nodes: a bus, not a switch's
full-duplex ports (said wherever the network is described).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runners.domain.units import format_seconds

BIT_RATES = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}  # network rates are decimal
TIMES = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
MOST_LATENCY_S = 1.0
LEAST_BANDWIDTH_BPS, MOST_BANDWIDTH_BPS = 1e6, 1e12
TBF_BURST_BYTES = 2 * 65536  # two of loopback's largest packets: less and tbf drops them
TBF_QUEUE_S = 1  # how long a packet may wait in the bucket's queue before it is dropped
EXAMPLE = "latency=20us,bandwidth=10Gbit"
NAMESPACE_ENV = "COLLSWEEP_NETWORK_NAMESPACE"  # set in a launch's own namespace: its ranks
# count the loopback's bytes as the network's (runners.ranks.probe)


@dataclass(frozen=True)
class Network:
    """Added one-way latency per packet (0: the transport's own) and the rate every transfer
    between emulated nodes shares, bits a second (0: unshaped)."""

    latency_s: float = 0.0
    bandwidth_bps: float = 0.0

    @property
    def shaped(self) -> bool:
        """Whether anything is added to the loopback at all."""
        return self.latency_s > 0 or self.bandwidth_bps > 0

    def text(self) -> str:
        """The spec's form, read back equal by parse_network ('' when unshaped): each value in
        the largest unit that keeps it a whole number."""
        parts = []
        if self.latency_s:
            parts.append(f"latency={_whole(self.latency_s, TIMES, 'ns')}")
        if self.bandwidth_bps:
            rates = {f"{p if p == 'k' else p.upper()}bit": size for p, size in BIT_RATES.items()}
            parts.append(f"bandwidth={_whole(self.bandwidth_bps, rates, 'bit')}")
        return ",".join(parts)

    def qdisc(self) -> list[str]:
        """The words after `tc qdisc add dev lo root` that shape the loopback ([]: nothing)."""
        rate = [f"{int(self.bandwidth_bps)}bit"] if self.bandwidth_bps else []
        if self.latency_s:
            delay = f"{_number(self.latency_s * 1e6)}us"
            return ["netem", "delay", delay, *(["rate", *rate] if rate else [])]
        if rate:
            burst, queue = str(TBF_BURST_BYTES), f"{TBF_QUEUE_S}s"
            return ["tbf", "rate", *rate, "burst", burst, "latency", queue]
        return []

    def describe(self) -> str:
        """For people: what the loopback adds, and that its rate is shared."""
        if not self.shaped:
            return "unshaped loopback (the TCP transport's own latency and bandwidth)"
        said = []
        if self.latency_s:
            said.append(f"{format_seconds(self.latency_s)} added to every packet (netem)")
        if self.bandwidth_bps:
            shaper = "netem" if self.latency_s else "tbf"
            said.append(
                f"{_number(self.bandwidth_bps / 1e9)} Gbit/s shared by all traffic between "
                f"nodes ({shaper}; one loopback: a bus, not full-duplex ports)"
            )
        return "; ".join(said)


def nodes_line(ranks_per_node: int, order: str, network: Network) -> str:
    """What a run on emulated nodes ran on, in one line for people."""
    per = f"{ranks_per_node} rank{'s' * (ranks_per_node > 1)}"
    return (
        f"emulated nodes of {per} ({order}) on this host, MPICH's cliques over TCP in a "
        f"private network namespace; network: {network.describe()} (docs/guide/nodes.md)"
    )


def _number(value: float) -> str:
    return f"{value:.6g}"


def _whole(value: float, units: Mapping[str, float], smallest: str) -> str:
    """`value` in the largest of `units` that keeps it a whole number ('20us', '10Gbit')."""
    for unit, size in sorted(units.items(), key=lambda item: -item[1]):
        scaled = value / size
        if abs(scaled - round(scaled)) < 1e-9 * max(1.0, abs(scaled)) and round(scaled) >= 1:
            return f"{round(scaled)}{unit}"
    return f"{_number(value / units[smallest])}{smallest}"


_PART = re.compile(r"\s*(latency|bandwidth)\s*=\s*([0-9.]+(?:e[+-]?\d+)?)\s*([a-z/]*)\s*")


def checked_network_text(raw: Any) -> str:
    """A spec's `network` value, checked and kept as written ('' for none); ValueError."""
    if not isinstance(raw, str):
        raise ValueError(f"network must be text such as {EXAMPLE!r}, got {raw!r}")
    if raw.strip():
        parse_network(raw)
    return raw.strip()


def parse_network(text: str) -> Network:
    """`latency=20us,bandwidth=10Gbit` (either part may be left out) as a Network; ValueError
    with one line for anything else."""
    values: dict[str, float] = {}
    for part in text.split(","):
        found = _PART.fullmatch(part.lower())
        if not found or found.group(1) in values:
            raise ValueError(
                f"network {text!r}: give latency=TIME and bandwidth=RATE, e.g. {EXAMPLE}"
            )
        name, number, unit = found.groups()
        try:
            values[name] = (_latency if name == "latency" else _bandwidth)(number, unit)
        except ValueError as exc:
            raise ValueError(f"network {text!r}: {exc}") from None
    network = Network(values.get("latency", 0.0), values.get("bandwidth", 0.0))
    problem = _range_problem(network)
    if problem:
        raise ValueError(f"network {text!r}: {problem}")
    return network


def _latency(number: str, unit: str) -> float:
    if unit not in TIMES:
        raise ValueError(f"latency {number}{unit}: give a time in ns, us, ms or s, e.g. 20us")
    return float(number) * TIMES[unit]


def _bandwidth(number: str, unit: str) -> float:
    prefix = unit.removesuffix("bit").removesuffix("bps") if unit.endswith(("bit", "bps")) else None
    if prefix is None or prefix not in BIT_RATES:
        raise ValueError(f"bandwidth {number}{unit}: give bits a second, e.g. 10Gbit or 100Mbit")
    return float(number) * BIT_RATES[prefix]


def _range_problem(network: Network) -> str | None:
    if not 0 <= network.latency_s <= MOST_LATENCY_S:
        return f"latency must be between 0 and {MOST_LATENCY_S:g} s"
    if network.bandwidth_bps and not (
        LEAST_BANDWIDTH_BPS <= network.bandwidth_bps <= MOST_BANDWIDTH_BPS
    ):
        return "bandwidth must be between 1 Mbit and 1 Tbit a second"
    return None
