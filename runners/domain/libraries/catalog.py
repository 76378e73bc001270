"""The algorithms a sweep can name, on every library (their descriptors); the datatypes and ops
are runners.domain.collectives.datatypes.

This module imports no MPI, so spec validation, the store and the dashboard can use it
without starting an MPI library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from types import MappingProxyType

from runners.domain.algorithms import (
    FAMILIES,
    HAND_WRITTEN,
    OTHER_COLLECTIVES,
    impi,
    library,
    nccl,
    openmpi,
)
from runners.domain.algorithms.parameters import member_of, split_name
from runners.domain.collectives.collective import COLLECTIVES, qualified
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.libraries import DEFAULT, LIBRARIES, PER_CALL, RUNNABLE, imported_only


def local_name(algorithm: str) -> str:
    """How an algorithm is named where its collective is already said (`ring` for
    allgather.ring); unknown names as they are."""
    spec = ALGORITHMS.get(algorithm)
    return algorithm if spec is None else algorithm.removeprefix(f"{spec.collective}.")


def collective_of(algorithm: str) -> str:
    """The collective `algorithm` implements."""
    return ALGORITHMS[algorithm].collective


class Catalog(dict[str, AlgorithmSpec]):
    """The algorithms by name: the listed ones, and every member of a family with parameters
    (`hierarchical(node=2)`) looked up by its canonical name (parameters.Family.member_name),
    built once when first asked. Iterating gives the listed ones only."""

    def __missing__(self, name: str) -> AlgorithmSpec:
        found = member(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name) or (isinstance(name, str) and member(name) is not None)

    def get(self, name: str, default: AlgorithmSpec | None = None) -> AlgorithmSpec | None:  # type: ignore[override]
        """The algorithm named `name` (a family's member too), else `default`."""
        found = super().get(name)
        return found if found is not None else (member(name) or default)


@cache
def member(name: str) -> AlgorithmSpec | None:
    """The family member of this canonical name, or None (not a family's, malformed, out of
    range, or not written canonically: canonical_name says how)."""
    return member_of(name, FAMILIES)


def canonical_name(name: str, run: Mapping[str, object]) -> str:
    """`name` as the catalog knows it: a family's member with its parameters checked, filled
    from the run's keys (`ranks_per_node`, `placement`) where left out and written in the one
    canonical form; any other name as it is. ValueError for a family's name that cannot be."""
    family, given = split_name(name)
    found = FAMILIES.get(family)
    if found is None:
        return name.strip()
    try:
        return found.member_name(found.values(given, run))
    except ValueError as exc:
        raise ValueError(f"{name}: {exc} ({found.pattern})") from None


ALGORITHMS: Catalog = Catalog(
    (spec.name, spec)
    for spec in (
        *HAND_WRITTEN,
        library.AUTOTUNED,
        *library.FORCED,
        *library.COMPOSITIONS,
        library.TUNED,
        *openmpi.HAND_WRITTEN_HERE,
        openmpi.AUTOTUNED,
        *openmpi.FORCED,
        openmpi.TUNED,
        *impi.HAND_WRITTEN_HERE,
        impi.AUTOTUNED,
        *impi.FORCED,
        impi.TUNED,
        impi.AUTOTUNER,
        *OTHER_COLLECTIVES,
        *library.OTHER_AUTOTUNED,
        *library.OTHER_FORCED,
        *library.OTHER_TUNED,
        *openmpi.OTHER_AUTOTUNED,
        *openmpi.OTHER_FORCED,
        *openmpi.OTHER_TUNED,
        *impi.OTHER_AUTOTUNED,
        *impi.OTHER_FORCED,
        nccl.AUTOTUNED,
        *nccl.FORCED,
        *nccl.OTHER_AUTOTUNED,
        *nccl.OTHER_FORCED,
    )
)

# The algorithms whose code collsweep runs as it is, without a forcing environment.
BASE_ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec for spec in (*HAND_WRITTEN, library.AUTOTUNED)
}
# The same for every collective: its hand-written algorithms and MPICH's own call.
BASE_OF_COLLECTIVE: dict[str, tuple[str, ...]] = {
    collective: tuple(
        spec.name
        for spec in (*HAND_WRITTEN, library.AUTOTUNED, *OTHER_COLLECTIVES, *library.OTHER_AUTOTUNED)
        if spec.collective == collective
    )
    for collective in COLLECTIVES
}


