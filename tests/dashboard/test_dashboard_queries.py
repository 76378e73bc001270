"""The dashboard's SQL (dashboard/queries.py) on real DuckDB stores written by runners.store."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from conftest import ROOT
from helpers import synthetic

from dashboard import queries
from runners import store

RUN_A, RUN_B = (spec.run_id for spec in synthetic.demo_specs())
CAL = synthetic.calibration_id("synth-node")


def _point(run: str, alg: str, ranks: int, nbytes: int, median: float, **extra) -> dict:
    """A points row of float32 sum with a +-5% confidence interval."""
    return {
        "point_id": f"{run}/{alg}/{ranks}/{nbytes}/float32/sum",
        "run_id": run,
        "algorithm": alg,
        "ranks": ranks,
        "bytes": nbytes,
        "dtype": "float32",
        "op": "sum",
        "status": "ok",
        "median_s": median,
        "p5_s": median * 0.9,
        "p95_s": median * 1.2,
        "ci_low_s": median * 0.95,
        "ci_high_s": median * 1.05,
        "oversubscribed": ranks > 2,
        **extra,
    }


MINI_MEDIANS = {  # (algorithm, ranks, bytes) -> median seconds in run m1
    ("mpi", 2, 8): 10e-6,
    ("mpi:ring", 2, 8): 20e-6,  # slower, intervals apart
    ("mpi", 2, 65536): 100e-6,
    ("mpi:ring", 2, 65536): 80e-6,  # faster, intervals apart
    ("mpi", 3, 8): 10e-6,
    ("mpi:ring", 3, 8): 10.2e-6,  # within noise
}


@pytest.fixture(scope="module")
def mini_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two hand-made runs without recorded assumptions; m2 is m1 with mpi:ring 50% slower."""
    path = tmp_path_factory.mktemp("mini") / "mini.duckdb"
    for run, day, scale in (("m1", 1, 1.0), ("m2", 2, 1.5)):
        store.create_run(
            path, {"run_id": run, "host": "h", "physical_cores": 2, "started_at": f"2026-01-0{day}"}
        )
        points = [
            _point(run, alg, p, n, t * (scale if alg == "mpi:ring" else 1.0))
            for (alg, p, n), t in MINI_MEDIANS.items()
        ]
        samples = [
            {"point_id": points[0]["point_id"], "iteration": i, "seconds": s, "pass": i % 2}
            for i, s in enumerate([1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
        ]
        store.add_points(path, points, samples)
        store.finish_run(path, run, "complete")
    return path


@pytest.fixture
def mini(mini_master: Path, tmp_path: Path) -> Path:
    """A copy of the hand-made store that a test may change."""
    path = tmp_path / "mini.duckdb"
    shutil.copyfile(mini_master, path)
    return path


# --- the store as a whole ----------------------------------------------------------------------


def test_overview_counts_rows(demo_store: Path) -> None:
    """Schema version and row counts match the tables."""
    ov = queries.overview(demo_store)
    assert ov.schema_version == store.SCHEMA_VERSION and not ov.empty
    assert ov.runs == 2
    assert ov.points == store.query(demo_store, "SELECT count(*) n FROM points").n[0]
    assert ov.samples == store.query(demo_store, "SELECT count(*) n FROM samples").n[0]


def test_overview_of_an_empty_store(tmp_path: Path) -> None:
    """A fresh store has no runs."""
    path = tmp_path / "empty.duckdb"
    store.ensure_current(path)
    assert queries.overview(path).empty


@pytest.mark.parametrize("problem", ["missing", "corrupt", "newer"])
def test_unusable_stores_raise_store_error(tmp_path: Path, problem: str) -> None:
    """Missing, corrupt and newer-schema files raise StoreError, with a reason."""
    path = tmp_path / "store.duckdb"
    if problem == "corrupt":
        path.write_bytes(b"this is not a database" * 100)
    elif problem == "newer":
        store.ensure_current(path)
        con = duckdb.connect(str(path))
        con.execute("UPDATE schema_version SET version = ?", [store.SCHEMA_VERSION + 1])
        con.close()
    words = {"missing": "no results store", "corrupt": "not a DuckDB", "newer": "newer"}
    with pytest.raises(store.StoreError, match=words[problem]):
        queries.overview(path)


def test_runs_table_counts_points_and_samples_per_run(demo_store: Path) -> None:
    """Newest first, with grid, point counts by status and sample counts from SQL."""
    runs = queries.runs_table(demo_store)
    assert runs["run_id"].tolist() == [RUN_B, RUN_A]
    row = runs.set_index("run_id").loc[RUN_A]
    points = store.query(demo_store, f"SELECT status FROM points WHERE run_id = '{RUN_A}'")
    assert row["points"] == len(points)
    assert row["ok"] == (points.status == "ok").sum()
    assert row["failed"] == (points.status == "timeout").sum() == 1
    assert row["samples"] == row["ok"] * synthetic.RunSpec().samples
    assert row["ranks"] == "2, 3, 4, 8" and row["dtypes"] == "float32"
    assert row["host"] == "synth-node" and row["library"] == "MPICH 5.0.2"
    assert row["duration_s"] == 180 and bool(row["oversubscribed"])


def test_run_details_keep_the_order_asked_for(demo_store: Path) -> None:
    """Full provenance rows, in the order of the ids given."""
    details = queries.run_details(demo_store, [RUN_B, RUN_A])
    assert details["run_id"].tolist() == [RUN_B, RUN_A]
    assert "spec_toml" in details and "environment" in details


def test_provenance_diff_lists_only_changed_fields(demo_store: Path) -> None:
    """The two demo runs differ in their MPI library, not in their host."""
    diff = queries.provenance_diff(demo_store, RUN_A, RUN_B).set_index("field")
    assert diff.loc["mpi_version", RUN_A] == "MPICH 5.0.2"
    assert diff.loc["mpi_version", RUN_B] == "MPICH 5.0.3"
    assert "host" not in diff.index and "run_id" not in diff.index


def test_provenance_is_compared_key_by_key() -> None:
    """The spec's TOML and the JSON columns open up into dotted keys, so a diff names the one
    knob or spec key that changed instead of two whole blobs."""
    from runners.store.dashboard_reads.runs import flat_provenance

    env = '{"jobs": {"ranks=2": {"MPIR_CVAR_X": "1"}}, "load_average_before": [0.1, 0.2, 0.3]}'
    run = {
        "run_id": "r1",
        "status": "complete",
        "spec_toml": 'sizes = [8, 64]\nbudget_s = 0.25\nlauncher = "mpiexec -n {ranks}"\n',
        "environment": env,
        "host": "vm",
        "physical_cores": 2,
        "calibration_id": None,
    }
    flat = flat_provenance(run)
    assert flat["spec.sizes"] == "[8, 64]" and flat["spec.budget_s"] == "0.25"
    assert flat["environment.jobs.ranks=2.MPIR_CVAR_X"] == "1"
    assert flat["environment.load_average_before"] == "[0.1, 0.2, 0.3]"
    assert flat["physical_cores"] == "2" and "run_id" not in flat and "calibration_id" not in flat


def test_runs_without_a_shared_point_say_which_dimension_differs(tmp_path: Path) -> None:
    """Compare explains an empty comparison: the dimensions whose values do not overlap."""
    small = {"sizes": (8, 64), "algorithms": ("ring",), "samples": 5, "launches": 1}
    specs = [
        synthetic.RunSpec(run_id="r1", ranks=(2,), timeout_point=False, **small),
        synthetic.RunSpec(run_id="r2", ranks=(4,), seed=1, timeout_point=False, **small),
    ]
    path = tmp_path / "s.duckdb"
    synthetic.build_store(path, specs)
    assert queries.compare_runs(path, "r1", "r2").points.empty
    assert queries.no_overlap_reason(path, "r1", "r2") == "ranks: A has 2, B has 4"
    assert queries.no_overlap_reason(path, "r1", "r1") == ""


def test_run_grid_lists_the_measured_combinations(demo_store: Path) -> None:
    """The grid lists each (algorithm, ranks, dtype, op) once, with its point counts."""
    grid = queries.run_grid(demo_store, RUN_A)
    assert len(grid) == len(synthetic.ALGORITHMS) * 4
    assert set(grid["ranks"]) == {2, 3, 4, 8}
    assert (grid["points"] == len(synthetic.SIZES)).all()
    assert grid["ok"].sum() == grid["points"].sum() - 1


def _predict_all(path: Path, run: str, cal: str, created: str) -> None:
    """A calibration and a prediction for every point of the run."""
    store.add_calibration(path, {"calibration_id": cal, "created_at": created})
    ids = store.query(path, "SELECT point_id FROM points WHERE run_id = ?", [run]).point_id
    rows = [
        {
            "point_id": pid,
            "run_id": run,
            "calibration_id": cal,
            "model": "ring",
            "predicted_s": 1e-5,
        }
        for pid in ids
    ]
    store.add_predictions(path, rows)


def test_prediction_calibrations_put_the_runs_own_first(mini: Path) -> None:
    """Newest first, except that the calibration the run names comes before all others."""
    assert queries.prediction_calibrations(mini, "m1") == []
    _predict_all(mini, "m1", "k-old", "2026-01-01")
    _predict_all(mini, "m1", "k-new", "2026-02-01")
    assert queries.prediction_calibrations(mini, "m1") == ["k-new", "k-old"]
    store.update_run(mini, "m1", {"calibration_id": "k-old"})
    assert queries.prediction_calibrations(mini, "m1") == ["k-old", "k-new"]
    assert queries.prediction_calibrations(mini, "m2") == []


# --- curves ------------------------------------------------------------------------------------


def test_curves_data_joins_points_with_their_predictions(demo_store: Path) -> None:
    """Medians and percentiles come from points, predictions of the chosen calibration only;
    the autotuned 'mpi' is predicted by the lower bound."""
    scope = queries.Scope(RUN_A, 4, "float32", "sum", calibration_id=CAL)
    data = queries.curves_data(demo_store, scope)
    raw = store.query(
        demo_store,
        "SELECT p.point_id, p.median_s, m.predicted_s FROM points p LEFT JOIN predictions m "
        "ON m.point_id = p.point_id AND m.calibration_id = ? WHERE p.run_id = ? AND p.ranks = 4",
        [CAL, RUN_A],
    ).set_index("point_id")
    got = data.points.set_index("point_id")
    assert set(got.index) == set(raw.index) and len(got) == 7 * len(synthetic.SIZES)
    pd.testing.assert_series_equal(got["median_s"], raw.loc[got.index, "median_s"])
    np.testing.assert_allclose(got["predicted_s"], raw.loc[got.index, "predicted_s"])
    models = got.groupby("algorithm")["model"].agg(set)
    assert models["mpi"] == {"library_min"} and models["mpi:ring"] == {"ring"}
    assert models["ring"] == {"ring"}


def _point_checks(demo_store: Path, ranks: int) -> pd.DataFrame:
    """The analysis's per-point rows at ``ranks`` (run A), straight from the table."""
    return store.query(
        demo_store,
        "SELECT a.name, a.state, p.algorithm FROM assumptions a JOIN points p USING (point_id) "
        "WHERE a.run_id = ? AND p.ranks = ? AND (a.calibration_id IS NULL OR a.calibration_id = ?)",
        [RUN_A, ranks, CAL],
    )


def test_curves_flag_the_points_that_break_assumptions(demo_store: Path) -> None:
    """A point's violated names are its own per-point checks: p=3 (3 ranks on 2 cores) breaks
    not_oversubscribed everywhere and power_of_two except for the ring."""
    data = queries.curves_data(demo_store, queries.Scope(RUN_A, 3, "float32", "sum", None, CAL))
    ok = data.points[data.points["status"] == "ok"].set_index("algorithm")
    assert all("not_oversubscribed" in v for v in ok["violated"])
    assert not any("power_of_two" in v for v in ok.loc[["ring", "mpi:ring"], "violated"])
    assert all("power_of_two" in v for v in ok.loc["recursive_doubling", "violated"])
    assert not any("library_choice_known" in v for v in ok["violated"])  # mpi: unknown
    assert "no_protocol_switch" not in " ".join(ok["violated"])  # run-level: a badge only
    at2 = queries.curves_data(demo_store, queries.Scope(RUN_A, 2, "float32", "sum", None, CAL))
    assert set(at2.points.loc[at2.points["algorithm"] == "recursive_doubling", "violated"]) == {""}


def test_view_summary_counts_per_point_checks_and_run_checks(demo_store: Path) -> None:
    """Per-point states are counted within the view; a per-point check's run summary row is
    left out (p=2 holds power_of_two although the run as a whole does not)."""
    at3 = queries.curves_data(demo_store, queries.Scope(RUN_A, 3, "float32", "sum", None, CAL))
    summary = at3.summary.set_index(["name", "state"])
    raw = _point_checks(demo_store, 3).groupby(["name", "state"]).size()
    for key, count in raw.items():
        assert summary.loc[key, "points"] == count, key
    assert summary.loc[("no_protocol_switch", "violated"), "points"] == 0  # a run-level check
    at2 = queries.curves_data(demo_store, queries.Scope(RUN_A, 2, "float32", "sum", None, CAL))
    two = at2.summary[at2.summary["name"] == "power_of_two"]
    assert two["state"].tolist() == ["holds"] and two["points"].tolist() == [49]
    whole_run = store.query(
        demo_store,
        "SELECT state FROM assumptions WHERE run_id = ? AND name = 'power_of_two' "
        "AND point_id IS NULL",
        [RUN_A],
    )
    assert whole_run["state"].tolist() == ["violated"]


def test_curves_filter_algorithms_and_their_crossovers(demo_store: Path) -> None:
    """Only the chosen algorithms, and only crossovers between two of them; measured ones
    and the predicted ones of the chosen calibration."""
    pair = ("recursive_doubling", "rabenseifner")
    data = queries.curves_data(demo_store, queries.Scope(RUN_A, 4, "float32", "sum", pair, CAL))
    assert set(data.points["algorithm"]) == set(pair)
    assert not data.crossovers.empty
    assert set(data.crossovers["algorithm_a"]) | set(data.crossovers["algorithm_b"]) <= set(pair)
    everything = queries.curves_data(
        demo_store, queries.Scope(RUN_A, 4, "float32", "sum", None, CAL)
    )
    stored = store.query(
        demo_store,
        "SELECT bytes FROM crossovers WHERE run_id = ? AND ranks = 4 "
        "AND (kind = 'measured' OR calibration_id = ?) ORDER BY bytes",
        [RUN_A, CAL],
    )
    assert sorted(everything.crossovers["bytes"]) == stored["bytes"].tolist()
    assert set(everything.crossovers["calibration_id"].dropna()) == {CAL}


def _curve_frame(rows: list[tuple[str, int, float, float]]) -> pd.DataFrame:
    """Curves points from (algorithm, bytes, median_s, predicted_s) tuples."""
    frame = pd.DataFrame(rows, columns=["algorithm", "bytes", "median_s", "predicted_s"])
    return frame.assign(status="ok", model=frame["algorithm"].str.removeprefix("mpi:"))


def _crossing(a: str, b: str, kind: str, nbytes: float) -> dict:
    """A crossovers row."""
    return {"algorithm_a": a, "algorithm_b": b, "kind": kind, "bytes": nbytes}


def test_envelope_keeps_the_crossovers_that_change_the_fastest() -> None:
    """x beats y below 100 B and y wins above; z crosses y above 100 B while slower than x, so
    that crossing changes nothing and is dropped; predicted ones use the predictions, where
    the library's x (forced) ties with x (one model) and the tie goes to x, collsweep's own
    code (its descriptor says which is the library's)."""
    x, forced_x, y, z = "ring", "mpi:ring", "recursive_doubling", "rabenseifner"
    points = _curve_frame(
        [
            (x, 10, 1.0, 1.0), (x, 1000, 9.0, 3.0),
            (forced_x, 10, 1.2, 1.0), (forced_x, 1000, 9.5, 3.0),
            (y, 10, 2.0, 2.0), (y, 1000, 5.0, 2.0),
            (z, 10, 1.5, 9.0), (z, 1000, 6.0, 9.0),
        ]
    )  # fmt: skip
    crossings = pd.DataFrame(
        [
            _crossing(x, y, "measured", 100.0),
            _crossing(z, y, "measured", 300.0),
            _crossing(x, y, "predicted", 500.0),
            _crossing(forced_x, y, "predicted", 500.0),
            _crossing(y, x, "predicted", 500.0),
            _crossing(x, y, "measured", 5000.0),  # beyond the measured sizes
        ]
    )
    kept = queries.envelope_crossovers(points, crossings)
    assert kept[["algorithm_a", "algorithm_b", "kind"]].values.tolist() == [
        [x, y, "measured"],
        [x, y, "predicted"],
    ]
    assert queries.envelope_crossovers(points, crossings.iloc[0:0]).empty


def test_crossover_note_says_when_one_kind_is_missing() -> None:
    """Predicted-only marks are called the model's alone; measured-only ones say the model sees
    no change; both kinds, or none, need no note."""
    predicted = pd.DataFrame([_crossing("x", "y", "predicted", 500.0)])
    measured = pd.DataFrame([_crossing("x", "y", "measured", 100.0)])
    assert "model's alone" in queries.crossover_note(predicted)
    assert "model" in queries.crossover_note(measured)
    assert queries.crossover_note(pd.concat([predicted, measured])) is None
    assert queries.crossover_note(predicted.iloc[0:0]) is None


def test_pass_spread_aggregates_raw_samples_per_pass(mini: Path) -> None:
    """Per-pass medians and their max/min ratio, computed in SQL from the samples."""
    spread = queries.pass_spread(mini, queries.Scope("m1", 2, "float32", "sum"))
    row = spread[(spread["algorithm"] == "mpi") & (spread["bytes"] == 8)].iloc[0]
    # passes: 0 -> [1, 3, 11] (median 3), 1 -> [2, 10, 12] (median 10)
    assert row["passes"] == 2 and row["samples"] == 6
    assert list(row["pass_medians_s"]) == [3.0, 10.0]
    assert row["max_over_min"] == pytest.approx(10 / 3)


def test_an_unanalysed_run_has_no_checks_and_none_are_made_up(mini: Path) -> None:
    """The page reads only what the analysis recorded: a run without checks shows none."""
    data = queries.assumptions_data(mini, "m1")
    assert data.checks.empty and data.summary.empty


def test_recorded_checks_are_shown_as_recorded(mini: Path) -> None:
    store.replace_assumptions(
        mini, "m1", [{"name": "not_oversubscribed", "state": "unknown", "detail": "not checked"}]
    )
    data = queries.assumptions_data(mini, "m1")
    assert data.checks[["name", "state"]].values.tolist() == [["not_oversubscribed", "unknown"]]
    assert data.summary[["name", "state", "checks"]].values.tolist() == [
        ["not_oversubscribed", "unknown", 1]
    ]


def test_assumption_overview_counts_recorded_states_per_run(demo_store: Path) -> None:
    """Per run and assumption, the number of holds / violated / unknown rows, newest run first."""
    overview = queries.assumption_overview(demo_store)
    assert overview["run_id"].iloc[0] == RUN_B
    row = overview.set_index(["run_id", "name"]).loc[(RUN_A, "not_oversubscribed")]
    raw = store.query(
        demo_store,
        "SELECT state, count(*) n FROM assumptions WHERE run_id = ? "
        "AND name = 'not_oversubscribed' GROUP BY state",
        [RUN_A],
    ).set_index("state")["n"]
    assert row["violated"] == raw["violated"] and row["holds"] == raw["holds"]
    assert row["unknown"] == 0


# --- crossovers and agreement ------------------------------------------------------------------


def _argmin(frame: pd.DataFrame, *columns: str) -> dict:
    """(ranks, bytes) -> algorithm with the smallest ``columns`` (in order)."""
    frame = frame.sort_values([*columns])
    return {(r, b): g.iloc[0]["algorithm"] for (r, b), g in frame.groupby(["ranks", "bytes"])}


def _paired(demo_store: Path) -> pd.DataFrame:
    """Run A's ok points of the modelled algorithms with their ping-pong predictions."""
    joined = store.query(
        demo_store,
        "SELECT p.ranks, p.bytes, p.algorithm, p.median_s, m.predicted_s FROM points p "
        "JOIN predictions m ON m.point_id = p.point_id AND m.calibration_id = ? "
        "WHERE p.run_id = ? AND p.status = 'ok' AND p.algorithm <> 'mpi'",
        [CAL, RUN_A],
    )
    return joined.assign(library=joined["algorithm"].str.contains(":", regex=False))


def test_measured_winners_are_the_verdicts_rows_and_picks_match_pandas(demo_store: Path) -> None:
    """The measured side is the stored winners (every algorithm competing, ties kept) the
    verdict reads; the model's pick (ties to collsweep's own implementation) cell by cell."""
    scope = queries.Scope(RUN_A, dtype="float32", op="sum", calibration_id=CAL)
    data = queries.crossover_data(demo_store, scope)
    stored = store.query(
        demo_store,
        "SELECT ranks, bytes, winner, runner_up, decided FROM winners WHERE run_id = ? "
        "AND dtype = 'float32' AND op = 'sum' AND library = 'all'",
        [RUN_A],
    )
    shown = {(r.ranks, r.bytes): (r.algorithm, r.runner_up, r.decided)
             for r in data.measured_best.itertuples()}  # fmt: skip
    assert shown == {(r.ranks, r.bytes): (r.winner, r.runner_up, r.decided)
                     for r in stored.itertuples()}  # fmt: skip
    assert data.measured_best["decided"].any() and not data.measured_best["decided"].all()
    paired = _paired(demo_store)
    predicted = {(r.ranks, r.bytes): r.algorithm for r in data.predicted_best.itertuples()}
    assert predicted == _argmin(paired, "predicted_s", "library", "algorithm")
    assert not any(":" in alg for alg in predicted.values())  # ties go to the own code


def test_agreement_is_read_from_the_analysis(demo_store: Path) -> None:
    """The page's agreement rows are the analysis's stored rows for the run and calibration:
    the whole run first, then the groups of the chosen dtype and op only."""
    scope = queries.Scope(RUN_A, dtype="float32", op="sum", calibration_id=CAL)
    shown = queries.crossover_data(demo_store, scope).agreement
    stored = store.query(
        demo_store,
        "SELECT * FROM agreement WHERE run_id = ? AND calibration_id = ? "
        "AND (scope IN ('run', 'dedicated', 'oversubscribed') "
        "OR (dtype = 'float32' AND op = 'sum'))",
        [RUN_A, CAL],
    )
    assert len(shown) == len(stored) > 1 and shown["scope"].iloc[0] == "run"
    groups = ~shown["scope"].isin(["run", "dedicated", "oversubscribed"])
    assert set(shown.loc[groups, "dtype"]) == {"float32"}
    run_row = stored[stored["scope"] == "run"].iloc[0]
    assert shown["model_pick_share"].iloc[0] == pytest.approx(run_row["model_pick_share"])
    none = queries.crossover_data(
        demo_store, queries.Scope(RUN_A, dtype="float32", op="sum")
    ).agreement
    assert none.empty


def test_crossovers_carry_their_uncertainty(demo_store: Path) -> None:
    """The run's measured crossovers and those predicted with the chosen calibration, with
    low <= bytes <= high where an interval is known."""
    scope = queries.Scope(RUN_A, dtype="float32", op="sum", calibration_id=CAL)
    table = queries.crossover_data(demo_store, scope).crossovers
    expected = store.query(
        demo_store,
        "SELECT count(*) n FROM crossovers WHERE run_id = ? "
        "AND (kind = 'measured' OR calibration_id = ?)",
        [RUN_A, CAL],
    ).n[0]
    assert len(table) == expected > 0
    known = table.dropna(subset=["low_bytes", "high_bytes"])
    assert len(known) > 0
    assert (known["low_bytes"] <= known["bytes"]).all()
    assert (known["bytes"] <= known["high_bytes"]).all()
    np.testing.assert_allclose(known["high_over_low"], known["high_bytes"] / known["low_bytes"])
    assert set(table["kind"]) == {"measured", "predicted"}


def test_predicted_crossovers_follow_the_chosen_calibration(demo_store: Path) -> None:
    """Each calibration brings its own predicted crossovers; the measured ones stay."""
    measured = []
    for cal in (CAL, f"fitted:{RUN_A}"):
        scope = queries.Scope(RUN_A, dtype="float32", op="sum", calibration_id=cal)
        table = queries.crossover_data(demo_store, scope).crossovers
        predicted = table[table["kind"] == "predicted"]
        raw = store.query(
            demo_store,
            "SELECT count(*) n FROM crossovers WHERE run_id = ? AND kind = 'predicted' "
            "AND calibration_id = ?",
            [RUN_A, cal],
        ).n[0]
        assert raw > 0 and len(predicted) == raw and set(predicted["calibration_id"]) == {cal}
        measured.append(table[table["kind"] == "measured"].reset_index(drop=True))
    assert len(measured[0]) > 0
    pd.testing.assert_frame_equal(measured[0], measured[1])


# --- override impact ---------------------------------------------------------------------------


def test_override_impact_reads_the_stored_paired_comparison(demo_store: Path) -> None:
    """speedup = 1 / the analysis's paired ratio (against_default), its interval and verdict
    as stored; the summary counts them per group size."""
    scope = queries.Scope(RUN_A, dtype="float32", op="sum")
    impact = queries.override_impact(demo_store, scope, "mpi:ring")
    stored = store.query(
        demo_store,
        "SELECT ranks, bytes, ratio, verdict FROM against_default "
        "WHERE run_id = ? AND algorithm = 'mpi:ring'",
        [RUN_A],
    )
    assert len(impact) == len(stored) > 0
    both = impact.merge(stored, on=["ranks", "bytes"], suffixes=("", "_stored"))
    np.testing.assert_allclose(both["speedup"], 1 / both["ratio"])
    assert (both["verdict"] == both["verdict_stored"]).all()
    assert (both["speedup_low"] <= both["speedup"]).all()
    assert (both["speedup"] <= both["speedup_high"]).all()
    summary = queries.override_summary(impact).set_index("ranks")
    for ranks, rows in stored.groupby("ranks"):
        assert summary.loc[ranks, "faster"] == (rows["verdict"] == "faster").sum()
        assert summary.loc[ranks, "slower"] == (rows["verdict"] == "slower").sum()


def test_override_summary_of_nothing() -> None:
    """No matching points: an empty summary with its columns."""
    empty = pd.DataFrame(columns=["ranks", "bytes", "speedup", "verdict"])
    assert queries.override_summary(empty).empty


# --- model fit ---------------------------------------------------------------------------------


def test_calibration_rows_decode_their_json(demo_store: Path) -> None:
    """Every calibration listed; one read back with segments, gammas and details decoded."""
    listed = queries.calibrations(demo_store)
    assert set(listed["source"]) == {"pingpong", f"fitted:{RUN_A}", f"fitted:{RUN_B}"}
    cal = queries.calibration(demo_store, CAL)
    assert cal is not None and cal["source"] == "pingpong"
    assert isinstance(cal["segments"], list) and len(cal["segments"]) >= 1
    assert cal["gammas"]["float32/sum"] == pytest.approx(synthetic.GAMMA_S_PER_BYTE)
    assert cal["details"]["pingpong"]["bytes"] == list(synthetic.PINGPONG_SIZES)
    assert queries.calibration(demo_store, "nope") is None


def test_fit_comparison_sets_fitted_beside_the_microbenchmark(demo_store: Path) -> None:
    """alpha, beta and gamma of ping-pong vs fitted:<run>, with their ratio."""
    comparison = queries.fit_comparison(demo_store, RUN_A)
    fitted_id = store.query(
        demo_store, "SELECT calibration_id FROM calibrations WHERE source = ?", [f"fitted:{RUN_A}"]
    ).calibration_id[0]
    assert comparison.micro_id == CAL and comparison.fitted_id == fitted_id
    table = comparison.table.set_index("parameter")
    micro, fitted = queries.calibration(demo_store, CAL), queries.calibration(demo_store, fitted_id)
    assert table.loc["alpha (us)", "microbenchmark"] == pytest.approx(micro["alpha_s"] * 1e6)
    assert table.loc["alpha (us)", "fitted"] == pytest.approx(fitted["alpha_s"] * 1e6)
    assert table.loc["beta (ns/B)", "fitted"] == pytest.approx(fitted["beta_s_per_byte"] * 1e9)
    assert table.loc["beta (ns/B)", "fitted_over_micro"] == pytest.approx(
        fitted["beta_s_per_byte"] / micro["beta_s_per_byte"]
    )
    assert math.isnan(table.loc["gamma float64/sum (ns/B)", "fitted"])  # only in the ping-pong


def test_residuals_are_measured_over_predicted(demo_store: Path) -> None:
    """One row per point with a prediction, ratio = median / predicted; mpi's is the bound."""
    scope = queries.Scope(RUN_A, None, "float32", "sum", calibration_id=CAL)
    resid = queries.residuals(demo_store, scope)
    assert len(resid) == 4 * 7 * len(synthetic.SIZES) - 1  # all ok points
    np.testing.assert_allclose(
        resid["measured_over_predicted"], resid["median_s"] / resid["predicted_s"]
    )
    assert set(resid.loc[resid["algorithm"] == "mpi", "model"]) == {"library_min"}
    at2 = queries.residuals(
        demo_store, queries.Scope(RUN_A, 2, "float32", "sum", calibration_id=CAL)
    )
    assert set(at2["ranks"]) == {2}


# --- comparing runs ----------------------------------------------------------------------------


def test_compare_runs_ratios_and_decided_changes(mini: Path) -> None:
    """b / a per matching point with its interval; decided where the interval excludes 1."""
    ratios = queries.compare_runs(mini, "m1", "m2").points
    assert len(ratios) == len(MINI_MEDIANS)
    ring = ratios[ratios["algorithm"] == "mpi:ring"]
    np.testing.assert_allclose(ring["b_over_a"], 1.5)
    assert set(ring["change"]) == {"slower"} and (ring["ratio_low"] > 1).all()
    same = ratios[ratios["algorithm"] == "mpi"]
    assert set(same["change"]) == {"within noise"}
    assert ((same["ratio_low"] < 1) & (same["ratio_high"] > 1)).all()
    back = queries.compare_runs(mini, "m2", "m1").points
    assert set(back["change"]) == {"faster", "within noise"}


# --- user SQL ----------------------------------------------------------------------------------


def test_example_queries_are_the_schema_doc_blocks_and_all_run(demo_store: Path) -> None:
    """Every ```sql block of docs/schema.md, titled, runs on a real store."""
    blocks = re.findall(r"```sql\n(.*?)```", (ROOT / "docs/schema.md").read_text(), re.DOTALL)
    examples = queries.example_queries()
    assert [e.sql for e in examples] == [b.strip() for b in blocks]
    assert examples[0].title.startswith("The latest runs")
    for example in examples:
        # a whole sentence: starts with a capital, no trailing colon, no markdown backticks
        assert example.title[0].isupper() and not example.title.endswith(":"), example.title
        assert "`" not in example.title and "\n" not in example.title
        queries.run_user_sql(demo_store, example.sql)
    assert any("fit to its own timings apart" in e.title for e in examples)  # two doc lines


def test_example_queries_fall_back_without_the_doc(tmp_path: Path) -> None:
    """An installed package without docs/ still offers an example."""
    assert queries.example_queries(tmp_path / "missing.md") == list(queries.FALLBACK_EXAMPLES)


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("INSERT INTO runs (run_id, status) VALUES ('x', 'running')", "INSERT"),
        ("CREATE TABLE evil (x INTEGER)", "CREATE"),
        ("CREATE TEMP TABLE t AS SELECT 1", "CREATE"),
        ("DELETE FROM runs", "DELETE"),
        ("ATTACH '/tmp/collsweep-dash-attach.duckdb' AS other", "ATTACH"),
        ("COPY runs TO '/tmp/collsweep-dash-copy.csv'", "COPY"),
        ("SET enable_external_access = true", "SET"),
        ("SELECT * FROM read_csv('/etc/hostname')", "file system operations are disabled"),
        ("SELECT 1; SELECT 2", "one statement"),
        ("SELEC 1", "syntax error"),
        ("   ", "type a query"),
    ],
)
def test_user_sql_refuses_writes_attach_and_files(demo_store: Path, sql: str, words: str) -> None:
    """Only one read statement runs, on a connection that cannot touch files."""
    with pytest.raises(store.QueryError, match=re.escape(words)):
        queries.run_user_sql(demo_store, sql)
    assert not Path("/tmp/collsweep-dash-copy.csv").exists()
    assert not Path("/tmp/collsweep-dash-attach.duckdb").exists()


