"""NCCL's collectives as nccl-tests times them: imported only (`collsweep import` of nccl-tests
output; collsweep runs no GPU code, so no sweep, verify or tune ever names these).

Each collective nccl-tests covers has NCCL's own call left to its tuner (`nccl`,
`allgather.nccl`, ...: NCCL picks algorithm and protocol per call) and the algorithms
`NCCL_ALGO` forces that NCCL has for it (NCCL's environment documentation; NCCL_ALGO is not
case sensitive): Ring for every one, Tree for allreduce. Another NCCL_ALGO value (NVLS, PAT,
CollNet, a list) keeps its own name on import (`nccl:nvls`) and leaves the run unanalysed
(runners.domain.libraries.nccl).

Models, where collsweep has the schedule: NCCL's ring allreduce is a ring reduce-scatter then a
ring allgather, 2(p-1) steps of n/p bytes on the critical path, the catalog's `ring`; its ring
allgather and reduce-scatter are the catalog's ring schedules of those collectives (p-1 steps).
NCCL cuts each step into chunks pipelined over its channels, which the alpha-beta-gamma counts
do not see: the model is the ring's critical path, not NCCL's protocol. NCCL's tree (a
pipelined double binary tree) and its broadcast and reduce rings (pipelined chains from the
root) have no schedule in the catalog: they are measured, compared and drawn, never predicted.
The autotuned call is priced like MPICH's `mpi`, as the fastest of the library's modelled
algorithms (runners.domain.model.closed_form.library_min): for NCCL that is its ring, the only one
modelled, so its prediction is the ring's (NCCL's tuner may pick faster trees or NVLS).
"""

from __future__ import annotations

from runners.domain.algorithms import library
from runners.domain.collectives.collective import COLLECTIVES, DEFAULT_COLLECTIVE, qualified
from runners.domain.collectives.descriptor import NCCL, AlgorithmSpec

ALGO_VARIABLE = "NCCL_ALGO"
CALLS = {  # NCCL's call of each collective nccl-tests times
    "allreduce": "ncclAllReduce",
    "reduce_scatter": "ncclReduceScatter",
    "allgather": "ncclAllGather",
    "bcast": "ncclBroadcast",
    "reduce": "ncclReduce",
}
COLOURS = {"": "#685000", "ring": "#a8a868", "tree": "#a0f0b0"}  # far from every other hue
IMPORTED_ONLY = "imported only (nccl-tests output)"
PIPELINED = (
    "approximately: NCCL pipelines each step in chunks over its channels, which the ring's "
    "critical-path counts do not see"
)


MODELLED_RING = ("allreduce", "reduce_scatter", "allgather")  # whose ring the catalog has


def _autotuned(collective: str) -> AlgorithmSpec:
    """NCCL's own call of `collective`, its tuner choosing (mirroring MPICH's own call)."""
    priced = (
        "predicted as its ring, the only NCCL algorithm modelled"
        if collective in MODELLED_RING
        else "not modelled"
    )
    return AlgorithmSpec(
        qualified(collective, NCCL),
        f"NCCL's own {CALLS[collective]}, autotuned (its tuner picks algorithm and protocol "
        f"per call); {priced}; {IMPORTED_ONLY}",
        collective=collective,
        library=True,
        color=COLOURS[""],
        short=NCCL,
        parts=None,
        runs_on=NCCL,
        mirrors=qualified(collective, library.AUTOTUNED.name),  # MPICH's own call's family
        other_p="NCCL picks its algorithm per call; predicted as its ring, the only NCCL "
        "algorithm collsweep models",
    )


def _forced(collective: str, algo: str, text: str, model: str, note: str) -> AlgorithmSpec:
    """NCCL's `collective` forced to `algo` by NCCL_ALGO (its documented spelling), modelled by
    the catalog's `model` of that collective ('' for none), as `note` says."""
    name = algo.lower()
    modelled = f"modelled by the catalog's {model}, {note}" if model else note
    return AlgorithmSpec(
        qualified(collective, f"{NCCL}:{name}"),
        f"NCCL's {CALLS[collective]} forced to {text} ({ALGO_VARIABLE}={algo}); {modelled}; "
        + IMPORTED_ONLY,
        collective=collective,
        commutative_only=True,  # NCCL's reductions are all commutative
        library=True,
        forced=algo,
        color=COLOURS[name],
        short=f"n:{name}",
        runs_on=NCCL,
        modelled_by=qualified(collective, model) if model else "",
        model_note=note,
    )


AUTOTUNED = _autotuned(DEFAULT_COLLECTIVE)
OTHER_AUTOTUNED = tuple(_autotuned(c) for c in COLLECTIVES if c != DEFAULT_COLLECTIVE)

FORCED: tuple[AlgorithmSpec, ...] = (
    _forced(
        "allreduce",
        "Ring",
        "its ring (ring reduce-scatter + ring allgather)",
        "ring",
        PIPELINED,
    ),
    _forced(
        "allreduce",
        "Tree",
        "its pipelined double binary tree",
        "",
        "not modelled: the catalog has no pipelined double binary tree",
    ),
)

OTHER_FORCED: tuple[AlgorithmSpec, ...] = (
    _forced("reduce_scatter", "Ring", "its ring", "ring", PIPELINED),
    _forced("allgather", "Ring", "its ring", "ring", PIPELINED),
    _forced(
        "bcast",
        "Ring",
        "its ring (a pipelined chain from the root)",
        "",
        "not modelled: the catalog has no pipelined chain",
    ),
    _forced(
        "reduce",
        "Ring",
        "its ring (a pipelined chain to the root)",
        "",
        "not modelled: the catalog has no pipelined chain",
    ),
)
