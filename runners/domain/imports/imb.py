"""IMB-MPI1 output (Intel MPI Benchmarks) as a ToolFile (pure: handed the text).

The layout (src_c/IMB_output.c, IMB_init.c of intel/mpi-benchmarks): a `#`-boxed header with the
version line (`Intel(R) MPI Benchmarks 2021.11, MPI-1 part`), `# Calling sequence was:` and the
command on the next `#` line, `# key : value` settings (MPI_Datatype, MPI_Datatype for
reductions, MPI_Op); then per benchmark and group size a block `# Benchmarking <Name>`,
`# #processes = P`, the column header `#bytes #repetitions t_min[usec] t_max[usec]
t_avg[usec]` and one row per size; it ends with `# All processes entering MPI_Finalize`.
Intel MPI run with I_MPI_DEBUG prints `[0] MPI startup(): ...` lines first: the library's
version, the ranks' hosts, and the I_MPI_* settings in force.

PingPong (`#bytes #repetitions t[usec] Mbytes/sec`: t is half the round trip, the one-way time)
and Reduce_local (`t_avg[usec]` of MPI_Reduce_local) are no collectives: their rows become the
run's calibration (CalibrationRows; alpha and beta from PingPong, gamma from Reduce_local), so
imported timings can be priced by collsweep's models (docs/guide/imports.md).

`#bytes` is the whole vector for Allreduce, Bcast and Reduce, and one rank's block for
Allgather and Reduce_scatter_block (IMB_allgather.c sends size bytes from every rank;
IMB_reduce_scatter_block.c receives size bytes on every rank), so those are times p. The
median is `t_avg[usec]`: the mean over ranks of each rank's mean time per call, the figure
OSU and nccl-tests report too; t_min and t_max (over ranks) are kept with the row.
"""

from __future__ import annotations

import re

from runners.domain.collectives.collective import COLLECTIVES
from runners.domain.imports.datatypes import MPI_OPS, MPI_TYPES
from runners.domain.imports.records import (
    IMB,
    CalibrationRows,
    ImportProblem,
    ToolFile,
    ToolRow,
    field_count,
    integer,
    microseconds,
)
from runners.domain.imports.rows import tool_row

TOOL = "IMB-MPI1"
MEDIAN = "t_avg[usec]"
END = "# All processes entering MPI_Finalize"
TESTS = {
    "Allreduce": "allreduce",
    "Reduce_scatter_block": "reduce_scatter",
    "Allgather": "allgather",
    "Bcast": "bcast",
    "Reduce": "reduce",
}
VERSION = re.compile(r"#\s*(Intel\(R\) MPI Benchmarks.*?)\s*$")
SETTING = re.compile(r"#\s*([A-Za-z_][\w ]*?)\s*:\s*(.*?)\s*$")
STARTUP = re.compile(r"\[\d+\] MPI startup\(\):\s*(.*?)\s*$")
INTEL = re.compile(r"Intel\(R\) MPI Library, Version (\S+)")
KNOB = re.compile(r"(I_MPI_\w+)=(.*)")
PINNING = re.compile(r"(\d+)\s+(\d+)\s+(\S+)\s+\{")
CALIBRATING = ("PingPong", "Reduce_local")  # their rows become the run's calibration
PINGPONG_TIME = "t[usec]"
BENCHMARK = re.compile(r"#\s*Benchmarking\s+(\S+)")
PROCESSES = re.compile(r"#\s*#processes\s*=\s*(\d+)")


def parse(text: str, name: str) -> ToolFile:
    """The file's rows of the collectives collsweep knows, its settings and provenance."""
    lines = text.splitlines()
    header = _header(lines, name)
    rows, notes, calibrating = _blocks(lines, name, header)
    if END not in (line.rstrip() for line in lines):
        raise ImportProblem(name, len(lines), f"truncated: ends before IMB's closing line {END!r}")
    if not rows:
        raise ImportProblem(name, len(lines), f"no rows of {', '.join(TESTS)}: nothing to import")
    return ToolFile(
        name=name,
        sha256="",
        format=IMB,
        tool=TOOL,
        version=header["version"],
        command_line=header["command_line"],
        settings=header["settings"],
        hosts=tuple(header["hosts"]),
        environment=header["environment"],
        library="impi" if header["library_version"] else "",
        library_version=header["library_version"],
        median_column=MEDIAN,
        rows=tuple(rows),
        notes=tuple(notes),
        calibration=_calibration(calibrating, header["settings"]),
    )


def _header(lines: list[str], name: str) -> dict:
    """Version, command line, settings, and Intel MPI's startup lines (library, hosts, knobs)."""
    found: dict = {"version": "", "command_line": "", "settings": {}, "hosts": []}
    found |= {"environment": {}, "library_version": ""}
    for number, line in enumerate(lines, 1):
        if BENCHMARK.match(line):
            break
        if startup := STARTUP.match(line):
            _startup(startup.group(1), found)
        elif not found["version"] and (version := VERSION.match(line)):
            found["version"] = version.group(1)
        elif line.startswith("# Calling sequence was"):
            found["command_line"] = _command_after(lines, number)
        elif setting := SETTING.match(line):
            found["settings"][setting.group(1)] = setting.group(2)
    if not found["version"]:
        raise ImportProblem(name, 1, "no 'Intel(R) MPI Benchmarks' version line: not IMB output")
    return found


