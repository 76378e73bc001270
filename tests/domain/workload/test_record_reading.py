"""The recorder's files read back, ranks compared and rank 0's view made into a workload, without
ranks; which library and name a command gets; the recorder's build. The real programs are in
tests/workload/test_record.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runners.domain.libraries import LIBRARIES
from runners.domain.workload.file import Call
from runners.domain.workload.rank_agreement import disagreements, first_difference
from runners.domain.workload.recorded import recorded_workload
from runners.domain.workload.recording import RecordError, parse_record, read_records
from runners.host import libraries
from runners.jobs import recorder_build, recording

# --- reading the records without ranks -----------------------------------------------------------


def rank_file(rank: int, size: int, ops: tuple[str, str] = ("sum", "sum"), dropped: int = 0) -> str:
    """A record as the recorder writes it: world and one sub-communicator, three calls."""
    lines = [
        "collsweep-record 1",
        f"rank {rank} {size} {100 + rank}",
        "library MPICH Version:      5.0.2",
        f"comm 0 {size} {rank} 0 world",
        f"comm 1 2 {rank % 2} 0 {'0,2' if rank % 2 == 0 else '1,3'}",
        f"call allreduce 0 4096 float32 {ops[0]} -1 10",
        f"call allreduce 0 4 float32 {ops[1]} -1 10",
        "call bcast 1 64 byte none 0 1",
        "other MPI_Alltoall 2",
        "other MPI_Iallreduce 5",
        "other MPI_Allreduce:empty 1",
        "order 2 1",
        "order 0 1",
        "order 1 1",
        "order 0 9",
        "order 1 9",
        f"dropped {dropped}",
        "end",
    ]
    return "\n".join(lines) + "\n"


def test_a_rank_file_is_read_back() -> None:
    record = parse_record(rank_file(2, 4), "r")
    assert (record.world_rank, record.world_size, record.pid) == (2, 4, 102)
    assert record.library == "MPICH Version:      5.0.2"
    assert [c.members for c in record.comms] == [(0, 1, 2, 3), (0, 2)]
    assert record.key(2) == ("bcast", 64, "byte", "none", 2, 0)
    assert record.key(0) == ("allreduce", 4096, "float32", "sum", 4, None)
    assert record.others == {"MPI_Alltoall": 2, "MPI_Iallreduce": 5, "MPI_Allreduce:empty": 1}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("end\n", ""), "cut short"),
        (lambda t: "hello\n" + t, "not a collsweep recorder file"),
        (lambda t: t.replace("order 2 1", "order 7 1"), "order entry of an unknown call"),
        (lambda t: t.replace("call bcast 1", "call bcast 5"), "unknown communicator"),
        (lambda t: t.replace("call bcast", "call alltoall"), "a call line is"),
        (lambda t: t.replace("dropped 0", "dropped x"), "expected integers"),
    ],
)
def test_a_damaged_rank_file_is_refused_in_one_line(edit, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        parse_record(edit(rank_file(0, 4)), "r")


def records(texts: list[str], tmp_path: Path) -> list:
    """The records of rank files with these texts, written into `tmp_path`."""
    for rank, text in enumerate(texts):
        (tmp_path / f"rank-{rank}-{100 + rank}.txt").write_text(text)
    return read_records(tmp_path)


def test_rank_0s_view_merges_its_calls_and_notes_what_it_leaves_out(tmp_path: Path) -> None:
    """Four ranks of which rank 3 left no record; the order's neighbouring runs are joined;
    counted-only calls are named with why."""
    found = records([rank_file(r, 4) for r in range(3)], tmp_path)
    workload = recorded_workload(found, "w", {"kind": "recorded"})
    assert workload.calls == (
        Call("allreduce", 4096, "float32", "sum", 4, 10),
        Call("allreduce", 4, "float32", "sum", 4, 10),
        Call("bcast", 64, "byte", "none", 2, 1, 0),
    )
    assert workload.order == ((2, 1), (0, 1), (1, 1), (0, 9), (1, 9))
    assert workload.notes == (
        "no record from world 1 rank 3 of 4: they made no MPI call the recorder saw",
        "MPI_Allreduce of 0 bytes: 1 call, not recorded",
        "MPI_Alltoall: 2 calls, not recorded: collsweep does not sweep it",
        "MPI_Iallreduce: 5 calls, not recorded: nonblocking collectives are counted only",
        "calls on communicators without world rank 0 are not in the workload (it is rank 0's "
        "view): 1 call on 1 communicator, each a call rank 0 also made",
    )


def test_disagreements_are_found_in_the_order_or_else_in_the_counts(tmp_path: Path) -> None:
    same = rank_file(0, 2)
    differs = rank_file(1, 2, ops=("sum", "max"))
    (tmp_path / "a").mkdir()
    notes = disagreements(records([same, differs], tmp_path / "a"))
    assert notes == [
        "world rank 1 disagrees with world rank 0 about call 2 on the world communicator "
        "(2 ranks): rank 0 made allreduce 4 B float32 sum, rank 1 made allreduce 4 B float32 max"
    ]
    (tmp_path / "b").mkdir()
    cut = records([same, rank_file(1, 2, dropped=3).replace("order 1 9\n", "")], tmp_path / "b")
    assert disagreements(cut) == []  # a cut order that agrees as far as it goes


def test_the_first_difference_of_two_run_length_encoded_orders() -> None:
    a, b = ("x",), ("y",)
    assert first_difference([(a, 3)], [(a, 1), (a, 2)]) is None
    assert first_difference([(a, 3), (b, 1)], [(a, 2), (b, 2)]) == (2, a, b)
    assert first_difference([(a, 3)], [(a, 3), (b, 1)]) == (3, None, b)
    assert first_difference([], []) is None


def test_records_of_two_mpi_jobs_are_refused(tmp_path: Path) -> None:
    (tmp_path / "rank-0-1.txt").write_text(rank_file(0, 2))
    (tmp_path / "rank-0-2.txt").write_text(rank_file(0, 2))
    with pytest.raises(RecordError, match="more than one MPI job"):
        read_records(tmp_path)


# --- which library, which name -------------------------------------------------------------------


def test_the_launchers_prefix_names_the_library_and_the_program_names_the_workload() -> None:
    openmpi, impi = LIBRARIES["openmpi"], LIBRARIES["impi"]
    assert recording.library_for(libraries.prefix(openmpi) / "bin" / "mpiexec").name == "openmpi"
    assert recording.library_for(libraries.prefix(impi) / "bin" / "mpiexec").name == "impi"
    assert recording.library_for(Path("/usr/bin/mpiexec")).name == "mpich"
    assert recording.library_for(Path("/usr/bin/mpiexec"), "impi").name == "impi"
    assert (
        recording.default_name(["mpiexec", "-n", "2", "python", "dir/train.py", "--x"]) == "train"
    )
    assert (
        recording.default_name(["mpiexec", "-n", "2", "python", "-m", "pkg.train"]) == "pkg.train"
    )
    assert recording.default_name(["mpiexec", "-n", "2", sys.executable, "-c", "x"]) == "x"


def test_the_recorder_is_built_once_per_source_and_compiler() -> None:
    """Both builds: MPICH's (which Intel MPI shares) and Open MPI's, each defining the wrapped
    collectives and calling the library's PMPI_ ones."""
    mpich = recorder_build.recorder(LIBRARIES["mpich"])
    assert recorder_build.recorder(LIBRARIES["impi"]) == mpich
    assert mpich.name.startswith("libcollsweep_record-mpich-")
    symbols = subprocess.run(["nm", "-D", str(mpich)], capture_output=True, text=True).stdout
    for name in ("MPI_Allreduce", "MPI_Allreduce_c", "MPI_Reduce_scatter_block", "MPI_Finalize"):
        assert f" T {name}\n" in symbols
    assert " U PMPI_Allreduce_c\n" in symbols
    assert os.access(mpich, os.X_OK)
