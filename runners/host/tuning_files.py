"""Tuning files on disk: whether a library can follow one (its files read here, checked by the
library's own rules: LibrarySpec.tuning_problem), and what a run records of one it followed."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any

from runners.domain.collectives.descriptor import MPICH
from runners.domain.inputs import BadInputFile, load_json_text, read_input, read_text_input
from runners.domain.libraries import LIBRARIES, LibrarySpec
from runners.domain.libraries.mpich_tuning import posix_path, unknown_leaf
from runners.domain.libraries.tuning import provenance_path
from runners.host import libraries

MAX_TUNING_BYTES = 64 * 2**20  # MPICH's own tables are under 100 KiB


def tuning_problem(lib: LibrarySpec, tuning_file: str | Path) -> str | None:
    """Why `lib` cannot follow the tuning file, or None: the first of its files (in the
    library's order) that is missing, unreadable, or not what the library reads, each checked
    once it is read."""
    paths = lib.tuning_files(tuning_file)
    if not paths:  # the library has no tuning file: it says so
        return lib.tuning_problem({})
    contents: dict[Path, bytes] = {}
    for path in paths:
        if not path.exists() and not path.is_symlink():
            return f"tuning file {path} does not exist (collsweep tune writes it)"
        try:
            contents[path] = read_input(path, "tuning file", MAX_TUNING_BYTES)
        except BadInputFile as exc:
            return str(exc)
        problem = lib.tuning_problem(contents)
        if problem:
            return problem
    known = mpich_algorithms() if lib.name == MPICH else frozenset()
    return unknown_leaf(contents, known) if known else None


@cache
def mpich_algorithms() -> frozenset[str]:
    """The `algorithm=` names the installed MPICH's selection reads (its libmpi's strings);
    empty when it is not installed (then no leaf is refused here)."""
    folder = libraries.install(LIBRARIES[MPICH]).prefix / "lib"
    names: set[str] = set()
    for libmpi in folder.glob("libmpi.so.*"):  # the wheel's library (its symlinks are tiny)
        try:
            names |= {m.decode() for m in ALGORITHM_NAME.findall(libmpi.read_bytes())}
        except OSError:
            continue
    return frozenset(names)


ALGORITHM_NAME = re.compile(rb"algorithm=([A-Za-z0-9_]+)\x00")


def file_record(tuning_file: str | Path) -> dict[str, Any]:
    """What a run that follows a tuning file records of it: its path and SHA-256 (and its
    shared-memory table's, MPICH's), and the provenance collsweep tune wrote beside it (the
    run, host, library, boundaries)."""
    record: dict[str, Any] = {}
    for key, path in (("file", Path(tuning_file)), ("posix_file", posix_path(tuning_file))):
        if key != "file" and not path.exists():
            continue
        record[key] = str(path.resolve())
        data = read_input(path, "tuning file", MAX_TUNING_BYTES)
        record[f"{key}_sha256"] = hashlib.sha256(data).hexdigest()
    provenance = provenance_path(tuning_file)
    try:
        text = read_text_input(provenance, "provenance", MAX_TUNING_BYTES)
        record["provenance"] = load_json_text(text, "provenance", provenance)
    except BadInputFile:
        record["provenance"] = None
    return record
