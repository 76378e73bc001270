"""MPI.Op objects for the op names of the catalog, including the noncommutative user op."""

from __future__ import annotations

from functools import cache

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import to_numpy_dtype

from runners.domain.collectives.collective import NO_OP

_BUILTIN = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}


def _first_nonzero(inbuf, inoutbuf, datatype: MPI.Datatype) -> None:
    """inout = in o inout with a o b = a if a != 0 else b; `in` is the left operand."""
    dtype = to_numpy_dtype(datatype)
    left = np.frombuffer(inbuf, dtype=dtype)
    right = np.frombuffer(inoutbuf, dtype=dtype)
    np.copyto(right, left, where=left != 0)


@cache
def mpi_op(name: str) -> MPI.Op | None:
    """The MPI.Op for a catalog op name (user ops are created once per process); None for
    `none`, the op of a collective that reduces nothing."""
    if name == NO_OP:
        return None
    if name in _BUILTIN:
        return _BUILTIN[name]
    if name == "first_nonzero":
        return MPI.Op.Create(_first_nonzero, commute=False)
    raise ValueError(f"unknown op {name!r}")


def reduction_op(name: str) -> MPI.Op:
    """The MPI.Op of an op that reduces (never `none`)."""
    op = mpi_op(name)
    if op is None:
        raise ValueError(f"op {name!r} reduces nothing")
    return op
