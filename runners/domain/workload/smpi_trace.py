"""A workload as SMPI's time-independent trace: what `smpirun -replay` replays (pure).

SMPI (SimGrid's MPI) replays a job from one file of actions per rank, `<rank> <action>
<arguments>`, listed in an index file given to `smpirun -replay INDEX`. Counts are in bytes
(SMPI's replay type without a datatype argument is MPI_BYTE); a reduction's computation is one
flop per element reduced, which SMPI times at its `smpi/host-speed`. Every call is on the world
communicator, so only the calls on the job's whole group of ranks are written; others are
left out and said in a note.

| collective | line (collsweep's bytes n is the whole vector, p ranks) |
|---|---|
| allreduce | `r allreduce n elements` |
| reduce | `r reduce n elements root` |
| bcast | `r bcast n root` |
| allgather | `r allgather n/p n/p` |
| reduce_scatter | `r reducescatter n/p ... n/p elements` (p counts) |
"""

from __future__ import annotations

from runners.domain.collectives.datatypes import DTYPES
from runners.domain.workload.file import Call, Workload, WorkloadError

MAX_LINES = 20_000_000  # lines over every rank's file: a trace SMPI can replay in minutes


def call_line(call: Call, rank: int) -> str:
    """One rank's line for one call."""
    n, p = call.nbytes, call.ranks
    elements = n // DTYPES[call.dtype].itemsize if call.dtype in DTYPES else n
    root = call.root or 0
    words = {
        "allreduce": f"allreduce {n} {elements}",
        "reduce": f"reduce {n} {elements} {root}",
        "bcast": f"bcast {n} {root}",
        "allgather": f"allgather {n // p} {n // p}",
        "reduce_scatter": "reducescatter " + " ".join([str(n // p)] * p) + f" {elements}",
    }[call.collective]
    return f"{rank} {words}"


def smpi_trace(workload: Workload) -> tuple[dict[int, str], list[str]]:
    """Each rank's trace text, and notes of what was left out."""
    ranks = max((call.ranks for call in workload.calls), default=0)
    if ranks < 2:
        raise WorkloadError(f"workload {workload.name} has no call on two ranks or more to replay")
    sequence = workload.sequence()
    kept = [i for i in sequence if workload.calls[i].ranks == ranks]
    lines = (len(kept) + 2) * ranks
    if lines > MAX_LINES:
        raise WorkloadError(
            f"the trace would hold {lines:,} lines ({len(kept):,} calls x {ranks} ranks); "
            f"at most {MAX_LINES:,}"
        )
    texts = {}
    for rank in range(ranks):
        body = [call_line(workload.calls[i], rank) for i in kept]
        texts[rank] = "\n".join([f"{rank} init", *body, f"{rank} finalize"]) + "\n"
    notes = []
    other = len(sequence) - len(kept)
    if other:
        notes.append(
            f"{other} call(s) on fewer than the job's {ranks} ranks left out: SMPI's traces "
            "replay every call on the world communicator"
        )
    return texts, notes
