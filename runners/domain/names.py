"""Names that become parts of file paths: run ids (journal, lock, shard and export files).

One rule wherever a run id enters (sweep --run-id, --resume, export, merge, a shard's rows):
letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters; so
an id can never name a folder, climb out of one, or hide a control character. Paths are built
from checked ids only (`path_for`), and checked again to stay inside their folder. No MPI.
"""

from __future__ import annotations

import re
from pathlib import Path

from runners.domain.errors import BadInput

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
RUN_ID_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


class BadName(BadInput):
    """A name that cannot be used as a run id (exit 2)."""


def run_id_problem(run_id: object) -> str | None:
    """Why `run_id` is not a valid run id, or None."""
    if isinstance(run_id, str) and RUN_ID.fullmatch(run_id):
        return None
    return f"a run id must be {RUN_ID_RULE}, got {run_id!r}"


def checked_run_id(run_id: object) -> str:
    """`run_id` itself when valid; BadName otherwise."""
    problem = run_id_problem(run_id)
    if problem:
        raise BadName(problem)
    return str(run_id)


def path_for(folder: Path, run_id: str, suffix: str) -> Path:
    """`folder/<run_id><suffix>` for a valid run id, proven to stay inside `folder`."""
    path = Path(folder) / f"{checked_run_id(run_id)}{suffix}"
    if path.resolve().parent != Path(folder).resolve():
        raise BadName(f"{run_id!r} would leave {folder}")
    return path
