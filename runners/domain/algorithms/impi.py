"""Intel MPI's MPI_Allreduce, autotuned and forced to each of its presets that runs on one node,
its presets of the other collectives that collsweep has a schedule for (OTHER_FORCED), and
collsweep's own schedules run on Intel MPI's point-to-point layer.

Forcing: `I_MPI_ADJUST_ALLREDUCE=<preset>` for a whole launch (runners.domain.libraries.impi
says why not at run time). The preset numbers and names are Intel's (Developer Reference,
I_MPI_ADJUST_ALLREDUCE). The topology-aware presets 4 and 6 are left out: on one node they run
what 3 and 5 run (the same counting-op fingerprint), so they would double the launches for
nothing. Presets above 12 are undocumented by name and left out too.

What tests/libraries/test_impi.py proves with a counting user op (p=4, 4096 float64): recursive
doubling reduces the full buffer twice on every rank; Rabenseifner a half then a quarter; ring
a quarter three times; reduce + bcast a binomial tree's share in segments; binomial gather +
scatter twice at rank 0 and once at rank 2; knomial twice on every rank. Shumilin's ring leaves
a fingerprint of its own (one full reduction on three ranks) that no textbook schedule
explains: kept, unmodelled, with that said. The SHM-based presets (10-12) cannot be proven
this way: with a user-defined op they run recursive doubling, so their shared-memory path
(built-in ops only) is taken on trust from Intel's documentation; their model_note says so.
"""

from __future__ import annotations

from runners.domain.algorithms import hand_written_on
from runners.domain.algorithms.library import autotuned_collectives
from runners.domain.collectives.collective import COLLECTIVES, DEFAULT_COLLECTIVE, qualified
from runners.domain.collectives.descriptor import IMPI, AlgorithmSpec

PRESET_VARIABLE = "I_MPI_ADJUST_ALLREDUCE"
PRESET_VARIABLES = {
    "allreduce": PRESET_VARIABLE,
    "reduce_scatter": "I_MPI_ADJUST_REDUCE_SCATTER_BLOCK",
    "allgather": "I_MPI_ADJUST_ALLGATHER",
    "bcast": "I_MPI_ADJUST_BCAST",
    "reduce": "I_MPI_ADJUST_REDUCE",
}
UNPROVEN = (
    "unproven: a counting user op sees Intel MPI's fallback, recursive doubling or Rabenseifner by "
    "machine (the SHM path: built-in ops)"
)


def _shm_falls_back(count: int, itemsize: int, ranks: int, commutative: bool) -> str:
    # collsweep's one user-defined op is its noncommutative one; with a user op the SHM-based
    # presets ran recursive doubling on one Xeon, Rabenseifner on another
    # (tests/libraries/test_impi.py)
    if not commutative:
        return (
            "Intel MPI's SHM-based presets run its fallback (recursive doubling or Rabenseifner, "
            "by machine) for a user-defined op"
        )
    return ""


AUTOTUNED = AlgorithmSpec(
    "impi",
    "Intel MPI's own MPI_Allreduce, autotuned (its tuning table for this machine)",
    library=True,
    color="#000087",
    short="impi",
    parts=None,
    runs_on=IMPI,
    mirrors="mpi",
    other_p="Intel MPI's power-of-two presets fold the extra ranks first",
)


def _preset(
    name: str,
    preset: int,
    text: str,
    color: str,
    model: str = "",
    collective: str = DEFAULT_COLLECTIVE,
    **extra: object,
) -> AlgorithmSpec:
    variable = PRESET_VARIABLES[collective]
    return AlgorithmSpec(
        qualified(collective, f"impi:{name}"),
        f"Intel MPI's {COLLECTIVES[collective].mpi_call} forced to {text} ({variable}={preset})",
        collective=collective,
        library=True,
        forced=name,
        color=color,
        short=f"i:{name[:4]}",
        runs_on=IMPI,
        modelled_by=qualified(collective, model) if model else "",
        settings=((variable, preset),),
        **extra,  # type: ignore[arg-type]
    )


FORCED: tuple[AlgorithmSpec, ...] = (
    _preset(
        "recursive_doubling",
        1,
        "recursive doubling",
        "#00ff00",
        "recursive_doubling",
        mirrors="mpi:recursive_doubling",
    ),
    _preset(
        "rabenseifner",
        2,
        "Rabenseifner's (reduce-scatter + allgather)",
        "#780000",
        "rabenseifner",
        commutative_only=True,
        mirrors="mpi:reduce_scatter_allgather",
    ),
    _preset("reduce_bcast", 3, "reduce + bcast", "#5a87ff"),
    _preset(
        "binomial_gather_scatter",
        5,
        "binomial gather + scatter",
        "#ff00ff",
        "binomial_tree",
        model_note="approximately: a binomial reduction to rank 0, then its result spread",
    ),
    _preset(
        "shumilin_ring",
        7,
        "Shumilin's ring",
        "#005a00",
        model_note="its fingerprint matches no textbook schedule: not modelled",
    ),
    _preset("ring", 8, "ring", "#004bff", "ring", commutative_only=True, mirrors="mpi:ring"),
    _preset("knomial", 9, "knomial", "#00ffff"),
    *(
        _preset(name, preset, text, color, model_note=UNPROVEN, falls_back=_shm_falls_back)
        for name, preset, text, color in (
            ("shm_flat", 10, "topology aware SHM-based flat", "#2dff4b"),
            ("shm_knomial", 11, "topology aware SHM-based knomial", "#006969"),
            ("shm_knary", 12, "topology aware SHM-based knary", "#96004b"),
        )
    ),
)

