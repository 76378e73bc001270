"""A real quick sweep into a fresh store: it calibrates first, then stores predictions,
crossovers, best choices, agreement and assumption checks beside the measured points."""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from runners import store
from runners.analysis import run_analysis
from runners.analysis.params import Params
from runners.analysis.points import predict_with
from runners.domain.collectives.datatypes import DTYPES
from runners.domain.model.calibration_id import CalibrationId, CalibrationKind
from runners.domain.model.closed_form import model_for, predict
from runners.domain.verdict.assumptions import NAMES, NODE_CHECKS, POINT_CHECKS
from runners.domain.verdict.comparison import compare
from runners.host.machine import hostname, physical_cores

pytestmark = pytest.mark.mpi

SPEC = """
sizes = { min = 8, max = 262144, factor = 8 }
ranks = [2, 3]
algorithms = ["recursive_doubling", "rabenseifner", "ring", "mpi", "mpi:ring"]
warmup = 1
min_iterations = 5
max_iterations = 40
budget_s = 0.02
passes = 1
point_timeout_s = 60
"""
SWEPT = (8, 262144)


class Run:
    """The store, run and calibrations of the shared sweep."""

    def __init__(self, db: Path, stderr: str) -> None:
        self.db, self.stderr = db, stderr
        self.run_id = store.query(db, "SELECT run_id FROM runs")["run_id"].item()
        self.run = store.get_run(db, self.run_id)
        self.pingpong = store.get_calibration(db, self.run["calibration_id"])
        fitted = CalibrationId(CalibrationKind.FITTED, self.run_id)
        launches = CalibrationId(CalibrationKind.LAUNCHES, self.run_id)
        self.fitted = store.get_calibration(db, str(fitted))
        self.launches = store.get_calibration(db, str(launches))
        self.calibrations = (self.launches, self.pingpong, self.fitted)

    def sql(self, text: str) -> pd.DataFrame:
        """Read-only SQL on the store, with ? bound to the run id."""
        return store.query(self.db, text, [self.run_id] * text.count("?"))


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One real sweep on 2 and 3 ranks into a store that has no calibration yet."""
    tmp = tmp_path_factory.mktemp("analysis")
    spec, db = tmp / "spec.toml", tmp / "s.duckdb"
    spec.write_text(SPEC)
    result = run_cli("sweep", str(spec), "--store", str(db), timeout=300)
    assert result.returncode == 0, result.stderr
    return Run(db, result.stderr)


def segment_params(cal: dict, nbytes: float) -> tuple[float, float]:
    """alpha, beta of the calibration segment covering nbytes (independently of analysis)."""
    segment = cal["segments"][bisect.bisect_right(cal["breakpoints"], nbytes)]
    return segment["alpha_s"], segment["beta_s_per_byte"]


def test_a_sweep_without_a_calibration_calibrates_first(swept: Run) -> None:
    cal = swept.pingpong
    assert "calibrating on 2 ranks" in swept.stderr
    assert cal is not None and cal["source"] == "pingpong"
    assert cal["host"] == hostname() == swept.run["host"]
    assert cal["mpi_library"].split() == swept.run["mpi_library"].split()
    assert set(cal["gammas"]) == {"float32/sum"}
    assert cal["min_bytes"] <= SWEPT[0] and cal["max_bytes"] >= SWEPT[1]
    assert cal["created_at"] <= swept.run["finished_at"]


def test_every_ok_point_has_a_prediction_per_calibration(swept: Run) -> None:
    joined = swept.sql(
        "SELECT p.point_id, p.algorithm, m.calibration_id, m.model, m.predicted_s, "
        "m.latency_s, m.bandwidth_s, m.reduction_s, m.software_s "
        "FROM points p LEFT JOIN predictions m USING (point_id) "
        "WHERE p.run_id = ? AND p.status = 'ok'"
    )
    ok = swept.sql("SELECT count(*) AS n FROM points WHERE run_id = ? AND status = 'ok'").n.item()
    assert ok >= 40
    per_cal = joined.groupby("calibration_id").point_id.nunique().to_dict()
    assert per_cal == {cal["calibration_id"]: ok for cal in swept.calibrations}
    terms = joined.latency_s + joined.bandwidth_s + joined.reduction_s + joined.software_s
    assert np.allclose(terms, joined.predicted_s, rtol=1e-12, atol=0)
    assert (joined.predicted_s > 0).all()
    expected = [model_for(a) or "library_min" for a in joined.algorithm]
    assert joined.model.tolist() == expected
    assert set(joined[joined.algorithm == "mpi"].model) == {"library_min"}


@pytest.mark.parametrize("which", ["pingpong", "fitted", "launches"])
def test_predictions_use_the_calibrations_parameters(swept: Run, which: str) -> None:
    """textbook_s is the closed form with the calibration's segment; the prediction of record
    is the most complete variant the calibration allows (the fitted one has no curves)."""
    cal = getattr(swept, which)
    params = Params.from_row(cal)
    rows = swept.sql(
        "SELECT p.algorithm, p.ranks, p.bytes, p.dtype, p.op, m.model, m.variant, m.predicted_s, "
        "m.textbook_s FROM points p JOIN predictions m USING (point_id) "
        f"WHERE p.run_id = ? AND m.calibration_id = '{cal['calibration_id']}'"
    )
    for r in rows.itertuples(index=False):
        alpha, beta = segment_params(cal, r.bytes)
        gamma = cal["gammas"][f"{r.dtype}/sum"]
        want = predict(r.model, r.ranks, r.bytes, alpha, beta, gamma, DTYPES[r.dtype].itemsize)
        assert r.textbook_s == pytest.approx(want.total_s)
        ours = predict_with(params, r.algorithm, r.ranks, r.bytes, r.dtype, r.op)
        assert r.predicted_s == pytest.approx(ours.total_s)
    if which == "fitted":
        assert set(rows.variant) == {"textbook"}
        assert np.allclose(rows.predicted_s, rows.textbook_s)
    else:
        modelled = rows[rows.algorithm != "mpi"]
        assert set(modelled.variant) <= {"overheads", "contention"}
        autotuned = rows[rows.algorithm == "mpi"]  # closed form: not the forced algorithms' code
        assert set(autotuned.variant) == {"textbook"}
        assert np.allclose(autotuned.predicted_s, autotuned.textbook_s)


def test_the_fitted_calibration_describes_the_runs_own_timings(swept: Run) -> None:
    fit = swept.fitted
    assert fit["source"] == fit["calibration_id"] == f"fitted:{swept.run_id}"
    assert fit["alpha_s"] >= 0 and fit["beta_s_per_byte"] >= 0
    assert fit["gammas"]["float32/sum"] >= 0 and fit["breakpoints"] == []
    used = swept.sql(
        "SELECT p.median_s, m.predicted_s FROM points p JOIN predictions m USING (point_id) "
        f"WHERE p.run_id = ? AND m.calibration_id = '{fit['calibration_id']}' "
        f"AND p.algorithm <> 'mpi' AND p.ranks <= {physical_cores()}"
    )
    assert fit["details"]["points_used"] == "points with a core per rank"
    assert len(used) == fit["details"]["points"]
    t, f = used.median_s.to_numpy(), used.predicted_s.to_numpy()
    c = np.sum(1 / t) / np.sum(1 / t**2)
    r2 = 1 - np.sum(((t - f) / t) ** 2) / np.sum(((t - c) / t) ** 2)
    assert fit["r_squared"] == pytest.approx(r2)


def paired_units(swept: Run) -> dict:
    """(ranks, algorithm, bytes) -> {(launch, pass): median} of the ok points' samples."""
    frame = swept.sql(
        "SELECT p.ranks, p.algorithm, p.bytes, s.launch, s.pass, median(s.seconds) AS m "
        "FROM samples s JOIN points p USING (point_id) WHERE p.run_id = ? AND p.status = 'ok' "
        "GROUP BY ALL"
    )
    out: dict = {}
    for r in frame.itertuples(index=False):
        out.setdefault((r.ranks, r.algorithm, r.bytes), {})[(r.launch, r[4])] = r.m
    return out


