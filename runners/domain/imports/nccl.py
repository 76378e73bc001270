"""nccl-tests' `*_perf` text output as a ToolFile (pure).

The layout (src/common.cu, src/util.cu of NVIDIA/nccl-tests; tests/fixtures/imports/README.md
follows it version by version): `# nccl-tests version X` (2.17.4+), `# Collective test starting:
all_reduce_perf` (2.16.7+), `# nThread .. nGpus .. minBytes .. warmup iters: W iters: N ..`,
one `#  Rank r ... on <host> device d [..] <name>` line per rank, NCCL's own log lines when
NCCL_DEBUG is set (`NCCL version 2.21.5+cuda12.4`, `... NCCL INFO NCCL_ALGO set by environment
to Ring`), a three-line column header naming every column (`size count type redop [root] time
algbw busbw #wrong|error` for out-of-place, then the same for in-place), one row per size, and
the trailer `# Out of bounds values : 0 OK` / `# Avg bus bandwidth : x`.

`size` is the whole vector (for all_gather and reduce_scatter the total buffer), as collsweep
counts it. The median is the out-of-place `time` (us): collsweep's own calls use separate send
and receive buffers too; nccl-tests averages it over ranks (`-a 1`, its default). The in-place
time, both halves' algbw, busbw and #wrong (or the older max-error `error`) are kept with the
row.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from runners.domain.imports.datatypes import NCCL_TYPES
from runners.domain.imports.records import (
    NCCL_TESTS,
    ImportProblem,
    ToolFile,
    ToolRow,
    field_count,
    integer,
    microseconds,
)
from runners.domain.imports.records import number as to_number
from runners.domain.imports.rows import tool_row, wrong_note

TOOL = "nccl-tests"
MEDIAN = "out_of_place.time"
TESTS = {
    "all_reduce_perf": "allreduce",
    "reduce_scatter_perf": "reduce_scatter",
    "all_gather_perf": "allgather",
    "broadcast_perf": "bcast",
    "reduce_perf": "reduce",
}
STARTING = re.compile(r"#\s*Collective test starting:\s*(\S+)")
VERSION = re.compile(r"#\s*nccl-tests version\s+(\S+)(.*)$")
THREADS = re.compile(r"#\s*nThread\s")
SETTING = re.compile(
    r"(nThread|nGpus|minBytes|maxBytes|step|warmup iters|agg iters|iters|validation|graph|"
    r"unalign):?\s+(\S+)"
)
RANK = re.compile(r"#\s+Rank\s+(\d+)\s.*?\bon\s+(\S+)\s+device\s+(\d+)")
NCCL_VERSION = re.compile(r"NCCL version (\S+)")
NCCL_ALGO = re.compile(r"NCCL INFO NCCL_ALGO set by environment to (\S+)")
TIME_COLUMNS = ("time", "cputime")
TRAILER = "# Avg bus bandwidth"


def parse(text: str, name: str, collective: str | None = None) -> ToolFile:
    """The file's rows; `collective` when the file names no test (nccl-tests < 2.16.7) and its
    file name names none either."""
    lines = text.splitlines()
    test = _test(lines, name, collective)
    ranks, hosts = _ranks(lines)
    if not ranks:
        raise ImportProblem(name, 1, "no '#  Rank r ... on <host>' lines: not nccl-tests output")
    header_line, columns = _columns(lines, name)
    settings = _settings(lines)
    iters = _int(settings, "iters")
    rows = [
        _row(line, number, name, TESTS[test], len(ranks), columns, iters)
        for number, line in enumerate(lines, 1)
        if number > header_line
        and line.strip()
        and not line.startswith("#")
        and not _log_line(line)
    ]
    if not any(line.startswith(TRAILER) for line in lines[header_line:]):
        raise ImportProblem(name, len(lines), f"truncated: ends before nccl-tests' {TRAILER!r}")
    return ToolFile(
        name=name,
        sha256="",
        format=NCCL_TESTS,
        tool=TOOL,
        version=_version(lines),
        command_line="",
        settings=settings | {"test": test, "ranks": len(ranks)},
        hosts=tuple(dict.fromkeys(hosts)),
        environment=_environment(lines),
        library="nccl",
        library_version=_nccl_version(lines),
        median_column=MEDIAN,
        rows=tuple(r for r in rows if isinstance(r, ToolRow)),
        notes=tuple(r for r in rows if isinstance(r, str)),
        warmup=settings.get("warmup iters")
        if isinstance(settings.get("warmup iters"), int)
        else None,
    )


def _test(lines: list[str], name: str, collective: str | None) -> str:
    """The test's program name: from its starting line, else `collective` (--collective), else
    the file's own name (not its folders')."""
    for line in lines:
        if found := STARTING.match(line):
            if found.group(1) not in TESTS:
                raise ImportProblem(
                    name,
                    lines.index(line) + 1,
                    f"{found.group(1)} is not a collective collsweep sweeps",
                )
            return found.group(1)
    if collective:
        return next(t for t, c in TESTS.items() if c == collective)
    base = PurePath(name).name
    named = [t for t in TESTS if t.removesuffix("_perf") in base]
    if named:  # reduce_perf is in reduce_scatter_perf's name too: take the longest
        return max(named, key=len)
    raise ImportProblem(
        name,
        1,
        "no '# Collective test starting' line (nccl-tests before 2.16.7) and the file name names "
        "no test: give the collective with --collective",
    )


def _log_line(line: str) -> bool:
    """NCCL's own log lines (NCCL_DEBUG), which may sit among nccl-tests' lines."""
    return line.startswith("NCCL version") or " NCCL INFO " in line or " NCCL WARN " in line


def _ranks(lines: list[str]) -> tuple[list[int], list[str]]:
    """The ranks listed (one line per GPU) and their hosts, in order."""
    found = [m for line in lines if (m := RANK.match(line))]
    return [int(m.group(1)) for m in found], [m.group(2) for m in found]


def _columns(lines: list[str], name: str) -> tuple[int, list[str]]:
    """The column header's line and its columns, each half's prefixed (`out_of_place.time`)."""
    for number, line in enumerate(lines, 1):
        words = line.lstrip("#").split()
        if words[:2] == ["size", "count"]:
            halves = [i for i, w in enumerate(words) if w in TIME_COLUMNS]
            if len(halves) != 2:
                raise ImportProblem(name, number, "a column header without two time columns")
            lead, first, second = (
                words[: halves[0]],
                words[halves[0] : halves[1]],
                words[halves[1] :],
            )
            stamp = ["timestamp"] if second[-1] == "timestamp" else []  # -S: a row's last
            second = second[: len(second) - len(stamp)]
            named = [f"out_of_place.{w}" for w in first] + [f"in_place.{w}" for w in second]
            return number + 1, lead + [n.replace(".cputime", ".time") for n in named] + stamp
    raise ImportProblem(name, len(lines), "no '#  size  count ...' column header: truncated")


def _row(
    line: str,
    number: int,
    name: str,
    collective: str,
    ranks: int,
    columns: list[str],
    iterations: int | None,
) -> ToolRow | str:
    """One size: every column as printed (N/A as None; -S's timestamp, date and time, as
    one)."""
    words = line.split()
    if columns[-1] == "timestamp" and len(words) == len(columns) + 1:
        words = [*words[:-2], " ".join(words[-2:])]
    if len(words) != len(columns):
        raise field_count(name, number, len(words), len(columns))
    values: dict = {}
    for column, word in zip(columns, words, strict=True):
        values[column] = _value(column, word, name, number)
    dtype = str(values.get("type", "float"))
    wrong = values.get("out_of_place.#wrong")
    if isinstance(wrong, int | float) and wrong > 0:
        return wrong_note(number, values["size"], wrong)
    return tool_row(
        line=number,
        collective=collective,
        ranks=ranks,
        tool_bytes=values["size"],
        per_rank=False,
        tool_dtype=NCCL_TYPES.get(dtype, dtype),
        tool_op=str(values.get("redop", "none")),
        seconds=microseconds(words[columns.index(MEDIAN)], name, number, "time")[1],
        iterations=iterations,
        columns=values,
    )


def _value(column: str, word: str, name: str, number: int) -> object:
    """One printed value: sizes and counts as ints, `N/A` as None, names as text."""
    if column in ("size", "count"):
        return integer(word, name, number, column)
    if column in ("type", "redop", "root", "timestamp") or word == "N/A":
        return None if word == "N/A" else word
    return to_number(word, name, number, column)


def _version(lines: list[str]) -> str:
    """The `# nccl-tests version` line, or the `# nThread` line's form for older versions."""
    for line in lines:
        if found := VERSION.match(line):
            return f"nccl-tests {found.group(1)}{found.group(2)}".strip()
    return "nccl-tests (before 2.17.4: no version line)"


