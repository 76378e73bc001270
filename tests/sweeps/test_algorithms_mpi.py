"""Every algorithm x dtype x op x edge count on real ranks, P = 1..5 and 8 (at 8 two dtypes;
oversubscribed above 2; p = 6 and 7 are what 3 and 5 are, a fold of the extra ranks, and
every schedule is checked symbolically for p = 1..12 in tests/domain: they are left out to
keep CI's time)."""

from __future__ import annotations

import pytest

from runners.domain.collectives.datatypes import OPS
from runners.domain.libraries.catalog import ALGORITHMS, BASE_ALGORITHMS, BASE_OF_COLLECTIVE
from runners.jobs.verify import VerifyPlan, failed, verify_ranks

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("ranks", [1, 2, 3, 4, 5, 8])
def test_every_combination_is_exact_or_cleanly_refused(ranks: int) -> None:
    """p = 8 (four ranks a core) with the narrowest and the widest datatype only: the others
    take the same code at p = 1..5."""
    dtypes = ("float16", "int64") if ranks == 8 else VerifyPlan((ranks,)).dtypes
    rows = verify_ranks(VerifyPlan(ranks=(ranks,), dtypes=dtypes, timeout_s=300), ranks)
    assert not failed(rows), failed(rows)[:5]
    refused = {(r["algorithm"], r["op"]) for r in rows if r["status"] == "refused"}
    expected_refusals = {
        (name, op)
        for name, spec in BASE_ALGORITHMS.items()
        for op, op_spec in OPS.items()
        if spec.commutative_only and not op_spec.commutative
    }
    assert refused == expected_refusals
    checked = {(r["algorithm"], r["dtype"], r["op"]) for r in rows}
    assert len(checked) == 5 * len(dtypes) * 5


def test_refusal_names_the_reason() -> None:
    plan = VerifyPlan(
        ranks=(3,),
        algorithms=("ring",),
        dtypes=("int32",),
        ops=("first_nonzero",),
        counts=(5,),
        timeout_s=120,
    )
    [row] = verify_ranks(plan, 3)
    assert row["status"] == "refused"
    assert "commutative" in row["detail"]


def test_noncommutative_results_follow_rank_order_with_odd_counts() -> None:
    plan = VerifyPlan(
        ranks=(7,),
        algorithms=("recursive_doubling", "binomial_tree", "rabenseifner", "mpi"),
        dtypes=("float16", "int64"),
        ops=("first_nonzero",),
        counts=(0, 1, 6, 7, 1001),
        timeout_s=300,
    )
    rows = verify_ranks(plan, 7)
    assert rows and all(r["status"] == "ok" for r in rows), rows


@pytest.mark.parametrize("ranks", [3, 4, 6])
def test_every_collective_is_exact_or_cleanly_refused(ranks: int) -> None:
    """reduce_scatter, allgather, bcast and reduce, hand-written and MPICH's own: who holds
    what afterwards (the root's buffer for reduce, every rank's for bcast), send buffers
    untouched, rank order kept where the algorithm claims it."""
    algorithms = tuple(
        a for c, names in BASE_OF_COLLECTIVE.items() if c != "allreduce" for a in names
    )
    plan = VerifyPlan((ranks,), algorithms, ("float16", "int64"), tuple(OPS), timeout_s=300)
    rows = verify_ranks(plan, ranks)
    assert not failed(rows), failed(rows)[:5]
    refused = {r["algorithm"] for r in rows if r["status"] == "refused"}
    declared = {
        a
        for a in algorithms
        if ALGORITHMS[a].commutative_only
        or (ALGORITHMS[a].power_of_two_only and ranks & (ranks - 1))
    }
    assert refused == declared
    noncommutative = {
        r["algorithm"] for r in rows if r["op"] == "first_nonzero" and r["status"] == "ok"
    }
    assert {"reduce.binomial_tree", "reduce.rabenseifner", "reduce.mpi"} <= noncommutative
    assert {r["op"] for r in rows if r["algorithm"].startswith(("allgather.", "bcast."))} == {
        "none"
    }


def test_open_mpi_and_intel_mpi_run_every_collective_of_their_own_exactly() -> None:
    """`<collective>.openmpi` and `<collective>.impi`: each library's own call of the other
    collectives, on its own ranks (its mpiexec, its libmpi), checked as MPICH's are."""
    others = [c for c in BASE_OF_COLLECTIVE if c != "allreduce"]
    names = tuple(f"{c}.{lib}" for c in others for lib in ("openmpi", "impi"))
    plan = VerifyPlan((3,), names, ("float32", "int64"), ("sum", "first_nonzero"), timeout_s=300)
    rows = verify_ranks(plan, 3)
    assert rows and not failed(rows), failed(rows)[:5]
    assert {r["algorithm"] for r in rows if r["status"] == "ok"} == set(names)
    assert {ALGORITHMS[n].runs_on for n in names} == {"openmpi", "impi"}
