"""`collsweep import`: other tools' result files stored as one run, all or nothing.

Every file is read and parsed before anything is written (runners.domain.imports); the run, its
points and samples are then written into a staging store beside nothing else and folded into
the main store by `store.merge_shards`, one transaction over the main store: a failure leaves
the main store as it was. The command analyses the run afterwards where collsweep's models can
price its points (catalog algorithms, datatypes and ops). No MPI here.
"""

from __future__ import annotations

import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runners import store
from runners.domain.errors import BadInput
from runners.domain.imports import ImportProblem, ToolFile, read_tool_file
from runners.domain.imports.points import ImportPlan, plan_import, run_words
from runners.domain.imports.records import IMPORTED_TABLE
from runners.domain.inputs import BadInputFile, read_input
from runners.domain.libraries import LIBRARIES
from runners.domain.model.calibration import calibration_row
from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.domain.status import RunStatus
from runners.domain.sweep.spec_keys import toml_value
from runners.jobs.sweep import code_version, fresh_run_id
from runners.process.faults import hold_at
from runners.process.reaper import reaped

MAX_FILE_BYTES = 256 * 2**20  # tools print kilobytes; a larger file is something else


@dataclass(frozen=True)
class ImportRequest:
    """What `collsweep import` was asked: the files and what they may not say themselves."""

    paths: Sequence[Path]
    fmt: str | None = None
    library: str | None = None
    ranks: int | None = None
    collective: str | None = None
    command_line: str = ""


@dataclass(frozen=True)
class ImportResult:
    """What was stored: the run, its points, and whether it was analysed (why not, if not)."""

    run_id: str
    tool: str
    files: int
    launches: int
    points: int
    notes: list[str]
    not_analysed: str


def read_files(request: ImportRequest) -> list[ToolFile]:
    """Every file parsed, or ImportProblem for the first one that cannot be (nothing written)."""
    files = []
    for path in request.paths:
        data = _contents(Path(path))
        files.append(
            read_tool_file(
                data,
                str(path),
                request.fmt,
                ranks=request.ranks,
                collective=request.collective,
            )
        )
    seen: dict[str, str] = {}
    for parsed in files:  # one output counted twice would pose as two launches
        if parsed.sha256 in seen:
            raise BadInput(
                f"{parsed.name} and {seen[parsed.sha256]} are the same output (one SHA-256): "
                "import each launch's file once"
            )
        seen[parsed.sha256] = parsed.name
    tools = {f.tool for f in files}
    if len(tools) > 1:
        raise BadInput(
            f"the files come from {', '.join(sorted(tools))}: import each tool's files apart"
        )
    return files


def _contents(path: Path) -> bytes:
    """A file's bytes; ImportProblem (line 0: the file as a whole) for one that is not a regular
    file (a FIFO would block), is larger than any tool's output, or cannot be read."""
    try:
        return read_input(path, "the file", MAX_FILE_BYTES)
    except BadInputFile as exc:
        raise ImportProblem(str(path), 0, exc.reason) from None


def import_files(path: Path, request: ImportRequest) -> ImportResult:
    """Store the request's files as one run (module docstring); `not_analysed` says why
    collsweep's analysis cannot take it, if it cannot."""
    files = read_files(request)
    run_id = fresh_run_id(path)
    plan = plan_import(files, run_id, request.library)
    run = run_row(files, plan, run_id, request.command_line)
    calibration = imported_calibration(files, run)
    if calibration is not None:
        run["calibration_id"] = calibration["calibration_id"]
    _store(path, run, plan, calibration)
    return ImportResult(
        run_id,
        files[0].tool,
        len(files),
        plan.launches,
        len(plan.points),
        plan.notes,
        plan.not_analysed,
    )


def imported_calibration(files: Sequence[ToolFile], run: dict[str, Any]) -> dict | None:
    """The run's calibration fitted from the first file that measured one (IMB's PingPong, and
    Reduce_local for gamma), or None: id `imported:<run_id>`, source `imported:<tool>`, the
    host the file names, so no sweep of this machine ever takes it for its own."""
    found = next((f for f in files if f.calibration is not None), None)
    if found is None or found.calibration is None:
        return None
    worker = found.calibration.worker(run["mpi_library"], found.settings)
    host = run["host"] or "imported"
    row = calibration_row(worker, run["started_at"], {"imported": found.source()}, host=host)
    return row | {
        "calibration_id": str(CalibrationId(CalibrationKind.IMPORTED, run["run_id"])),
        "source": str(CalibrationId.imported_source(found.tool)),
    }


def _store(
    path: Path, run: dict[str, Any], plan: ImportPlan, calibration: dict | None = None
) -> None:
    """The run with its points and samples (and calibration) into the main store in one
    transaction."""
    scratch = tempfile.TemporaryDirectory(prefix="collsweep-import-", ignore_cleanup_errors=True)
    with scratch as folder, reaped(Path(folder)):  # gone however the command ends
        staging = Path(folder) / "staging.duckdb"
        if calibration is not None:
            store.add_calibration(staging, calibration)
        store.create_run(staging, run)
        store.add_points(staging, plan.points, plan.samples)
        hold_at("import-staged")
        results = store.merge_shards(path, [staging])
    if results[0].left:
        raise BadInput(f"the import was not stored: {results[0].left}")


def run_row(
    files: Sequence[ToolFile], plan: ImportPlan, run_id: str, command_line: str
) -> dict[str, Any]:
    """The runs row of an import: the tool is its source, each file's provenance in
    `environment.imported`, a short TOML of the same in `spec_toml`."""
    now = datetime.now(UTC).replace(tzinfo=None)
    tool = files[0].tool
    versions = {lib: _version(lib, v) for lib, v in plan.libraries.items()}
    first = next(iter(versions))
    words = run_words(len(files), plan.launches, tool)
    return {
        "run_id": run_id,
        "status": RunStatus.COMPLETE,
        "status_reason": words,
        "started_at": now,
        "finished_at": now,
        "spec_toml": spec_text(files, plan),
        "command_line": command_line,
        "host": ", ".join(dict.fromkeys(h for f in files for h in f.hosts)),
        "mpi_library": versions[first],
        "mpi_version": versions[first],
        "libraries": {k: {"mpi_library": v, "mpi_version": v} for k, v in versions.items()},
        "code_version": code_version(),
        "environment": {
            "jobs": plan.jobs,
            "imported": {
                "tool": tool,
                "launches": words,
                "not_analysed": plan.not_analysed,
                "notes": plan.notes,
                "files": [f.source() for f in files],
            },
        },
    }


def _version(library: str, found: str) -> str:
    """A library's version as the file says it, else its name and that the file does not."""
    title = LIBRARIES[library].title if library in LIBRARIES else library.upper()
    return found or f"{title} (version not in the file)"


def spec_text(files: Sequence[ToolFile], plan: ImportPlan) -> str:
    """A TOML record of the import (not a sweep spec: nothing was swept)."""
    lines = [
        "# imported, not swept: each file is one launch of the tool",
        f"[{IMPORTED_TABLE}]",
        f"tool = {toml_value(files[0].tool)}",
        f"format = {toml_value(files[0].format)}",
        f"libraries = [{', '.join(toml_value(lib) for lib in plan.libraries)}]",
        f"files = [{', '.join(toml_value(f.name) for f in files)}]",
        f"sha256 = [{', '.join(toml_value(f.sha256) for f in files)}]",
        f"median = {toml_value(files[0].median_column)}",
    ]
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # a name with characters TOML cannot hold would fail here, not later
    return text
