"""The Workload page: a workload's stored report on a synthetic run (with replays stored as
`--replay` would), every number checked against the store, and the empty store's message."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT
from helpers import synthetic
from streamlit.testing.v1 import AppTest

from runners import store
from runners.analysis.workload_report import report_workload
from runners.domain.libraries.tuning import Band
from runners.domain.units import column_unit, format_ratio, format_seconds
from runners.domain.workload.file import workload_from_json
from runners.store.dashboard_reads.workload import sequence_counts, unreplayed
from runners.store.workloads import add_replays

APP = ROOT / "dashboard" / "app.py"
RUN = synthetic.demo_specs()[0].run_id
NAME = "job"


def call(nbytes: int, calls: int, ranks: int = 2, collective: str = "allreduce") -> dict:
    op = "none" if collective == "bcast" else "sum"
    return {"collective": collective, "bytes": nbytes, "dtype": "float32", "op": op} | {
        "ranks": ranks,
        "calls": calls,
        "root": 0 if collective == "bcast" else None,
    }


# Two group sizes; the bcast has no point in the run (priced by no policy: a note). No order:
# a replay runs each call once, so the replay is scaled to the job on the policies' chart.
WORKLOAD = {
    "collsweep_workload": 1,
    "name": NAME,
    "source": {"kind": "hand"},
    "calls": [
        call(64, 1000),
        call(262144, 40),
        call(2097152, 10, ranks=4),
        call(4096, 200, ranks=4),
        call(2**20, 1, collective="bcast"),
    ],
    "notes": ["made by hand for the test"],
}
# policy -> ranks -> per launch, per repetition: (replayed, sequenced, isolated) seconds
REPLAYS = {
    "default": {
        2: [[(1.0e-3, 1.1e-3, 1.2e-3), (1.2e-3, 1.3e-3, 1.2e-3)], [(0.9e-3, 1.0e-3, 1.1e-3)]],
        4: [[(5.0e-3, 5.5e-3, 6.0e-3)], [(5.2e-3, 5.4e-3, 5.9e-3), (5.6e-3, 5.7e-3, 6.1e-3)]],
    },
    "best": {
        2: [[(0.8e-3, 0.9e-3, 1.0e-3)], [(0.7e-3, 0.8e-3, 0.9e-3)]],
        4: [[(4.0e-3, 4.5e-3, 5.0e-3)], [(4.2e-3, 4.4e-3, 4.9e-3)]],
    },
    "ring": {  # replayed at p=2 only: not on the chart, said to be partial
        2: [[(2.0e-3, 2.1e-3, 2.2e-3)], [(2.4e-3, 2.5e-3, 2.6e-3)]],
    },
}


def replay_rows(policy: str, ranks: int, launch: int) -> list[dict]:
    """The replays table's rows of one launch of one policy (as runners.jobs.replay stores)."""
    return [
        {"policy": policy, "ranks": ranks, "launch": launch, "repetition": r, "replayed_s": a}
        | {"sequenced_s": b, "isolated_s": c, "library": "mpich"}
        for r, (a, b, c) in enumerate(REPLAYS[policy][ranks][launch])
    ]