def modelled_spec(algorithm: str) -> AlgorithmSpec | None:
    """The descriptor whose schedule predicts `algorithm`; None for the autotuned library."""
    spec = ALGORITHMS[algorithm]
    if spec.schedule is not None:
        return spec
    return ALGORITHMS[spec.modelled_by] if spec.modelled_by else None


def has_forced(algorithms: Iterable[str]) -> bool:
    """Whether any of the named algorithms is forced by name on a library that switches
    algorithms per call at run time (MPICH: a probe decides whether it can)."""
    return any(
        ALGORITHMS[a].forced and LIBRARIES[ALGORITHMS[a].runs_on].runtime_forcing == PER_CALL
        for a in algorithms
    )


def is_autotuned(algorithm: str) -> bool:
    """Whether `algorithm` is a library's own call of its collective left to choose (mpi,
    openmpi, impi, bcast.mpi, ...)."""
    spec = ALGORITHMS[algorithm]
    return spec.library and not spec.forced and not spec.own_launch


def is_vendor_tuned(algorithm: str) -> bool:
    """Whether `algorithm` follows a file the library's own autotuner wrote (impi:autotuned);
    False for a name the catalog does not know."""
    spec = ALGORITHMS.get(algorithm)
    return spec is not None and LIBRARIES[spec.runs_on].vendor_tuned == algorithm


def is_tuned(algorithm: str) -> bool:
    """Whether `algorithm` follows a tuning file collsweep wrote (mpi:tuned, bcast.mpi:tuned,
    openmpi:tuned, impi:tuned, ...): configured at start-up, and not the vendor's file."""
    spec = ALGORITHMS.get(algorithm)
    return spec is not None and spec.own_launch and not is_vendor_tuned(algorithm)


def is_library_call(algorithm: str) -> bool:
    """Whether `algorithm` is a library's own call (autotuned, forced or tuned), not a schedule
    collsweep runs itself; False for a name the catalog does not know. Where two share a
    model, a tie goes to collsweep's own (it runs the modelled schedule exactly)."""
    spec = ALGORITHMS.get(algorithm)
    return spec is not None and spec.library


def library_calls() -> list[str]:
    """Every library call's name (is_library_call), e.g. to bind into SQL."""
    return [name for name, spec in ALGORITHMS.items() if spec.library]


def library_of(algorithm: str) -> str:
    """The MPI library whose ranks run `algorithm` (mpich, openmpi, impi)."""
    return ALGORITHMS[algorithm].runs_on


@cache
def algorithms_on(library_name: str, collective: str | None = None) -> Mapping[str, AlgorithmSpec]:
    """The algorithms whose ranks are `library_name`'s (of `collective`, where given), by name
    in catalog order (read-only; asked for every point priced, so answered once)."""
    return MappingProxyType(
        {
            name: spec
            for name, spec in ALGORITHMS.items()
            if spec.runs_on == library_name and collective in (None, spec.collective)
        }
    )


@cache
def forced_on(library_name: str, collective: str | None = None) -> Mapping[str, AlgorithmSpec]:
    """The library's algorithms forced by name (of `collective`, where given), read-only."""
    mine = algorithms_on(library_name, collective)
    return MappingProxyType({n: s for n, s in mine.items() if s.forced})


def autotuned_of(library_name: str, collective: str = "allreduce") -> str:
    """The algorithm name of a library's own autotuned call of `collective` ('mpi' for MPICH's
    MPI_Allreduce, 'bcast.mpi' for its MPI_Bcast)."""
    return qualified(collective, LIBRARIES[library_name].autotuned)


