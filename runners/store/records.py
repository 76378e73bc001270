"""Typed records of the store's rows that travel as dicts: a run and a calibration.

They are TypedDicts, so a key that is not a column is a type error while every reader that
indexes a row keeps working; JSON columns arrive decoded. A point's row is
runners.domain.sweep.point_row.PointRow. tests/store/test_records.py holds each record's keys
equal to its table's columns in the current schema.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict


class RunRecord(TypedDict, total=False):
    """One row of `runs` (docs/schema.md)."""

    run_id: str
    status: str
    status_reason: str | None
    started_at: datetime | None
    finished_at: datetime | None
    spec_toml: str | None
    command_line: str | None
    host: str | None
    cpu_model: str | None
    physical_cores: int | None
    mpi_library: str | None
    mpi_version: str | None
    mpi4py_version: str | None
    numpy_version: str | None
    python_version: str | None
    code_version: str | None
    environment: dict[str, Any] | None
    thread_level: str | None
    memory_setting: str | None
    calibration_id: str | None
    libraries: dict[str, Any] | list[Any] | None
    name: str | None
    tags: list[str] | None
    interval_history: dict[str, Any] | None
    adaptive: dict[str, Any] | None


class CalibrationRecord(TypedDict, total=False):
    """One row of `calibrations` (docs/schema.md)."""

    calibration_id: str
    created_at: datetime
    host: str | None
    mpi_library: str | None
    ranks: int | None
    alpha_s: float | None
    beta_s_per_byte: float | None
    r_squared: float | None
    min_bytes: int | None
    max_bytes: int | None
    breakpoints: list[Any] | None
    segments: list[Any] | None
    gammas: dict[str, Any] | None
    source: str | None
    details: dict[str, Any] | None
    overheads: dict[str, Any] | None
