"""Python values made ready for the store's typed columns (no I/O): JSON as text, every time
as naive UTC, and whole columns as arrays DuckDB scans without guessing their types."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd


def utc_naive(value: Any) -> datetime | None:
    """A TIMESTAMP value (datetime, ISO string or Unix epoch seconds) as naive UTC."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC).replace(tzinfo=None)
    stamp = datetime.fromisoformat(value) if isinstance(value, str) else value
    if not isinstance(stamp, datetime):
        raise ValueError(f"not a timestamp: {value!r}")
    return stamp.astimezone(UTC).replace(tzinfo=None) if stamp.tzinfo else stamp


def json_text(value: Any) -> str | None:
    """A JSON value: Python objects are serialised, strings must already be valid JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        json.loads(value)
        return value
    return json.dumps(value)


def column_value(value: Any, sql_type: str) -> Any:
    """One value made ready for a column of ``sql_type`` (JSON text, naive UTC time)."""
    if sql_type == "JSON":
        return json_text(value)
    if sql_type == "TIMESTAMP":
        return utc_naive(value)
    return value


def column_array(values: list[Any], sql_type: str) -> Any:
    """Values for one column, in a pandas/numpy array that DuckDB scans without guessing."""
    if sql_type == "DOUBLE":
        return np.array(values, dtype=np.float64)  # None -> NaN, which DuckDB reads as NULL
    if sql_type in ("INTEGER", "BIGINT"):
        return pd.array(values, dtype="Int64")
    if sql_type == "BOOLEAN":
        return pd.array(values, dtype="boolean")
    if sql_type == "TIMESTAMP":
        return pd.Series([utc_naive(v) for v in values], dtype="datetime64[us]")
    if sql_type == "JSON":
        return pd.Series([json_text(v) for v in values], dtype=object)
    return pd.Series([v if v is None else str(v) for v in values], dtype=object)
