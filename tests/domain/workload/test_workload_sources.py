"""`collsweep workload from-ddp` and `from-param` (no MPI): DDP's buckets against examples worked
by hand from PyTorch 2.11.0's rule (runners/domain/workload/sources/ddp.py), a PARAM basic trace
against the calls it holds, and bad files refused in one line with nothing written.

tests/fixtures/workloads/param_basic.json is written from PARAM's reader of the basic format
(facebookresearch/param train/comms/pt/commsTraceParser.py `_parseBasicTraceComms`, commit
1e115ffc62c6): PARAM ships no example basic trace. Its entries use the keys that reader takes
(comms, in_msg_size, out_msg_size, dtype, world_size, global_ranks, pg_id, root, req, markers,
startTime_ns, in_split/out_split) and the datatype names PyTorch records (Float, Half, ...).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

import runners.domain.workload.sources as sources
from runners.cli.main import main
from runners.domain.workload.file import Workload, load_workload
from runners.domain.workload.sources import CallLog
from runners.domain.workload.sources.ddp import DdpOptions, assign_buckets, ddp_workload
from runners.domain.workload.sources.ddp_input import Tensor, model_from_json

MIB = 1024 * 1024
F32 = MIB // 4  # float32 elements in 1 MiB
PARAM_TRACE = ROOT / "tests" / "fixtures" / "workloads" / "param_basic.json"


def tensor(mib: float, dtype: str = "float32", size: int = 4) -> Tensor:
    return Tensor("", int(mib * MIB) // size, dtype, 1, True)


def sequence(workload: Workload) -> list[tuple]:
    """Every call in order as (collective, bytes, dtype, op, ranks, root)."""
    return [
        (c.collective, c.nbytes, c.dtype, c.op, c.ranks, c.root)
        for c in (workload.calls[i] for i in workload.sequence())
    ]


def allreduces(workload: Workload) -> list[tuple[int, str]]:
    return [
        (nbytes, dtype) for coll, nbytes, dtype, *_ in sequence(workload) if coll == "allreduce"
    ]


def parameter(name: str, mib: float, dtype: str = "float32", grad: bool = True) -> dict:
    size = {"float32": 4, "float16": 2}[dtype]
    return {"name": name, "shape": [int(mib * MIB) // size], "dtype": dtype, "requires_grad": grad}


# Model order; gradients ready in reverse: b2 (0.5) + w2 (0.75) reach the 1 MiB first bucket;
# big (30 MiB) alone fills a 25 MiB bucket; mid + embed (12 MiB) are left open at the end.
# frozen requires no grad: broadcast at start, never reduced.
HAND_MODEL = [
    parameter("embed", 2),
    parameter("mid", 10),
    parameter("frozen", 4, grad=False),
    parameter("big", 30),
    parameter("w2", 0.75),
    parameter("b2", 0.5),
]


def test_default_buckets_by_hand() -> None:
    model = model_from_json(HAND_MODEL, "test")
    workload = ddp_workload(model, DdpOptions(ranks=4, steps=10), "hand")
    start = [
        ("allgather", 4 * 8, "int64", "none", 4, None),  # each rank's parameter count
        ("bcast", 5 * 2 * 8, "int64", "none", 4, 0),  # sizes and strides of 5 1-D parameters
        ("bcast", int(47.25 * MIB), "float32", "none", 4, 0),  # every parameter, frozen too
        ("allreduce", int(43.25 * MIB), "float32", "sum", 4, None),  # step 1: one bucket
        ("bcast", (5 + 1) * 4, "int32", "none", 4, 0),  # rebuilt indices and bucket count
        ("bcast", 3 * 4, "int32", "none", 4, 0),  # rebuilt bucket sizes
    ]
    step = [
        ("allreduce", int(1.25 * MIB), "float32", "sum", 4, None),
        ("allreduce", 30 * MIB, "float32", "sum", 4, None),
        ("allreduce", 12 * MIB, "float32", "sum", 4, None),
    ]
    assert sequence(workload) == start + step * 9
    assert workload.total_calls == len(start) + 3 * 9
    assert workload.source["buckets"] == 3
    assert workload.source["bytes_per_step"] == int(43.25 * MIB)
    assert any("do not require grad" in note for note in workload.notes)


def test_given_bucket_cap_caps_the_first_bucket_too() -> None:
    """bucket_cap_mb given: PyTorch passes it as the first bucket's cap as well."""
    model = model_from_json(HAND_MODEL, "test")
    workload = ddp_workload(model, DdpOptions(ranks=4, steps=2, bucket_cap_mb=25), "hand")
    # b2 + w2 + big = 31.25 MiB closes the first 25 MiB bucket; mid + embed stay open.
    assert allreduces(workload)[1:] == [(int(31.25 * MIB), "float32"), (12 * MIB, "float32")]


