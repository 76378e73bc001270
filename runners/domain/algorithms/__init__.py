"""One module per algorithm collsweep runs itself: its schedule and its descriptor.

Adding an algorithm: a module here with `DESCRIPTOR = AlgorithmSpec(..., schedule=...)`,
listed in HAND_WRITTEN. tests/test_schedules.py checks every entry end to end.
"""

from __future__ import annotations

from runners.domain.algorithms import binomial_tree, rabenseifner, recursive_doubling, ring
from runners.domain.descriptor import AlgorithmSpec

HAND_WRITTEN: tuple[AlgorithmSpec, ...] = (
    recursive_doubling.DESCRIPTOR,
    binomial_tree.DESCRIPTOR,
    rabenseifner.DESCRIPTOR,
    ring.DESCRIPTOR,
)
