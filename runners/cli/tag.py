"""`collsweep tag`: a stored run's name and tags changed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from runners import store
from runners.cli.common import UsageError, add_run_argument, add_store_option, store_path
from runners.domain.names import checked_run_id
from runners.domain.sweep.run_labels import checked_name, checked_tags, run_title, stored_tags


def new_labels(run: Mapping[str, Any], args: argparse.Namespace) -> dict:
    """The runs columns the options change (name, tags), checked; {} when none is given.
    Removing a tag the run lacks is said on stderr, not an error (a script may repeat it)."""
    changes: dict = {}
    if args.name is not None:
        changes["name"] = checked_name(args.name)
    if args.add or args.remove:
        removed = checked_tags(args.remove or [])
        tags = stored_tags(run.get("tags"))
        for tag in removed:
            if tag not in tags:
                print(f"collsweep tag: note: run {run['run_id']} has no tag {tag}", file=sys.stderr)
        kept = [tag for tag in tags if tag not in removed]
        changes["tags"] = checked_tags([*kept, *checked_tags(args.add or [])]) or None
    return changes


def run(args: argparse.Namespace) -> int:
    """Change a run's name and tags (when asked) and print them."""
    run_id, path = checked_run_id(args.run), store_path(args)
    run = store.get_run(path, run_id) if path.exists() else None
    if run is None:
        raise UsageError(f"no run {run_id!r} in {path}; see `collsweep runs`")
    changes = new_labels(run, args)  # every value checked before anything is written
    if changes:
        store.update_run(path, run_id, changes)
    labels = {"name": run.get("name"), "tags": run.get("tags"), **changes}
    tags = stored_tags(labels["tags"])
    print(run_title(run_id, labels["name"], tags) if tags or labels["name"] else run_id)
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "tag",
        help="name a stored run, and add or remove its tags",
        description="Show or change a run's name and tags, which `collsweep runs`, the "
        "dashboard's run pickers, `compare`, `report` and `crossovers --summary` show beside "
        "its id. A name is at most 200 printable characters (--name '' removes it); a tag is "
        "1-64 letters, digits, '.', '_', '-' or ':', at most 32 a run. Bad values: exit 2, "
        "nothing written. Prints the run as pickers name it: 'name (run id) [tags]'.",
    )
    add_run_argument(parser, "run", metavar="RUN", help="run id or name (see collsweep runs)")
    parser.add_argument("--name", metavar="TEXT", help="the run's new name ('' removes it)")
    parser.add_argument(
        "--add", nargs="+", action="extend", metavar="T", help="tags to add (repeatable)"
    )
    parser.add_argument(
        "--remove", nargs="+", action="extend", metavar="T", help="tags to remove (repeatable)"
    )
    add_store_option(parser)
    parser.set_defaults(handler=run)
