"""Workload page: a job's collective calls answered for the whole job, as `collsweep workload
report` stored them. Verdict first (best's job time against the default, and its replay), then
where the job's time goes, every policy's total with its interval, the model's prediction and
the replay, the replays set against the points' estimate step by step, and the calls a chosen
policy wins and loses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import charts, queries, ui
from runners.domain.units import counted, format_ratio, format_seconds

HOW_TO = (
    "No run has a workload report yet. Sweep exactly a workload's calls, then price every "
    "policy for the whole job (and, with --replay, check the estimate on real ranks):\n\n"
    "```\ncollsweep sweep data/quick.toml --workload W.json\n"
    "collsweep workload report W.json --run RUN --replay\n```"
)
REPLAY_HOW_TO = (
    "Not replayed yet: `collsweep workload report W --run {run} --replay` (W: the workload "
    "file of {workload}) runs the calls in recorded order on real ranks under each policy and "
    "stores the job times."
)
CALL_COLUMNS = [
    "call", "algorithm", "own", "median_s", "time_s", "default_time_s", "delta_s",
    "share_of_default", "ratio", "ratio_low", "ratio_high", "verdict",
]  # fmt: skip
POLICY_COLUMNS = [
    "policy", "kind", "total_s", "interval_low_s", "interval_high_s", "ratio", "ratio_low",
    "ratio_high", "verdict", "faster_calls", "slower_calls", "gain_share", "loss_share",
    "predicted_s",
]  # fmt: skip
RATIO_COLUMNS = ("replay_ratio", "machine_ratio", "order_ratio", "barrier_ratio")
REPLAY_COLUMNS = {
    "policy": "policy",
    "ranks": "ranks",
    "launches": "launches",
    "estimate_s": "points_s",
    "isolated_s": "isolated_s",
    "sequenced_s": "sequenced_s",
    "replayed_s": "replayed_s",
    "replay_ratio": "replay / points",
    "machine_ratio": "= machine state",
    "order_ratio": "x order & cache",
    "barrier_ratio": "x no Barriers",
}


def _interval(low: Any, high: Any) -> str:
    """'[0.9x, 1.1x]', or '' where the launches gave no interval."""
    if pd.isna(low) or pd.isna(high):
        return ""
    return f" [{format_ratio(low)}, {format_ratio(high)}]"


def replay_words(replay: dict[str, Any] | None, replayed_any: bool) -> str:
    """How the policy's replay went, for the answer line ('' where nothing was replayed)."""
    if replay is None:
        return "; not replayed (see Estimate against replay)" if replayed_any else ""
    return (
        f"; replayed {format_seconds(replay['replayed_s'])} "
        f"({format_ratio(replay['replay_ratio'])} the points' estimate)"
    )


def answer_line(data: queries.WorkloadData, policy: str = "best") -> str:
    """One line: the policy's job time, its ratio to the default with the interval, the calls
    it speeds up and slows down, and its replay."""
    row = data.policy(policy)
    if row is None:
        return f"The report has no **{policy}** policy: the run decided no winner to price."
    total = format_seconds(row["total_s"])
    if row["verdict"] == "same as default":
        head = (
            f"**{policy}** is the default here: {total} per job (no decided winner beats the "
            "library's own choice for any call)"
        )
    else:
        slower = f", {row['slower_calls']} slower" if row["slower_calls"] else ""
        head = (
            f"**{policy}**: {total} per job, {format_ratio(row['ratio'])} the default "
            f"({format_seconds(row['default_total_s'])})"
            f"{_interval(row['ratio_low'], row['ratio_high'])}, {row['verdict']}; "
            f"{row['faster_calls']} of {counted(int(row['priced_calls']), 'call')} "
            f"faster{slower}"
        )
    return head + replay_words(data.replay_of(policy), not data.replays.empty) + "."


def _answer(data: queries.WorkloadData) -> None:
    """The verdict: best in green when decidedly faster, red when slower; tuned files after."""
    row = data.policy("best") or {}
    show = {"faster": st.success, "slower": st.error}.get(str(row.get("verdict")), st.info)
    show(answer_line(data), icon=":material/work:")
    tuned = data.policies[data.policies["kind"] == "tuned"]
    if len(tuned):
        st.markdown("Tuned files: " + " ".join(answer_line(data, p) for p in tuned["policy"]))


def _about(data: queries.WorkloadData, run_id: str) -> None:
    """What the workload is and when the report was made."""
    body = data.body
    calls = body.get("calls") or []
    total = sum(int(c.get("calls", 0)) for c in calls)
    kind = (body.get("source") or {}).get("kind")
    source = f" ({kind})" if kind else ""
    ordered = "in recorded order" if body.get("order") else "no recorded order"
    st.caption(
        f"Workload **{data.name}**{source}: {counted(len(calls), 'distinct call')}, "
        f"{counted(total, 'call')} in all, {ordered}; reported on run {run_id} at "
        f"{str(data.reported_at)[:19]}."
    )


def _shares(data: queries.WorkloadData) -> None:
    """Where the default job's time goes, call by call."""
    st.subheader("Where the job's time goes")
    default = data.default or "default"
    ui.chart(charts.call_shares_figure(data.calls_of(default), default), "workload_shares")
    st.caption(
        f"Each distinct call's time in the job under {default}: calls x the median of its "
        "point in the run. Bars are labelled collective, size and how many calls the job makes."
    )