def test_datatypes_fill_separate_buckets() -> None:
    """Each datatype has its own buckets and limits; the buckets still open at the end follow
    the closed ones, the datatype seen last first (PyTorch's unordered_map on Linux)."""
    model = model_from_json(
        [
            parameter("e", 0.25),
            parameter("f", 0.25, "float16"),
            parameter("a", 0.75),
            parameter("b", 0.75, "float16"),
            parameter("c", 0.5),
            parameter("d", 0.5, "float16"),
        ],
        "test",
    )
    workload = ddp_workload(model, DdpOptions(ranks=2, steps=3), "mixed")
    step_one = [(int(1.5 * MIB), "float16"), (int(1.5 * MIB), "float32")]  # reversed by index
    rebuilt = [
        (int(1.25 * MIB), "float16"),  # d + b: reaches float16's first 1 MiB
        (int(1.25 * MIB), "float32"),  # c + a: reaches float32's own first 1 MiB
        (MIB // 4, "float32"),  # e, left open (float32 seen last)
        (MIB // 4, "float16"),  # f, left open
    ]
    assert allreduces(workload) == step_one + rebuilt * 2
    start = [call for call in sequence(workload) if call[0] == "bcast"][1:3]
    assert [(nbytes, dtype) for _, nbytes, dtype, *_ in start] == [
        (int(1.5 * MIB), "float32"),  # one bucket per datatype, by smallest index
        (int(1.5 * MIB), "float16"),
    ]


def test_broadcast_chunks_close_at_250_mib_and_buffers_go_every_step() -> None:
    """A broadcast bucket closes once it reaches 250 MiB, so it may pass it; buffers are
    broadcast at start with the parameters and again before every step."""
    data = {
        "parameters": [{"numel": 100 * F32} for _ in range(3)],
        "buffers": [{"shape": [10]}, {"shape": [], "dtype": "int64"}],
    }
    workload = ddp_workload(model_from_json(data, "test"), DdpOptions(ranks=8, steps=3), "b")
    buffers = [("bcast", 40, "float32"), ("bcast", 8, "int64")]
    rebuilt = [("allreduce", 100 * MIB, "float32")] * 3  # each reaches 25 MiB alone
    assert [call[:3] for call in sequence(workload)] == [
        ("allgather", 64, "int64"),
        ("bcast", 3 * 2 * 8, "int64"),  # numel only: one dimension each
        ("bcast", 300 * MIB, "float32"),  # 100 + 100 + 100 MiB: closes past 250 MiB
        *buffers,  # the buffers, with the parameters: a bucket per datatype
        *buffers,  # step 1: the buffers before forward
        ("allreduce", 300 * MIB, "float32"),
        ("bcast", (3 + 1) * 4, "int32"),  # the rebuild: 3 indices and the count,
        ("bcast", 3 * 4, "int32"),  # then 3 bucket sizes
        *buffers,
        *rebuilt,
        *buffers,
        *rebuilt,
    ]


def test_no_broadcast_buffers() -> None:
    data = {"parameters": [10], "buffers": [{"numel": 5}]}
    options = DdpOptions(ranks=2, steps=4, broadcast_buffers=False)
    workload = ddp_workload(model_from_json(data, "test"), options, "n")
    assert [c[1] for c in sequence(workload) if c[0] == "bcast"] == [16, 40, 8, 4]


def test_steps_multiply_the_per_step_calls() -> None:
    model = model_from_json([F32, F32], "test")  # 1 MiB each: two rebuilt buckets of 1 MiB
    one = ddp_workload(model, DdpOptions(ranks=2, steps=1), "s")
    many = ddp_workload(model, DdpOptions(ranks=2, steps=1000), "s")
    assert allreduces(one) == [(2 * MIB, "float32")]  # no rebuild after a single step
    assert not any(c[2] == "int32" for c in sequence(one))
    counts = {(c.collective, c.nbytes): c.calls for c in many.calls}
    assert counts[("allreduce", 2 * MIB)] == 1
    assert counts[("allreduce", MIB)] == 2 * 999  # one call, two buckets a step
    bucket = next(i for i, c in enumerate(many.calls) if c.key[:2] == ("allreduce", MIB))
    assert many.order[-1] == (bucket, 1998)  # the same call twice a step: one run


def test_assign_buckets_sorts_by_smallest_index_without_indices() -> None:
    tensors = [tensor(0.5, "float16", 2), tensor(2), tensor(0.25, "float16", 2)]
    # float32's bucket closes first, float16's is left open; sorted, float16's comes first.
    assert assign_buckets(tensors, [MIB]) == [[0, 2], [1]]
    # With indices (the rebuild) nothing is sorted.
    assert assign_buckets(tensors, [MIB], [2, 1, 0]) == [[1], [2, 0]]


def test_call_log_cuts_the_order_not_the_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_ORDER", 3)
    log = CallLog()
    calls = ddp_workload(model_from_json([F32, F32], "t"), DdpOptions(2, 1), "t").calls
    log.add_block([calls[0], calls[1]], 10)
    workload = log.workload("t", {}, [])
    assert [c.calls for c in workload.calls] == [10, 10]
    assert workload.order == ((0, 1), (1, 1), (0, 1))
    assert any("order" in note for note in workload.notes)


# --- PARAM --------------------------------------------------------------------------------------


def collsweep(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_param_trace_converts_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.json"
    status, printed, _ = collsweep(
        capsys, "workload", "from-param", str(PARAM_TRACE), "--out", str(out)
    )
    assert status == 0
    assert "8 calls (5 distinct)" in printed and "collsweep workload show" in printed
    workload = load_workload(out)
    allreduce = ("allreduce", 4 * MIB, "float32", "sum", 8, None)
    assert sequence(workload) == [
        allreduce,
        ("bcast", 8000, "int64", "none", 8, 0),
        ("allgather", 2048, "bfloat16", "none", 8, None),  # the output: the whole vector
        ("reduce_scatter", 8192, "float16", "sum", 4, None),  # the input: the whole vector
        ("reduce", 2048, "float64", "sum", 4, 2),  # global rank 6 is the group's rank 2
        allreduce,
        allreduce,
        allreduce,  # "allreduce"/"float" name the same call as "all_reduce"/"Float"
    ]
    assert workload.order[-1] == (0, 3)
    assert not workload.calls[2].measurable  # bfloat16 is kept, not swept
    notes = " ".join(workload.notes)
    assert "sum" in notes
    for skipped in ("1 all_to_allv", "1 barrier", "1 compute", "1 init", "1 wait"):
        assert skipped in notes
    assert workload.source["kind"] == "param"


def test_param_ranks_only_where_the_trace_has_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.json"
    entries = [{"comms": "all_reduce", "in_msg_size": 4, "out_msg_size": 4, "dtype": "Int"}]
    trace.write_text(json.dumps([*entries, {**entries[0], "world_size": 2}]))
    out = tmp_path / "w.json"
    status, _, err = collsweep(capsys, "workload", "from-param", str(trace), "--out", str(out))
    assert status == 2 and "--ranks" in err and not out.exists()
    status, _, _ = collsweep(
        capsys, "workload", "from-param", str(trace), "--out", str(out), "--ranks", "16"
    )
    assert status == 0
    assert [c.ranks for c in load_workload(out).calls] == [16, 2]


def test_from_ddp_cli_writes_and_summarises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"parameters": HAND_MODEL}))
    out = tmp_path / "w.json"
    status, printed, err = collsweep(
        capsys, "workload", "from-ddp", str(params), "--ranks", "4", "--steps", "10",
        "--out", str(out), "--name", "resnet",
    )  # fmt: skip
    assert status == 0, err
    assert printed.count("\n") == 1
    assert "33 calls (9 distinct), 3 gradient buckets, 43.2 MiB a step" in printed
    workload = load_workload(out)
    assert workload.name == "resnet" and workload.source["kind"] == "ddp"
    assert sequence(workload) == sequence(
        ddp_workload(model_from_json(HAND_MODEL, "t"), DdpOptions(4, 10), "x")
    )