def _settings(lines: list[str]) -> dict:
    """The `# nThread ...` line's settings: nThread, nGpus, warmup iters, iters and the rest."""
    for line in lines:
        if THREADS.match(line):
            pairs = SETTING.findall(line.lstrip("#"))
            return {key.strip(): _setting(value) for key, value in pairs}
    return {}


def _int(settings: dict, key: str) -> int | None:
    """A count of the `# nThread` line's settings, or None when it does not print it."""
    value = settings.get(key)
    return value if isinstance(value, int) else None


def _setting(value: str) -> object:
    try:
        return int(value)
    except ValueError:
        return value


def _environment(lines: list[str]) -> dict[str, str]:
    """NCCL_ALGO as NCCL's log shows it was set (every rank logs it; the first says it)."""
    for line in lines:
        if found := NCCL_ALGO.search(line):
            return {"NCCL_ALGO": found.group(1)}
    return {}


def _nccl_version(lines: list[str]) -> str:
    """NCCL's version: its own `NCCL version` line, else nccl-tests' `nccl-library=N`."""
    for line in lines:
        if found := NCCL_VERSION.match(line):
            return f"NCCL {found.group(1)}"
        if found := VERSION.match(line):
            library = re.search(r"nccl-library=(\d+)", found.group(2))
            if library:
                code = int(library.group(1))
                return f"NCCL {code // 10000}.{code // 100 % 100}.{code % 100}"
    return ""
