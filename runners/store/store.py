"""The Store: one results store opened once per command, closed when the command is done.

A command opens its store once (`Store.open`) and hands the Store to every named read and write
of runners.store in place of the file's path; each of those takes a Source, which a Store is.

- **Read**: the file is opened read-only once, its schema checked once, and every read of the
  command goes through that one connection until `close()`. A read-only command keeps it a few
  hundred milliseconds; writers in other processes wait that long at most.
- **Write**: the file is created, checked block by block and migrated once, at open. Each write
  then takes a connection of its own for its one transaction and lets go: DuckDB locks the whole
  file for as long as a write connection is open, even read-only ones elsewhere wait, and a
  sweep writes for minutes while the dashboard reads between its batches. Reads of a writing
  command take the same short read connections.

A Store stands in for its path where a path is asked for (`os.fspath`, `str`), so messages and
the journal beside the file read as before.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from runners.process import stops
from runners.store.schema import (
    SCHEMA_VERSION,
    Connection,
    _connect,
    _missing,
    _refuse_newer,
    _stored_version,
    _writing,
    ensure_current,
)
from runners.store.shape import check_shape
from runners.store.storefile import StoreError, damage_said


class Store:
    """A results store opened for one command (see the module's docstring)."""

    def __init__(self, path: Path, *, writable: bool, con: Connection | None = None) -> None:
        self.path = path
        self.writable = writable
        self._con = con

    @classmethod
    def open(cls, path: Path | str, *, write: bool = False) -> Store:
        """Open the store at ``path``: read-only (a missing, foreign, older- or newer-schema file
        is a StoreError, nothing created or migrated), or for writing (created if missing,
        checked and migrated once)."""
        path = Path(path)
        if write:
            ensure_current(path)
            return cls(path, writable=True)
        return cls(path, writable=False, con=_open_checked(path))

    def close(self) -> None:
        """Close the read connection (a no-op for a writing Store, or when closed already)."""
        con, self._con = self._con, None
        if con is not None:
            with stops.held():
                con.close()

    @property
    def closed(self) -> bool:
        """Whether a read-only Store has been closed (a writing Store never holds the file)."""
        return not self.writable and self._con is None

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        mode = "write" if self.writable else "read"
        return f"Store({str(self.path)!r}, {mode}{', closed' if self.closed else ''})"

    @contextlib.contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection to read with: the one a reading Store holds, else a short read-only one
        for the block (a writing Store's reads)."""
        if self.writable:
            with open_readonly(self.path) as con:
                yield con
            return
        if self._con is None:
            raise ValueError(f"the store {self.path} was closed before this read")
        with stops.held(), damage_said(self.path):  # as open_readonly holds its block
            yield self._con


def _open_checked(path: Path, timeout: float | None = None) -> Connection:
    """A read-only connection to an existing current-schema store (see open_readonly)."""
    if not os.path.exists(path):
        raise _missing(path)
    with stops.held():  # a stop signal raised inside DuckDB's calls would come out garbled
        con = _connect(path, read_only=True, timeout=timeout)
        try:
            _check_readable(con, path)
        except BaseException:
            con.close()
            raise
    return con


def _check_readable(con: Connection, path: Path) -> None:
    """Refuse stores whose schema is not exactly this collsweep's (readers never migrate)."""
    version = _stored_version(con, path)
    _refuse_newer(path, version)
    if version == 0:
        raise StoreError(f"{path} is an empty DuckDB database, not yet a collsweep results store")
    if version < SCHEMA_VERSION:
        raise StoreError(
            f"{path} uses results schema {version}, older than this collsweep's schema "
            f"{SCHEMA_VERSION}; upgrade the file once with `collsweep migrate` (or any "
            "command that writes to the store), then try again."
        )
    check_shape(con, path)


@contextlib.contextmanager
def open_readonly(path: Path | str, *, timeout: float | None = None) -> Iterator[Connection]:
    """A read-only connection to the store for the block, with file access from SQL disabled.

    SQL run on it cannot write, read other files or ATTACH. Keep it open briefly: while it is
    open, writers in other processes wait. A missing, foreign, older- or newer-schema file
    raises StoreError, and so does a block that fails its checksum when a query reads it
    (damaged, with the salvage hint); the file is never created or migrated.
    """
    path = Path(path)
    with stops.held():  # a stop signal raised inside DuckDB's calls would come out garbled
        con = _open_checked(path, timeout)
        try:
            with damage_said(path):  # a block failing its checksum, met by a query
                yield con
        finally:
            con.close()


Target = Store | Path | str  # where a write goes: an open Store or a store's path


@contextlib.contextmanager
def writing(target: Target, timeout: float | None = None) -> Iterator[Connection]:
    """A short write connection inside one transaction (schema._writing); a Store opened
    read-only is refused at once rather than waiting out its own lock."""
    if isinstance(target, Store) and not target.writable:
        raise ValueError(f"the store {target.path} was opened read-only; open it with write=True")
    with _writing(Path(target), timeout) as con:
        yield con
