"""Open MPI's MPI_Allreduce, autotuned and forced to each of coll/tuned's algorithms, and
collsweep's own schedules run on Open MPI's point-to-point layer.

Forcing: coll/tuned reads `coll_tuned_allreduce_algorithm` (and the segment size) when a
communicator is created, if `coll_tuned_use_dynamic_rules` was set at start-up. Written through
MPI_T before a communicator is duplicated, it forces that communicator's allreduce, so every
algorithm shares one launch with a communicator of its own (runners.ranks.mpit). The enum
values are those of Open MPI 5.0.x (ompi/mca/coll/tuned/coll_tuned_allreduce_decision.c);
tests/libraries/test_openmpi.py proves each with a counting user op.

Fallbacks, from ompi/mca/coll/base/coll_base_allreduce.c (v5.0.10): ring runs recursive doubling
when count < p; segmented ring runs the plain ring when count < p x the segment's elements;
Rabenseifner runs basic linear when count < the largest power of two <= p or the op is not
commutative. Such points are stored as skipped, never timed under the wrong name.
"""

from __future__ import annotations

from runners.domain.algorithms import hand_written_on
from runners.domain.algorithms.library import autotuned_collectives, tuned_collectives
from runners.domain.algorithms.openmpi_pipelines import (
    DEFAULT_RADIX,
    RADIX_CVAR,
    SEGMENT_CVARS,
    SEGMENTED_RING,
    algorithm_cvar,
    segment_cvar,
)
from runners.domain.collectives.collective import COLLECTIVES, qualified
from runners.domain.collectives.descriptor import OPENMPI, AlgorithmSpec

ALGORITHM_CVAR = algorithm_cvar("allreduce")
SEGMENT_CVAR = segment_cvar("allreduce")
DYNAMIC_RULES = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}


def _ring_falls_back(count: int, itemsize: int, ranks: int, commutative: bool) -> str:
    if count < ranks:
        return f"Open MPI's ring runs recursive doubling when count < ranks ({count} < {ranks})"
    return ""


def _rabenseifner_falls_back(count: int, itemsize: int, ranks: int, commutative: bool) -> str:
    pof2 = 1 << (ranks.bit_length() - 1)
    if not commutative:
        return "Open MPI's Rabenseifner runs basic linear for a noncommutative op"
    if count < pof2:
        return f"Open MPI's Rabenseifner runs basic linear when count < {pof2} ({count})"
    return ""


# coll/tuned's name of each collective in its variables (coll_tuned_<name>_algorithm)
TUNED_NAMES = {
    "allreduce": "allreduce",
    "reduce_scatter": "reduce_scatter_block",
    "allgather": "allgather",
    "bcast": "bcast",
    "reduce": "reduce",
}
# Every collective left to coll/tuned's decision (0): what the world communicator is made with,
# and what each forced communicator starts from before its own values.
AUTOTUNED_SETTINGS = (
    (ALGORITHM_CVAR, 0),
    (SEGMENT_CVAR, 0),
    *((algorithm_cvar(n), 0) for c, n in TUNED_NAMES.items() if c != "allreduce"),
    *((name, 0) for name in SEGMENT_CVARS),  # the pipelines' (openmpi_pipelines.py)
    (RADIX_CVAR, DEFAULT_RADIX),
)

AUTOTUNED = AlgorithmSpec(
    "openmpi",
    "Open MPI's own MPI_Allreduce, autotuned (coll/tuned's fixed decision rules)",
    library=True,
    color="#6ce11e",
    short="ompi",
    parts=None,
    runs_on=OPENMPI,
    mirrors="mpi",
    other_p="Open MPI's power-of-two algorithms fold the extra ranks first",
)  # runs on MPI_COMM_WORLD, created with AUTOTUNED_SETTINGS' values (the defaults)


def _forced(
    name: str, value: int, text: str, color: str, model: str = "", **extra: object
) -> AlgorithmSpec:
    return AlgorithmSpec(
        f"openmpi:{name}",
        f"Open MPI's MPI_Allreduce forced to {text} ({ALGORITHM_CVAR}={value})",
        library=True,
        forced=name,
        color=color,
        short=f"o:{name[:4]}",
        runs_on=OPENMPI,
        modelled_by=model,
        settings=((ALGORITHM_CVAR, value), (SEGMENT_CVAR, 0)),  # segmented: openmpi_pipelines
        **extra,  # type: ignore[arg-type]
    )


FORCED: tuple[AlgorithmSpec, ...] = (
    _forced("basic_linear", 1, "basic linear (reduce to rank 0, then broadcast)", "#ad1ee1"),
    _forced("nonoverlapping", 2, "reduce then broadcast (coll/tuned's own)", "#1eba79"),
    _forced(
        "recursive_doubling",
        3,
        "recursive doubling",
        "#5fe1e1",
        "recursive_doubling",
        mirrors="mpi:recursive_doubling",
    ),
    _forced(
        "ring",
        4,
        "ring",
        "#5f8679",
        "ring",
        commutative_only=True,
        mirrors="mpi:ring",
        falls_back=_ring_falls_back,
    ),
    SEGMENTED_RING.build("openmpi:segmented_ring", {"segment": "64KiB"}),
    _forced(
        "rabenseifner",
        6,
        "Rabenseifner (reduce-scatter + allgather)",
        "#79931e",
        "rabenseifner",
        mirrors="mpi:reduce_scatter_allgather",
        falls_back=_rabenseifner_falls_back,
    ),
)

