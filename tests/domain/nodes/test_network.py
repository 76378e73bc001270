"""The network between emulated nodes as a spec states it, and the tc words that shape it."""

from __future__ import annotations

import pytest

from runners.domain.nodes.network import TBF_BURST_BYTES, Network, parse_network


@pytest.mark.parametrize(
    ("text", "latency_s", "bandwidth_bps"),
    [
        ("latency=20us,bandwidth=10Gbit", 20e-6, 10e9),
        ("bandwidth=100Mbit", 0.0, 100e6),
        ("Latency = 1.5ms", 1.5e-3, 0.0),
        ("bandwidth=25gbps, latency=500ns", 500e-9, 25e9),
    ],
)
def test_a_stated_network_reads_as_latency_and_bandwidth(
    text: str, latency_s: float, bandwidth_bps: float
) -> None:
    network = parse_network(text)
    assert network.latency_s == pytest.approx(latency_s)
    assert network.bandwidth_bps == pytest.approx(bandwidth_bps)
    assert parse_network(network.text()) == network  # the canonical form reads back equal


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("bandwidth=1Gbyte", "give bits a second"),
        ("latency=20", "give a time"),
        ("latency=2s", "latency must be between 0 and 1 s"),
        ("bandwidth=10kbit", "between 1 Mbit and 1 Tbit"),
        ("jitter=1us", "give latency=TIME and bandwidth=RATE"),
        ("latency=1us,latency=2us", "give latency=TIME and bandwidth=RATE"),
        ("", "give latency=TIME and bandwidth=RATE"),
    ],
)
def test_a_network_that_cannot_be_given_is_one_line_naming_it(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=said) as caught:
        parse_network(text)
    assert "\n" not in str(caught.value) and repr(text) in str(caught.value)


def test_bandwidth_alone_is_a_token_bucket_and_a_delay_is_netem_with_its_rate() -> None:
    assert Network(bandwidth_bps=1e9).qdisc() == [
        "tbf", "rate", "1000000000bit", "burst", str(TBF_BURST_BYTES), "latency", "1s",
    ]  # fmt: skip
    assert Network(20e-6, 1e9).qdisc() == ["netem", "delay", "20us", "rate", "1000000000bit"]
    assert Network(20e-6).qdisc() == ["netem", "delay", "20us"]
    assert Network().qdisc() == [] and not Network().shaped


def test_the_description_says_the_rate_is_shared_by_every_direction() -> None:
    said = Network(bandwidth_bps=10e9).describe()
    assert "10 Gbit/s shared by all traffic between nodes" in said and "bus" in said
