"""Runs inside every rank for figure 2: two algorithms timed in alternating iterations.

Usage: python -m benchmarks.paired_worker ALG_A ALG_B BUDGET_S MAX_ITERATIONS BYTES [BYTES ...]
For each size both algorithms (of one collective) get their own buffers
(runners.ranks.sweep_worker.Buffers, float32, SUM; no op where the collective reduces nothing)
and are run and checked once as a sweep does (a forced MPICH algorithm that falls back
is reported, not timed). Then runners.ranks.harness.measure times them with the two calls in
rotation, so iteration i runs A when i is even and B when odd: the same Barrier-synchronised,
max-over-ranks iterations as a sweep, with any load from other processes shared evenly.
Results are checked again afterwards. Rank 0 prints one JSON line per size.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi4py import MPI

from runners.domain.collectives.datatypes import ops_of
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.status import PointStatus
from runners.domain.sweep.plan import skip_reason
from runners.domain.sweep.stats import StopRule, summarize
from runners.ranks.algorithms import create
from runners.ranks.harness import measure
from runners.ranks.mpi_ops import mpi_op
from runners.ranks.sweep_worker import Buffers, check_results, first_call

DTYPE, OP, WARMUP, MIN_ITERATIONS = "float32", "sum", 10, 40


def not_timeable(
    comm: MPI.Comm, names: list[str], impls: list, buffers: list[Buffers], op: str
) -> str:
    """Run and check each algorithm once, as a sweep does; '' when both can be timed."""
    reasons = [
        f"{name}: {why}"
        for name, impl, buf in zip(names, impls, buffers, strict=True)
        for status, why in [first_call(comm, name, impl, buf, op)]
        if status != PointStatus.OK
    ]
    return "; ".join(reasons)


def split_summary(samples: np.ndarray) -> dict:
    """Medians, CIs and iterations of the even (A) and odd (B) iterations.

    Also the median of the ratios of neighbouring iterations (A_i / B_i), which bursts of
    load from other processes hit alike.
    """
    pairs = samples.size // 2
    out: dict = {
        "paired_ratio": float(np.median(samples[0 : 2 * pairs : 2] / samples[1::2][:pairs]))
    }
    for key, part in (("a", samples[0::2]), ("b", samples[1::2])):
        summary = summarize(part)
        out[key] = {
            "median_s": summary.median_s,
            "ci_rel": summary.ci_rel_halfwidth,
            "iterations": summary.iterations,
        }
    return out


def time_pair(comm: MPI.Comm, names: list[str], nbytes: int, rule: StopRule) -> dict:
    """Both algorithms at one size: medians, CIs and iterations, or why not timed."""
    count = nbytes // np.dtype(DTYPE).itemsize
    collective = ALGORITHMS[names[0]].collective
    (op,) = ops_of(collective, [OP])
    size = comm.Get_size()
    reasons = [why for name in names if (why := skip_reason(name, size, op, nbytes, DTYPE))]
    if reasons:  # what a sweep would skip (too few elements for p equal blocks, say)
        return {"bytes": nbytes, "skipped": reasons[0]}
    impls = [create(name) for name in names]
    buffers = [Buffers.make(comm, collective, DTYPE, op, count, cold=False) for _ in names]
    if why := not_timeable(comm, names, impls, buffers, op):
        return {"bytes": nbytes, "skipped": why}
    calls = [i.bind(comm, *b.pairs[0], mpi_op(op)) for i, b in zip(impls, buffers, strict=True)]
    for buf in buffers:
        buf.clear_results()
    samples = measure(comm, calls, rule, WARMUP)
    if wrong := "; ".join(w for buf in buffers if (w := check_results(comm, buf))):
        return {"bytes": nbytes, "skipped": wrong}
    return {"bytes": nbytes, **split_summary(samples)}


def main(argv: list[str]) -> None:
    """Time the pair at every size named on the command line."""
    names, budget_s, max_iterations = argv[:2], float(argv[2]), int(argv[3])
    rule = StopRule(MIN_ITERATIONS, 2 * max_iterations, target_rel_ci=1e-12, budget_s=budget_s)
    comm = MPI.COMM_WORLD
    for nbytes in (int(arg) for arg in argv[4:]):
        line = time_pair(comm, names, nbytes, rule)
        if comm.Get_rank() == 0:
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
