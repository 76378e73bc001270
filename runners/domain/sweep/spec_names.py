"""How a spec's names expand (no MPI): the collectives and the algorithms a user names
(`ring` standing for every asked collective's ring), the tuned entries a tuning file adds, and
the libraries whose ranks run them. Each function sets values in the spec's raw mapping and
returns the problems it found, for runners.domain.sweep.spec to report together."""

from __future__ import annotations

from typing import Any

from runners.domain.algorithms import FAMILIES
from runners.domain.algorithms.parameters import split_name, written
from runners.domain.collectives.collective import DEFAULT_COLLECTIVE, qualified
from runners.domain.collectives.descriptor import MPICH
from runners.domain.libraries import DEFAULT, LIBRARIES, RUNNABLE, imported_only
from runners.domain.libraries.catalog import (
    ALGORITHMS,
    BASE_ALGORITHMS,
    BASE_OF_COLLECTIVE,
    canonical_name,
    collective_list,
    is_tuned,
    is_vendor_tuned,
    known_names,
    library_of,
    not_runnable_problem,
    on_libraries,
    resolve_name,
)


def check_names(values: tuple[str, ...], table: dict, what: str) -> list[str]:
    """The problem of names not in `table`, as a one-item list (empty when all are known)."""
    unknown = [v for v in values if v not in table]
    return [f"unknown {what} {', '.join(unknown)}; known: {known_names(table)}"] if unknown else []


def expand_parameters(values: dict[str, Any]) -> list[str]:
    """Write every family member among the algorithms in its one canonical form, the
    parameters it leaves out taken from the sweep (`hierarchical` on nodes of 2 is
    `hierarchical(node=2)`; `knomial` with radixes 2,4 is a member each); the problems found."""
    names = values.get("algorithms")
    if names is None:
        return []
    per_node = sorted(set(values.get("ranks_per_node") or ()) - {0})
    run = {**values, "ranks_per_node": per_node[0] if len(per_node) == 1 else None}
    several = " (one of several ranks_per_node: name it)" if len(per_node) > 1 else ""
    swept = {
        parameter: tuple(str(v) for v in values.get(key) or ())
        for key, (parameter, _) in SWEPT_PARAMETERS.items()
    }
    problems, out = [], []
    for name in names:
        try:
            members = [name]
            for parameter, given in swept.items():
                members = [m for member in members for m in with_values(member, parameter, given)]
            out += [canonical_name(member, run) for member in members]
        except ValueError as exc:
            problems.append(f"{exc}{several}")
    for key, (parameter, example) in SWEPT_PARAMETERS.items():
        if swept[parameter] and not any(_has(name, parameter) for name in names):
            problems.append(f"{key}: no algorithm swept has a {parameter} ({example}, ...)")
    values["algorithms"] = tuple(out)  # a repeat is dropped with a note, as any list's
    return problems


# the spec keys that sweep a parameter: key -> (the parameter, a family that has it)
SWEPT_PARAMETERS = {"radixes": ("radix", "knomial"), "segment_sizes": ("segment", "bcast.chain")}


def _has(name: str, parameter: str) -> bool:
    """Whether `name` is a member of a family with `parameter` (named or not)."""
    try:
        found = FAMILIES.get(split_name(name)[0])
    except ValueError:  # malformed: reported by the expansion
        return False
    return found is not None and parameter in {p.name for p in found.parameters}


def with_values(name: str, parameter: str, values: tuple[str, ...]) -> list[str]:
    """`name` once per value where it is a family with `parameter` and names none (`knomial`
    with radixes 2,4: `knomial(radix=2)`, `knomial(radix=4)`); else `name` alone."""
    family, given = split_name(name)
    found = FAMILIES.get(family)
    if not values or found is None or parameter in given:
        return [name]
    if parameter not in {p.name for p in found.parameters}:
        return [name]
    return [written(family, {**given, parameter: value}) for value in values]


def expand_collectives(values: dict[str, Any]) -> list[str]:
    """Set values' collectives (given, `all` for every one; else those the algorithms name;
    else allreduce) and the algorithms (given, each as the user names it, `ring` standing for
    every asked collective's ring; else every collective's hand-written ones and MPICH's own
    call); the problems found."""
    try:
        asked = values.get("collectives")
        collectives = collective_list(asked) if asked is not None else None
    except ValueError as exc:
        return [str(exc)]
    names = values.get("algorithms")
    if collectives is None:
        named = [ALGORITHMS[n].collective for n in names or () if n in ALGORITHMS]
        collectives = list(dict.fromkeys(named)) or [DEFAULT_COLLECTIVE]
    values["collectives"] = tuple(collectives)
    if names is None:
        values["algorithms"] = tuple(a for c in collectives for a in BASE_OF_COLLECTIVE[c])
        return []
    # a name no swept collective has is kept, and reported by _problems (unknown or foreign)
    values["algorithms"] = tuple(
        n for name in names for n in resolve_name(name, collectives) or [name]
    )
    return []


def add_vendor_tuned(values: dict[str, Any]) -> None:
    """With a vendor_tuning_file: Intel MPI's entry that follows it, if not named already."""
    names = values.get("algorithms", BASE_ALGORITHMS)
    if not values.get("vendor_tuning_file") or any(is_vendor_tuned(a) for a in names):
        return
    vendor = [lib.vendor_tuned for lib in LIBRARIES.values() if lib.vendor_tuned]
    values["algorithms"] = (*names, *vendor)


def add_tuned(values: dict[str, Any]) -> None:
    """With a tuning_file and no tuned entry among the algorithms: the tuned entry of each
    library asked for, or that the algorithms run on, for each collective swept that has one
    (two libraries' are refused later)."""
    names = values.get("algorithms", BASE_ALGORITHMS)
    if not values.get("tuning_file") or any(is_tuned(a) for a in names):
        return
    named = values.get("libraries") or [library_of(a) for a in names if a in ALGORITHMS]
    libraries = dict.fromkeys(n for n in named or (DEFAULT.name,) if n in LIBRARIES)
    collectives = values.get("collectives", (DEFAULT_COLLECTIVE,))
    tuned = [
        name
        for n in libraries
        if LIBRARIES[n].tuned
        for c in collectives
        if (name := qualified(c, LIBRARIES[n].tuned)) in ALGORITHMS
    ]
    values["algorithms"] = (*names, *tuned)


def expand_libraries(values: dict[str, Any]) -> list[str]:
    """Set values' libraries (given, or those the algorithms name) and the algorithms they run
    there (catalog.on_libraries); the problems found."""
    names = values.get("algorithms", BASE_ALGORITHMS)
    asked = values.get("libraries", ())
    problems = check_names(tuple(n for n in asked if n not in LIBRARIES), RUNNABLE, "library")
    problems += [
        f"cannot run library {n}: {imported_only(n)}"
        for n in asked
        if n in LIBRARIES and n not in RUNNABLE
    ]
    problems += filter(None, [not_runnable_problem(names)])
    if problems or any(a not in ALGORITHMS for a in names):
        return problems
    libraries = values.setdefault(
        "libraries", tuple(dict.fromkeys(library_of(a) for a in names)) or (MPICH,)
    )
    for algorithm in names:
        if not on_libraries([algorithm], libraries):
            problems.append(
                f"algorithm {algorithm} runs on {library_of(algorithm)} only, which is not "
                f"among libraries {', '.join(libraries)}"
            )
    values["algorithms"] = on_libraries(names, libraries)
    return problems
