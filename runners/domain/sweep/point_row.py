"""A points row as a typed record, and the one builder of its columns (no I/O, no MPI).

Every points row collsweep writes is a PointRow: a measured point (runners.jobs.sweep_jobs),
the cell a broken launch gives up (its points failed or timed out), a point declared skipped
(runners.domain.sweep.plan) and the test fixtures' synthetic points. `PointRow.columns()` turns it
into the store's columns ("bytes", "count", "library", ...) in one place, so no writer can
drift from another. How many cores the host has is passed in, never read here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from runners.domain.collectives.datatypes import DTYPES
from runners.domain.libraries.catalog import collective_of, library_of
from runners.domain.libraries.switching import LAUNCH, library_config
from runners.domain.status import PointStatus
from runners.domain.sweep.launcher import is_oversubscribed
from runners.domain.sweep.records import PointKey


@dataclass(frozen=True)
class Measurement:
    """How one launch measured the point: the columns its `point` event reports."""

    warmup: int
    sync_cadence: str
    cache_mode: str
    verified: bool
    started_at: datetime
    finished_at: datetime


@dataclass(frozen=True)
class PointRow:
    """One row of `points`: the point, its outcome, where it ran, and, once measured, how and
    its statistics over every launch so far (runners.domain.sweep.repetition.point_summary)."""

    key: PointKey
    status: PointStatus
    reason: str
    cores: int  # the host's physical cores: more ranks than these is oversubscribed
    switching: str = LAUNCH  # how the library algorithm was forced (points.library_config)
    job: str | None = None  # the launch's group label (None: no launch ran it)
    measured: Measurement | None = None
    launches: int | None = None  # launches that gave the point samples (None: not counted)
    statistics: dict[str, Any] = field(default_factory=dict)
    ranks_per_node: int | None = None  # of the node the ranks shared (None: not known here)

    @property
    def point_id(self) -> str:
        """The store's key of this point."""
        return self.key.point_id()

    @property
    def collective(self) -> str:
        """The collective of the point's algorithm."""
        return collective_of(self.key.algorithm)

    def columns(self) -> dict[str, Any]:
        """The row as the store's points columns (a part not known yet is left out)."""
        key = self.key
        row: dict[str, Any] = {
            "point_id": key.point_id(),
            "run_id": key.run_id,
            "algorithm": key.algorithm,
            "collective": self.collective,
            "library": library_of(key.algorithm),
            "library_config": library_config(key.algorithm, self.switching),
            "ranks": key.ranks,
            "bytes": key.nbytes,
            "dtype": key.dtype,
            "op": key.op,
            "count": key.nbytes // DTYPES[key.dtype].itemsize,
            "oversubscribed": is_oversubscribed(key.ranks, self.cores),
            "status": self.status,
            "reason": self.reason,
        }
        if self.job is not None:
            row["job"] = self.job
        if self.measured is not None:
            row |= asdict(self.measured)
        if self.launches is not None:
            row["launches"] = self.launches
        if self.ranks_per_node is not None:
            row["ranks_per_node"] = self.ranks_per_node
        return row | self.statistics
