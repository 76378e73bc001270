"""Folding shard stores (one per batch task, runners.domain.sweep.slurm) into a main store.

One transaction over the main store, each shard attached read-only. Idempotent: a point already
in the main store is kept unless the shard has it ok (or skipped) and the main store does not,
so merging twice adds nothing and a resumed task's points replace its failed ones. Samples
travel with their points; launch calibrations, the runs' ping-pong calibrations and probes are
added where missing. Analysis tables are not copied: the merged run is analysed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from runners.domain.names import run_id_problem
from runners.domain.status import PointStatus, RunStatus
from runners.domain.sweep.run_labels import labels_problem
from runners.store.schema import POINT_STATUSES, RUN_STATUSES, SCHEMA_VERSION
from runners.store.shape import foreign_value
from runners.store.store import writing
from runners.store.storefile import StoreError, check_checksums

KEPT = [PointStatus.OK, PointStatus.SKIPPED]  # a shard's point of these replaces one not


@dataclass
class ShardResult:
    """What one shard gave: its runs, the points added or replaced, or why it was left."""

    shard: Path
    runs: list[str] = field(default_factory=list)
    added: int = 0
    replaced: int = 0
    left: str = ""


def _version(con: duckdb.DuckDBPyConnection, alias: str) -> int:
    try:
        row = con.execute(f"SELECT max(version) FROM {alias}.schema_version").fetchone()
        return int(row[0]) if row else 0
    except duckdb.Error:
        return -1


MERGED_TABLES = ("runs", "points", "samples", "probes", "calibrations")


def _only_tables(con: duckdb.DuckDBPyConnection, alias: str, shard: Path) -> None:
    """The shard's tables that merge reads are plain tables, and it holds no views or macros:
    a view could read other files (read_text) with the main store's connection."""
    found = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [alias]
    ).fetchall()
    views = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE database_name = ? AND NOT internal", [alias]
    ).fetchall()
    macros = con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE database_name = ? "
        "AND function_type IN ('macro', 'table_macro')",
        [alias],
    ).fetchall()
    missing = sorted(set(MERGED_TABLES) - {t for (t,) in found})
    if views or macros or missing:
        why = (
            f"it defines {', '.join(n for (n,) in [*views, *macros])}"
            if views or macros
            else f"it lacks the table(s) {', '.join(missing)}"
        )
        raise StoreError(f"shard {shard} was not written by a sweep: {why}; nothing merged")


def _check(con: duckdb.DuckDBPyConnection, alias: str, shard: Path) -> None:
    _only_tables(con, alias, shard)
    version = _version(con, alias)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"shard {shard} uses results schema {version}, newer than this collsweep's "
            f"{SCHEMA_VERSION}: upgrade collsweep to merge it"
        )
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"shard {shard} uses results schema {version}; run `collsweep migrate --store "
            f"{shard}` first"
        )


def _check_values(con: duckdb.DuckDBPyConnection, alias: str, shard: Path, runs: list) -> None:
    """A shard's run ids, names, tags and statuses are what a sweep writes, or nothing is
    merged (its ids become file names: journals, locks, the resume command; its names are
    printed)."""
    labels = dict(
        con.execute(f"SELECT run_id, [name, CAST(tags AS VARCHAR)] FROM {alias}.runs").fetchall()
    )
    for run_id, status in runs:
        problem = run_id_problem(run_id) or labels_problem(*labels.get(run_id, [None, None]))
        if problem or status not in RUN_STATUSES:
            why = problem or f"run status {status!r} is not one of {', '.join(RUN_STATUSES)}"
            raise StoreError(f"shard {shard} was not written by a sweep: {why}; nothing merged")
    foreign = foreign_value(con, alias, ("runs", "points", "samples"))
    if foreign:
        raise StoreError(
            f"shard {shard} was not written by a sweep: {foreign} holds a value no sweep "
            "writes (not finite, negative or too long); nothing merged"
        )
    found = con.execute(f"SELECT DISTINCT status FROM {alias}.points").fetchall()
    strange = sorted(str(s) for (s,) in found if s not in POINT_STATUSES)
    if strange:
        raise StoreError(
            f"shard {shard} was not written by a sweep: point status {', '.join(strange)} is "
            f"not one of {', '.join(POINT_STATUSES)}; nothing merged"
        )