TUNED = AlgorithmSpec(
    "impi:tuned",
    "Intel MPI's own MPI_Allreduce following a tuning file (the spec's tuning_file, written by "
    "collsweep tune --library impi from measured winners, read from I_MPI_TUNING)",
    library=True,
    color="#afff50",
    short="i:tuned",
    parts=None,
    own_launch=True,
    runs_on=IMPI,
)

AUTOTUNER = AlgorithmSpec(
    "impi:autotuned",
    "Intel MPI's own MPI_Allreduce following a file Intel's own autotuner wrote (mpitune_fast, "
    "or I_MPI_TUNING_MODE=auto:cluster with I_MPI_TUNING_BIN_DUMP over IMB-MPI1): the spec's "
    "vendor_tuning_file, read from I_MPI_TUNING_BIN",
    library=True,
    color="#ff50ff",
    short="i:auto",
    parts=None,
    own_launch=True,
    runs_on=IMPI,
)

SHADES = {
    "recursive_doubling": "#ffff00",
    "binomial_tree": "#00ffa5",
    "rabenseifner": "#000000",
    "ring": "#ffb44b",
}
HAND_WRITTEN_HERE = hand_written_on(IMPI, "Intel MPI", "i", SHADES)
# Intel MPI's own call of the other collectives, autotuned (its tuning table).
OTHER_AUTOTUNED = autotuned_collectives(AUTOTUNED, "Intel MPI")

# Intel MPI's presets of the other collectives that collsweep has a schedule for, by Intel's numbers
# (Developer Reference, I_MPI_ADJUST_<opname>), with two unmodelled ones whose counting-op
# fingerprints differ from the default's. Proven with the counting op (tests/libraries/test_impi.py,
# p=4, 1024 float64): the recursive-halving reduce-scatter halves then quarters, the
# recursive-doubling one does not; the binomial reduce reduces at ranks 0 (twice) and 2, the
# Rabenseifner one halves then quarters on every rank, the knomial one (radix 4) reduces every
# child's two segments at rank 0. Left out: reduce-scatter presets 2 (pairwise) and 4 (reduce +
# scatter), which left the recursive-halving fingerprint with a user op. Allgather and bcast take no
# op: their presets are Intel's names, not proven.
OTHER_FORCED: tuple[AlgorithmSpec, ...] = (
    _preset(
        "recursive_halving",
        1,
        "recursive halving",
        "#00ff00",
        "recursive_halving",
        "reduce_scatter",
        commutative_only=True,
        mirrors="reduce_scatter.mpi:recursive_halving",
    ),
    _preset("recursive_doubling", 3, "recursive doubling", "#ff00ff", "", "reduce_scatter"),
    _preset(
        "recursive_doubling",
        1,
        "recursive doubling",
        "#00ff00",
        "recursive_doubling",
        "allgather",
        power_of_two_only=True,
        mirrors="allgather.mpi:recursive_doubling",
        model_note="unproven: MPI_Allgather takes no op to count",
    ),
    _preset(
        "bruck",
        2,
        "Bruck's",
        "#780000",
        "bruck",
        "allgather",
        mirrors="allgather.mpi:brucks",
        model_note="unproven: MPI_Allgather takes no op to count",
    ),
    _preset(
        "ring",
        3,
        "ring",
        "#004bff",
        "ring",
        "allgather",
        mirrors="allgather.mpi:ring",
        model_note="unproven: MPI_Allgather takes no op to count",
    ),
    _preset(
        "binomial",
        1,
        "binomial",
        "#00ff00",
        "binomial_tree",
        "bcast",
        mirrors="bcast.mpi:binomial",
        model_note="unproven: MPI_Bcast takes no op to count",
    ),
    _preset(
        "binomial",
        2,
        "binomial",
        "#00ff00",
        "binomial_tree",
        "reduce",
        mirrors="reduce.mpi:binomial",
    ),
    _preset(
        "rabenseifner",
        5,
        "Rabenseifner's",
        "#780000",
        "rabenseifner",
        "reduce",
        commutative_only=True,
        mirrors="reduce.mpi:reduce_scatter_gather",
    ),
    _preset("knomial", 7, "knomial", "#00ffff", "", "reduce"),
)
