"""Files collsweep writes for people (tuning files, specs, exports): where they may go and how
they are written.

A target must be absent or a regular file that is not a DuckDB database nor its write-ahead
log (a results store is never overwritten by an output), nor one of the command's inputs or
another of its outputs; a folder, FIFO, device or socket is refused with one line, before
anything is written. Writing goes to a temporary name in the target's folder, renamed
over the target at the end, with the permissions an ordinary new file gets (umask applies).
No MPI.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from runners.domain.errors import BadInput

DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


class BadOutput(BadInput):
    """An output target collsweep will not write (exit 2)."""


def is_duckdb_file(path: Path) -> bool:
    """Whether `path` is a regular file that starts like a DuckDB database."""
    try:
        with open(path, "rb") as handle:
            return handle.read(12)[8:12] == DUCKDB_MAGIC
    except OSError:
        return False


def output_problem(path: Path) -> str | None:
    """Why `path` cannot be written as an output file, or None."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return f"cannot write {path}: folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"cannot write {path}: folder {folder} is not writable"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return _companion_problem(path)
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror}"
    if stat.S_ISDIR(mode):
        return f"cannot write {path}: it is a folder"
    if not stat.S_ISREG(mode):
        return f"cannot write {path}: it is not a regular file (a FIFO, device or socket)"
    if is_duckdb_file(path):
        return f"cannot write {path}: it is a DuckDB database (a results store?); choose another"
    return _companion_problem(path)


def _companion_problem(path: Path) -> str | None:
    """A store's write-ahead log (STORE.wal, existing or not) is the store's, never an output."""
    if path.suffix == ".wal" and is_duckdb_file(path.with_suffix("")):
        return f"cannot write {path}: it is the write-ahead log of the store {path.with_suffix('')}"
    return None


def check_outputs(paths: Sequence[Path], inputs: Sequence[Path] = ()) -> None:
    """BadOutput naming the first path that cannot be written: output_problem's reasons, an
    output that is one of the command's `inputs`, or two outputs that are one file."""
    for index, path in enumerate(paths):
        problem = output_problem(path) or _clash(path, paths[:index], inputs)
        if problem:
            raise BadOutput(problem)


def _clash(path: Path, earlier: Sequence[Path], inputs: Sequence[Path]) -> str | None:
    """Why writing `path` would overwrite an input or another output of the same command."""
    for source in inputs:
        if _same_file(path, source):
            return f"cannot write {path}: it is the input {source}; choose another output"
    for other in earlier:
        if _same_file(path, other):
            return f"cannot write {path} twice (it is also {other}); give each output its own"
    return None


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (through links and `..`), existing or not."""
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return Path(a).resolve() == Path(b).resolve()


def write_texts(files: Mapping[Path, str], inputs: Sequence[Path] = ()) -> None:
    """Write every file to a temporary name beside it, then rename them all into place (none
    is replaced when any cannot be written); BadOutput when one cannot be (check_outputs)."""
    check_outputs(list(files), inputs)
    staged: list[tuple[Path, Path]] = []
    try:
        for path, text in files.items():
            fd, tmp_name = tempfile.mkstemp(dir=path.parent or Path("."), prefix=f".{path.name}.")
            staged.append((Path(tmp_name), path))
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
    except OSError as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise BadOutput(f"cannot write {path}: {exc.strerror or exc}") from None
    for tmp, path in staged:
        os.replace(tmp, path)


def _umask() -> int:
    """The process's umask (read by setting it, then restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
