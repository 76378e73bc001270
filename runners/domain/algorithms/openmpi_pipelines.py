"""Open MPI's algorithms with a parameter, forced with it: coll/tuned's `pipeline` algorithm (a
chain of fan-out 1, value 3 of coll_tuned_<coll>_algorithm in Open MPI 5.0) of reduce and
bcast and its bcast binary tree (value 5), the segment coll_tuned_<coll>_algorithm_segmentsize;
its bcast k-nomial tree (value 7), the radix coll_tuned_bcast_algorithm_knomial_radix; all
written through MPI_T like every Open MPI forced algorithm (runners.domain.algorithms.openmpi).
A member `reduce.openmpi:chain(segment=b)` is modelled by `reduce.chain(segment=b)`, proven rank
by rank with the counting op; a bcast reduces nothing, so its witness is Open MPI's own message
monitoring (pml/monitoring: every rank's messages and bytes to each peer), tests/libraries/
test_openmpi.py: the chain and the k-nomial tree send what their models send, peer by peer; the
binary tree numbers its nodes otherwise (rank 1's children 3 and 5, the model's 3 and 4), the
same shape. Open MPI cuts the remainder last, MPICH and collsweep's schedules first: the same
critical path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache

from runners.domain.algorithms.allreduce import segmented_ring
from runners.domain.algorithms.bcast import binary as bcast_binary
from runners.domain.algorithms.bcast import chain as bcast_chain
from runners.domain.algorithms.bcast import knomial as bcast_knomial
from runners.domain.algorithms.bcast.knomial import RADIX
from runners.domain.algorithms.parameters import BYTES, Family, Parameter
from runners.domain.algorithms.reduce import chain as reduce_chain
from runners.domain.algorithms.segments import SEGMENT
from runners.domain.collectives.collective import COLLECTIVES, qualified
from runners.domain.collectives.descriptor import OPENMPI, AlgorithmSpec
from runners.domain.units import format_bytes

PIPELINE = 3  # coll/tuned's `pipeline` for both reduce and bcast (ompi_info --level 9)
COLLECTIVES_PIPELINED = ("reduce", "bcast")  # their coll/tuned names are their own


def algorithm_cvar(collective: str) -> str:
    """coll/tuned's forcing variable of `collective` (its coll/tuned name; 0: its own
    decision)."""
    return f"coll_tuned_{collective}_algorithm"


def segment_cvar(collective: str) -> str:
    """coll/tuned's segment size variable of `collective` (0: its own decision)."""
    return f"coll_tuned_{collective}_algorithm_segmentsize"


SEGMENT_CVARS = tuple(segment_cvar(c) for c in COLLECTIVES_PIPELINED)
BINARY_NOTE = "the same binary tree with its nodes numbered otherwise (Open MPI's monitoring)"
KNOMIAL = 7  # coll/tuned's bcast knomial
RADIX_CVAR = "coll_tuned_bcast_algorithm_knomial_radix"
DEFAULT_RADIX = 4  # Open MPI's; its rules file cannot name another


