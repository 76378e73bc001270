"""Inputs whose allreduce result is known exactly, and that result computed serially.

Following nccl-tests, every rank contributes small integers, so the reduced value is exact in
every datatype whatever order an algorithm reduces in (float16 holds integers exactly up to
2048). The patterns depend on both the rank and the element index, so a lost, doubled or
misplaced contribution changes the result somewhere once the count exceeds a few elements.
No MPI here: the serial reference is plain numpy, independent of the code under test.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from runners.domain.collectives.collective import ROOT, Collective
from runners.domain.collectives.datatypes import DTYPES, OPS, ops_of

MAX_VERIFIABLE_RANKS = 256


def _pattern(rank: int, count: int, op: str) -> np.ndarray:
    """Rank `rank`'s contribution as int64 values chosen so that `op` stays exact."""
    i = np.arange(count, dtype=np.int64)
    if op == "sum":
        return (rank * 7 + i * 3) % 11 - 5  # |sum| <= 5p
    if op == "prod":
        # +-1 everywhere, and +-2 on at most one rank per element: the product is +-1 or +-2.
        sign = np.where((rank * 5 + i * 3) % 7 < 3, -1, 1)
        return np.where(i % MAX_VERIFIABLE_RANKS == rank, 2 * sign, sign)
    if op in ("max", "min"):
        return (rank * 5 + i * 7) % 13 - 6
    if op == "first_nonzero":
        # Zero on a third of the elements, else rank + 1: the result names the first
        # rank (in rank order) holding a nonzero value.
        return np.where((i + rank) % 3 == 0, 0, rank + 1)
    raise ValueError(f"unknown op {op!r}")


def default_counts(ranks: int) -> list[int]:
    """Edge counts to verify: 1, p-1, p, an odd count and a large odd count (no duplicates)."""
    return sorted({1, max(ranks - 1, 1), ranks, 2 * ranks + 1, 65_537})


def make_input(rank: int, count: int, dtype: str, op: str) -> np.ndarray:
    """A freshly written send buffer of `count` elements for `rank`."""
    return _pattern(rank, count, op).astype(DTYPES[dtype])


def fill_input(buf: np.ndarray, rank: int, op: str) -> None:
    """Overwrite `buf` in place with `rank`'s input for `op` (no new buffer kept)."""
    buf[...] = _pattern(rank, buf.size, op)


def expected_result(ranks: int, count: int, dtype: str, op: str) -> np.ndarray:
    """The allreduce of every rank's input, reduced serially in rank order."""
    if not 1 <= ranks <= MAX_VERIFIABLE_RANKS:
        raise ValueError(f"verification supports 1..{MAX_VERIFIABLE_RANKS} ranks, got {ranks}")
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}")
    acc = _pattern(0, count, op)
    for rank in range(1, ranks):
        acc = _combine(acc, _pattern(rank, count, op), op)
    return acc.astype(DTYPES[dtype])


def _combine(left: np.ndarray, right: np.ndarray, op: str) -> np.ndarray:
    """left o right for one op, left being the lower ranks' partial result."""
    if op == "sum":
        return left + right
    if op == "prod":
        return left * right
    if op == "max":
        return np.maximum(left, right)
    if op == "min":
        return np.minimum(left, right)
    return np.where(left != 0, left, right)


def mismatches(actual: np.ndarray, expected: np.ndarray) -> int:
    """How many elements differ exactly (NaN never equals anything)."""
    if actual.shape != expected.shape:
        return max(actual.size, expected.size)
    return int(np.count_nonzero(actual != expected))


def collective_case(
    collective: Collective, rank: int, size: int, count: int, dtype: str, op: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One rank's send buffer, receive buffer (zeroed; bcast: the send buffer itself, zeroed
    off the root) and expected result (None where the rank has none: reduce off the root) for a
    `count`-element whole vector. A collective that reduces nothing takes the sum's pattern."""
    pattern_op = op if collective.reduces else "sum"
    send_count, recv_count = collective.buffer_counts(size, count)
    if collective.name == "bcast":
        buf = make_input(ROOT, count, dtype, pattern_op)
        if rank != ROOT:
            buf[...] = 0
        return buf, buf, make_input(ROOT, count, dtype, pattern_op)
    if collective.name == "allgather":
        every = [make_input(r, send_count, dtype, pattern_op) for r in range(size)]
        return every[rank], np.zeros_like(every[rank], shape=count), np.concatenate(every)
    send = make_input(rank, count, dtype, op)
    recv = np.zeros_like(send, shape=recv_count)
    found = collective.result_range(rank, size, count)
    if found is None:
        return send, recv, None
    return send, recv, expected_result(size, count, dtype, op)[found[0] : found[1]]


def verified_ops(collective: str, ops: Iterable[str]) -> list[str]:
    """The ops a check of `collective` runs: the ones asked for, or `none` for a collective
    that reduces nothing."""
    return list(ops_of(collective, ops))