def counterpart(algorithm: str, library_name: str) -> str | None:
    """The algorithm that stands for `algorithm` (an MPICH name) on another library, or None
    where that library has no such algorithm (MPICH's tree on Open MPI)."""
    if library_of(algorithm) == library_name:
        return algorithm
    theirs = algorithms_on(library_name).values()
    return next((s.name for s in theirs if s.mirrors == algorithm), None)


def on_libraries(algorithms: Iterable[str], libraries: Iterable[str]) -> tuple[str, ...]:
    """The algorithms a sweep runs on `libraries`: each named one kept where its library is
    among them, and its counterpart added on every other one that has it."""
    out: list[str] = []
    for algorithm in algorithms:
        for name in libraries:
            mine = library_of(algorithm) in (DEFAULT.name, name)  # MPICH's stand for all
            found = counterpart(algorithm, name) if mine else None
            if found and found not in out:
                out.append(found)
    return tuple(out)


def not_runnable_problem(algorithms: Iterable[str]) -> str | None:
    """Why collsweep cannot run some of the named algorithms (their library's results are only
    imported: NCCL's), or None."""
    found = list(
        dict.fromkeys(a for a in algorithms if a in ALGORITHMS and library_of(a) not in RUNNABLE)
    )
    if not found:
        return None
    why = "; ".join(imported_only(name) for name in dict.fromkeys(map(library_of, found)))
    return f"cannot run {', '.join(found)}: {why}"


def library_knobs(algorithm: str) -> dict[str, str]:
    """Environment that makes a whole launch of the algorithm's library run `algorithm`
    (empty for hand-written and autotuned ones on MPICH)."""
    spec = ALGORITHMS[algorithm]
    return LIBRARIES[spec.runs_on].forcing_env(spec)


def known_names(table: dict) -> str:
    """A comma-separated list of a table's keys, for error messages (the algorithms' with
    their families' patterns)."""
    families = [f.pattern for f in FAMILIES.values()] if isinstance(table, Catalog) else []
    return ", ".join([*sorted(table), *families])


def collective_list(names: Iterable[str]) -> list[str]:
    """Collective names as asked, `all` standing for every one; ValueError for unknown ones."""
    names = list(names)
    if "all" in names:
        return list(COLLECTIVES)
    unknown = [n for n in names if n not in COLLECTIVES]
    if unknown or not names:
        raise ValueError(
            f"unknown collective {', '.join(unknown) or '(none)'}; known: "
            f"{known_names(COLLECTIVES)}, all"
        )
    return names


def resolve_name(name: str, collectives: Iterable[str]) -> list[str]:
    """The catalog names a user's algorithm name stands for among `collectives`: `ring` with
    allreduce and allgather is ring and allgather.ring; a qualified name stands for itself
    (where its collective is asked); [] for a name no asked collective has."""
    found = [
        n
        for c in collectives
        for n in (name, qualified(c, name))
        if n in ALGORITHMS and ALGORITHMS[n].collective == c
    ]
    return list(dict.fromkeys(found))


def auto_refused(names: Iterable[str], command: str) -> None:
    """ValueError for a name with an `auto` parameter where `command` cannot choose it (only
    `collsweep sweep` does, from the run's calibration)."""
    found = [n for n in names if n in ALGORITHMS and ALGORITHMS[n].auto]
    if found:
        raise ValueError(
            f"{found[0]}: auto is chosen by `collsweep sweep` from the run's calibration; "
            f"{command} takes named values (e.g. segment=64KiB, radix=4)"
        )


def algorithms_of(names: Iterable[str], collectives: Iterable[str]) -> list[str]:
    """Catalog names for algorithms named as a user names them (resolve_name); ValueError for
    a name no asked collective has."""
    collectives, out, unknown = list(collectives), [], []
    for name in names:
        found = resolve_name(name, collectives)
        if not found:
            unknown.append(name)
        out += [n for n in found if n not in out]
    if unknown:
        raise ValueError(
            f"unknown algorithm {', '.join(unknown)} for {', '.join(collectives)}; known: "
            + ", ".join(n for c in collectives for n in BASE_OF_COLLECTIVE[c])
        )
    return out
