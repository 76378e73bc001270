"""Which algorithm MPICH's own selection names for a call, read from its shipped table (pure).

MPICH chooses each collective's algorithm by walking a JSON decision tree (src/mpi/coll/src/
csel.c): at every level the first sibling whose condition the call meets is descended, until
a leaf names the algorithm. Its generic table for the release collsweep runs is in
mpich_tables/mpir_generic.json (mpich_tuning.py reads it too). This module walks that table for
a call on an intra-communicator without a node hierarchy (one rank per node, as the
simulator's built-in platforms place ranks): the documented choice `collsweep simulate` prices
MPICH's autotuned `mpi` by. On one node MPICH's shared-memory layer chooses first
(posix_generic.json); that choice is not modelled here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from runners.domain.libraries.mpich_tuning import (
    MPICH_COLLECTIVES,
    MPICH_FORCED,
    MPIR_TABLE,
    library_table,
)


@dataclass(frozen=True)
class Call:
    """What MPICH's conditions test of a call."""

    collective: str
    ranks: int
    nbytes: int  # the whole vector (avg_msg_size and total_msg_size alike, mpich_tuning.py)
    count: int
    commutative: bool
    built_in_op: bool = True

    @property
    def pof2(self) -> int:
        """The largest power of two not above the group size (csel.c's comm pof2)."""
        return 1 << (self.ranks.bit_length() - 1)


CHECKS: Mapping[str, Callable[[Call], bool]] = {
    "comm_type=intra": lambda call: True,
    "comm_size=pow2": lambda call: call.ranks == call.pof2,
    "is_commutative=yes": lambda call: call.commutative,
    "is_commutative=no": lambda call: not call.commutative,
    "is_op_built_in=yes": lambda call: call.built_in_op,
    "is_op_built_in=no": lambda call: not call.built_in_op,
    "is_block_regular=yes": lambda call: True,
}


def _meets(condition: str, call: Call) -> bool:
    """Whether the call meets one key of the table; False for a key this walk does not know
    (the next sibling is then tried, as csel.c does with a branch that does not match)."""
    for sign in ("<=", "<"):
        if sign in condition:
            name, bound = condition.split(sign, 1)
            return _below(call, name, bound, strict=sign == "<")
    if condition.endswith("=any"):
        return True
    return CHECKS.get(condition, lambda call: False)(call)


def _below(call: Call, name: str, bound: str, strict: bool) -> bool:
    """`avg_msg_size<=N`, `total_msg_size<N`, `comm_size<N`, `count<pow2`."""
    sizes = {"avg_msg_size": call.nbytes, "total_msg_size": call.nbytes}
    have = {**sizes, "comm_size": call.ranks, "count": call.count}.get(name)
    limit = call.pof2 if bound == "pow2" else int(bound) if bound.isdigit() else None
    if have is None or limit is None:
        return False
    return have < limit if strict else have <= limit


def documented_algorithm(call: Call) -> str | None:
    """MPICH's function name for the call (`MPIR_Allreduce_intra_reduce_scatter_allgather`),
    or None where the table names none this walk can follow."""
    how = MPICH_COLLECTIVES.get(call.collective)
    if how is None:
        return None
    node: Any = library_table(MPIR_TABLE).get(how.key)
    while isinstance(node, dict) and node:
        leaf = next((k for k in node if k.startswith("algorithm=")), None)
        if leaf is not None:
            return leaf.removeprefix("algorithm=")
        node = next((child for key, child in node.items() if _meets(key, call)), None)
    return None


def documented_choice(call: Call) -> tuple[str | None, str]:
    """The forced algorithm collsweep knows as MPICH's choice for the call (`mpi:rabenseifner`)
    and the function the table names; (None, why) where collsweep has no such algorithm."""
    function = documented_algorithm(call)
    if function is None:
        return None, f"MPICH's table names no algorithm for {call.collective} here"
    prefix = MPICH_COLLECTIVES[call.collective].prefix
    for name, spec in MPICH_FORCED.items():
        if spec.collective == call.collective and f"{prefix}{spec.forced}" == function:
            return name, function
    return None, f"MPICH's table names {function}, which collsweep does not model"