def replayed_jobs(data: queries.WorkloadData) -> dict[str, float]:
    """Per policy replayed at every group size, its replay as a job time: the replayed
    sequence's time scaled by the job's points sum over the sequence's (1 where the sequence
    is the whole job, as for a recorded order)."""
    found = {}
    for r in data.replays.itertuples(index=False):
        row = data.policy(r.policy)
        if r.complete and row is not None and r.estimate_s:
            found[r.policy] = r.replayed_s * row["points_sum_s"] / r.estimate_s
    return found


def _policies(data: queries.WorkloadData) -> None:
    """Every policy's job total side by side, and the table behind it."""
    st.subheader("The policies")
    ui.chart(charts.policies_figure(data.policies, replayed_jobs(data)), "workload_policies")
    st.caption(
        "Squares: the job's total from the run's points, the median launch with its 95% "
        "interval over paired launches (green: decidedly faster than the default, red: "
        "slower, grey: within noise or the default itself); dotted line: the default; open "
        "diamonds: the model's prediction; crosses: the replay on real ranks, scaled to the "
        "job's calls where the replayed sequence is not the whole job."
    )
    with st.expander("Every policy"):
        ui.table(data.policies[POLICY_COLUMNS], key="workload_policy_table")


def _replays(data: queries.WorkloadData, run_id: str) -> None:
    """Each replayed policy's job time against the points' estimate, step by step."""
    st.subheader("Estimate against replay")
    if data.replays.empty:
        st.info(REPLAY_HOW_TO.format(workload=data.name, run=run_id))
        return
    table = data.replays.copy()
    for column in RATIO_COLUMNS:
        table[column] = table[column].map(format_ratio)
    table = table.rename(columns=REPLAY_COLUMNS)[list(REPLAY_COLUMNS.values())]
    ui.table(table, key="workload_replays")
    st.caption(
        "replay / points = machine state (isolated / points: then against during the "
        "sweep; for a forced policy also its launch's settings, e.g. MPICH's forcing turns "
        "its shared-memory collectives off for every call) x order & cache (sequenced / "
        "isolated: the job's order and the cache state "
        "between calls) x no Barriers (replayed / sequenced: back to back). points: the "
        "replayed sequence priced with the run's medians; isolated: each distinct call "
        "alone, times its count, in the replay's launches; sequenced: the sequence with a "
        "Barrier before each call; replayed: the sequence back to back as the job runs it. "
        "Each the median launch, summed over the group sizes replayed."
    )
    partial = data.replays[~data.replays["complete"]]["policy"].tolist()
    if partial:
        st.caption(f"Not replayed at every group size: {', '.join(partial)}.")
    if data.unreplayed:
        st.markdown(
            "Not replayed:\n"
            + "\n".join(f"- **{name}**: {why}" for name, why in data.unreplayed.items())
        )


def _wins(data: queries.WorkloadData) -> None:
    """The calls a chosen policy speeds up and slows down against the default."""
    st.subheader("Wins and losses per call")
    names = data.policies["policy"].tolist()
    policy = ui.choose("Policy", names, "policy", "best")
    calls = data.calls_of(policy)
    row = data.policy(policy) or {}
    if calls.empty or not calls["delta_s"].fillna(0).any():
        st.info(  # a chart of no bars says nothing: not drawn
            f"{policy} prices none of the workload's calls."
            if calls.empty
            else f"{policy} runs the default's choice at every call: nothing won or lost."
        )
        return
    ui.chart(charts.wins_figure(calls, policy), "workload_wins")
    st.caption(
        f"{policy}: {row.get('faster_calls', 0)} calls decidedly faster, saving "
        f"{100 * (row.get('gain_share') or 0):.1f}% of the default job; "
        f"{row.get('slower_calls', 0)} decidedly slower, costing "
        f"{100 * (row.get('loss_share') or 0):.1f}%. Grey: the paired launches could not tell "
        "it from the default, or it is the default's own choice. An override can improve one "
        "call and worsen the rest."
    )
    with st.expander("Every call"):
        ui.table(calls[CALL_COLUMNS], key="workload_calls")


def _notes(data: queries.WorkloadData) -> None:
    """What the report and the workload file noted."""
    notes = [*data.notes, *(data.body.get("notes") or [])]
    if notes:
        st.subheader("Notes")
        st.markdown("\n".join(f"- {note}" for note in notes))


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    reported = queries.workload_runs(path)
    if not reported:
        st.info(HOW_TO)
        return
    runs = queries.runs_table(path)
    run_id = ui.choose_run(runs[runs["run_id"].isin(reported)])
    name = ui.choose("Workload", queries.workloads_of(path, run_id), "workload")
    data = queries.workload_data(path, run_id, name)
    _about(data, run_id)
    if data.policies.empty:
        st.info("The report priced no policy: the run measured none of the workload's calls.")
        _notes(data)
        return
    _answer(data)
    _shares(data)
    _policies(data)
    _replays(data, run_id)
    _wins(data)
    _notes(data)


ui.run_page("Workload", main)
