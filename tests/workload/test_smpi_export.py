"""`collsweep workload export --format smpi`: SMPI's time-independent trace of a workload, one
file per rank, replayed by SMPI itself."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from runners.domain.workload.file import Call, Workload, WorkloadError
from runners.domain.workload.smpi_trace import MAX_LINES, call_line, smpi_trace

JOB = Workload(
    "job",
    (
        Call("bcast", 4096, "float32", "none", 4, 1, root=0),
        Call("allreduce", 1 << 20, "float32", "sum", 4, 3),
        Call("allgather", 4096, "float32", "none", 4, 1),
        Call("reduce_scatter", 4096, "float64", "sum", 4, 1),
        Call("reduce", 64, "int32", "max", 4, 1, root=2),
        Call("allreduce", 8, "float32", "sum", 2, 5),
    ),
    order=((0, 1), (1, 3), (2, 1), (3, 1), (4, 1), (5, 5)),
)


def test_each_rank_replays_the_calls_in_order() -> None:
    texts, notes = smpi_trace(JOB)
    assert sorted(texts) == [0, 1, 2, 3]
    lines = texts[2].splitlines()
    assert lines == [
        "2 init",
        "2 bcast 4096 0",
        *["2 allreduce 1048576 262144"] * 3,
        "2 allgather 1024 1024",
        "2 reducescatter 1024 1024 1024 1024 512",
        "2 reduce 64 16 2",
        "2 finalize",
    ]
    assert notes == [
        "5 call(s) on fewer than the job's 4 ranks left out: SMPI's traces replay every call on "
        "the world communicator"
    ]


def test_a_trace_too_long_is_refused_before_anything_is_written() -> None:
    huge = Workload("huge", (Call("allreduce", 8, "float32", "sum", 8, 1),), ((0, MAX_LINES),))
    with pytest.raises(WorkloadError, match="at most"):
        smpi_trace(huge)
    assert call_line(JOB.calls[1], 0) == "0 allreduce 1048576 262144"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("smpicxx") is None, reason="needs libsimgrid-dev (smpicxx)")
def test_smpi_replays_the_exported_trace(tmp_path: Path) -> None:
    """The preset workload exported, then replayed by smpirun with data/smpi_replay.cpp."""
    out = tmp_path / "trace"
    done = run_cli(
        "workload", "export", "data/workload.json", "--format", "smpi", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    program = tmp_path / "replay"
    source = ROOT / "data" / "smpi_replay.cpp"
    subprocess.run(["smpicxx", "-std=c++17", "-O2", "-o", program, source], check=True)
    (tmp_path / "hosts").write_text("node0\nnode1\n")
    (tmp_path / "p.xml").write_text(
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1"><zone id="w" routing="Full">'
        '<cluster id="c" prefix="node" suffix="" radical="0-1" speed="1Gf" bw="10GBps" '
        'lat="1us" bb_bw="1TBps" bb_lat="0us"/></zone></platform>\n'
    )
    replayed = subprocess.run(
        [
            "smpirun",
            "-np",
            "2",
            "-platform",
            "p.xml",
            "-hostfile",
            "hosts",
            "-replay",
            str(out / "index.txt"),
            "--cfg=smpi/host-speed:1Gf",
            str(program),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    assert "Simulation time" in replayed.stderr