@pytest.fixture(scope="module")
def reported(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo store with the workload reported on its first run and replays."""
    path = tmp_path_factory.mktemp("workload") / "w.duckdb"
    shutil.copyfile(demo_store, path)
    report_workload(path, RUN, workload_from_json(WORKLOAD))
    for policy, per_ranks in REPLAYS.items():
        for ranks, launches in per_ranks.items():
            for launch in range(len(launches)):  # one add per launch, as a replay does
                add_replays(path, RUN, NAME, replay_rows(policy, ranks, launch), "replay-test")
    return path


def open_workload(db: Path, monkeypatch: pytest.MonkeyPatch, **params: str) -> AppTest:
    """The app on the Workload page of `db`."""
    monkeypatch.setenv(store.STORE_ENV, str(db))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(params)
    at.run()
    at.switch_page("views/workload.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def figures(at: AppTest) -> dict[str, dict]:
    """The page's figures by the role of their first trace."""
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    return {spec["data"][0]["meta"]["role"]: spec for spec in specs}


def trace(figure: dict, role: str) -> dict:
    return next(t for t in figure["data"] if t["meta"]["role"] == role)


def policies(db: Path) -> pd.DataFrame:
    return store.query(db, "SELECT * FROM workload_policies WHERE run_id = ?", [RUN])


def calls_of(db: Path, policy: str) -> pd.DataFrame:
    return store.query(
        db,
        "SELECT * FROM workload_calls WHERE run_id = ? AND policy = ? ORDER BY call_index",
        [RUN, policy],
    )


def expected_replay(db: Path, policy: str) -> dict[str, float]:
    """The policy's replay summed over its group sizes, each the median launch of the median
    repetition, and the points' estimate: each replayed call once (no order) x its median."""
    measures = {"replayed_s": 0, "sequenced_s": 1, "isolated_s": 2}
    found = dict.fromkeys([*measures, "estimate_s"], 0.0)
    calls = calls_of(db, policy)
    for ranks, launches in REPLAYS[policy].items():
        for name, k in measures.items():
            per_launch = [statistics.median(rep[k] for rep in reps) for reps in launches]
            found[name] += statistics.median(per_launch)
        found["estimate_s"] += calls[calls["ranks"] == ranks]["median_s"].sum()
    return found


def test_the_page_answers_verdict_first_with_the_stored_numbers(
    reported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_workload(reported, monkeypatch)
    rows = policies(reported).set_index("policy")
    best = rows.loc["best"]
    answer = next(e.value for kind in ("success", "info", "error") for e in getattr(at, kind))
    assert answer.startswith("**best**")
    if best["verdict"] == "same as default":
        assert f"{format_seconds(best['total_s'])} per job" in answer
    else:
        assert f"{format_seconds(best['total_s'])} per job, {format_ratio(best['ratio'])}" in answer
        assert f"[{format_ratio(best['ratio_low'])}, {format_ratio(best['ratio_high'])}]" in answer
        assert f"{best['faster_calls']} of {best['priced_calls']} calls faster" in answer
    mine = expected_replay(reported, "best")
    ratio = format_ratio(mine["replayed_s"] / mine["estimate_s"])
    assert answer.endswith(
        f"; replayed {format_seconds(mine['replayed_s'])} ({ratio} the points' estimate)."
    )
    # the calls as time shares under the default: every priced call, costliest first
    shown = figures(at)
    default = calls_of(reported, "default").sort_values("time_s", ascending=False)
    shares = trace(shown["share"], "share")
    _, scale = column_unit([default["time_s"].max()])
    assert shares["x"] == pytest.approx((default["time_s"] / scale).tolist())
    assert shares["y"][0].startswith("allreduce") and "p=4" in "".join(shares["y"])
    assert "allreduce 256 KiB p=2 x40" in shares["y"]
    whole = default["time_s"].sum()
    assert shares["text"] == [f"{100 * t / whole:.1f}%" for t in default["time_s"]]
    # the bcast has no point: left out, and the notes say so
    assert len(default) == 4 and not any("bcast" in label for label in shares["y"])
    notes = "\n".join(m.value for m in at.markdown)
    assert "have no default point in the run" in notes and "made by hand for the test" in notes


def test_the_policies_side_by_side_with_intervals_predictions_and_replays(
    reported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_workload(reported, monkeypatch)
    rows = policies(reported).set_index("policy")
    figure = figures(at)["total"]
    totals = trace(figure, "total")
    assert totals["y"][:2] == ["default", "best"] and set(totals["y"]) == set(rows.index)
    ordered = rows.loc[totals["y"]]
    assert totals["x"] == pytest.approx(ordered["total_s"].tolist())
    high = (ordered["interval_high_s"] - ordered["total_s"]).fillna(0)
    assert totals["error_x"]["array"] == pytest.approx(high.tolist())
    colors = dict(zip(totals["y"], totals["marker"]["color"], strict=True))
    assert {colors[p] for p in rows.index[rows["verdict"] == "faster"]} <= {"#2ca02c"}
    assert {colors[p] for p in rows.index[rows["verdict"] == "slower"]} <= {"#d62728"}
    predicted = trace(figure, "predicted")
    assert predicted["x"] == pytest.approx(rows.loc[predicted["y"], "predicted_s"].tolist())
    [line] = [s for s in figure["layout"]["shapes"] if s.get("line", {}).get("dash") == "dot"]
    assert line["x0"] == pytest.approx(rows.loc["default", "default_total_s"])
    # only the policy replayed at every group size, scaled from its sequence to the job
    replayed = trace(figure, "replayed")
    assert sorted(replayed["y"]) == ["best", "default"]  # not ring, replayed at p=2 only
    for policy, seconds in zip(replayed["y"], replayed["x"], strict=True):
        mine = expected_replay(reported, policy)
        job = mine["replayed_s"] * rows.loc[policy, "points_sum_s"] / mine["estimate_s"]
        assert seconds == pytest.approx(job)


def test_estimate_against_replay_is_decomposed_per_policy(
    reported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_workload(reported, monkeypatch)
    table = next(d.value for d in at.dataframe if "replay / points" in d.value.columns)
    assert table["policy"].tolist() == sorted(REPLAYS)
    for row in table.to_dict("records"):
        mine = expected_replay(reported, row["policy"])
        unit = next(c for c in row if c.startswith("replayed ("))
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit[len("replayed (") : -1]]
        assert row[unit] * scale == pytest.approx(mine["replayed_s"])
        assert row["replay / points"] == format_ratio(mine["replayed_s"] / mine["estimate_s"])
        assert row["= machine state"] == format_ratio(mine["isolated_s"] / mine["estimate_s"])
        assert row["x order & cache"] == format_ratio(mine["sequenced_s"] / mine["isolated_s"])
        assert row["x no Barriers"] == format_ratio(mine["replayed_s"] / mine["sequenced_s"])
        assert row["launches"] == 2
    assert table.set_index("policy").loc["default", "ranks"] == "2, 4"
    captions = " ".join(c.value for c in at.caption)
    assert "Not replayed at every group size: ring." in captions
    said = "\n".join(m.value for m in at.markdown)
    assert "Not replayed:" in said and "- **binomial_tree**: no replay of it is stored" in said


def test_the_chosen_policys_wins_and_losses_per_call(
    reported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_workload(reported, monkeypatch)
    assert at.selectbox(key="policy").value == "best"
    at.selectbox(key="policy").set_value("ring").run()
    assert at.query_params["policy"] == "ring"
    bars = trace(figures(at)["delta"], "delta")
    assert bars["meta"]["policy"] == "ring"
    calls = calls_of(reported, "ring").sort_values("delta_s")
    _, scale = column_unit([calls["delta_s"].abs().max()])
    assert bars["x"] == pytest.approx((calls["delta_s"] / scale).tolist())
    assert bars["customdata"] == calls["verdict"].tolist()
    colors = {"faster": "#2ca02c", "slower": "#d62728"}
    expected = [colors.get(v, "#c7c7c7") for v in calls["verdict"]]
    assert bars["marker"]["color"] == expected
    shares = calls["share_of_default"].fillna(0)
    assert bars["text"] == [f"{100 * s:+.1f}% of the job" for s in shares]
    row = policies(reported).set_index("policy").loc["ring"]
    said = f"ring: {row['faster_calls']} calls decidedly faster"
    assert any(c.value.startswith(said) for c in at.caption)


def test_a_tuned_file_is_answered_for_the_whole_job_beside_best(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that followed a tuning file (mpi:tuned) gets a line of its own under best's."""
    bands = {2: [Band(4096, "mpi:recursive_doubling"), Band(None, None)]}
    spec = synthetic.RunSpec(
        run_id="r20261203-120000-tttt",
        ranks=(2,),
        algorithms=("mpi", "mpi:recursive_doubling", "mpi:tuned"),
        timeout_point=False,
        tuning_file=str(synthetic.write_tuning_file(tmp_path, bands)),
    )
    db = tmp_path / "tuned.duckdb"
    synthetic.build_store(db, [spec])
    report_workload(db, spec.run_id, workload_from_json(WORKLOAD))
    at = open_workload(db, monkeypatch)
    tuned = store.query(db, "SELECT * FROM workload_policies WHERE policy = 'mpi:tuned'").iloc[0]
    assert tuned["kind"] == "tuned"
    [line] = [m.value for m in at.markdown if m.value.startswith("Tuned files: ")]
    assert line.startswith("Tuned files: **mpi:tuned**") and "not replayed" not in line
    assert format_seconds(tuned["total_s"]) in line


def test_a_policy_no_launch_can_run_is_said_why() -> None:
    """best forcing MPICH's ring at one size and keeping the default at another has no one
    launch (runners.domain.sweep.replay): the page says so from the stored calls."""
    rows = [("default", 0, "mpi"), ("default", 1, "mpi"), ("best", 0, "mpi:ring")]
    rows.append(("best", 1, "mpi"))
    fields = ("policy", "call_index", "algorithm")
    calls = pd.DataFrame([dict(zip(fields, row, strict=True)) for row in rows])
    calls = calls.assign(own=True, ranks=2)
    table = pd.DataFrame(
        [{"policy": p, "kind": p, "library": "mpich"} for p in ("default", "best")]
    )
    why = unreplayed(table, calls, {"default"})
    assert list(why) == ["best"] and "runs mpi and mpi:ring for allreduce" in why["best"]
    assert why["best"].startswith("p=2: ")
    assert unreplayed(table, calls, set()) == {"default": "no replay of it is stored"} | why


def test_the_replay_sequence_counts_follow_the_recorded_order() -> None:
    assert sequence_counts(WORKLOAD) == dict.fromkeys(range(5), 1)
    ordered = WORKLOAD | {"order": [[1, 3], [0, 2], [1, 4]]}
    assert sequence_counts(ordered) == {1: 7, 0: 2}
    assert sequence_counts({"calls": []}) == {}


def test_without_a_workload_report_the_page_says_how_to_make_one(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_workload(demo_store, monkeypatch)
    [info] = at.info
    assert "collsweep workload report W.json --run RUN" in info.value
    assert "collsweep sweep data/quick.toml --workload W.json" in info.value
    assert not at.get("plotly_chart")


def test_a_policy_that_changes_no_call_draws_no_chart(
    reported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default against itself wins and loses nothing: said, and no empty chart drawn."""
    at = open_workload(reported, monkeypatch)
    at.selectbox(key="policy").set_value("default").run()
    assert "delta" not in figures(at)
    said = " ".join(i.value for i in at.info)
    assert "default runs the default's choice at every call" in said
