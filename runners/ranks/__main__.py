"""The one entry point of every MPI job collsweep launches: `python -m runners.ranks KIND [JOB]`.

KIND is `sweep`, `calibrate`, `verify`, `replay` or `probe`; JOB is the JSON job file the parent
(runners.jobs.launch.job_file; `probe` takes none). Every kind prints its events as JSON lines
on rank 0's stdout (see its module), and every rank leaves when the parent process is gone.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from runners.ranks import parent_watch

KINDS = {
    "sweep": "runners.ranks.sweep_worker",
    "calibrate": "runners.ranks.calibrate_worker",
    "verify": "runners.ranks.verify_worker",
    "probe": "runners.ranks.mpit",
    "replay": "runners.ranks.replay_worker",
}


def main(argv: list[str] | None = None) -> None:
    """Run the job of the kind named first on the command line."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in KINDS:
        raise SystemExit(f"usage: python -m runners.ranks {{{','.join(KINDS)}}} [JOB]")
    job = json.loads(Path(argv[1]).read_text()) if len(argv) > 1 else {}
    parent_watch.start()
    importlib.import_module(KINDS[argv[0]]).run(job)


if __name__ == "__main__":
    main()