# --- bad files ----------------------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
BAD_PARAMS = {
    "not json": "{",
    "wrong shape": json.dumps({"params": [1, 2]}),
    "an object per entry": json.dumps(["fc.weight"]),
    "negative size": json.dumps([10, -5]),
    "negative shape": json.dumps([{"shape": [3, -1]}]),
    "unknown dtype": json.dumps([{"numel": 3, "dtype": "float33"}]),
    "misspelt key": json.dumps([{"numel": 3, "requires-grad": False}]),
    "nothing trained": json.dumps([{"numel": 3, "requires_grad": False}]),
    "deep nesting": DEEP,
    "not utf-8": b"\xff\xfe[1]",
}
BAD_TRACES = {
    "not json": "[{",
    "not a list": json.dumps({"comms": "all_reduce"}),
    "neither comms nor compute": json.dumps([{"dtype": "Float"}]),
    "negative size": json.dumps(
        [{"comms": "all_reduce", "in_msg_size": -1, "out_msg_size": 1, "dtype": "Float"}]
    ),
    "unknown dtype": json.dumps(
        [{"comms": "broadcast", "in_msg_size": 1, "out_msg_size": 1, "dtype": "Quad"}]
    ),
    "root outside the group": json.dumps(
        [
            {
                "comms": "reduce",
                "in_msg_size": 1,
                "out_msg_size": 1,
                "dtype": "Float",
                "global_ranks": [4, 5],
                "root": 0,
            }
        ]
    ),
    "nothing swept": json.dumps([{"comms": "barrier"}, {"comms": "wait"}]),
    "deep nesting": DEEP,
}