def pipeline_family(
    collective: str, model: Family, algorithm: str = "chain", value: int = PIPELINE
) -> Family:
    """Open MPI's segmented algorithm `value` of `collective` (reduce or bcast, whose coll/tuned
    names are their own; by default its pipeline, a chain) with its segment size a parameter:
    `<collective>.openmpi:<algorithm>(segment=b)`, modelled by `model`'s member of the same
    segment."""
    cvar, segment = algorithm_cvar(collective), segment_cvar(collective)
    shape = "pipeline (a chain)" if value == PIPELINE else f"{algorithm} tree"

    def build(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
        nbytes = SEGMENT.number(values["segment"])
        return AlgorithmSpec(
            name,
            f"Open MPI's {COLLECTIVES[collective].mpi_call} forced to its {shape} in segments "
            f"of {values['segment']} ({cvar}={value}, {segment}={nbytes})",
            collective=collective,
            library=True,
            forced="pipeline" if value == PIPELINE else f"{algorithm}_tree",  # coll/tuned's
            color="#2ca02c" if value == PIPELINE else "#9467bd",
            short=f"o:{algorithm[:3]}{values['segment']}",
            runs_on=OPENMPI,
            modelled_by=model.member_name(values),
            model_note=BINARY_NOTE if value == BINARY else "",
            settings=((cvar, value), (segment, nbytes)),
            commutative_only=collective == "reduce",
        )

    return Family(
        qualified(collective, f"openmpi:{algorithm}"),
        (SEGMENT,),
        build,
        help=f"Open MPI's {shape} {collective} in segments of b bytes ({model.name}(segment=b))",
        example_values=(("segment", "64KiB"),),
    )


BINARY = 5  # coll/tuned's bcast binary_tree
REDUCE = pipeline_family("reduce", reduce_chain.FAMILY)
BCAST = pipeline_family("bcast", bcast_chain.FAMILY)
BCAST_BINARY = pipeline_family("bcast", bcast_binary.FAMILY, "binary", BINARY)


def _knomial(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """A member of bcast.openmpi:knomial (parameters.Family.build)."""
    radix = int(values["radix"])
    cvar = algorithm_cvar("bcast")
    return AlgorithmSpec(
        name,
        f"Open MPI's MPI_Bcast forced to its k-nomial tree of radix {radix} ({cvar}={KNOMIAL}, "
        f"{RADIX_CVAR}={radix})",
        collective="bcast",
        library=True,
        forced="knomial",
        color="#17becf",
        short=f"o:kn{radix}",
        runs_on=OPENMPI,
        modelled_by=bcast_knomial.FAMILY.member_name(values),
        settings=((cvar, KNOMIAL), (RADIX_CVAR, radix), (segment_cvar("bcast"), 0)),
    )


BCAST_KNOMIAL = Family(
    "bcast.openmpi:knomial",
    (RADIX,),
    _knomial,
    help="Open MPI's k-nomial tree bcast of radix k (bcast.knomial(radix=k))",
    example_values=(("radix", "4"),),
)


SEGMENTED_RING_VALUE = 5  # coll/tuned's allreduce segmented ring
# Open MPI's segmented ring runs the plain ring without a segment size: 64 KiB is collsweep's
# default member, the one `openmpi:segmented_ring` names
RING_SEGMENT = Parameter("segment", default="64KiB", unit=BYTES, auto=True)


@cache
def segmented_falls_back(segment: int) -> Callable[[int, int, int, bool], str]:
    """Open MPI's segmented ring of `segment`-byte segments runs the plain ring when count <
    ranks x the segment's elements (coll_base_allreduce.c); one function per segment size."""

    def falls_back(count: int, itemsize: int, ranks: int, commutative: bool) -> str:
        elements = max(segment // itemsize, 1)
        if count < ranks * elements:
            return (
                "Open MPI's segmented ring runs the plain ring when count < ranks x segment "
                f"({count} < {ranks} x {elements} elements of {format_bytes(segment)})"
            )
        return ""

    return falls_back


def _segmented_ring(name: str, values: Mapping[str, str]) -> AlgorithmSpec:
    """A member of openmpi:segmented_ring (parameters.Family.build)."""
    nbytes = RING_SEGMENT.number(values["segment"])
    cvar = algorithm_cvar("allreduce")
    return AlgorithmSpec(
        name,
        f"Open MPI's MPI_Allreduce forced to segmented ring ({values['segment']} segments) "
        f"({cvar}={SEGMENTED_RING_VALUE}, {segment_cvar('allreduce')}={nbytes})",
        library=True,
        forced="segmented_ring",
        color="#e15f5f",
        short="o:segm",
        runs_on=OPENMPI,
        modelled_by=segmented_ring.FAMILY.member_name(values),
        settings=((cvar, SEGMENTED_RING_VALUE), (segment_cvar("allreduce"), nbytes)),
        commutative_only=True,
        falls_back=segmented_falls_back(nbytes),
    )


SEGMENTED_RING = Family(
    "openmpi:segmented_ring",
    (RING_SEGMENT,),
    _segmented_ring,
    help="Open MPI's segmented ring allreduce in segments of b bytes (segmented_ring(segment=b))",
    example_values=(("segment", "32KiB"),),
)
