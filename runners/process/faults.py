"""Test hooks of the parent process: COLLSWEEP_FAULT=hold:<stage> parks a command at a named
stage until the file named by COLLSWEEP_FAULT_RELEASE exists, so that a test acts (sends a
signal, say) while the command is surely in that stage, whatever the machine's speed; the
command creates that name + ".held" once parked. Stages: analysis (before the analysis),
write-points (inside DuckDB's execution of a store write with points, before its COMMIT:
runners.store.writes), write-analysis (the same, storing a run's analysis), user-query (the
process of a user's SQL, its limits armed: runners.store.user_query), import-staged (`collsweep
import` with its staging store written, before it is merged: runners.jobs.importing). The
ranks' own hooks (crash, hang, garble, hold at an algorithm) are runners.ranks.sweep_worker's.
"""

from __future__ import annotations

import os
import time

FAULT_ENV = "COLLSWEEP_FAULT"
RELEASE_ENV = "COLLSWEEP_FAULT_RELEASE"


def holding(stage: str) -> bool:
    """Whether COLLSWEEP_FAULT asks to park at ``stage``."""
    return os.environ.get(FAULT_ENV, "") == f"hold:{stage}"


def hold_at(stage: str) -> None:
    """Wait here while COLLSWEEP_FAULT is hold:<stage> and the release file is absent."""
    if not holding(stage):
        return
    release = os.environ.get(RELEASE_ENV, "")
    if release:
        with open(release + ".held", "w"):
            pass
    while not (release and os.path.exists(release)):
        time.sleep(0.05)
