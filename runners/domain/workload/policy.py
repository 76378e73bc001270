"""Which algorithm a job would use for each of its calls under each policy (no MPI).

A policy assigns every call of a workload one measured algorithm:
- `default`: each library's own autotuned call (MPICH's `mpi`, `bcast.mpi`, ...); a run on
  several libraries has one per library (`default:openmpi`);
- one per algorithm, named as it is named where its collective is said (`ring` is allreduce's
  ring and allgather.ring; `mpi:tuned` is every collective's entry following the tuning file,
  kind `tuned`): that algorithm for every call it was measured for, its library's default for
  the others (the calls it does not cover);
- `best`: for each call the fastest algorithm (of the default's library) decidedly faster
  than the default there, paired launch by launch; the default where none is (an undecided
  winner that is decidedly faster than the default is as good a choice as the winner).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runners.domain.libraries import DEFAULT
from runners.domain.libraries.catalog import (
    ALGORITHMS,
    autotuned_of,
    is_autotuned,
    is_tuned,
    library_of,
    local_name,
)
from runners.domain.workload.file import Call

CallKey = tuple[str, int, str, str, int]  # Call.key: (collective, bytes, dtype, op, ranks)
DEFAULT_KIND, ALGORITHM_KIND, TUNED_KIND, BEST_KIND = "default", "algorithm", "tuned", "best"


@dataclass(frozen=True)
class Policy:
    """A policy's algorithm for each call (None: the call has no point to price it with), and
    whether that is the policy's own choice or its library's default standing in."""

    name: str
    kind: str
    library: str
    choices: tuple[str | None, ...]
    own: tuple[bool, ...]

    def choice(self, call: int) -> str:
        """The algorithm the policy runs for call `call` (ValueError where it prices none)."""
        chosen = self.choices[call]
        if chosen is None:
            raise ValueError(f"policy {self.name} has no algorithm for call {call}")
        return chosen

    @property
    def covered(self) -> int:
        """How many of the distinct calls the policy's own choice prices."""
        return sum(self.own)


def default_name(library: str, libraries: Sequence[str]) -> str:
    """The default policy of `library`: `default` for the run's first library, else
    `default:<library>`."""
    return DEFAULT_KIND if library == libraries[0] else f"{DEFAULT_KIND}:{library}"


def run_libraries(measured: Mapping[CallKey, set[str]]) -> list[str]:
    """The libraries whose default was measured, MPICH first."""
    found = {library_of(a) for names in measured.values() for a in names if is_autotuned(a)}
    return sorted(found, key=lambda name: (name != DEFAULT.name, name))


def _default_for(call: Call, library: str, measured: Mapping[CallKey, set[str]]) -> str | None:
    name = autotuned_of(library, call.collective)
    return name if name in measured.get(call.key, set()) else None


def policies(
    calls: Sequence[Call],
    measured: Mapping[CallKey, set[str]],
    winners: Mapping[CallKey, str],
) -> list[Policy]:
    """Every policy the run can price (see the module docstring), defaults first.

    measured: per call key, the algorithms with an ok point; winners: per call key, the
    algorithm `best` chooses (absent: the default)."""
    libraries = run_libraries(measured)
    found = [_default_policy(calls, library, libraries, measured) for library in libraries]
    if not libraries:
        return found
    names = sorted(
        {local_name(a) for names in measured.values() for a in names if not is_autotuned(a)}
    )
    found += [_algorithm_policy(calls, name, libraries, measured) for name in names]
    found.append(_best_policy(calls, libraries[0], measured, winners))
    return found


def _default_policy(
    calls: Sequence[Call], library: str, libraries: list[str], measured: Mapping
) -> Policy:
    choices = tuple(_default_for(call, library, measured) for call in calls)
    own = tuple(choice is not None for choice in choices)
    return Policy(default_name(library, libraries), DEFAULT_KIND, library, choices, own)


def _algorithm_policy(
    calls: Sequence[Call], name: str, libraries: list[str], measured: Mapping
) -> Policy:
    """`name` (a local name) for each call it was measured for, its library's default else."""
    mine = [
        next((a for a in measured.get(call.key, ()) if local_name(a) == name), None)
        for call in calls
    ]
    library = next(library_of(a) for a in mine if a is not None)
    fallback = library if library in libraries else libraries[0]
    choices = tuple(
        a or _default_for(c, fallback, measured) for a, c in zip(mine, calls, strict=True)
    )
    kind = TUNED_KIND if any(a is not None and is_tuned(a) for a in mine) else ALGORITHM_KIND
    return Policy(name, kind, library, choices, tuple(a is not None for a in mine))


def _best_policy(
    calls: Sequence[Call], library: str, measured: Mapping, winners: Mapping[CallKey, str]
) -> Policy:
    picked = [winners.get(call.key) for call in calls]
    picked = [w if w is not None and w in ALGORITHMS else None for w in picked]
    choices = tuple(
        w or _default_for(c, library, measured) for w, c in zip(picked, calls, strict=True)
    )
    return Policy(BEST_KIND, BEST_KIND, library, choices, tuple(w is not None for w in picked))