def test_measured_crossovers_sit_between_two_decided_measured_sizes(swept: Run) -> None:
    """The interval is two measured sizes, at which the paired launches decide opposite ways."""
    rows = swept.sql("SELECT * FROM crossovers WHERE run_id = ? AND kind = 'measured'")
    assert (rows.low_bytes < rows.bytes).all() and (rows.bytes < rows.high_bytes).all()
    assert rows.calibration_id.isna().all()
    units, swept_sizes = paired_units(swept), {8 * 8**k for k in range(6)}
    for r in rows.itertuples(index=False):
        assert {r.low_bytes, r.high_bytes} <= swept_sizes, r
        a, b = r.algorithm_a, r.algorithm_b
        low = compare(units[(r.ranks, a, r.low_bytes)], units[(r.ranks, b, r.low_bytes)])
        high = compare(units[(r.ranks, a, r.high_bytes)], units[(r.ranks, b, r.high_bytes)])
        assert low.decided and low.a_faster and high.decided and not high.a_faster, r


def test_winners_are_decided_only_when_the_launches_agree(swept: Run) -> None:
    rows = swept.sql("SELECT * FROM winners WHERE run_id = ?")
    cells = swept.sql("SELECT count(DISTINCT (ranks, bytes)) n FROM points WHERE run_id = ?")
    assert len(rows) == cells.n.item() and (rows.candidates >= 2).all()
    units = paired_units(swept)
    for r in rows.itertuples(index=False):
        found = compare(units[(r.ranks, r.winner, r.bytes)], units[(r.ranks, r.runner_up, r.bytes)])
        assert r.decided == (found.decided and found.a_faster), r
        if r.decided:
            assert r.ratio_low <= r.ratio < 1 and r.ratio_high < 1
    assert set(rows.pairing) <= {"same launch", "same round"}


