"""Scale page: answers at the group sizes users run, from simulated runs (`collsweep
simulate`): the winner over (ranks x size) with the cells a measured run decided marked, and
where the choice flips as p grows, simulated beside the closed form. Nothing here is measured
except the marks."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import charts, queries, run_banners, ui
from runners.domain.units import format_bytes


def _pick_run(path: Path) -> str | None:
    """A simulated run (newest first), or None, said how to make one."""
    runs = queries.simulated_runs(path)
    if runs.empty:
        st.info(
            "No simulated run in this store yet: `collsweep simulate data/scale.toml` runs the "
            "allreduce algorithms at 8 to 1024 ranks in SimGrid (about three minutes here) and "
            "stores them as a simulated run (docs/guide/simulation.md)."
        )
        return None
    labels = {
        r.run_id: f"{r.run_id}: {r.platform}, {r.points} points ({r.simulator})"
        for r in runs.itertuples(index=False)
    }
    return str(
        ui.choose("Simulated run", list(labels), "sim", format_func=lambda r: labels[str(r)])
    )


def main(path: Path, overview: queries.Overview) -> None:
    """Render the page below its title."""
    run_id = _pick_run(path)
    if run_id is None:
        return
    run_banners.show_kind(path, run_id)
    groups = queries.scale_groups(path, run_id)
    if groups.empty:
        st.info(f"Run {run_id} has no winners yet: `collsweep analyze {run_id}` makes them.")
        return
    names = [f"{g.collective} {g.dtype} {g.op}" for g in groups.itertuples(index=False)]
    chosen = groups.iloc[names.index(str(ui.choose("Group", names, "group")))]
    data = queries.scale_data(path, run_id, *map(str, chosen[["collective", "dtype", "op"]]))
    st.subheader("The winner at every group size")
    ui.chart(charts.scale_heatmap(data.winners, data.measured), "scale_heatmap")
    st.caption(
        "Simulated winners, grey where two algorithms are within the run's margin. A mark is "
        f"a cell a measured run decided too: {charts.AGREES} the same winner, "
        f"{charts.DIFFERS} another (hover: which, and the run); (in brackets): measured only."
    )
    st.subheader("Where the choice flips, as p grows")
    pairs = charts.flipping_pairs(data.winners, data.crossovers)
    if not pairs:
        st.info("No two winning algorithms swap places in this group.")
        return
    pair = ui.choose("Pair", [f"{a} / {b}" for a, b in pairs], "pair")
    a, b = str(pair).split(" / ")
    ui.chart(charts.crossover_by_ranks(data.crossovers, (a, b)), "scale_crossovers")
    sizes = sorted(data.winners["bytes"].unique())
    st.caption(
        "Each simulated crossover lies between two simulated sizes (the bar; sizes "
        f"{format_bytes(sizes[0])} .. {format_bytes(sizes[-1])}); the dashed line is the closed "
        "form's on the platform's own alpha, beta and gamma: where they part, the schedule's "
        "steps or the network's contention decide what the closed form leaves out."
    )


ui.run_page("Scale", main)