TUNED = AlgorithmSpec(
    "openmpi:tuned",
    "Open MPI's own MPI_Allreduce following a coll/tuned rules file (the spec's tuning_file, "
    "written by collsweep tune --library openmpi from measured winners)",
    library=True,
    color="#b46400",
    short="o:tuned",
    parts=None,
    own_launch=True,
    runs_on=OPENMPI,
)

# Open MPI's own call of the other collectives following the same rules file.
OTHER_TUNED = tuned_collectives(TUNED, TUNED.color)

# collsweep's schedules on Open MPI's point-to-point layer: the same code, another transport.
# Open MPI's colours were picked greedily (max-min distance in RGB) to sit at least 76 apart
# from every other algorithm's (tests/dashboard/test_dashboard_charts.py checks >= 70).
SHADES = {
    "recursive_doubling": "#6ce179",
    "binomial_tree": "#451ee1",
    "rabenseifner": "#d41e93",
    "ring": "#791e93",
}
HAND_WRITTEN_HERE = hand_written_on(OPENMPI, "Open MPI", "o", SHADES)
# Open MPI's own call of the other collectives, autotuned (coll/tuned's decision rules).
OTHER_AUTOTUNED = autotuned_collectives(AUTOTUNED, "Open MPI")


def _recursive_doubling_falls_back(count: int, itemsize: int, ranks: int, commutative: bool) -> str:
    if ranks & (ranks - 1):
        return f"Open MPI's recursive-doubling allgather runs Bruck on {ranks} ranks (not 2^k)"
    return ""


def _scatter_falls_back(count: int, itemsize: int, ranks: int, commutative: bool) -> str:
    if count < ranks:
        return f"Open MPI's scatter-allgather bcast runs basic linear when count < ranks ({count})"
    return ""


def _other(
    collective: str, name: str, value: int, text: str, color: str, model: str, **extra: object
) -> AlgorithmSpec:
    """Open MPI's algorithm `name` of `collective`, forced by coll_tuned_<coll>_algorithm."""
    cvar = algorithm_cvar(TUNED_NAMES[collective])
    return AlgorithmSpec(
        qualified(collective, f"openmpi:{name}"),
        f"Open MPI's {COLLECTIVES[collective].mpi_call} forced to {text} ({cvar}={value})",
        collective=collective,
        library=True,
        forced=name,
        color=color,
        short=f"o:{name[:4]}",
        runs_on=OPENMPI,
        modelled_by=qualified(collective, model) if model else "",
        settings=((cvar, value),),
        **extra,  # type: ignore[arg-type]
    )


# Open MPI 5.0's algorithms of the other collectives that collsweep has a schedule for, and the
# basic linear reduce-scatter, whose fingerprint differs from the default's (values:
# `ompi_info --param coll tuned --level 9`; fallbacks: ompi/mca/coll/base/coll_base_*.c v5.0.10).
OTHER_FORCED: tuple[AlgorithmSpec, ...] = (
    _other(
        "reduce_scatter",
        "basic_linear",
        1,
        "basic linear (reduce to rank 0, then scatter)",
        "#ad1ee1",
        "",
    ),
    _other(
        "reduce_scatter",
        "recursive_halving",
        3,
        "recursive halving",
        "#5fe1e1",
        "recursive_halving",
        commutative_only=True,
        mirrors="reduce_scatter.mpi:recursive_halving",
    ),
    _other("allgather", "bruck", 2, "Bruck", "#5fe1e1", "bruck", mirrors="allgather.mpi:brucks"),
    _other(
        "allgather",
        "recursive_doubling",
        3,
        "recursive doubling",
        "#ad1ee1",
        "recursive_doubling",
        mirrors="allgather.mpi:recursive_doubling",
        falls_back=_recursive_doubling_falls_back,
    ),
    _other("allgather", "ring", 4, "ring", "#5f8679", "ring", mirrors="allgather.mpi:ring"),
    _other(
        "bcast",
        "binomial",
        6,
        "binomial tree",
        "#5fe1e1",
        "binomial_tree",
        mirrors="bcast.mpi:binomial",
    ),
    _other(
        "bcast",
        "scatter_allgather_ring",
        9,
        "scatter + ring allgather",
        "#5f8679",
        "scatter_allgather",
        mirrors="bcast.mpi:scatter_ring_allgather",
        falls_back=_scatter_falls_back,
    ),
    _other(
        "reduce",
        "binomial",
        5,
        "binomial tree",
        "#5fe1e1",
        "binomial_tree",
        mirrors="reduce.mpi:binomial",
        # verify: its result for first_nonzero is not in rank order at p = 3 and 4 (coll/tuned
        # itself picks the in-order binary tree for a noncommutative op)
        commutative_only=True,
    ),
    _other(
        "reduce",
        "rabenseifner",
        7,
        "Rabenseifner (reduce-scatter + gather)",
        "#79931e",
        "rabenseifner",
        mirrors="reduce.mpi:reduce_scatter_gather",
        falls_back=_rabenseifner_falls_back,
    ),
)