def refused(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> str:
    """Run the command, check it exits 2 with one line and writes nothing; the line."""
    status, printed, err = collsweep(capsys, "workload", *args, "--out", str(out))
    assert status == 2
    assert printed == ""
    assert err.count("\n") == 1 and err.startswith("collsweep workload: error: ")
    assert not out.exists()
    return err


@pytest.mark.parametrize("case", BAD_PARAMS)
def test_bad_parameter_files(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "params.json"
    content = BAD_PARAMS[case]
    params.write_bytes(content if isinstance(content, bytes) else content.encode())
    err = refused(capsys, tmp_path / "w.json", "from-ddp", str(params), "--ranks", "2")
    assert "parameter file" in err or "grad" in err


@pytest.mark.parametrize("case", BAD_TRACES)
def test_bad_traces(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(BAD_TRACES[case])
    err = refused(capsys, tmp_path / "w.json", "from-param", str(trace), "--ranks", "2")
    assert "PARAM trace" in err


def test_huge_and_missing_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as handle:
        os.truncate(handle.fileno(), 64 * MIB + 1)  # sparse: larger than 64 MiB, nothing read
    assert "64 MiB" in refused(capsys, tmp_path / "w.json", "from-param", str(huge))
    missing = str(tmp_path / "absent.json")
    assert "cannot be read (No such file" in refused(
        capsys, tmp_path / "w.json", "from-ddp", missing, "--ranks", "2"
    )


def test_output_checked_before_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder or a DuckDB store as --out is refused even when the input is bad too."""
    folder = tmp_path / "folder"
    folder.mkdir()
    status, _, err = collsweep(
        capsys, "workload", "from-ddp", str(tmp_path / "absent.json"), "--ranks", "2",
        "--out", str(folder),
    )  # fmt: skip
    assert status == 2 and "it is a folder" in err and err.count("\n") == 1
    store = tmp_path / "s.duckdb"
    store.write_bytes(b"\0" * 8 + b"DUCK" + b"\0" * 100)
    status, _, err = collsweep(
        capsys, "workload", "from-param", str(PARAM_TRACE), "--out", str(store)
    )
    assert status == 2 and "DuckDB" in err
    assert store.read_bytes()[8:12] == b"DUCK"


def test_the_output_is_never_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace.json"
    shutil.copy(PARAM_TRACE, trace)
    before = trace.read_bytes()
    status, _, err = collsweep(
        capsys, "workload", "from-param", str(trace), "--out", str(tmp_path / "." / "trace.json")
    )
    assert status == 2 and "it is the input" in err and err.count("\n") == 1
    assert trace.read_bytes() == before
