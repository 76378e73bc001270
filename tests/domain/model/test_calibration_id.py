"""Calibration ids and gamma keys as types: every form the store holds, formatted and parsed in
one place (runners.domain.model.calibration_id), the SQL forms agreeing with the Python ones."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import pytest

from runners.domain.libraries import DEFAULT, LIBRARIES
from runners.domain.model.calibration_id import (
    LIBRARY_SUFFIX_PATTERN,
    CalibrationId,
    CalibrationKind,
    GammaKey,
    library_free,
    own_calibrations,
    with_caveat,
)

RUN = "r20261202-101500-ab12"
JOB = "ranks=4 config=default"


def every_form() -> list[CalibrationId]:
    """One id of every kind, on every library."""
    ids = []
    for library in LIBRARIES:
        ids += [
            CalibrationId(CalibrationKind.CALIBRATE, job="c20261202-101500-cd34", library=library),
            CalibrationId(CalibrationKind.LAUNCH, RUN, JOB, 2, library),
            CalibrationId(CalibrationKind.LAUNCH, RUN, library=library),
            CalibrationId(CalibrationKind.LAUNCHES, RUN, library=library),
            CalibrationId(CalibrationKind.FITTED, RUN, library=library),
            CalibrationId(CalibrationKind.IMPORTED, RUN, library=library),
        ]
    return ids


@pytest.mark.parametrize("cal", every_form(), ids=str)
def test_every_form_round_trips_through_its_text(cal: CalibrationId) -> None:
    text = str(cal)
    assert CalibrationId.parse(text) == cal
    assert str(CalibrationId.parse(text)) == text
    assert text.endswith(LIBRARIES[cal.library].calibration_suffix)


def test_the_texts_are_those_stores_already_hold() -> None:
    """The formats do not move: ids written before the type parse to the same fields."""
    launch = CalibrationId.parse(f"launch:{RUN}:{JOB}:0@openmpi")
    assert (launch.kind, launch.run, launch.job, launch.launch, launch.library) == (
        CalibrationKind.LAUNCH,
        RUN,
        JOB,
        0,
        "openmpi",
    )
    assert str(launch.source()) == f"launch:{RUN}@openmpi"
    assert str(CalibrationId(CalibrationKind.LAUNCHES, RUN, library="impi")) == (
        f"launches:{RUN}@impi"
    )
    assert str(CalibrationId(CalibrationKind.FITTED, RUN)) == f"fitted:{RUN}"
    assert str(CalibrationId(CalibrationKind.IMPORTED, RUN)) == f"imported:{RUN}"
    assert str(CalibrationId.imported_source("IMB-MPI1")) == "imported:IMB-MPI1"
    assert CalibrationKind.FITTED.prefix == "fitted:" and CalibrationKind.CALIBRATE.prefix == ""
    assert CalibrationId.parse("pingpong").kind is CalibrationKind.CALIBRATE


def test_a_fitted_calibration_is_named_with_its_caveat() -> None:
    """A fitted calibration predicts the points it was fitted on, and says so wherever it is
    named (with_caveat); the others are named as they are."""
    assert with_caveat(f"fitted:{RUN}@nccl") == (
        f"fitted:{RUN}@nccl (fitted on the same points it predicts)"
    )
    assert with_caveat(f"launches:{RUN}") == f"launches:{RUN}"
    assert with_caveat(f"imported:{RUN}") == f"imported:{RUN}"


def test_a_calibration_jobs_id_sorts_by_its_time() -> None:
    early = CalibrationId.new_job(datetime(2026, 12, 1, 19, 20, tzinfo=UTC))
    late = CalibrationId.new_job(datetime(2026, 12, 2, 8, 0, tzinfo=UTC))
    assert str(early).startswith("c20261201-192000-") and str(early) < str(late)
    assert CalibrationId.parse(str(early)) == early and early.library == DEFAULT.name


def test_a_malformed_launch_id_is_refused() -> None:
    for text in (f"launch:{RUN}:{JOB}", f"launch:{RUN}:{JOB}:x", f"launch:{RUN}::3"):
        with pytest.raises(ValueError, match="launch:<run>:<job>:<index>"):
            CalibrationId.parse(text)


def test_a_calibration_stands_for_its_namesakes_on_every_library() -> None:
    names = own_calibrations(f"launches:{RUN}")
    suffixes = [lib.calibration_suffix for lib in LIBRARIES.values()]
    assert names == [f"launches:{RUN}{suffix}" for suffix in suffixes]
    assert own_calibrations(None) is None
    assert {library_free(n) for n in names} == {f"launches:{RUN}"}


def test_sql_strips_the_library_suffix_as_python_does() -> None:
    """LIBRARY_SUFFIX_PATTERN bound into regexp_replace gives library_free's answer."""
    texts = [str(cal) for cal in every_form()]
    con = duckdb.connect()
    stripped = con.execute(
        "SELECT regexp_replace(t, $suffixes, '') FROM unnest($texts) AS u(t)",
        {"suffixes": LIBRARY_SUFFIX_PATTERN, "texts": texts},
    ).fetchall()
    assert [row[0] for row in stripped] == [library_free(t) for t in texts]


def test_a_gamma_key_round_trips() -> None:
    key = GammaKey("float64", "first_nonzero")
    assert str(key) == "float64/first_nonzero" and GammaKey.parse(str(key)) == key
    for bad in ("float64", "/sum", "float64/"):
        with pytest.raises(ValueError, match="<dtype>/<op>"):
            GammaKey.parse(bad)
