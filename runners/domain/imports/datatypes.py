"""The tools' datatype and op names in collsweep's words (pure).

A tool's datatype becomes collsweep's where it has one (MPI_FLOAT and nccl-tests' `float`:
float32). A collective that reduces nothing moves bytes whatever their type, and collsweep's
own sweeps store such points under a datatype too (float32 by default), so a byte payload
(MPI_BYTE, MPI_CHAR) of allgather or bcast is stored as float32: the same bytes moved. A
reduction's datatype is what gets reduced, so a type collsweep lacks (MPI_CHAR sums, bfloat16)
keeps its own name, and such points are stored but not analysed (no model prices them).
"""

from __future__ import annotations

from runners.domain.collectives.collective import COLLECTIVES, NO_OP
from runners.domain.collectives.datatypes import DTYPES, OPS

BYTE_PAYLOAD = "float32"  # a data-only collective's bytes, stored as collsweep's sweeps do

MPI_TYPES = {
    "MPI_FLOAT": "float32",
    "MPI_DOUBLE": "float64",
    "MPI_INT": "int32",
    "MPI_INT32_T": "int32",
    "MPI_LONG": "int64",
    "MPI_LONG_LONG": "int64",
    "MPI_INT64_T": "int64",
    "MPI_CHAR": "char",
    "MPI_SIGNED_CHAR": "char",
    "MPI_BYTE": "byte",
}

NCCL_TYPES = {
    "float": "float32",
    "float32": "float32",
    "double": "float64",
    "float64": "float64",
    "half": "float16",
    "float16": "float16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "int8": "int8",
    "char": "int8",
    "uint8": "uint8",
    "uint32": "uint32",
    "uint64": "uint64",
    "bfloat16": "bfloat16",
}

BYTE_TYPES = ("char", "byte", "int8", "uint8")
OTHER_SIZES = {"uint32": 4, "uint64": 8, "bfloat16": 2}  # types collsweep lacks, by their size

MPI_OPS = {"MPI_SUM": "sum", "MPI_PROD": "prod", "MPI_MAX": "max", "MPI_MIN": "min"}


def itemsize(dtype: str) -> int | None:
    """Bytes per element of a datatype as stored (1 for the byte types); None when unknown."""
    if dtype in DTYPES:
        return DTYPES[dtype].itemsize
    return 1 if dtype in BYTE_TYPES else OTHER_SIZES.get(dtype)


def stored_dtype(collective: str, tool_dtype: str) -> str:
    """The datatype a point of `collective` is stored under (see the module docstring)."""
    if not COLLECTIVES[collective].reduces and tool_dtype in BYTE_TYPES:
        return BYTE_PAYLOAD
    return tool_dtype


def stored_op(collective: str, tool_op: str) -> str:
    """The op a point of `collective` is stored under: `none` where it reduces nothing."""
    return tool_op if COLLECTIVES[collective].reduces else NO_OP


def analysable(dtype: str, op: str) -> str | None:
    """Why collsweep's models cannot price points of this datatype and op, or None."""
    if dtype not in DTYPES:
        return f"collsweep has no datatype {dtype} (it knows {', '.join(DTYPES)})"
    if op != NO_OP and op not in OPS:
        return f"collsweep has no op {op} (it knows {', '.join(OPS)})"
    return None
