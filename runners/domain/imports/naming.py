"""Which library and which algorithm an imported file's points are (pure).

An IMB or OSU point times the library's own call of the collective, so it takes the catalog's
name of that call: the autotuned entry (`impi`, `allgather.impi`, `mpi`, `openmpi`), or the
forced one when the file shows the library's selector set (Intel MPI's `I_MPI_ADJUST_ALLREDUCE=8`
in its I_MPI_DEBUG startup lines: `impi:ring`), found from the catalog's own forcing settings.
The tool is said on every point (`library_config`, `job`, `sync_cadence`) and by the run.
nccl-tests times NCCL, a library collsweep imports only (runners.domain.libraries.nccl): its
points are named `nccl`, or `nccl:ring` / `nccl:tree` where NCCL's log says NCCL_ALGO was set
(collective-qualified like the catalog's: `allgather.nccl:ring`), found the same way; a
forcing the catalog does not list is refused, unless the library keeps such points under a name
of their own (LibrarySpec.unlisted_forcing: NCCL's `nccl:nvls`), stored and drawn but not
analysed. Selector values compare without case (NCCL_ALGO is not case sensitive).
"""

from __future__ import annotations

from collections.abc import Mapping

from runners.domain.collectives.collective import COLLECTIVES, qualified
from runners.domain.imports.records import ImportProblem
from runners.domain.libraries import LIBRARIES
from runners.domain.libraries.catalog import forced_on, library_knobs

SELECTOR_WORDS = ("ADJUST", "ALGO")  # in the name of a variable that picks an algorithm


def library_of_file(found: str, asked: str | None, name: str, tool: str) -> str:
    """The library whose ranks ran the file: the one it names itself, else --library."""
    if found and asked and found != asked:
        raise ImportProblem(name, 1, f"the file says {found} ran it, not {asked} (--library)")
    library = found or asked
    if not library:
        raise ImportProblem(
            name,
            1,
            f"{tool} prints no library name (Intel MPI names itself only with I_MPI_DEBUG set): "
            f"give it with --library {'|'.join(LIBRARIES)}",
        )
    if library not in LIBRARIES:
        raise ImportProblem(name, 1, f"unknown library {library}; known: {', '.join(LIBRARIES)}")
    return library


def algorithm_of(library: str, collective: str, environment: Mapping[str, str], name: str) -> str:
    """The name of the points of `collective` a file of `library` holds (module docstring)."""
    selectors = selectors_of(collective, environment)
    for forced in forced_on(library, collective):
        knobs = _casefolded(_selecting(library_knobs(forced)))
        if knobs and knobs == _casefolded(selectors):
            return forced
    kept = LIBRARIES[library].unlisted_forcing(collective, selectors) if selectors else None
    if kept:
        return kept
    if selectors:
        said = ", ".join(f"{k}={v}" for k, v in selectors.items())
        raise ImportProblem(
            name,
            1,
            f"{said} forces an algorithm collsweep's catalog does not list for {collective}",
        )
    return qualified(collective, LIBRARIES[library].autotuned)


def _casefolded(settings: Mapping[str, str]) -> dict[str, str]:
    """Settings with their names upper-cased and their values lower-cased, to compare."""
    return {k.upper(): v.lower() for k, v in settings.items()}


def _selecting(knobs: Mapping[str, str]) -> dict[str, str]:
    """The variables among `knobs` that pick an algorithm (not the ones that merely enable)."""
    return {k: v for k, v in knobs.items() if any(w in k.upper() for w in SELECTOR_WORDS)}


def selectors_of(collective: str, environment: Mapping[str, str]) -> dict[str, str]:
    """The file's settings that pick `collective`'s algorithm: each library's selector of that
    call by its exact name (I_MPI_ADJUST_REDUCE is reduce's, not reduce_scatter's), and
    NCCL_ALGO."""
    call = COLLECTIVES[collective].mpi_call.upper().removeprefix("MPI_")
    names = {
        f"I_MPI_ADJUST_{call}",
        f"MPIR_CVAR_{call}_INTRA_ALGORITHM",
        f"OMPI_MCA_COLL_TUNED_{call}_ALGORITHM",
        "NCCL_ALGO",  # NCCL's, for every collective
    }
    return {k: v for k, v in environment.items() if k.upper() in names}
