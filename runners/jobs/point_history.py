"""Every launch's samples of a run's points, so each stored row sums up all of its launches.

No MPI here. A point is measured once per launch; after each, its row is rewritten with the
statistics of all its samples so far (runners.domain.sweep.repetition) and all of them. A launch
measured again (a resumed run redoing a killed launch) replaces that launch's samples, so no
sample is stored twice. A point that failed in one launch of a sweep stays failed.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from runners.domain.status import PointStatus
from runners.domain.sweep.point_row import PointRow
from runners.domain.sweep.records import TimingPolicy
from runners.domain.sweep.repetition import Repetition, launch_spread, point_summary
from runners.store.run_reads import samples_of

Sample = dict[str, Any]  # seconds, pass, launch


class PointHistory:
    """The samples of each point of one run, by point_id, with their launch and pass."""

    def __init__(self, samples: dict[str, list[Sample]] | None = None) -> None:
        self.samples: dict[str, list[Sample]] = samples or {}
        self.failed: dict[str, str] = {}  # point_id -> why a launch of this sweep failed it
        self.spreads: dict[str, tuple[str, float]] = {}  # point_id -> (job, launch spread)

    @classmethod
    def load(cls, path: Path, run_id: str) -> PointHistory:
        """The samples a run has stored (for a resumed run)."""
        frame = samples_of(path, run_id)
        history = cls()
        for row in frame.itertuples(index=False):
            history.samples.setdefault(row.point_id, []).append(
                {"seconds": row.seconds, "pass": row[2], "launch": row.launch}
            )
        return history

    def done(self) -> set[tuple[str, int]]:
        """The (point_id, launch) pairs with samples."""
        return {(pid, s["launch"]) for pid, samples in self.samples.items() for s in samples}

    def launches(self, point_id: str) -> int:
        """How many launches gave the point samples."""
        return len({s["launch"] for s in self.samples.get(point_id, [])})

    def _pooled_spread(self, point_id: str, job: str, rep: Repetition) -> float:
        """The median launch-to-launch spread of the job's points (this one's updated)."""
        spread = launch_spread(rep)
        if spread is not None:
            self.spreads[point_id] = (job, spread)
        same_job = [s for j, s in self.spreads.values() if j == job]
        return float(np.median(same_job)) if same_job else 0.0

    def merge(
        self, row: PointRow, launch: int, new: list[Sample], timing: TimingPolicy
    ) -> tuple[PointRow, list[dict[str, Any]]]:
        """The point's row and samples rows with `launch`'s samples replaced by `new`."""
        point_id = row.point_id
        kept = [s for s in self.samples.get(point_id, []) if s["launch"] != launch]
        merged = self.samples[point_id] = kept + [{**s, "launch": launch} for s in new]
        row = replace(row, launches=self.launches(point_id))
        if row.status == PointStatus.FAILED:
            self.failed[point_id] = row.reason or PointStatus.FAILED.value
        elif row.status == PointStatus.OK and point_id in self.failed:  # a wrong answer stays
            why = f"an earlier launch: {self.failed[point_id]}"
            row = replace(row, status=PointStatus.FAILED, reason=why)
        if row.status == PointStatus.OK and merged:
            rep = Repetition.of(
                [s["seconds"] for s in merged],
                [s["pass"] for s in merged],
                [s["launch"] for s in merged],
            )
            floor = self._pooled_spread(point_id, row.job or "", rep)
            key, target = row.key, timing.target_rel_ci
            stats = point_summary(rep, key.nbytes, key.ranks, target, floor, row.collective)
            row = replace(row, statistics=stats)
        samples = [
            {"point_id": point_id, "run_id": row.key.run_id, "iteration": i, **s}
            for i, s in enumerate(merged)
        ]
        return row, samples
