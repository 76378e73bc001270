"""The one entry point of every MPI job collsweep launches: `python -m runners.ranks KIND [JOB]`.

KIND is `sweep`, `calibrate`, `verify`, `replay` or `probe`; JOB is the job file the parent
wrote (runners.jobs.launch.job_file), read here as its kind's record
(runners.domain.sweep.job_file),
which refuses a malformed file before any rank measures; `probe` takes none. Every kind prints
its events as JSON lines on rank 0's stdout (see its module), and every rank leaves when the
parent process is gone.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from runners.domain.sweep.job_file import JOB_FILES, JobFile, MalformedJobFile
from runners.ranks import parent_watch

KINDS = {
    "sweep": "runners.ranks.sweep_worker",
    "calibrate": "runners.ranks.calibrate_worker",
    "verify": "runners.ranks.verify_worker",
    "probe": "runners.ranks.mpit",
    "replay": "runners.ranks.replay_worker",
}
USAGE = f"usage: python -m runners.ranks {{{','.join(KINDS)}}} [JOB]"


def read_job(kind: str, argv: list[str]) -> JobFile | None:
    """The job file of a kind that takes one, as its record; SystemExit saying what is wrong
    with a missing, unreadable or malformed one."""
    record = JOB_FILES.get(kind)
    if record is None:
        return None
    if len(argv) < 2:
        raise SystemExit(f"{USAGE}: a {kind} job takes a job file")
    try:
        return record.from_json(Path(argv[1]).read_text())
    except (OSError, UnicodeDecodeError, MalformedJobFile) as exc:
        raise SystemExit(f"runners.ranks {kind}: job file {argv[1]} refused: {exc}") from None


def main(argv: list[str] | None = None) -> None:
    """Run the job of the kind named first on the command line."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in KINDS:
        raise SystemExit(USAGE)
    job = read_job(argv[0], argv)
    parent_watch.start()
    importlib.import_module(KINDS[argv[0]]).run(job)


if __name__ == "__main__":
    main()
