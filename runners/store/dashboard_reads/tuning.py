"""Data of the Tuning page: a library's tuned entry (mpi:tuned, openmpi:tuned, impi:tuned: the
library following a collsweep tuning file) against its autotuned default, and the file the run
followed."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd

from runners import store
from runners.domain.inputs import BadInputFile, read_input
from runners.domain.libraries.catalog import ALGORITHMS, is_tuned
from runners.domain.libraries.tuning import TUNED
from runners.host.tuning_files import MAX_TUNING_BYTES
from runners.store.dashboard_reads.base import Scope, StorePath, _df, _open
from runners.store.dashboard_reads.override import against_default

# Every library's tuned entry of every collective (mpi:tuned, bcast.mpi:tuned, impi:tuned, ...)
TUNED_ENTRIES = [name for name in ALGORITHMS if is_tuned(name)]


def tuned_runs(path: StorePath) -> list[str]:
    """The runs that timed a library's tuned entry, newest first."""
    with _open(path) as con:
        frame = _df(
            con,
            "SELECT DISTINCT p.run_id, r.started_at FROM points p JOIN runs r USING (run_id) "
            "WHERE list_contains($tuned, p.algorithm) ORDER BY r.started_at DESC",
            {"tuned": TUNED_ENTRIES},
        )
    return frame["run_id"].tolist()


def tuned_entries(path: StorePath, run_id: str) -> dict[str, str]:
    """Per collective, the tuned entry the run timed (one tuning file serves one library)."""
    with _open(path) as con:
        rows = con.execute(
            "SELECT DISTINCT algorithm FROM points "
            "WHERE run_id = ? AND list_contains(?, algorithm)",
            [run_id, TUNED_ENTRIES],
        ).fetchall()
    return {ALGORITHMS[name].collective: name for (name,) in sorted(rows)}


def tuning_ratios(path: StorePath, scope: Scope, tuned: str = TUNED) -> pd.DataFrame:
    """tuned / autotuned time at every size both were measured, with its interval from the
    paired launches and the verdict, as the analysis stored them (against_default)."""
    return against_default(path, scope, tuned).rename(columns={"algorithm_s": "tuned_s"})


def tuning_file_of(path: StorePath, run_id: str) -> dict[str, Any]:
    """What the run recorded of its tuning file, with the file's text when it is still on
    disk unchanged (`text`, else None and `why`)."""
    with _open(path) as con:
        run = store.get_run(con, run_id) or {}
    record = dict((run.get("environment") or {}).get("tuning_file") or {})
    record["text"], record["why"] = None, ""
    file = Path(record.get("file") or "")
    try:
        data = read_input(file, "tuning file", MAX_TUNING_BYTES)
    except BadInputFile as exc:
        gone = not file.exists()
        record["why"] = f"{file} is " + ("no longer on this machine" if gone else exc.reason)
        return record
    if hashlib.sha256(data).hexdigest() != record.get("file_sha256"):
        record["why"] = f"{file} has changed since the run (its SHA-256 differs)"
        return record
    record["text"] = data.decode("utf-8")
    return record
