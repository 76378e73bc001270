"""OSU micro-benchmarks' blocking collective latency output as a ToolFile (pure).

The layout (c/util/osu_util_mpi.c `print_preamble`, `print_only_header`, `print_stats` of OMB
7.4; util/osu_util.c of 5.x): an empty line, the title `# OSU MPI[-CUDA] <Name> Latency Test
v<version>`, from 7.1 `# Datatype: MPI_CHAR.` before each datatype's block, the column header
`# Size  Avg Latency(us)` (with -f also `Min Latency(us)  Max Latency(us)  Iterations`, with -c
`Validation`, with -z tail latencies) and one row per size. OSU prints no trailer, no number of
ranks, no host names and no library: the ranks come from `--ranks`, the library from
`--library`. Without a datatype line (before 7.1) allreduce, reduce and reduce_scatter reduce
MPI_FLOAT and allgather and bcast move MPI_CHAR, the tools' defaults then.

`Size` is the whole vector except for allgather, where it is one rank's block (times p). The
median is `Avg Latency(us)`: the mean over ranks of each rank's mean time per call; min, max
(over ranks, with -f) and iterations are kept with the row.
"""

from __future__ import annotations

import re

from runners.domain.imports.datatypes import MPI_TYPES
from runners.domain.imports.records import (
    OSU,
    ImportProblem,
    ToolFile,
    ToolRow,
    field_count,
    integer,
    microseconds,
)
from runners.domain.imports.rows import tool_row

TOOL = "OSU micro-benchmarks"
MEDIAN = "Avg Latency(us)"
TITLE = re.compile(r"#\s*OSU MPI(?:-\w+)? (.+?) Latency Test v(\S+)\s*$")
DATATYPE = re.compile(r"#\s*Datatype:\s*(\S+?)\.?\s*$")
TESTS = {
    "Allreduce": "allreduce",
    "Reduce_scatter": "reduce_scatter",
    "Allgather": "allgather",
    "Broadcast": "bcast",
    "Bcast": "bcast",
    "Reduce": "reduce",
}
OLD_DEFAULTS = {"allgather": "MPI_CHAR", "bcast": "MPI_CHAR"}  # the others: MPI_FLOAT


def parse(text: str, name: str, ranks: int | None) -> ToolFile:
    """The file's rows; `ranks` as the user gives it (OSU prints none)."""
    lines = text.splitlines()
    title_line, collective, version = _title(lines, name)
    if not ranks:
        raise ImportProblem(
            name, title_line, "OSU prints no number of ranks: give it with --ranks P"
        )
    rows, settings = _rows(lines, name, collective, ranks)
    if text and not text.endswith("\n") and lines[-1].strip() and not lines[-1].startswith("#"):
        raise ImportProblem(name, len(lines), "truncated: the last row has no line end")
    return ToolFile(
        name=name,
        sha256="",
        format=OSU,
        tool=TOOL,
        version=lines[title_line - 1].lstrip("# ").strip(),
        command_line="",
        settings=settings | {"ranks": ranks, "osu_version": version},
        hosts=(),
        environment={},
        library="",
        library_version="",
        median_column=MEDIAN,
        rows=tuple(r for r in rows if isinstance(r, ToolRow)),
        notes=tuple(r for r in rows if isinstance(r, str)),
    )


def _title(lines: list[str], name: str) -> tuple[int, str, str]:
    """(line, collective, version) of the `# OSU MPI <Name> Latency Test vX` title."""
    for number, line in enumerate(lines, 1):
        if found := TITLE.match(line):
            test = found.group(1)
            if test not in TESTS:
                raise ImportProblem(
                    name, number, f"OSU's {test} Latency Test is not a collective collsweep sweeps"
                )
            return number, TESTS[test], found.group(2)
    raise ImportProblem(name, 1, "no '# OSU MPI ... Latency Test' title: not OSU output")


def _rows(
    lines: list[str], name: str, collective: str, ranks: int
) -> tuple[list[ToolRow | str], dict]:
    """Every datatype block's rows (a note for each row left out), and the datatypes seen."""
    rows: list[ToolRow | str] = []
    datatype = OLD_DEFAULTS.get(collective, "MPI_FLOAT")
    columns: list[str] = []
    seen: list[str] = []
    for number, line in enumerate(lines, 1):
        if found := DATATYPE.match(line):
            datatype = found.group(1)
        elif line.startswith("# Size"):
            columns = [c.strip() for c in re.split(r"\s{2,}", line.lstrip("# ").strip())]
            seen.append(datatype)
        elif line.strip() and not line.startswith("#"):
            if not columns:
                raise ImportProblem(name, number, "a row before the '# Size' column header")
            rows.append(_row(line, number, name, collective, ranks, columns, datatype))
    return rows, {"datatypes": seen, "columns": columns}


def _row(
    line: str,
    number: int,
    name: str,
    collective: str,
    ranks: int,
    columns: list[str],
    datatype: str,
) -> ToolRow | str:
    """One size: its latencies in microseconds, iterations and validation as printed."""
    words = line.split()
    if len(words) != len(columns):
        raise field_count(name, number, len(words), len(columns))
    values: dict = {"Size": integer(words[0], name, number, "Size")}
    for column, word in zip(columns[1:], words[1:], strict=True):
        if column == "Iterations":
            values[column] = integer(word, name, number, column)
        elif column == "Validation":
            values[column] = word
        else:
            values[column] = microseconds(word, name, number, column)[0]
    return tool_row(
        line=number,
        collective=collective,
        ranks=ranks,
        tool_bytes=values["Size"],
        per_rank=collective == "allgather",
        tool_dtype=MPI_TYPES.get(datatype, datatype.lower()),
        tool_op="sum",
        seconds=values[MEDIAN] / 1e6,
        iterations=values.get("Iterations"),
        columns=values,
    )
