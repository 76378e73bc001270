"""The MPI library's own MPI_Allreduce: autotuned, and forced to each of MPICH's algorithms."""

from __future__ import annotations

from dataclasses import replace

from runners.domain.collectives.collective import COLLECTIVES, DEFAULT_COLLECTIVE, qualified
from runners.domain.collectives.descriptor import AlgorithmSpec

AUTOTUNED = AlgorithmSpec(
    "mpi",
    "the MPI library's own MPI_Allreduce, autotuned",
    library=True,
    color="#3b3b3b",
    short="mpi",
    parts=None,
    other_p="the library's power-of-two algorithms fold the extra ranks first; the prediction "
    "(the fastest of the library's algorithms) walks their folds",
)

FORCED: tuple[AlgorithmSpec, ...] = tuple(
    AlgorithmSpec(
        f"mpi:{forced}",
        f"MPI_Allreduce forced to {text} via MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",
        commutative_only=commutative,
        library=True,
        forced=forced,
        color=color,
        short=f"mpi:{short}",
        modelled_by=model,
        model_note=note,
    )
    for forced, text, commutative, color, model, note, short in (
        (
            "recursive_doubling",
            "MPICH recursive doubling",
            False,
            "#8c564b",
            "recursive_doubling",
            "",
            "rd",
        ),
        (
            "reduce_scatter_allgather",
            "MPICH Rabenseifner (reduce-scatter + allgather)",
            True,
            "#17becf",
            "rabenseifner",
            "",
            "rab",
        ),
        ("ring", "MPICH ring", True, "#bcbd22", "ring", "", "ring"),
        (
            "tree",
            "MPICH tree (k-ary reduce + bcast)",
            False,
            "#e377c2",
            "binomial_tree",
            "approximately: MPICH's tree may be k-ary and pipelined",
            "tree",
        ),
    )
)

COMPOSITION_CVAR = "MPIR_CVAR_ALLREDUCE_COMPOSITION"


# MPICH's node-aware allreduce (ch4's device collectives): which inter-node (netmod) and
# intra-node (shared-memory) parts compose a call, by MPIR_CVAR_ALLREDUCE_COMPOSITION's value.
# They see nodes as MPICH does (emulated ones: its cliques); no MPIR table leaf names them.
def is_composition(spec: AlgorithmSpec) -> bool:
    """Whether `spec` is one of MPICH's compositions (forced by COMPOSITION_CVAR, not by an
    algorithm's name): it needs the device collectives on for the whole launch."""
    return any(name == COMPOSITION_CVAR for name, _ in spec.settings)


COMPOSITIONS: tuple[AlgorithmSpec, ...] = tuple(
    AlgorithmSpec(
        f"mpi:composition_{greek}",
        f"MPI_Allreduce forced to MPICH's composition {greek} ({text}) via {COMPOSITION_CVAR}="
        f"{value}, device collectives on",
        commutative_only=True,
        library=True,
        forced=f"composition_{greek}",
        color=color,
        short=f"mpi:{greek}",
        settings=((COMPOSITION_CVAR, value),),
        model_note="not modelled: node-aware; hierarchical(node=N) is the schedule of alpha",
    )
    for greek, value, text, color in (
        (
            "alpha",
            1,
            "reduce inside the node, allreduce among node leaders, bcast inside",
            "#ff005a",
        ),
        ("beta", 2, "the netmod's allreduce over all ranks, no shared-memory part", "#afff00"),
        (
            "delta",
            4,
            "multi-leaders: every rank of a node a leader of a share of the vector",
            "#460064",
        ),
    )
)

TUNED = AlgorithmSpec(
    "mpi:tuned",
    "the MPI library's own MPI_Allreduce following a tuning file (the spec's tuning_file, "
    "written by collsweep tune from measured winners)",
    library=True,
    color="#9467bd",
    short="tuned",
    parts=None,
    own_launch=True,
)