OWNERSHIP_SQL = """
SELECT 'point ' || s.point_id || ' of run ' || s.run_id || ' belongs to run ' || m.run_id
       || ' in the store'
FROM {alias}.points s JOIN points m USING (point_id) WHERE m.run_id <> s.run_id
UNION ALL
SELECT 'point ' || point_id || ' names run ' || run_id || ', which the shard does not hold'
FROM {alias}.points WHERE run_id NOT IN (SELECT run_id FROM {alias}.runs)
UNION ALL
SELECT 'samples of point ' || a.point_id || ' name run ' || a.run_id || ', not its own'
FROM {alias}.samples a LEFT JOIN {alias}.points p USING (point_id)
WHERE p.run_id IS DISTINCT FROM a.run_id
LIMIT 1
"""


def _check_ownership(con: duckdb.DuckDBPyConnection, alias: str, shard: Path) -> None:
    """A shard may change only its own runs: every point and sample names one of the shard's
    runs, and no point id is another run's in the main store; else nothing is merged."""
    found = con.execute(OWNERSHIP_SQL.format(alias=alias)).fetchone()
    if found:
        raise StoreError(f"shard {shard} would change another run: {found[0]}; nothing merged")


def _merge_run(
    con: duckdb.DuckDBPyConnection, alias: str, run_id: str, result: ShardResult
) -> None:
    """The shard's points of one run into the main store (the run row first, if new)."""
    con.execute(
        f"INSERT INTO runs BY NAME SELECT * FROM {alias}.runs WHERE run_id = $r "
        "AND run_id NOT IN (SELECT run_id FROM runs)",
        {"r": run_id},
    )
    better = [
        r[0]
        for r in con.execute(
            f"SELECT s.point_id FROM {alias}.points s JOIN points m USING (point_id) "
            "WHERE s.run_id = $r AND m.run_id = $r AND list_contains($kept, s.status) "
            "AND NOT list_contains($kept, m.status)",
            {"r": run_id, "kept": KEPT},
        ).fetchall()
    ]
    if better:
        con.execute("DELETE FROM samples WHERE list_contains($ids, point_id)", {"ids": better})
        con.execute("DELETE FROM points WHERE list_contains($ids, point_id)", {"ids": better})
    new = [
        r[0]
        for r in con.execute(
            f"SELECT point_id FROM {alias}.points WHERE run_id = $r "
            "AND point_id NOT IN (SELECT point_id FROM points)",
            {"r": run_id},
        ).fetchall()
    ]
    params = {"ids": new}
    con.execute(
        f"INSERT INTO points BY NAME SELECT * FROM {alias}.points "
        "WHERE list_contains($ids, point_id)",
        params,
    )
    con.execute(
        f"INSERT INTO samples BY NAME SELECT * FROM {alias}.samples "
        "WHERE list_contains($ids, point_id)",
        params,
    )
    con.execute(
        f"INSERT INTO probes BY NAME SELECT * FROM {alias}.probes s "
        "WHERE s.run_id = $r AND NOT EXISTS (SELECT 1 FROM probes p "
        "WHERE p.run_id = s.run_id AND p.job = s.job AND p.launch = s.launch "
        "AND p.moment = s.moment)",
        {"r": run_id},
    )
    result.runs.append(run_id)
    result.added += len(new) - len(better)
    result.replaced += len(better)


def merge_shards(main: Path | str, shards: Sequence[Path]) -> list[ShardResult]:
    """Fold the shards' finished runs into `main` in one transaction (see the module
    docstring); a shard whose run is still `running` is left alone, said in its result."""
    results = []
    with writing(main) as con:
        check_checksums(con, Path(main))  # never add runs to a damaged store
        for index, shard in enumerate(shards):
            alias = f"shard{index}"
            quoted = str(shard).replace("'", "''")
            con.execute(f"ATTACH '{quoted}' AS {alias} (READ_ONLY)")
            _check(con, alias, shard)
            result = ShardResult(Path(shard))
            runs = con.execute(f"SELECT run_id, status FROM {alias}.runs").fetchall()
            _check_values(con, alias, shard, runs)
            _check_ownership(con, alias, shard)
            running = [r for r, status in runs if status == RunStatus.RUNNING]
            if running:
                result.left = f"run {', '.join(running)} is still being written (running)"
            else:
                con.execute(
                    f"INSERT INTO calibrations BY NAME SELECT * FROM {alias}.calibrations "
                    "WHERE calibration_id NOT IN (SELECT calibration_id FROM calibrations)"
                )
                for run_id, _ in runs:
                    _merge_run(con, alias, run_id, result)
            con.execute(f"DETACH {alias}")
            results.append(result)
    return results
