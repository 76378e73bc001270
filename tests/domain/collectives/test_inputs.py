"""The serial reference the MPI tests compare against."""

from __future__ import annotations

import numpy as np
import pytest

from runners.domain.collectives.datatypes import DTYPES, OPS
from runners.domain.collectives.inputs import (
    default_counts,
    expected_result,
    make_input,
    mismatches,
)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reference_is_exact_in_every_dtype(dtype: str, op: str) -> None:
    wide = expected_result(16, 300, "float64", op)
    narrow = expected_result(16, 300, dtype, op)
    assert np.array_equal(narrow.astype(np.float64), wide)


def test_first_nonzero_reference_is_the_rank_ordered_fold() -> None:
    ranks, count = 5, 40
    inputs = [make_input(r, count, "int64", "first_nonzero") for r in range(ranks)]
    by_hand = []
    for i in range(count):
        firsts = [int(x[i]) for x in inputs if x[i] != 0]
        by_hand.append(firsts[0] if firsts else 0)
    assert expected_result(ranks, count, "int64", "first_nonzero").tolist() == by_hand
    reversed_order = [next((int(x[i]) for x in reversed(inputs) if x[i]), 0) for i in range(count)]
    assert reversed_order != by_hand, "inputs must tell rank order apart"


def test_inputs_detect_a_lost_contribution() -> None:
    for op in OPS:
        full = expected_result(4, 32, "int32", op)
        without_last = expected_result(3, 32, "int32", op)
        if op != "first_nonzero":  # rank 3 is never first in line there
            assert mismatches(full, without_last) > 0, op


def test_edge_counts() -> None:
    assert default_counts(1) == [1, 3, 65_537]
    assert default_counts(4) == [1, 3, 4, 9, 65_537]
