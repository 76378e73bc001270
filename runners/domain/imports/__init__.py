"""Other tools' results as collsweep points: IMB-MPI1, OSU micro-benchmarks, nccl-tests (pure).

`read_tool_file` takes a file's bytes and name (no I/O here), checks it is text, detects the
format (or takes the one given), parses it with that tool's module (imb.py, osu.py, nccl.py)
and returns a `ToolFile` holding its SHA-256. `naming.py` says which catalog algorithm a file's
points are; runners.jobs.importing stores them.
"""

from __future__ import annotations

from dataclasses import replace

from runners.domain.imports import imb, nccl, nccl_json, osu
from runners.domain.imports.detect import detect_format
from runners.domain.imports.records import (
    FORMATS,
    IMB,
    NCCL_TESTS,
    OSU,
    ImportProblem,
    ToolFile,
    ToolRow,
    sha256_of,
    text_of,
)


def read_tool_file(
    data: bytes,
    name: str,
    fmt: str | None = None,
    *,
    ranks: int | None = None,
    collective: str | None = None,
) -> ToolFile:
    """One file's rows and provenance. `fmt` forces the format (else detected); `ranks` is
    OSU's group size (it prints none); `collective` names an old nccl-tests file's test."""
    text = text_of(data, name)
    if not text.strip():
        raise ImportProblem(name, 1, "empty file: nothing to import")
    fmt = fmt or detect_format(text, name)
    try:
        parsed = _parse(text, name, fmt, ranks, collective)
    except ImportProblem as problem:
        last = len(text.splitlines())
        if problem.broken_row and problem.line == last and not text.endswith("\n"):
            raise ImportProblem(name, last, "truncated: the last row stops mid-row") from None
        raise
    if not parsed.rows:
        why = f" ({parsed.notes[0]}, ...)" if parsed.notes else ""
        raise ImportProblem(name, len(text.splitlines()), f"no rows to import{why}")
    return replace(parsed, sha256=sha256_of(data))


def _parse(text: str, name: str, fmt: str, ranks: int | None, collective: str | None) -> ToolFile:
    """The text parsed by the module of its format."""
    if fmt == IMB:
        return imb.parse(text, name)
    if fmt == OSU:
        return osu.parse(text, name, ranks)
    if fmt == NCCL_TESTS and text.lstrip().startswith("{"):
        return nccl_json.parse(text, name, collective)
    if fmt == NCCL_TESTS:
        return nccl.parse(text, name, collective)
    raise ImportProblem(name, 1, f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")


__all__ = [
    "FORMATS",
    "IMB",
    "NCCL_TESTS",
    "OSU",
    "ImportProblem",
    "ToolFile",
    "ToolRow",
    "read_tool_file",
]
