"""Runs inside every rank: checks algorithms x dtypes x ops x counts exactly.

Rank 0 prints one `Checked` event (runners.domain.sweep.events) per check on stdout. Launched by
runners.jobs.verify as `python -m runners.ranks verify JOB`.
"""

from __future__ import annotations

from mpi4py import MPI

from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.collectives.inputs import (
    collective_case,
    default_counts,
    mismatches,
    verified_ops,
)
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.status import CheckStatus
from runners.domain.sweep.events import Checked, event_line
from runners.domain.sweep.job_file import VerifyJob
from runners.ranks.algorithms import UnsupportedError, create
from runners.ranks.mpi_ops import mpi_op


def check(comm: MPI.Comm, algorithm: str, dtype: str, op: str, count: int) -> Checked:
    """Run the algorithm's collective once on `count` elements (per block for collectives
    of equal blocks) and compare every rank's result with the serial reference."""
    rank, size = comm.Get_rank(), comm.Get_size()
    collective = COLLECTIVES[ALGORITHMS[algorithm].collective]
    whole = collective.checked_count(count, size)
    sendbuf, recvbuf, expected = collective_case(collective, rank, size, whole, dtype, op)
    sent = sendbuf.copy()
    status, detail, wrong = CheckStatus.OK, "", 0
    try:
        create(algorithm)(comm, sendbuf, recvbuf, mpi_op(op))
        if expected is not None:
            wrong = mismatches(recvbuf, expected)
        if sendbuf is not recvbuf:
            wrong += mismatches(sendbuf, sent)
    except UnsupportedError as exc:
        status, detail = CheckStatus.REFUSED, str(exc)
    counts = comm.gather(wrong, root=0) or []  # None on every rank but 0
    if rank == 0 and status == CheckStatus.OK and any(counts):
        bad = [r for r, c in enumerate(counts) if c]
        status, detail = CheckStatus.MISMATCH, f"{sum(counts)} wrong elements on ranks {bad}"
    return Checked(algorithm, dtype, op, count, size, status, detail)


def run(job: VerifyJob) -> None:
    """Check every combination of the job file's matrix, print results from rank 0
    (`python -m runners.ranks verify JOB`)."""
    comm = MPI.COMM_WORLD
    counts = list(job.counts or default_counts(comm.Get_size()))
    for algorithm in job.algorithms:
        for dtype in job.dtypes:
            for op in verified_ops(ALGORITHMS[algorithm].collective, job.ops):
                for count in counts:
                    checked = check(comm, algorithm, dtype, op, count)
                    if comm.Get_rank() == 0:
                        print(event_line(checked), flush=True)
