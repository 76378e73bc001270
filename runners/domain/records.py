"""Typed records shared by the parent, the ranks and the store: what identifies a point.

No MPI here. The worker and the parent build the same PointKey from the same facts, so the
store's point_id has one definition; a resumed run writes the same ids again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runners.domain.catalog import ALGORITHMS, DTYPES
from runners.domain.launcher import is_oversubscribed


@dataclass(frozen=True)
class PointKey:
    """One point of a run: algorithm x ranks x bytes x dtype x op."""

    run_id: str
    algorithm: str
    ranks: int
    nbytes: int
    dtype: str
    op: str

    def point_id(self) -> str:
        """The store's key of this point; the same facts always give the same id."""
        return f"{self.run_id}/{self.algorithm}/{self.ranks}/{self.nbytes}/{self.dtype}/{self.op}"

    def row(self) -> dict[str, Any]:
        """The identifying columns of this point's row in `points` ("bytes" there)."""
        forced = ALGORITHMS[self.algorithm].forced
        return {
            "point_id": self.point_id(),
            "run_id": self.run_id,
            "algorithm": self.algorithm,
            "library_config": f"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM={forced}" if forced else "",
            "ranks": self.ranks,
            "bytes": self.nbytes,
            "dtype": self.dtype,
            "op": self.op,
            "count": self.nbytes // DTYPES[self.dtype].itemsize,
            "oversubscribed": is_oversubscribed(self.ranks),
        }
