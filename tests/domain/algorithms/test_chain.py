"""The pipelined chains (bcast, reduce, and allreduce as the two), segment size a parameter in
bytes: every member keeps its collective's contract for p = 1..8 (the reduce in rank order),
its critical path is (p - 2 + n/b) rounds of one segment, counted without walking exactly as
the walk counts it, the segment is cut in the datatype's elements, and the model prices the
pipeline's curve in b with its best segment where the closed form puts it."""

from __future__ import annotations

import itertools
import math

import pytest

from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.descriptor import by_count
from runners.domain.collectives.schedule import critical_path, walked_path
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name
from runners.domain.model.closed_form import predict

FAMILIES = ("bcast.chain", "reduce.chain", "chain")


@pytest.mark.parametrize(("family", "segment"), list(itertools.product(FAMILIES, (1, 3, 8))))
def test_every_member_keeps_its_contract_for_p_1_to_8(family: str, segment: int) -> None:
    spec = ALGORITHMS[f"{family}(segment={segment})"]
    assert not spec.commutative_only  # the reduce is checked in rank order
    for p, count in itertools.product(range(1, 9), (0, 1, 5, 8, 13)):
        assert contract_problems(spec, p, count) == [], (spec.name, p, count)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_counted_path_is_the_walked_one_and_the_closed_form(family: str) -> None:
    """p - 2 + ceil(n/b) rounds; every one moves a whole segment but the last (the short
    segment's last hop) when there are several segments."""
    schedule = ALGORITHMS[f"{family}(segment=4)"].required_schedule
    for p, count in itertools.product(range(1, 10), (0, 1, 4, 7, 8, 9, 30)):
        counted = critical_path(schedule, p, count)
        assert counted == walked_path(schedule, p, count), (p, count)
        if p > 1 and count:
            phases = 2 if family == "chain" else 1
            assert counted.messages == phases * (p - 2 + math.ceil(count / 4))
            reduced = {"reduce.chain": counted.sent, "chain": counted.sent / 2}.get(family, 0)
            assert counted.reduced == reduced


def test_a_segment_is_cut_in_the_datatypes_elements() -> None:
    """64 bytes a segment: 8 float64 elements, 16 float32 ones, and one element where the
    segment is smaller than it, the remainder in the first segment; the member is priced at
    its own count (by_count)."""
    spec = ALGORITHMS["bcast.chain(segment=64)"]
    assert spec.parts is by_count
    for itemsize, per_segment in ((8, 8), (4, 16), (128, 1)):
        sends = [s.send for s in spec.schedule_at(itemsize)(0, 3, 128)]
        assert sends[:2] == [(0, per_segment), (per_segment, 2 * per_segment)], itemsize
    remainder_first = [s.send for s in spec.schedule_at(8)(0, 3, 20)]
    assert remainder_first == [(0, 4), (4, 12), (12, 20)]  # as MPICH cuts its chunks


def test_the_segment_is_written_in_bytes_one_way() -> None:
    assert canonical_name("bcast.chain(segment=65536)", {}) == "bcast.chain(segment=64KiB)"
    assert canonical_name("bcast.chain(segment=64k)", {}) == "bcast.chain(segment=64KiB)"
    assert canonical_name("reduce.chain(segment=8KiB)", {}) == "reduce.chain"  # the default
    assert canonical_name("bcast.chain(segment=1000)", {}) == "bcast.chain(segment=1000)"
    with pytest.raises(ValueError, match="segment must be a size"):
        canonical_name("bcast.chain(segment=0)", {})
    with pytest.raises(ValueError, match="segment must be a size"):
        canonical_name("bcast.chain(segment=lots)", {})


def test_the_model_prices_the_pipeline_and_its_best_segment() -> None:
    """(p - 2 + n/b)(alpha + b beta) exactly at whole segments, and the best of a grid of
    segment sizes is the one nearest b* = sqrt(n alpha / ((p - 2) beta))."""
    p, n, alpha, beta = 64, 1 << 20, 5e-6, 1e-9

    def chain(b: int) -> float:
        name = canonical_name(f"bcast.chain(segment={b})", {})
        return predict(name, p, n, alpha, beta, 0.0).total_s

    for b in (1 << 10, 1 << 14, 1 << 16):
        assert chain(b) == pytest.approx((p - 2 + n / b) * (alpha + b * beta)), b
    times = {b: chain(b) for b in (1 << k for k in range(8, 21))}
    best = min(times, key=times.__getitem__)
    optimum = math.sqrt(n * alpha / ((p - 2) * beta))
    assert abs(math.log2(best) - math.log2(optimum)) <= 0.5
