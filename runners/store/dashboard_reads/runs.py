"""Data of the Runs and Compare pages: the store overview, runs, provenance, grids, comparisons."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass

import pandas as pd

from runners.domain.model.calibration_id import LIBRARY_SUFFIX_PATTERN, CalibrationKind
from runners.domain.status import PointStatus
from runners.store import reports, run_compare
from runners.store.dashboard_reads.base import StorePath, _df, _open
from runners.store.run_compare import RunComparison

# --- the store as a whole ----------------------------------------------------------------------


@dataclass(frozen=True)
class Overview:
    """How much the store holds."""

    schema_version: int
    runs: int
    points: int
    samples: int

    @property
    def empty(self) -> bool:
        """True when no run has been recorded yet."""
        return self.runs == 0


def overview(path: StorePath) -> Overview:
    """Schema version and row counts of runs, points and samples."""
    with _open(path) as con:
        row = con.execute(
            "SELECT (SELECT max(version) FROM schema_version), (SELECT count(*) FROM runs), "
            "(SELECT count(*) FROM points), (SELECT count(*) FROM samples)"
        ).fetchone()
    return Overview(*(int(v or 0) for v in row or (0, 0, 0, 0)))


def runs_table(path: StorePath) -> pd.DataFrame:
    """One row per run, newest first: name, tags (comma-separated), status, host, library,
    grid, counts and provenance (runners.store.reports.runs, the listing `collsweep runs`
    prints too); group sizes, datatypes and ops as ", "-separated text (missing where a run
    has no point, as SQL NULL reads)."""
    with _open(path) as con:
        runs = reports.runs(con)
    for column in ("ranks", "dtypes", "ops"):
        runs[column] = [", ".join(map(str, values)) or None for values in runs[column]]
    return runs


def run_details(path: StorePath, run_ids: list[str]) -> pd.DataFrame:
    """The full runs rows (every provenance column) of ``run_ids``, in that order."""
    with _open(path) as con:
        frame = _df(con, "SELECT * FROM runs WHERE list_contains($ids, run_id)", {"ids": run_ids})
    order = {run_id: i for i, run_id in enumerate(run_ids)}
    return frame.sort_values("run_id", key=lambda s: s.map(order)).reset_index(drop=True)


def provenance_diff(path: StorePath, run_a: str, run_b: str) -> pd.DataFrame:
    """The provenance that differs between two runs, key by key: the spec's keys (`spec.x`),
    the environment's knobs (`environment.jobs...`), load, versions. Columns field, run_a,
    run_b; a key one run lacks shows as an empty value."""
    details = run_details(path, [run_a, run_b])
    if len(details) < 2:
        return pd.DataFrame(columns=["field", run_a, run_b])
    a, b = (flat_provenance(details.iloc[i].to_dict()) for i in (0, 1))
    rows = [
        {"field": key, run_a: a.get(key, ""), run_b: b.get(key, "")}
        for key in sorted(a.keys() | b.keys())
        if a.get(key) != b.get(key)
    ]
    return pd.DataFrame(rows, columns=["field", run_a, run_b])


_NOT_PROVENANCE = {"run_id", "started_at", "finished_at", "status", "status_reason"}


def flat_provenance(run: dict) -> dict[str, str]:
    """A runs row as one flat mapping of dotted keys to text: the spec's TOML parsed into
    `spec.<key>`, JSON columns into `<column>.<key>...`; lists shown as JSON."""
    flat: dict[str, str] = {}
    for column, value in run.items():
        if column in _NOT_PROVENANCE or value is None or value != value:
            continue
        if column == "spec_toml":
            _flatten("spec", tomllib.loads(value), flat)
        elif isinstance(value, str) and value[:1] in "{[":
            try:
                _flatten(column, json.loads(value), flat)
            except json.JSONDecodeError:
                flat[column] = value
        else:
            flat[column] = str(value)
    return flat


def _flatten(prefix: str, value: object, into: dict[str, str]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}", inner, into)
    else:
        into[prefix] = json.dumps(value) if isinstance(value, list | tuple) else str(value)


def no_overlap_reason(path: StorePath, run_a: str, run_b: str) -> str:
    """Why two runs share no point, in words (runners.store.run_compare.no_overlap_reason)."""
    with _open(path) as con:
        return run_compare.no_overlap_reason(con, run_a, run_b)


def machine_probes(path: StorePath, run_id: str) -> pd.DataFrame:
    """The run's machine-state probes in time order: job, launch, moment, measured_at,
    pingpong_us (8 B one-way) and copy_gbps (4 MiB copy)."""
    with _open(path) as con:
        return _df(
            con,
            "SELECT job, launch, moment, measured_at, pingpong_s * 1e6 AS pingpong_us, copy_gbps "
            "FROM probes WHERE run_id = $run ORDER BY measured_at, job",
            {"run": run_id},
        )


def run_grid(path: StorePath, run_id: str) -> pd.DataFrame:
    """The run's (algorithm, ranks, dtype, op) combinations with point counts, for the pickers."""
    with _open(path) as con:
        return _df(
            con,
            "SELECT algorithm, ranks, dtype, op, "
            "coalesce(collective, 'allreduce') AS collective, count(*) AS points, "
            "count(*) FILTER (WHERE status = $ok) AS ok "
            "FROM points WHERE run_id = $run GROUP BY ALL ORDER BY ranks, dtype, op, algorithm",
            {"run": run_id, "ok": PointStatus.OK},
        )


def prediction_calibrations(path: StorePath, run_id: str) -> list[str]:
    """Calibrations with predictions for the run: its launches' own first, then the one made
    before it, then newest first. Other libraries' own (`<id>@openmpi`, `<id>@impi`) come
    with their MPICH namesake: choosing `launches:<run>` draws each library's points with its
    own launches'."""
    with _open(path) as con:
        frame = _df(
            con,
            "WITH c AS (SELECT regexp_replace(p.calibration_id, $suffixes, '') AS cal, "
            "k.created_at, p.calibration_id = r.calibration_id AS own "
            "FROM predictions p LEFT JOIN calibrations k USING (calibration_id) "
            "LEFT JOIN runs r ON r.run_id = p.run_id WHERE p.run_id = $run) "
            "SELECT cal AS calibration_id FROM c GROUP BY cal "
            "ORDER BY starts_with(cal, $launches) DESC, bool_or(own) DESC NULLS LAST, "
            "max(created_at) DESC NULLS LAST, cal",
            {
                "run": run_id,
                "suffixes": LIBRARY_SUFFIX_PATTERN,
                "launches": CalibrationKind.LAUNCHES.prefix,
            },
        )
    return frame["calibration_id"].tolist()


# --- comparing runs ----------------------------------------------------------------------------


def time_span_note(path: StorePath, run_id: str) -> str:
    """Over what time the run's intervals hold, and how earlier runs on its host moved
    (runners.store.run_compare, also said at the end of `collsweep sweep`)."""
    return run_compare.time_span_note(path, run_id)


def compare_runs(path: StorePath, run_a: str, run_b: str) -> RunComparison:
    """Run B against run A, the rows `collsweep compare` prints: per matching point B's
    median over A's (b_over_a) with its 95% interval and `change` (slower, faster or within
    noise), and every cell's decided winners (runners.store.run_compare)."""
    return run_compare.compare_runs(path, run_a, run_b)