def test_user_sql_limits_rows_and_time(demo_store: Path) -> None:
    """Rows beyond max_rows are cut (and said so); a runaway query is interrupted."""
    result = queries.run_user_sql(demo_store, "SELECT * FROM range(25)", max_rows=10)
    assert len(result.frame) == 10 and result.truncated
    full = queries.run_user_sql(demo_store, "SELECT * FROM range(5)", max_rows=10)
    assert len(full.frame) == 5 and not full.truncated
    with pytest.raises(store.QueryError, match="stopped after"):
        queries.run_user_sql(
            demo_store, "SELECT count(*) FROM range(100000000000) a", timeout_s=0.3
        )


@pytest.mark.slow
def test_user_sql_is_bounded_in_memory(demo_store: Path) -> None:
    """A query that would need gigabytes fails with the read memory limit named (not the
    time limit: it stops on memory, however fast the machine is)."""
    with pytest.raises(store.QueryError, match="memory limit of 1GiB"):
        queries.run_user_sql(
            demo_store, "SELECT list(range) FROM range(400000000) GROUP BY range % 3", timeout_s=600
        )


def test_one_shared_connection_per_page(demo_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside reading(path) the store is opened once, whatever the number of queries."""
    opened = []
    real = store.storefile.duckdb.connect

    def counting(path, **kwargs):
        opened.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(store.storefile.duckdb, "connect", counting)
    with queries.reading(demo_store):
        queries.overview(demo_store)
        queries.runs_table(demo_store)
        queries.curves_data(demo_store, queries.Scope(RUN_A, 2, "float32", "sum", None, CAL))
    assert len(opened) == 1
    queries.overview(demo_store)
    assert len(opened) == 2


def test_the_sql_page_reference_lists_every_table_and_column(demo_store: Path) -> None:
    """The Tables and columns list, read from docs/schema.md, has every table and column of
    a real store, each with a meaning."""
    reference = queries.schema_reference()
    stored = store.query(
        demo_store,
        "SELECT table_name, list(column_name) AS columns FROM duckdb_columns() "
        "WHERE table_name IN (SELECT table_name FROM duckdb_tables()) "
        "AND table_name <> 'schema_version' GROUP BY table_name",
    )
    assert len(stored) >= 12
    for table, columns in stored.itertuples(index=False):
        assert table in reference, table
        assert set(columns) <= set(reference[table]["column"]), table
        assert (reference[table]["meaning"].str.len() > 0).all()


def test_outliers_are_points_the_model_misses_by_more_than_a_factor_of_two() -> None:
    """Worst first, either way; oversubscribed points are left out."""
    resid = pd.DataFrame(
        {
            "algorithm": ["ring", "ring", "rd", "rd", "mpi"],
            "ranks": [2, 2, 2, 4, 2],
            "bytes": [8, 64, 8, 8, 8],
            "measured_over_predicted": [1.5, 3.0, 0.2, 10.0, 0.6],
            "oversubscribed": [False, False, False, True, None],
        }
    )
    far = queries.outliers(resid)
    assert far["measured_over_predicted"].tolist() == [0.2, 3.0]
    assert queries.OUTLIER_FACTOR == 2.0
