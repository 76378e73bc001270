"""`collsweep merge`: a batch job's shard stores folded into the main store as one run.

runners.store.merge does the folding in one transaction; here the shards of a job are found,
each merged run gets the spec of all its tasks (their group sizes together) and its true status
(complete only when every point of that spec is stored ok or skipped), and a task that failed
is reported with the end of its log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from runners import store
from runners.domain.errors import BadInput
from runners.domain.inputs import read_text_input
from runners.domain.outputs import is_duckdb_file
from runners.domain.status import RunStatus
from runners.domain.sweep import slurm
from runners.domain.sweep.plan import all_point_ids
from runners.domain.sweep.spec import MAX_SPEC_BYTES, SpecError, parse_spec
from runners.jobs.run_writer import recover_abandoned
from runners.jobs.sweep import final_status
from runners.store.run_reads import run_statuses

LOG_TAIL_LINES = 12


class MergeError(BadInput):
    """Shards that cannot be merged: one line, exit status 2, the main store unchanged."""


@dataclass(frozen=True)
class MergedRun:
    """A run after the merge: its status and why."""

    run_id: str
    status: str
    reason: str


def job_shards(main: Path, job: str) -> tuple[list[Path], list[Path]]:
    """A job's shard stores and task logs beside the main store."""
    root = main.parent / f"{main.name}{slurm.SHARDS_SUFFIX}"
    return sorted(root.glob(f"*/{job}_*.duckdb")), sorted(root.glob(f"*/{job}_*.out"))


def failed_task_logs(logs: list[Path]) -> list[str]:
    """The end of each task log whose shard did not finish its run (or does not exist)."""
    out = []
    for log in logs:
        shard = log.with_suffix(".duckdb")
        finished = False
        if shard.exists():
            try:
                statuses = run_statuses(shard)
                finished = bool(statuses) and statuses <= {RunStatus.COMPLETE}
            except store.StoreError:
                finished = False
        if not finished:
            tail = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
            out.append(f"task {log.stem}: " + "\n    ".join(["", *tail]))
    return out


def _merged_spec(shards: list[Path], run_id: str):
    """The spec of all the run's tasks together: the submitted spec beside the shards
    (spec.toml, written by collsweep submit) and each shard's own, their group sizes joined; so
    a task that never finished still counts its points as planned."""
    submitted = {s.parent / "spec.toml" for s in shards}
    texts = [
        read_text_input(path, "submitted spec", MAX_SPEC_BYTES)
        for path in sorted(submitted)
        if path.exists()
    ]
    for shard in shards:
        run = store.get_run(shard, run_id) if shard.exists() else None
        if run is not None:
            texts.append(run.get("spec_toml") or "")
    specs = []
    for text in texts:
        try:
            specs.append(parse_spec(text))
        except SpecError:
            continue
    if not specs:
        return None
    ranks = tuple(sorted({r for s in specs for r in s.ranks}))
    return replace(specs[0], ranks=ranks)


def shard_problem(main: Path, shard: Path) -> str | None:
    """Why `shard` cannot be merged into `main` (not there, not a regular file, not a DuckDB
    database, the main store itself), or None; checked before anything is opened."""
    if not shard.exists():
        return f"no shard store {shard}"
    if not shard.is_file():
        return f"shard {shard} is not a regular file"
    if not is_duckdb_file(shard):
        return f"shard {shard} is not a DuckDB database (not a collsweep store)"
    if main.exists() and shard.resolve() == main.resolve():
        return f"shard {shard} is the main store itself"
    return None


def merge(
    main: Path, shards: list[Path], say: Callable[[str], None] = print
) -> tuple[list[store.ShardResult], list[MergedRun]]:
    """Fold the shards into `main` and give each merged run its joint spec and true status.
    A shard whose sweep died (a cancelled task) has its journal replayed first, as a sweep
    does at start, so its finished points are merged; one still being written is left."""
    if not shards:
        raise MergeError("no shard stores to merge")
    for shard in shards:
        problem = shard_problem(main, shard)
        if problem:
            raise MergeError(problem)
    for shard in shards:
        recover_abandoned(shard, _said_of(shard.name, say))
    try:
        results = store.merge_shards(main, shards)
    except store.StoreError as exc:
        raise MergeError(str(exc)) from None
    merged = []
    for run_id in dict.fromkeys(r for result in results for r in result.runs):
        spec = _merged_spec(shards, run_id)
        if spec is None:
            continue
        statuses = {pid: state.status for pid, state in store.point_states(main, run_id).items()}
        status, reason = final_status(all_point_ids(spec, run_id), statuses, "", "", [])
        if status != RunStatus.COMPLETE:
            reason += f"; finish it with: collsweep sweep --resume {run_id} --store {main}"
        fields = {"spec_toml": spec.to_toml(), "status": status, "status_reason": reason}
        store.update_run(main, run_id, fields)
        merged.append(MergedRun(run_id, status, reason))
    return results, merged


def _said_of(shard: str, say: Callable[[str], None]) -> Callable[[str], None]:
    """`say`, each line headed by the shard it is about."""
    return lambda line: say(f"{shard}: {line}")