def _startup(text: str, found: dict) -> None:
    """One `[0] MPI startup():` line of Intel MPI: its version, a pinning row, a knob."""
    if library := INTEL.search(text):
        found["library_version"] = f"Intel MPI {library.group(1)}"
    elif knob := KNOB.fullmatch(text):
        found["environment"][knob.group(1)] = knob.group(2)
    elif (pin := PINNING.match(text)) and pin.group(3) not in found["hosts"]:
        found["hosts"].append(pin.group(3))


def _command_after(lines: list[str], number: int) -> str:
    """The first non-empty `#` line after `# Calling sequence was:` (line `number`)."""
    for line in lines[number:]:
        words = line.lstrip("#").strip()
        if words:
            return words
    return ""


def _blocks(
    lines: list[str], name: str, header: dict
) -> tuple[list[ToolRow], list[str], dict[str, list]]:
    """Every benchmark block's rows (collectives collsweep knows), notes of what is left out,
    and the rows of the benchmarks that calibrate (CALIBRATING) with their group size."""
    rows: list[ToolRow] = []
    notes: list[str] = []
    calibrating: dict[str, list] = {}
    benchmark, ranks = "", 0
    columns: list[str] = []
    for number, line in enumerate(lines, 1):
        if found := BENCHMARK.match(line):
            benchmark, ranks, columns = found.group(1), 0, []
            if benchmark in CALIBRATING:
                notes.append(f"line {number}: {benchmark} calibrates the run's models")
            elif benchmark not in TESTS:
                notes.append(
                    f"line {number}: {benchmark} left out: not a collective collsweep sweeps"
                )
        elif found := PROCESSES.match(line):
            ranks = int(found.group(1))
        elif line.strip().startswith("#bytes"):
            columns = line.split()
        elif benchmark in CALIBRATING and columns and line.strip() and not line.startswith("#"):
            calibrating.setdefault(benchmark, []).append(
                (ranks, _timings(line, number, name, columns))
            )
        elif benchmark in TESTS and columns and line.strip() and not line.startswith("#"):
            row = _row(line, number, name, benchmark, ranks, columns, header["settings"])
            if isinstance(row, str):
                notes.append(row)
            else:
                rows.append(row)
        elif not line.strip():
            columns = []
    return rows, notes, calibrating


def _timings(line: str, number: int, name: str, columns: list[str]) -> dict[str, float]:
    """One row of a calibrating benchmark: its bytes, repetitions and times (seconds)."""
    words = line.split()
    if len(words) != len(columns):
        raise field_count(name, number, len(words), len(columns))
    values: dict[str, float] = {"#bytes": integer(words[0], name, number, "#bytes")}
    values["#repetitions"] = integer(words[1], name, number, "#repetitions")
    for column, word in zip(columns[2:], words[2:], strict=True):
        if column.endswith("[usec]"):
            values[column] = microseconds(word, name, number, column)[0] / 1e6
    return values


def _calibration(found: dict[str, list], settings: dict) -> CalibrationRows | None:
    """The PingPong rows (one-way seconds) and Reduce_local's (t_avg) of the file, or None
    without a PingPong between two ranks (Reduce_local alone gives no alpha or beta)."""
    pingpong = [
        (int(v["#bytes"]), v[PINGPONG_TIME], int(v["#repetitions"]))
        for ranks, v in found.get("PingPong", [])
        if ranks == 2 and v["#bytes"] > 0 and PINGPONG_TIME in v
    ]
    if len(pingpong) < 2:
        return None
    datatype = settings.get("MPI_Datatype for reductions", "")
    dtype = MPI_TYPES.get(datatype, datatype.lower() or "unknown")
    reductions = [
        (dtype, _op(settings.get("MPI_Op", "")), int(v["#bytes"]), v[MEDIAN])
        for _, v in found.get("Reduce_local", [])
        if v["#bytes"] > 0 and MEDIAN in v
    ]
    return CalibrationRows(2, tuple(pingpong), tuple(reductions))


def _row(
    line: str,
    number: int,
    name: str,
    benchmark: str,
    ranks: int,
    columns: list[str],
    settings: dict,
) -> ToolRow | str:
    """One size of a collective's block."""
    words = line.split()
    if len(words) != len(columns) or MEDIAN not in columns:
        raise field_count(name, number, len(words), len(columns))
    if ranks < 1:
        raise ImportProblem(name, number, "a row before its block's '# #processes = P' line")
    values: dict = {"#bytes": integer(words[0], name, number, "#bytes")}
    values["#repetitions"] = integer(words[1], name, number, "#repetitions")
    for column, word in zip(columns[2:], words[2:], strict=True):
        values[column] = microseconds(word, name, number, column)[0]
    collective = TESTS[benchmark]
    reduces = COLLECTIVES[collective].reduces
    datatype = settings.get("MPI_Datatype for reductions" if reduces else "MPI_Datatype", "")
    return tool_row(
        line=number,
        collective=collective,
        ranks=ranks,
        tool_bytes=values["#bytes"],
        per_rank=True,
        tool_dtype=MPI_TYPES.get(datatype, datatype.lower() or "unknown"),
        tool_op=_op(settings.get("MPI_Op", "")),
        seconds=values[MEDIAN] / 1e6,
        iterations=values["#repetitions"],
        columns=values,
    )


def _op(text: str) -> str:
    """IMB's `MPI_Op` setting in collsweep's words (MPI_SUM, IMB's default, when not printed)."""
    return MPI_OPS.get(text, text.lower()) if text else "sum"
