"""Tuning files on disk: whether a library can follow one (its files read here, checked by the
library's own rules: LibrarySpec.tuning_problem), and what a run records of one it followed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from runners.domain.libraries import LibrarySpec
from runners.domain.libraries.mpich_tuning import posix_path
from runners.domain.libraries.tuning import provenance_path


def tuning_problem(lib: LibrarySpec, tuning_file: str | Path) -> str | None:
    """Why `lib` cannot follow the tuning file, or None: the first of its files (in the
    library's order) that is missing, unreadable, or not what the library reads, each checked
    once it is read."""
    paths = lib.tuning_files(tuning_file)
    if not paths:  # the library has no tuning file: it says so
        return lib.tuning_problem({})
    contents: dict[Path, bytes] = {}
    for path in paths:
        try:
            contents[path] = path.read_bytes()
        except FileNotFoundError:
            return f"tuning file {path} does not exist (collsweep tune writes it)"
        except OSError as exc:
            return f"tuning file {path} is not readable: {exc}"
        problem = lib.tuning_problem(contents)
        if problem:
            return problem
    return None


def file_record(tuning_file: str | Path) -> dict[str, Any]:
    """What a run that follows a tuning file records of it: its path and SHA-256 (and its
    shared-memory table's, MPICH's), and the provenance collsweep tune wrote beside it (the
    run, host, library, boundaries)."""
    record: dict[str, Any] = {}
    for key, path in (("file", Path(tuning_file)), ("posix_file", posix_path(tuning_file))):
        if key != "file" and not path.exists():
            continue
        record[key] = str(path.resolve())
        record[f"{key}_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        record["provenance"] = json.loads(provenance_path(tuning_file).read_text())
    except (OSError, ValueError):
        record["provenance"] = None
    return record