def test_library_algorithms_against_the_default_use_the_same_paired_rule(swept: Run) -> None:
    """against_default: mpi:ring over mpi at every size of every group, the verdict exactly the
    paired comparison's (slower / faster only when its interval excludes 1)."""
    rows = swept.sql("SELECT * FROM against_default WHERE run_id = ?")
    cells = swept.sql(
        "SELECT count(*) n FROM points WHERE run_id = ? AND algorithm = 'mpi:ring'"
        " AND status = 'ok'"
    )
    assert len(rows) == cells.n.item() > 0 and set(rows.algorithm) == {"mpi:ring"}
    units = paired_units(swept)
    for r in rows.itertuples(index=False):
        found = compare(units[(r.ranks, "mpi:ring", r.bytes)], units[(r.ranks, "mpi", r.bytes)])
        assert r.ratio == pytest.approx(found.ratio) and r.launches == found.launches
        want = "within noise" if not found.decided else ("faster" if found.a_faster else "slower")
        assert r.verdict == want
        assert r.ratio_low <= r.ratio <= r.ratio_high


def predicted_times(cal: dict, names: tuple[str, str], ranks: int, n: float) -> list[float]:
    """Smooth-block predictions of two algorithms at n bytes with the calibration, as stored."""
    params = Params.from_row(cal)
    return [predict_with(params, a, ranks, n, "float32", "sum", smooth=True).total_s for a in names]


