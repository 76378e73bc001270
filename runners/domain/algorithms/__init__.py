"""One module per algorithm collsweep runs itself: its schedule and its descriptor.

Adding an algorithm: a module here with `DESCRIPTOR = AlgorithmSpec(..., schedule=...)`,
listed in HAND_WRITTEN. tests/test_schedules.py checks every entry end to end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from runners.domain.algorithms import binomial_tree, rabenseifner, recursive_doubling, ring
from runners.domain.descriptor import AlgorithmSpec

HAND_WRITTEN: tuple[AlgorithmSpec, ...] = (
    recursive_doubling.DESCRIPTOR,
    binomial_tree.DESCRIPTOR,
    rabenseifner.DESCRIPTOR,
    ring.DESCRIPTOR,
)


def hand_written_on(
    library: str, title: str, tag: str, shades: Mapping[str, str]
) -> tuple[AlgorithmSpec, ...]:
    """collsweep's schedules on another library's point-to-point layer (the same code, another
    transport): `<name>@<library>`, short label `<short>@<tag>`, a colour of its own each,
    modelled by and standing for the MPICH-run original."""
    return tuple(
        replace(
            spec,
            name=f"{spec.name}@{library}",
            description=f"{spec.description}, on {title}'s point-to-point layer",
            short=f"{spec.short or spec.name}@{tag}",
            color=shades[spec.name],
            runs_on=library,
            mirrors=spec.name,
            modelled_by=spec.name,
        )
        for spec in HAND_WRITTEN
    )
