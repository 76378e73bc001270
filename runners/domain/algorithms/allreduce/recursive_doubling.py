"""Recursive doubling: log2 p rounds of full-array exchange with partner rank XOR 2^k."""

from __future__ import annotations

from runners.domain.algorithms.fold import FOLD_NOTE, Fold, folded
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.collectives.schedule import CORE, Step


def _core(fold: Fold, count: int) -> list[Step]:
    """Recursive doubling on the power-of-two core.

    In round k every core rank swaps its whole partial result with core rank XOR 2^k and
    reduces, the lower rank's data as the left operand; after log2 pof2 rounds each covers all
    ranks (two adjacent runs of ranks merge in order, so noncommutative ops are supported).
    """
    steps, mask, k = [], 1, 0
    whole = (0, count)
    while mask < fold.pof2:
        partner_core = fold.core_rank ^ mask
        partner = fold.real_rank(partner_core)
        lower = fold.core_rank < partner_core
        steps.append(Step((CORE, k), "exchange", partner, whole, partner, whole, True, lower))
        mask, k = mask << 1, k + 1
    return steps


DESCRIPTOR = AlgorithmSpec(
    "recursive_doubling",
    "full-array exchange with partner rank XOR 2^k, log2 p rounds; "
    "non-power-of-two p folds the extra ranks into a power-of-two core",
    color="#1f77b4",
    short="rd",
    schedule=folded(_core),
    other_p=FOLD_NOTE,
)