def test_predicted_crossovers_are_where_the_model_changes_order(swept: Run) -> None:
    rows = swept.sql("SELECT * FROM crossovers WHERE run_id = ? AND kind = 'predicted'")
    cals = {c["calibration_id"]: c for c in swept.calibrations}
    assert set(rows.calibration_id) <= set(cals)
    assert rows.bytes.between(*SWEPT).all() and rows.low_bytes.isna().all()
    for r in rows.itertuples(index=False):
        names = (r.algorithm_a, r.algorithm_b)
        before = predicted_times(cals[r.calibration_id], names, r.ranks, r.bytes * 0.999)
        after = predicted_times(cals[r.calibration_id], names, r.ranks, r.bytes * 1.001)
        assert before[0] <= before[1] and after[0] >= after[1], r


def test_a_change_of_predicted_order_over_the_range_gives_a_crossover(swept: Run) -> None:
    rows = swept.sql("SELECT * FROM crossovers WHERE run_id = ? AND kind = 'predicted'")
    found = {
        (r.calibration_id, r.ranks, frozenset((r.algorithm_a, r.algorithm_b)))
        for r in rows.itertuples(index=False)
    }
    checked = 0
    for cal in swept.calibrations:
        for ranks in (2, 3):
            for pair in (("rabenseifner", "recursive_doubling"), ("recursive_doubling", "ring")):
                lo = np.subtract(*predicted_times(cal, pair, ranks, SWEPT[0]))
                hi = np.subtract(*predicted_times(cal, pair, ranks, SWEPT[1]))
                if lo * hi < 0:
                    checked += 1
                    assert (cal["calibration_id"], ranks, frozenset(pair)) in found
    assert checked > 0


def test_best_choices_pick_the_fastest_measured_and_predicted(swept: Run) -> None:
    choices = swept.sql("SELECT * FROM best_choices WHERE run_id = ?")
    assert len(choices) == 3 * 2 * 6  # calibrations x ranks x sizes
    times = swept.sql(
        "SELECT p.ranks, p.bytes, p.algorithm, p.median_s, m.calibration_id, m.predicted_s "
        "FROM points p JOIN predictions m USING (point_id) "
        "WHERE p.run_id = ? AND p.algorithm <> 'mpi'"
    )
    for r in choices.itertuples(index=False):
        mine = times[
            (times.ranks == r.ranks)
            & (times.bytes == r.bytes)
            & (times.calibration_id == r.calibration_id)
        ].set_index("algorithm")
        assert r.candidates == len(mine) >= 2
        assert r.measured_best == mine.median_s.idxmin()
        assert mine.predicted_s[r.predicted_best] == mine.predicted_s.min()
        assert r.pick_s == mine.median_s[r.predicted_best]
        assert r.slowdown == pytest.approx(r.pick_s / r.best_s - 1) and r.slowdown >= 0
        assert r.same_model == (model_for(r.measured_best) == model_for(r.predicted_best))
    textbook = choices[choices.calibration_id == swept.fitted["calibration_id"]]
    assert "mpi:ring" not in set(textbook.predicted_best), "ties go to collsweep's own ring"


def test_agreement_per_run_and_per_group(swept: Run) -> None:
    agreement = swept.sql("SELECT * FROM agreement WHERE run_id = ?")
    choices = swept.sql("SELECT * FROM best_choices WHERE run_id = ?")
    over = {r for r in (2, 3) if r > physical_cores()}
    placements = {"dedicated"} | ({"oversubscribed"} if over else set())
    groups = {"ranks=2 float32 sum", "ranks=3 float32 sum"}
    assert set(agreement.scope) == {"run"} | placements | groups
    assert agreement.model_pick_share.between(0, 1).all() and (agreement.mean_slowdown >= 0).all()
    for r in agreement.itertuples(index=False):
        mine = choices[choices.calibration_id == r.calibration_id]
        if r.scope in groups:
            mine = mine[mine.ranks == r.ranks]
        elif r.scope != "run":
            mine = mine[mine.ranks.isin(over) == (r.scope == "oversubscribed")]
        assert r.median_slowdown == pytest.approx(mine.slowdown.median())
        assert r.points == len(mine)
        assert r.model_pick_share == pytest.approx((mine.slowdown == 0).mean())
        assert r.mean_slowdown == pytest.approx(mine.slowdown.mean())
        assert r.same_model_share == pytest.approx(mine.same_model.mean())
        assert r.same_model_share >= r.model_pick_share


