"""nccl-tests' `-J` JSON report as a ToolFile (pure).

The layout (src/util.cu of NVIDIA/nccl-tests, 2.17.3+; JSON_FILE_VERSION 1-3): one object with
`args` (the command line), `env` (every `KEY=VALUE` of the environment: NCCL_ALGO among them),
`nccl_version` (e.g. 22105), `config` (nthreads, ngpus, warmup_iters, iterations, ..., and
`devices`: one per rank, with its `hostname`), `results` (per size: size, count, type, redop,
root as its `%6i` string, `out_of_place` and `in_place` objects of `time` or `cpu_time` (us),
`alg_bw`, `bus_bw`, `nwrong` (null when not checked); NaN written as "nan"), the trailer
objects and `end_time`, written last (a report without it was cut short).

The median is the out-of-place time, as for the text output (nccl.py), here with the six
decimals `%lf` writes; every other value is kept with the row, named as the JSON names it
(`in_place.alg_bw`). With `-I` (JSON version 2+) each half also has `*_per_iter`: summary
statistics and `times_us`, every iteration's time (CUDA events, the maximum over GPUs and
processes: collsweep's own sample), the first `skipped_iterations` of them (-K) excluded from
the statistics. The out-of-place ones, less the skipped, become the point's samples (not kept
twice with the row); the per-process lists are dropped.
"""

from __future__ import annotations

import json
import shlex
from pathlib import PurePath
from typing import Any

from runners.domain.imports.datatypes import NCCL_TYPES
from runners.domain.imports.nccl import TESTS, TOOL
from runners.domain.imports.records import (
    MAX_MICROSECONDS,
    MAX_PRINTED_INTEGER,
    NCCL_TESTS,
    ImportProblem,
    ToolFile,
    ToolRow,
    broken_row,
)
from runners.domain.imports.rows import tool_row, wrong_note

MEDIAN = "out_of_place.time"
PER_ITER = "out_of_place_per_iter"
SELECTORS = ("NCCL_ALGO",)  # the environment's settings that pick NCCL's algorithm


def parse(text: str, name: str, collective: str | None = None) -> ToolFile:
    """The report's rows; `collective` when its command line names no test."""
    report = _decoded(text, name)
    if "end_time" not in report:
        raise ImportProblem(name, _lines(text), "truncated: the report has no end_time")
    config = report.get("config") or {}
    devices = config.get("devices") or []
    if not devices or not isinstance(report.get("results"), list):
        raise ImportProblem(name, 1, "no config.devices or results: not an nccl-tests report")
    args = [str(a) for a in report.get("args") or []]
    test = _test(args, name, collective)
    ranks = len(devices) * _count(config, "nthreads") * _count(config, "ngpus")
    rows = [_row(r, i, name, TESTS[test], ranks) for i, r in enumerate(report["results"])]
    return ToolFile(
        name=name,
        sha256="",
        format=NCCL_TESTS,
        tool=TOOL,
        version=f"nccl-tests JSON report version {report.get('version')}",
        command_line=shlex.join(args),
        settings={k: v for k, v in config.items() if k != "devices"}
        | {"test": test, "ranks": ranks},
        hosts=tuple(dict.fromkeys(str(d.get("hostname", "")) for d in devices)),
        environment=_environment(report.get("env") or []),
        library="nccl",
        library_version=_version(report.get("nccl_version")),
        warmup=config.get("warmup_iters") if isinstance(config.get("warmup_iters"), int) else None,
        median_column=MEDIAN,
        rows=tuple(r for r in rows if isinstance(r, ToolRow)),
        notes=tuple(r for r in rows if isinstance(r, str)),
    )


def _count(config: dict[str, Any], key: str) -> int:
    """A positive count of the config (1 when absent): `devices` lists one entry per process,
    each running nthreads x ngpus ranks."""
    value = config.get(key, 1)
    return value if isinstance(value, int) and value > 0 else 1


