"""Shared pieces of the `collsweep` subcommands: input parsing, the store option, output."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

from runners import store
from runners.domain.errors import BadInput
from runners.domain.libraries.catalog import known_names
from runners.domain.names import run_id_problem
from runners.domain.units import parse_bytes, seconds_column
from runners.store import Store, default_store


class UsageError(BadInput):
    """Bad input on the command line: reported in one line, exit status 2, no traceback."""


def int_list(text: str) -> list[int]:
    """Parse '1,2,4' into [1, 2, 4]; every value must be an integer >= 1."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise UsageError(f"expected integers >= 1, got {text!r}")
    return values


def byte_size(text: str) -> int:
    """An argparse type: a size in bytes, K/M/G suffixes allowed ('64K', '2 MiB')."""
    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def size_list(text: str) -> list[int]:
    """Parse '8,64K,2MiB' into sizes in bytes, each >= 1."""
    try:
        values = [parse_bytes(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise UsageError(f"expected comma-separated sizes: {exc}") from None
    if not values or min(values) < 1:
        raise UsageError(f"expected sizes >= 1 byte, got {text!r}")
    return values


def name_list(text: str, table: dict, what: str) -> list[str]:
    """Parse 'a,b' into names that must all be keys of `table`."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in table]
    if unknown or not names:
        raise UsageError(
            f"unknown {what} {', '.join(unknown) or text!r}; known: {known_names(table)}"
        )
    return names


def store_path(args: argparse.Namespace) -> Path:
    """The store --store names, else the default; an empty --store is bad input, not a quiet
    way of naming the default."""
    if args.store is not None and not args.store.strip():
        raise UsageError("--store is empty: name a results store, or leave the option out")
    return Path(args.store) if args.store else default_store()


def add_run_argument(
    parser: argparse.ArgumentParser, *flags: str, **options: object
) -> argparse.Action:
    """An argument naming a stored run by its id or by its name; main() turns it into the
    run's id (resolve_runs) before the command runs."""
    action = parser.add_argument(*flags, **options)  # type: ignore[arg-type]
    named = parser.get_default("run_references") or ()
    parser.set_defaults(run_references=(*named, action.dest))
    return action


def reads_store(parser: argparse.ArgumentParser) -> None:
    """Mark a command that only reads the store: main() opens it once as ``args.db`` (a
    read-only Store) for the whole command, run names resolved through it, and closes it."""
    parser.set_defaults(reads_store=True)


@contextlib.contextmanager
def command_store(args: argparse.Namespace) -> Iterator[Store | None]:
    """The one Store of a reading command (reads_store), as ``args.db`` while the command
    runs; None for the others, which open theirs as they write."""
    if not getattr(args, "reads_store", False):
        yield None
        return
    with Store.open(store_path(args)) as db:
        args.db = db
        yield db


def resolve_runs(args: argparse.Namespace, source: Store | None = None) -> None:
    """Replace each run argument's value (add_run_argument) by the id of the run it names,
    read through ``source`` when the command opened its store already."""
    for dest in getattr(args, "run_references", ()):
        reference = getattr(args, dest)
        if isinstance(reference, list):  # an argument that names several runs
            setattr(args, dest, [run_id_of(source or store_path(args), r) for r in reference])
        elif reference is not None:
            setattr(args, dest, run_id_of(source or store_path(args), reference))


def run_id_of(path: Path | Store, reference: str) -> str:
    """The id of the one run ``reference`` names in the store at ``path``: a run id, else a
    run's name. A name several runs share, or one no run has, is a UsageError; an id the
    store does not hold is returned as it is, for the command to say so in its own words (and
    so is an id when the store cannot be read yet: an older schema the command migrates)."""
    try:
        found = store.runs_called(path, reference)
    except store.StoreError:
        if run_id_problem(reference):
            raise
        return reference
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(
            f"{len(found)} runs are called {reference!r} ({', '.join(found)}): give one's id"
        )
    problem = run_id_problem(reference)
    if problem:
        raise UsageError(f"no run is named {reference!r}, and {problem}; see `collsweep runs`")
    return reference


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", help="results store (default: $COLLSWEEP_STORE or data/collsweep.duckdb)"
    )


def render(frame, fmt: str, human: bool = False) -> str:
    """A table as csv, json or text; csv and json keep numbers as numbers, in the store's units.
    Text shows floats to 6 significant digits (a median of 3.2e-06 s stays readable instead of
    rounding to 0.000003); `human` text also shows each seconds column (`*_s`) in one unit that
    suits it, named in its header (`duration (s)`, `median (us)`). Not for a user's own SQL,
    whose columns are as asked."""
    if fmt == "csv":
        return frame.to_csv(index=False).rstrip("\n")
    if fmt == "json":
        return frame.to_json(orient="records", date_format="iso", indent=1)
    if not len(frame):
        return "(no rows)"
    if human:
        frame = _seconds_in_units(frame)
    return frame.to_string(index=False, float_format=lambda x: f"{x:.6g}", na_rep="")


def _seconds_in_units(frame):
    """Each numeric `*_s` column in the unit seconds_column picks, named with it."""
    shown, renames = frame.copy(), {}
    for column in frame.columns:
        if str(column).endswith("_s") and frame[column].dtype.kind in "fiu":
            header, scale = seconds_column(str(column), frame[column].dropna().tolist())
            shown[column] = frame[column] / scale
            renames[column] = header
    return shown.rename(columns=renames)


def json_value(value: object) -> object:
    """JSON for values json.dumps does not know (timestamps)."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def opened_store(args: argparse.Namespace) -> Store:
    """The read-only Store main() opened for a reading command (reads_store)."""
    db = getattr(args, "db", None)
    if not isinstance(db, Store):
        raise TypeError(f"collsweep {args.command} reads no store of its own: see reads_store")
    return db