def point_states(swept: Run, name: str) -> pd.DataFrame:
    return swept.sql(
        "SELECT p.algorithm, p.ranks, a.state FROM assumptions a JOIN points p USING (point_id) "
        f"WHERE a.run_id = ? AND a.name = '{name}'"
    )


def test_power_of_two_holds_at_two_ranks_and_is_violated_at_three(swept: Run) -> None:
    states = point_states(swept, "power_of_two")
    assert set(states[states.ranks == 2].state) == {"holds"}
    three = states[states.ranks == 3]
    folded = three[three.algorithm.isin(["recursive_doubling", "rabenseifner", "mpi"])]
    assert len(folded) > 0 and set(folded.state) == {"violated"}
    assert set(three[three.algorithm.isin(["ring", "mpi:ring"])].state) == {"holds"}


def test_oversubscription_is_violated_beyond_the_physical_cores(swept: Run) -> None:
    states = point_states(swept, "not_oversubscribed")
    expected = np.where(states.ranks > physical_cores(), "violated", "holds")
    assert states.state.tolist() == expected.tolist()


def test_every_point_and_the_run_have_their_checks(swept: Run) -> None:
    rows = swept.sql("SELECT * FROM assumptions WHERE run_id = ?")
    per_point = rows.dropna(subset=["point_id"]).groupby("point_id").name.apply(set)
    ok = swept.sql("SELECT point_id FROM points WHERE run_id = ? AND status = 'ok'")
    assert set(per_point.index) == set(ok.point_id)
    assert all(names == set(POINT_CHECKS) for names in per_point)
    run_level = rows[rows.point_id.isna()]
    assert set(run_level.name) == set(NAMES) - set(NODE_CHECKS)  # one host: no emulated nodes
    assert run_level.set_index("name").state["single_node"] == "holds"
    calibrated = run_level.dropna(subset=["calibration_id"])
    pingpong, fitted = swept.pingpong["calibration_id"], swept.fitted["calibration_id"]
    launches = swept.launches["calibration_id"]
    expected = [
        ("calibration_fit", launches),
        ("calibration_fit", pingpong),
        ("calibration_fit", fitted),
        ("no_protocol_switch", launches),
        ("no_protocol_switch", pingpong),
    ]
    assert sorted(zip(calibrated.name, calibrated.calibration_id, strict=True)) == sorted(expected)
    library = point_states(swept, "library_choice_known")
    assert set(library[library.algorithm == "mpi"].state) == {"unknown"}
    assert set(library[library.algorithm != "mpi"].state) == {"holds"}


def test_analysing_again_replaces_every_table(swept: Run) -> None:
    tables = ("predictions", "crossovers", "best_choices", "agreement", "assumptions")

    def counts() -> dict[str, int]:
        return {
            t: swept.sql(f"SELECT count(*) AS n FROM {t} WHERE run_id = ?").n.item() for t in tables
        }

    before = counts()
    calibrations = swept.sql("SELECT count(*) AS n FROM calibrations").n.item()
    summary = run_analysis.analyze_run(swept.db, swept.run_id, progress=lambda _line: None)
    assert counts() == before
    assert summary.predictions == before["predictions"]
    assert swept.sql("SELECT count(*) AS n FROM calibrations").n.item() == calibrations


def test_unknown_runs_and_missing_stores_are_refused(swept: Run, tmp_path: Path) -> None:
    with pytest.raises(run_analysis.AnalysisError, match="no run 'nope'"):
        run_analysis.analyze_run(swept.db, "nope")
    with pytest.raises(store.StoreError, match="no results store"):
        run_analysis.analyze_run(tmp_path / "absent.duckdb", swept.run_id)
    assert not (tmp_path / "absent.duckdb").exists()
