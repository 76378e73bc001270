"""One run as a self-contained HTML file to attach to a ticket: the verdict (winner strip,
sentences, precision), each group's curves (relative and absolute), the assumptions and the
provenance; Plotly is inline, so the file opens anywhere without a server or the network.

`collsweep report RUN --out FILE` runs this module (`python -m dashboard.report`), as
`collsweep dashboard` runs dashboard.serve; the Verdict page offers the same file.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from dashboard import badges, charts, queries
from runners import store
from runners.domain.collectives.collective import group_title
from runners.domain.errors import CollsweepError
from runners.domain.model.calibration_id import with_caveat
from runners.domain.outputs import write_texts
from runners.domain.sweep.run_labels import run_title
from runners.domain.sweep.simulated_run import not_measured_words, simulated_table
from runners.domain.verdict.provisional import short_reason
from runners.domain.verdict.winner_table import by_group, group_sentence

PROVENANCE = ("run_id", "name", "tags", "status", "started_at", "finished_at", "host",
              "cpu_model", "physical_cores", "mpi_version", "code_version",
              "command_line")  # fmt: skip
STYLE = """
body { font-family: sans-serif; max-width: 1200px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
.warning { background: #fff4e5; padding: 0.5em 1em; border-left: 4px solid #f0a020; }
"""


class Figures:
    """Figures as HTML fragments; the first carries plotly.js inline, the rest reuse it."""

    def __init__(self) -> None:
        self.first = True

    def html(self, fig: go.Figure) -> str:
        """The figure as a <div> (and, once, the library)."""
        fragment = fig.to_html(full_html=False, include_plotlyjs="inline" if self.first else False)
        self.first = False
        return fragment


def report_html(path: Path | str, run_id: str) -> str:
    """The whole report of one stored, analysed run."""
    figures = Figures()
    data = queries.verdict_data(path, run_id)
    run = queries.run_details(path, [run_id])
    labels = run.iloc[0].to_dict() if len(run) else {}
    name = run_title(run_id, labels.get("name"), labels.get("tags"))
    parts = [f"<h1>collsweep report: {html.escape(name)}</h1>"]
    simulation = simulated_table(labels.get("spec_toml"))
    if simulation is not None:
        parts.append(f"<p class='warning'>{html.escape(not_measured_words(simulation))}</p>")
    parts += _verdict(data, figures, simulated=simulation is not None)
    parts += _curves(path, run_id, figures)
    parts += _assumptions(path, run_id)
    parts += _provenance(path, run_id)
    title = f"collsweep {html.escape(name)}"
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{STYLE}</style></head><body>{''.join(parts)}</body></html>\n"
    )


def _verdict(data: queries.VerdictData, figures: Figures, simulated: bool = False) -> list[str]:
    parts = ["<h2>Verdict</h2>"]
    if not simulated:  # a simulated point is one value: no precision target
        parts.append(
            f"<p>Precision: {data.points_met} of {data.points_ok} points met their target.</p>"
        )
    if data.provisional_reason:
        short, reason = (
            html.escape(t) for t in (short_reason(data.provisional_reason), data.provisional_reason)
        )
        parts.append(
            f"<p class='warning'>Provisional: {short}.</p>"
            f"<details><summary>Why provisional: the evidence</summary><p>{reason}</p></details>"
        )
    for (ranks, dtype, op, collective), cells in by_group(data.cells).items():
        apart = " (oversubscribed: reported apart)" if ranks in data.oversubscribed else ""
        sentence = html.escape(group_sentence(cells))
        title = html.escape(group_title(ranks, dtype, op, collective))
        parts.append(f"<p><b>{title}</b>{apart}: {sentence}</p>")
    parts.append(figures.html(charts.winner_strip(data.cells)))
    return parts


def _curves(path: Path | str, run_id: str, figures: Figures) -> list[str]:
    grid = queries.run_grid(path, run_id)
    parts = ["<h2>Curves</h2>"]
    calibrations = queries.prediction_calibrations(path, run_id)
    cal = calibrations[0] if calibrations else None
    if cal is not None:
        parts.append(f"<p>Predictions of calibration {html.escape(with_caveat(cal))}.</p>")
    for (ranks, dtype, op), _ in grid.groupby(["ranks", "dtype", "op"], sort=True):
        scope = queries.Scope(run_id, int(ranks), str(dtype), str(op), calibration_id=cal)
        data = queries.curves_data(path, scope)
        parts.append(f"<h3>{html.escape(group_title(int(ranks), str(dtype), str(op)))}</h3>")
        marked = queries.envelope_crossovers(data.points, data.crossovers)  # the page's default
        for metric in ("relative", "time"):
            parts.append(figures.html(charts.curves_figure(data.points, marked, metric)))
    return parts


def _assumptions(path: Path | str, run_id: str) -> list[str]:
    """The run's one assumption line (as on every page of the dashboard) and its matrix."""
    found = queries.run_assumptions(path, run_id)
    checks = queries.assumptions_data(path, run_id, found.calibration_id).checks
    if checks.empty:
        return ["<h2>Assumptions</h2><p>Not checked yet (`collsweep analyze RUN`).</p>"]
    line = f"{badges.headline(badges.badges(found.summary))} (over {found.words()})"
    return [
        "<h2>Assumptions</h2>",
        f"<p>{html.escape(line)}</p>",
        _table(queries.assumption_matrix(checks)),
    ]


def _provenance(path: Path | str, run_id: str) -> list[str]:
    run = queries.run_details(path, [run_id])
    shown = [c for c in PROVENANCE if c in run.columns]
    rows = pd.DataFrame({"field": shown, "value": [str(run[c].iloc[0]) for c in shown]})
    return ["<h2>Provenance</h2>", _table(rows)]


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, escape=True, border=0)


def main(argv: list[str] | None = None) -> int:
    """Write the report of RUN to --out; one line and exit 2 when it cannot."""
    parser = argparse.ArgumentParser(prog="python -m dashboard.report")
    parser.add_argument("run")
    parser.add_argument("--store", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        if store.get_run(args.store, args.run) is None:
            raise store.StoreError(f"no run {args.run!r} in {args.store}; see `collsweep runs`")
        write_texts({Path(args.out): report_html(args.store, args.run)})
    except CollsweepError as exc:
        print(f"collsweep report: error: {exc}", file=sys.stderr)
        return exc.exit_status
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