def autotuned_collectives(autotuned: AlgorithmSpec, title: str) -> tuple[AlgorithmSpec, ...]:
    """A library's own call of every collective but allreduce, autotuned, like its allreduce
    entry `autotuned`: `<collective>.<name>`, standing for `<collective>.<what it mirrors>`
    where it mirrors one (another library's for MPICH's `<collective>.mpi`)."""
    return tuple(
        AlgorithmSpec(
            qualified(c.name, autotuned.name),
            f"{title}'s own {c.mpi_call}, autotuned",
            collective=c.name,
            library=True,
            color=autotuned.color,
            short=autotuned.short,
            parts=None,
            runs_on=autotuned.runs_on,
            mirrors=qualified(c.name, autotuned.mirrors) if autotuned.mirrors else "",
            other_p="the library picks its algorithm per call",
        )
        for c in COLLECTIVES.values()
        if c.name != DEFAULT_COLLECTIVE
    )


# MPICH's own MPI_Reduce_scatter_block, MPI_Allgather, MPI_Bcast and MPI_Reduce, autotuned.
OTHER_AUTOTUNED = autotuned_collectives(AUTOTUNED, "the MPI library")


def tuned_collectives(tuned: AlgorithmSpec, color: str) -> tuple[AlgorithmSpec, ...]:
    """A library's tuned entry for every collective but allreduce: `<collective>.<tuned>`, its
    own call of that collective following the same tuning file (a launch each)."""
    return tuple(
        replace(
            tuned,
            name=qualified(c.name, tuned.name),
            description=tuned.description.replace("MPI_Allreduce", c.mpi_call),
            collective=c.name,
            color=color,
        )
        for c in COLLECTIVES.values()
        if c.name != DEFAULT_COLLECTIVE
    )


# MPICH's own call of the other collectives following a tuning file (TUNED's colour is
# reduce_scatter.pairwise's).
OTHER_TUNED = tuned_collectives(TUNED, "#e377c2")

# MPICH's algorithms of the other collectives, forced by name (MPIR_CVAR_<COLL>_INTRA_ALGORITHM
# at start-up: a launch each), each modelled by collsweep's schedule of the same algorithm.
OTHER_FORCED: tuple[AlgorithmSpec, ...] = tuple(
    AlgorithmSpec(
        qualified(collective, f"mpi:{forced}"),
        f"MPICH's {COLLECTIVES[collective].mpi_call} forced to {text}",
        collective=collective,
        commutative_only=commutative,
        power_of_two_only=power_of_two,
        library=True,
        forced=forced,
        color=color,
        short=f"mpi:{short}",
        modelled_by=qualified(collective, model),
    )
    for collective, forced, text, commutative, power_of_two, color, model, short in (
        (
            "reduce_scatter",
            "recursive_halving",
            "recursive halving",
            True,
            False,
            "#17becf",
            "recursive_halving",
            "rh",
        ),
        (
            "reduce_scatter",
            "pairwise",
            "pairwise exchange",
            True,
            False,
            "#bcbd22",
            "pairwise",
            "pair",
        ),
        ("allgather", "ring", "ring", False, False, "#bcbd22", "ring", "ring"),
        (
            "allgather",
            "recursive_doubling",
            "recursive doubling",
            False,
            True,
            "#8c564b",
            "recursive_doubling",
            "rd",
        ),
        ("allgather", "brucks", "Bruck", False, False, "#17becf", "bruck", "bruck"),
        ("bcast", "binomial", "binomial tree", False, False, "#8c564b", "binomial_tree", "tree"),
        (
            "bcast",
            "scatter_ring_allgather",
            "scatter + ring allgather",
            False,
            False,
            "#17becf",
            "scatter_allgather",
            "sag",
        ),
        ("reduce", "binomial", "binomial tree", False, False, "#8c564b", "binomial_tree", "tree"),
        (
            "reduce",
            "reduce_scatter_gather",
            "reduce-scatter + gather (Rabenseifner)",
            True,
            False,
            "#17becf",
            "rabenseifner",
            "rab",
        ),
    )
)
