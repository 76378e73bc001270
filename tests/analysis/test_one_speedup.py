"""One speed-up (issue 45 item 1): how much faster the winner is than the library default is the
default's time over the winner's, paired over launches, stored once with each winners row
(runners.domain.verdict.speedup), and every surface says that same number in the same words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dashboard import queries
from dashboard.figures.strip import winner_strip
from runners import store
from runners.analysis.verdict import run_tables
from runners.cli.main import main
from runners.domain.units import format_bytes
from runners.domain.verdict.speedup import FASTER, IS_DEFAULT, Speedup
from runners.domain.verdict.winner_table import by_group, group_sentence

RUN = "r20261202-120000-bbbb"  # the demo store's second run


def _cells(demo_store: Path) -> list[dict]:
    return store.verdict_inputs(demo_store, RUN)["winners"]


@pytest.fixture(scope="module")
def beaten(demo_store: Path) -> dict:
    """A cell whose winner is decidedly faster than the default."""
    found = [row for row in _cells(demo_store) if row["speedup_verdict"] == FASTER]
    assert found, "the demo run has no cell where the default is decidedly beaten"
    return max(found, key=lambda row: row["speedup"])


def test_the_stored_speedup_is_the_defaults_time_over_the_winners_paired(
    demo_store: Path,
) -> None:
    """Where the winner is a library algorithm, against_default holds the same pair the other
    way round: winner over default. Its ratio is exactly the speed-up's inverse."""
    paired = store.query(
        demo_store,
        "SELECT w.speedup, w.speedup_low, w.speedup_high, a.ratio, a.ratio_low, a.ratio_high "
        "FROM winners w JOIN against_default a ON a.run_id = w.run_id AND a.ranks = w.ranks "
        "AND a.dtype = w.dtype AND a.op = w.op AND a.bytes = w.bytes "
        "AND a.collective = w.collective AND a.algorithm = w.winner "
        "AND a.baseline = w.default_algorithm WHERE w.run_id = ? AND w.library = 'all' "
        "AND a.ratio IS NOT NULL",
        [RUN],
    )
    assert len(paired)
    for row in paired.itertuples(index=False):
        assert row.speedup == pytest.approx(1 / row.ratio)
        assert row.speedup_low == pytest.approx(1 / row.ratio_high)
        assert row.speedup_high == pytest.approx(1 / row.ratio_low)
    verdicts = {row["speedup_verdict"] for row in _cells(demo_store)}
    assert {FASTER, IS_DEFAULT} <= verdicts
    for row in _cells(demo_store):
        if row["speedup_verdict"] == IS_DEFAULT:
            assert row["winner"] == row["default_algorithm"] and row["speedup"] == 1.0
        if row["speedup_verdict"] == FASTER:
            assert 1 < row["speedup_low"] <= row["speedup"] <= row["speedup_high"]


def test_every_surface_says_the_same_speedup_of_a_cell(
    demo_store: Path, beaten: dict, capsys
) -> None:
    said = Speedup.from_row(beaten).text()
    assert re.fullmatch(r"[\d.]+x faster \[[\d.]+, [\d.]+\]", said), said
    size = format_bytes(beaten["bytes"])
    # the sweep's closing table
    (row,) = [
        line
        for line in _group_block(run_tables(demo_store, {"run_id": RUN}), beaten)
        if line.strip().startswith(size + " ")
    ]
    assert row.rstrip().endswith(said)
    # crossovers --summary --format json, for scripts
    store_args = ["--store", str(demo_store)]
    assert main(["crossovers", RUN, "--summary", "--format", "json", *store_args]) == 0
    (cell,) = [c for c in json.loads(capsys.readouterr().out) if _same_cell(c, beaten)]
    assert (cell["speedup"], cell["speedup_low"], cell["speedup_high"]) == (
        beaten["speedup"],
        beaten["speedup_low"],
        beaten["speedup_high"],
    )
    assert cell["default"] == beaten["default_algorithm"] and cell["speedup_verdict"] == FASTER
    # crossovers' winners table
    assert main(["crossovers", RUN, *store_args]) == 0
    assert said in capsys.readouterr().out
    # the dashboard's Verdict page: its cells, the strip's hover, the group's sentence
    data = queries.verdict_data(demo_store, RUN)
    (mine,) = [c for c in data.cells if _same_cell(_cell_key(c), beaten)]
    assert mine.speedup.text() == said
    hovers = [h for row in winner_strip(data.cells).data[0]["customdata"] for h in row if h]
    assert any(said in h for h in hovers)
    group = by_group(data.cells)[mine.group]
    top = max((c.speedup for c in group if c.speedup.decided), key=lambda s: s.ratio or 0)
    assert f"up to {top.text()}" in group_sentence(group)


def _group_block(lines: list[str], row: dict) -> list[str]:
    """The lines of the row's group in the sweep's tables (title to the blank line)."""
    title = f"p={row['ranks']} {row['dtype']} {row['op']}"
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def _cell_key(cell) -> dict:
    ranks, dtype, op, collective = cell.group
    return {"ranks": ranks, "dtype": dtype, "op": op, "collective": collective,
            "bytes": cell.nbytes}  # fmt: skip


def _same_cell(a: dict, b: dict) -> bool:
    return all(a[k] == b[k] for k in ("ranks", "dtype", "op", "bytes", "collective"))
