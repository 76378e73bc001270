"""The statuses a point and a run can have: one home for the words the store keeps.

They are StrEnums, so a status compares equal to its stored text and binds into SQL as a
parameter (`status = ?` with PointStatus.OK), never as a literal in a query.
"""

from __future__ import annotations

from enum import StrEnum


class PointStatus(StrEnum):
    """What happened to one point (points.status)."""

    OK = "ok"  # measured and verified
    FAILED = "failed"  # a wrong result or an error: on record, never a median
    SKIPPED = "skipped"  # not measurable as asked (the reason says why)
    TIMEOUT = "timeout"  # the point's watchdog fired


class RunStatus(StrEnum):
    """Where a run stands (runs.status)."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


class CheckStatus(StrEnum):
    """The verdict of one exact check of `collsweep verify` (runners.ranks.verify_worker)."""

    OK = "ok"  # every rank's result equals the serial reference
    REFUSED = "refused"  # the algorithm declares it cannot run this case
    MISMATCH = "mismatch"  # some rank's result (or untouched input) is wrong
    ERROR = "error"  # the job failed or reported fewer checks than asked
