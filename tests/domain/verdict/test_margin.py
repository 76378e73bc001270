"""A simulated run's comparison: one figure each, decided only beyond the stated margin."""

from __future__ import annotations

import pytest

from runners.domain.sweep.simulated_run import margin_pairing, simulated_table, spec_text
from runners.domain.verdict.comparison import within_margin


@pytest.mark.parametrize(
    ("a", "b", "decided", "a_faster"),
    [
        (1.0, 1.0, False, False),
        (1.0, 1.019, False, True),
        (1.0, 1.021, True, True),
        (1.03, 1.0, True, False),
        (0.99, 1.0, False, True),
    ],
)
def test_decided_only_beyond_the_margin(a: float, b: float, decided: bool, a_faster: bool) -> None:
    found = within_margin(a, b, 0.02)
    assert found.decided is decided
    assert found.ratio == pytest.approx(a / b)
    if decided:
        assert found.a_faster is a_faster
    assert found.low == pytest.approx(found.ratio / 1.02)
    assert found.high == pytest.approx(found.ratio * 1.02)
    assert found.inverse().decided is decided


def test_the_stored_spec_names_the_simulation_and_still_reads_as_toml() -> None:
    from runners.domain.model.platform import crossbar
    from runners.domain.sweep.simulated_run import SimulationFacts

    facts = SimulationFacts("SimGrid 3.32.0", "auto", 0.05, crossbar(), "abc123def456")
    text = spec_text("sizes = [8]\n", facts)
    table = simulated_table(text)
    assert table is not None and table["margin"] == 0.05 and table["platform"] == "crossbar"
    assert simulated_table("sizes = [8]\n") is None and simulated_table("not [toml") is None
    assert margin_pairing(0.05) == "simulated: ties within 5%"