def _decoded(text: str, name: str) -> dict[str, Any]:
    """The report as a dict; ImportProblem at the line JSON breaks on (a cut file too)."""
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportProblem(name, exc.lineno, f"broken or truncated JSON: {exc.msg}") from None
    if not isinstance(report, dict):
        raise ImportProblem(name, 1, "JSON that is not an nccl-tests report (not an object)")
    return report


def _lines(text: str) -> int:
    return max(len(text.splitlines()), 1)


def _test(args: list[str], name: str, collective: str | None) -> str:
    """The test's program: the command line's first word, else --collective."""
    program = PurePath(args[0]).name if args else ""
    if program in TESTS:
        return program
    if collective:
        return next(t for t, c in TESTS.items() if c == collective)
    raise ImportProblem(
        name, 1, f"{program or 'no program'} is not a collective test collsweep sweeps"
    )


def _row(result: Any, index: int, name: str, collective: str, ranks: int) -> ToolRow | str:
    """One entry of `results` (its position stands for the line: JSON may be one line)."""
    where = index + 1
    if not isinstance(result, dict) or not isinstance(result.get("out_of_place"), dict):
        raise broken_row(name, 1, f"results[{index}] has no out_of_place object")
    values = _flat(result)
    iterations = _iterations(values, name, index)
    seconds = values.get(MEDIAN, values.get("out_of_place.cpu_time"))
    size = values.get("size")
    if not isinstance(size, int) or not isinstance(seconds, int | float):
        raise broken_row(name, 1, f"results[{index}] lacks a size or an out-of-place time")
    if not 0 < seconds <= MAX_MICROSECONDS or not 0 <= size <= MAX_PRINTED_INTEGER:
        raise broken_row(name, 1, f"results[{index}]: {seconds} us for {size} B is no call")
    wrong = values.get("out_of_place.nwrong")
    if isinstance(wrong, int | float) and wrong > 0:
        return wrong_note(where, size, wrong)
    dtype = str(values.get("type", "float"))
    return tool_row(
        line=where,
        collective=collective,
        ranks=ranks,
        tool_bytes=size,
        per_rank=False,
        tool_dtype=NCCL_TYPES.get(dtype, dtype),
        tool_op=str(values.get("redop", "none")),
        seconds=seconds / 1e6,
        iterations=len(iterations) or values.get("actual_iterations"),
        columns=values,
        samples=iterations,
    )


def _iterations(values: dict[str, Any], name: str, index: int) -> tuple[float, ...]:
    """The out-of-place per-iteration times (-I), in seconds, without the ones the run asked
    to skip (-K); taken out of `values`, with their per-process parts: they are the samples."""
    times = values.pop(f"{PER_ITER}.times_us", None) or []
    values.pop(f"{PER_ITER}.per_process_max_times_us", None)
    values.pop("in_place_per_iter.times_us", None)
    values.pop("in_place_per_iter.per_process_max_times_us", None)
    skipped = values.get(f"{PER_ITER}.skipped_iterations") or 0
    if not all(isinstance(t, int | float) and t >= 0 for t in times):
        raise broken_row(name, 1, f"results[{index}] has a per-iteration time that is no time")
    return tuple(t / 1e6 for t in times[skipped:])


def _flat(result: dict[str, Any]) -> dict[str, Any]:
    """A result's values, its halves' keys prefixed (`in_place.bus_bw`)."""
    out: dict[str, Any] = {}
    for key, value in result.items():
        if isinstance(value, dict):
            out |= {f"{key}.{inner}": v for inner, v in value.items()}
        else:
            out[key] = value
    return out


def _environment(env: list[Any]) -> dict[str, str]:
    """The environment's settings that pick NCCL's algorithm (the report holds all of it)."""
    pairs = (str(item).partition("=") for item in env)
    return {key: value for key, _, value in pairs if key in SELECTORS}


def _version(code: Any) -> str:
    """NCCL's version from its code (22105: NCCL 2.21.5)."""
    if not isinstance(code, int) or code <= 0:
        return ""
    return f"NCCL {code // 10000}.{code // 100 % 100}.{code % 100}"
