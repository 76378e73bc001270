"""`collsweep record`: real programs run under the call recorder, their workloads held against
the calls they make; bad commands and outputs refused before anything starts.

The programs (tests/mpi_programs/record_calls.c and .py) make the same known calls and check
every result themselves (MPI_Abort(1) on a wrong one), so a recorder that changed what a call
computes fails the record. Reading the records without ranks:
tests/domain/workload/test_record_reading.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from runners.domain.libraries import LIBRARIES
from runners.domain.workload.file import Call, Workload, load_workload
from runners.host import libraries
from runners.jobs import recording

PROGRAMS = ROOT / "tests" / "mpi_programs"
MPIEXEC = str(Path(sys.executable).with_name("mpiexec"))
PRESET = ROOT / "data" / "workload.json"


def expected(ranks: int, library: str = "MPICH") -> Workload:
    """What record_calls makes on `ranks` ranks (rank 0's view)."""
    half = (ranks + 1) // 2  # rank 0's half: the even ranks
    calls = (
        Call("bcast", 1024, "float32", "none", ranks, 1, 1 if ranks > 1 else 0),
        Call("allreduce", 4096, "float32", "sum", ranks, 4),
        Call("allreduce", 8, "float64", "sum", ranks, 3),
        Call("allreduce", 400, "int32", "max", ranks, 1),
        Call("reduce", 64, "float64", "sum", ranks, 2, 0),
        Call("allgather", 16 * ranks, "int32", "none", ranks, 2),
        Call("reduce_scatter", 8 * ranks, "float32", "sum", ranks, 1),
        Call("allreduce", 64, "float32", "sum", half, 1),
    )
    order = ((0, 1), (1, 1), (2, 1), (1, 1), (2, 1), (1, 1), (2, 1), (3, 1), (4, 2), (5, 2))
    order += ((6, 1), (7, 1), (1, 1))
    same = "each a call rank 0 also made" if half == 1 else "1 of them of a kind rank 0 never made"
    notes = (
        "MPI_Alltoall: 1 call, not recorded: collsweep does not sweep it",
        "MPI_Barrier: 1 call, not recorded: collsweep does not sweep it",
        "calls on communicators without world rank 0 are not in the workload (it is rank 0's "
        f"view): 1 call on 1 communicator, {same}",
    )
    source = {"kind": "recorded", "library": library, "ranks": ranks}
    return Workload("record_calls", calls, order, source, notes)


def comparable(workload: Workload) -> dict:
    """The workload's JSON with the command (it names this machine's paths) left out and the
    library cut to its name (not its version)."""
    data = workload.as_json()
    source = dict(data["source"])
    source.pop("command", None)
    source["library"] = source["library"].split(" ")[0]
    return {**data, "source": source}


def record_cli(
    tmp_path: Path, *command: str, name: str = "w.json"
) -> tuple[subprocess.CompletedProcess, Path]:
    """`collsweep record --out tmp_path/name -- command...`."""
    out = tmp_path / name
    return run_cli("record", "--out", str(out), "--", *command, timeout=180), out


@pytest.fixture(scope="session")
def c_program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """record_calls.c built with the wheel's mpicc."""
    target = tmp_path_factory.mktemp("record") / "record_calls"
    mpicc = str(Path(sys.executable).with_name("mpicc"))
    built = subprocess.run(
        [mpicc, "-O2", "-o", str(target), str(PROGRAMS / "record_calls.c")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    return target


# --- real programs under MPICH -------------------------------------------------------------------


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_a_c_programs_calls_are_recorded_as_it_made_them(
    c_program: Path, tmp_path: Path, ranks: int
) -> None:
    """Sizes, datatypes, ops, roots (bcast from rank 1), in-place calls, counts and order; the
    collectives collsweep does not sweep are counted in the notes; the program's own checks
    pass under the recorder."""
    result, out = record_cli(tmp_path, MPIEXEC, "-n", str(ranks), str(c_program))
    assert result.returncode == 0, result.stderr
    workload = load_workload(out)
    assert comparable(workload) == comparable(expected(ranks))
    assert workload.source["kind"] == "recorded" and workload.source["library"].startswith("MPICH")
    assert workload.source["command"] == [MPIEXEC, "-n", str(ranks), str(c_program)]
    for note in workload.notes:
        assert f"collsweep record: note: {note}" in result.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_an_mpi4py_programs_calls_are_recorded_as_the_c_programs(
    tmp_path: Path, ranks: int
) -> None:
    """mpi4py calls the MPI-4 large-count functions (MPI_Allreduce_c, ...): the same workload."""
    command = [MPIEXEC, "-n", str(ranks), sys.executable, str(PROGRAMS / "record_calls.py")]
    result, out = record_cli(tmp_path, *command)
    assert result.returncode == 0, result.stderr
    assert comparable(load_workload(out)) == comparable(expected(ranks))


@pytest.mark.mpi
def test_ranks_that_disagree_about_a_call_are_named_and_rank_0s_view_kept(tmp_path: Path) -> None:
    """Rank 0 reduces the in-place allreduce with MPI_SUM, the others with MPI_MAX: the job
    still runs, and the notes name the call and both ranks' versions of it."""
    command = [MPIEXEC, "-n", "3", sys.executable, str(PROGRAMS / "record_calls.py"), "disagree"]
    result, out = record_cli(tmp_path, *command)
    assert result.returncode == 0, result.stderr
    workload = load_workload(out)
    assert workload.calls[3] == Call("allreduce", 400, "int32", "sum", 3, 1)
    for other in (1, 2):
        note = (
            f"world rank {other} disagrees with world rank 0 about call 8 on the world "
            f"communicator (3 ranks): rank 0 made allreduce 400 B int32 sum, rank {other} made "
            "allreduce 400 B int32 max"
        )
        assert note in workload.notes
        assert f"collsweep record: note: {note}" in result.stderr


@pytest.mark.mpi
def test_a_failing_program_writes_nothing_and_passes_its_status_on(
    c_program: Path, tmp_path: Path
) -> None:
    result, out = record_cli(tmp_path, MPIEXEC, "-n", "2", str(c_program), "fail")
    assert result.returncode == 3
    assert not out.exists() and not list(tmp_path.iterdir())
    errors = [line for line in result.stderr.splitlines() if line.startswith("collsweep")]
    assert errors == ["collsweep record: error: the program exited with status 3: nothing written"]


@pytest.mark.mpi
def test_an_order_longer_than_the_cap_is_cut_and_noted_while_counts_stay_whole(
    c_program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording, "MAX_ORDER", 4)
    monkeypatch.setattr("runners.domain.workload.recorded.MAX_ORDER", 4)
    out = tmp_path / "w.json"
    workload = recording.record([MPIEXEC, "-n", "2", str(c_program)], out)
    assert workload.order == expected(2).order[:4]
    assert workload.calls == expected(2).calls
    assert "order: cut at 4 runs; rank 0's 11 later calls are counted but not in the order" in (
        workload.notes
    )
    assert load_workload(out) == workload


# --- the other libraries -------------------------------------------------------------------------


@pytest.mark.mpi
@pytest.mark.parametrize("library", ["openmpi", "impi"])
def test_the_same_recorder_mechanism_serves_open_mpi_and_intel_mpi(
    tmp_path: Path, library: str
) -> None:
    """Their own mpiexec names the library: Open MPI's ranks get the recorder built with Open
    MPI's mpicc, Intel MPI's the MPICH build (the same ABI) on Intel's libmpi."""
    lib = LIBRARIES[library]
    assert libraries.installed(lib), (
        f"{lib.title} is not in {libraries.prefix(lib)}: run `make install`"
    )
    launcher = [str(libraries.mpiexec(lib)), *(["--oversubscribe"] if library == "openmpi" else [])]
    command = [*launcher, "-n", "3", sys.executable, str(PROGRAMS / "record_calls.py")]
    result, out = record_cli(tmp_path, *command)
    assert result.returncode == 0, result.stderr
    workload = load_workload(out)
    assert workload.source["library"].startswith(lib.title)
    assert comparable(workload) == comparable(expected(3, lib.title.split(" ")[0]))


# --- the preset ----------------------------------------------------------------------------------


@pytest.mark.mpi
def test_the_preset_workload_is_what_its_program_makes(tmp_path: Path) -> None:
    """data/workload.json recorded again from data/workload_program.py on 2 ranks: the same
    calls, order, name and notes (the command, which names this machine's paths, aside)."""
    committed = load_workload(PRESET)
    assert committed.source["command"] == [
        "mpiexec",
        "-n",
        "2",
        "python",
        "data/workload_program.py",
    ]
    out = tmp_path / "again.json"
    result = run_cli(
        "record", "--name", committed.name, "--out", str(out), "--", "mpiexec", "-n", "2",
        "python", "data/workload_program.py", timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    again = load_workload(out)
    assert comparable(again) == comparable(committed)
    assert again.source["library"] == committed.source["library"], "record the preset again"


def test_the_preset_looks_like_a_data_parallel_job() -> None:
    """One broadcast of the parameters, gradient buckets of several sizes and a scalar loss,
    all float32 sums collsweep can measure, in 20 steps."""
    workload = load_workload(PRESET)
    assert workload.calls[0].collective == "bcast" and workload.calls[0].nbytes > 2 * 2**20
    reduced = {call.nbytes: call.calls for call in workload.calls[1:]}
    assert reduced == {2**20: 40, 2**18: 20, 2**12: 20, 4: 20}
    assert all(call.measurable for call in workload.calls) and not workload.notes
    assert workload.sequence()[:6] == [0, 1, 1, 2, 3, 4]


# --- bad input: nothing starts -------------------------------------------------------------------


@pytest.mark.parametrize("case", ["a folder", "a missing folder", "a results store"])
def test_a_bad_out_is_refused_before_the_program_starts(
    tmp_path: Path, case: str, reliability
) -> None:
    marker = tmp_path / "started"
    out = {
        "a folder": tmp_path,
        "a missing folder": tmp_path / "no" / "w.json",
        "a results store": tmp_path / "s.duckdb",
    }[case]
    if case == "a results store":
        out.write_bytes(b"\0" * 8 + b"DUCK" + b"\0" * 100)
    result = run_cli("record", "--out", str(out), "--", "touch", str(marker))
    assert result.returncode == 2 and not marker.exists()
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("collsweep record: error: cannot write")
    reliability.bad_input(f"record --out {case}", True)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "--out W is required"),
        (["--out", "w.json"], "no command to record"),
        (
            ["--out", "w.json", "--", "no-such-program-here"],
            "program 'no-such-program-here' not found",
        ),
        (["--build", "--out", "w.json"], "--build takes no command and no --out"),
    ],
)
def test_a_missing_or_unknown_command_is_bad_input(
    tmp_path: Path, argv: list[str], message: str, reliability
) -> None:
    result = run_cli("record", *argv, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr
    assert not (tmp_path / "w.json").exists()
    reliability.bad_input(f"record {' '.join(argv)}", True)


def test_a_program_that_starts_no_mpi_rank_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    result, out = record_cli(tmp_path, "true")
    assert result.returncode == 1 and "the recorder saw no MPI rank" in result.stderr
    assert not out.exists()
