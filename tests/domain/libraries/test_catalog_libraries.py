"""The catalog read by library, without a library's name in the code: each library's algorithms,
its forced ones, what its entries stand for on MPICH, and the ABI its C code is built for."""

from __future__ import annotations

from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.libraries import DEFAULT, LIBRARIES, RUNNABLE
from runners.domain.libraries.catalog import (
    ALGORITHMS,
    algorithms_on,
    autotuned_of,
    forced_on,
    is_library_call,
    library_calls,
)
from runners.jobs.recorder_build import flavour


def test_every_algorithm_runs_on_exactly_one_library() -> None:
    mine = {lib: algorithms_on(lib) for lib in LIBRARIES}
    assert sorted(n for names in mine.values() for n in names) == sorted(ALGORITHMS)
    for lib, names in mine.items():
        assert all(spec.runs_on == lib for spec in names.values())
        for collective in COLLECTIVES:
            of = algorithms_on(lib, collective)
            assert list(of) == [n for n in names if ALGORITHMS[n].collective == collective]
            assert list(forced_on(lib, collective)) == [n for n in of if of[n].forced]


def test_every_librarys_autotuned_call_stands_for_the_defaults() -> None:
    """Open MPI's and Intel MPI's own call of each collective mirrors MPICH's, the default's
    names standing for every library's; MPICH's mirrors nothing."""
    for collective in COLLECTIVES:
        default = autotuned_of(DEFAULT.name, collective)
        assert ALGORITHMS[default].mirrors == ""
        for lib in LIBRARIES:
            if lib != DEFAULT.name:
                assert ALGORITHMS[autotuned_of(lib, collective)].mirrors == default


def test_library_calls_are_read_from_the_descriptors() -> None:
    assert set(library_calls()) == {n for n, s in ALGORITHMS.items() if s.library}
    assert is_library_call("openmpi:basic_linear") and is_library_call("mpi")
    assert not is_library_call("ring@openmpi") and not is_library_call("not-in-the-catalog")


def test_the_recorder_is_built_for_each_librarys_abi() -> None:
    """Intel MPI's ABI is MPICH's (one recorder serves both); Open MPI needs its own; NCCL,
    imported only, has no recorder (collsweep never runs it)."""
    assert {lib: flavour(spec) for lib, spec in RUNNABLE.items()} == {
        "mpich": "mpich",
        "openmpi": "openmpi",
        "impi": "mpich",
    }
