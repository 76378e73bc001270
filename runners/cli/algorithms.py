"""`collsweep algorithms`: the catalog, read from the descriptors."""

from __future__ import annotations

import argparse
import json
from typing import Any

from runners.cli.common import UsageError
from runners.domain.algorithms import FAMILIES
from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.libraries import LIBRARIES, RUNNABLE
from runners.domain.libraries.catalog import ALGORITHMS, algorithms_on, modelled_spec


def kind_of(name: str) -> str:
    """hand-written, autotuned, forced or tuned, from the algorithm's descriptor."""
    spec = ALGORITHMS[name]
    if not spec.library:
        return "hand-written"
    if spec.own_launch:
        return "tuned"
    return "forced" if spec.forced else "autotuned"


def catalog_rows(library: str | None = None, collective: str | None = None) -> list[dict[str, Any]]:
    """One row per algorithm: name, library (None for collsweep's own schedules on MPICH's
    point-to-point layer; the library for the same schedules on another one), collective,
    kind, the schedule that models it, its description, and whether a sweep can run it
    (False: its library's results are imported only, NCCL's)."""
    rows = []
    listed = ALGORITHMS if library is None else algorithms_on(library)
    for name, spec in listed.items():
        own = not spec.library and not spec.mirrors  # not the same schedule on another library
        if collective is not None and spec.collective != collective:
            continue
        model = spec.modelled_by or getattr(modelled_spec(name), "name", None)
        rows.append(
            {
                "name": name,
                "library": None if own else spec.runs_on,
                "collective": spec.collective,
                "kind": kind_of(name),
                "schedule": model,
                "description": spec.description,
                "runnable": spec.runs_on in RUNNABLE,
            }
        )
    return rows + family_rows(library, collective)


def family_rows(library: str | None, collective: str | None) -> list[dict[str, Any]]:
    """One row per family with parameters (collsweep's own schedules): its name pattern."""
    return [
        {
            "name": family.pattern,
            "library": spec.runs_on if spec.library else None,
            "collective": spec.collective,
            "kind": "family",
            "schedule": family.name,
            "description": f"{family.help}; name a member as {family.pattern}, parameters "
            "left out taken from the sweep or their defaults",
            "runnable": True,
        }
        for family in FAMILIES.values()
        for spec in [family.example]
        if library in (None, spec.runs_on) and collective in (None, spec.collective)
    ]


def run(args: argparse.Namespace) -> int:
    """Print the catalog as a table, or as JSON with stable keys."""
    if args.library and args.library not in LIBRARIES:
        raise UsageError(f"unknown library {args.library}; known: {', '.join(sorted(LIBRARIES))}")
    if args.collective and args.collective not in COLLECTIVES:
        raise UsageError(f"unknown collective {args.collective}; known: {', '.join(COLLECTIVES)}")
    rows = catalog_rows(args.library, args.collective)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows if r["kind"] != "family")  # a pattern overflows
    for row in rows:
        library = row["library"] or "-"
        model = row["schedule"] or "-"
        print(f"{row['name']:<{width}}  {library:<8} {row['kind']:<12} {model:<19} "
              f"{row['description']}")  # fmt: skip
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "algorithms",
        help="list the algorithms a sweep can name (and NCCL's, imported only)",
        description="Every algorithm collsweep knows, from its descriptor: name, library "
        "(- for collsweep's own schedules on MPICH), kind (hand-written, autotuned, forced, "
        "tuned, or family: hand-written schedules with parameters, named as its pattern "
        "shows), the schedule that models it, and what it is. NCCL's entries name the points "
        "of imported nccl-tests output: no sweep can run them (their description says "
        "imported only). --json prints a list of objects with the stable keys name, library "
        "(null for hand-written), collective, kind, schedule, description and runnable "
        "(false: imported only).",
    )
    parser.add_argument("--library", help="only this library's (mpich, openmpi, impi, nccl)")
    parser.add_argument("--collective", help=f"only this collective ({', '.join(COLLECTIVES)})")
    parser.add_argument("--json", action="store_true", help="JSON instead of a table")
    parser.set_defaults(handler=run)
