"""`collsweep migrate`: a store brought to the current schema."""

from __future__ import annotations

import argparse

from runners import store
from runners.cli.common import (
    add_store_option,
    store_path,
)


def run(args: argparse.Namespace) -> int:
    """Upgrade an older store to this collsweep's schema."""
    old, new = store.migrate(store_path(args))
    print(f"schema {old} -> {new}" if old != new else f"already at schema {new}")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "migrate",
        help="upgrade an older results store in place",
        description="Apply the forward schema migrations to the store.",
    )
    add_store_option(parser)
    parser.set_defaults(handler=run)
