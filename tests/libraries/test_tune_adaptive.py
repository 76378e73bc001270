"""`collsweep tune` from an adaptive run: its bands span sizes the run never measured, and the
file's lines and its provenance say which, inferred from the measured sizes either side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import synthetic

from runners.cli.main import main
from runners.domain.libraries.tuning import provenance_path


def test_a_file_from_an_adaptive_run_says_which_sizes_it_inferred(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, run = synthetic.with_adaptive_run(demo_store, tmp_path), synthetic.adaptive_spec()
    out = tmp_path / "tuned.json"
    assert main(["tune", run.run_id, "--store", str(db), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    # MPICH's algorithms were measured two or more at a size at 8 B and 4 KiB only
    assert "inferred: p=2: the bands span 2 sizes this adaptive run did not measure" in said
    provenance = json.loads(provenance_path(out).read_text())
    assert provenance["adaptive"]["inferred_sizes"] == {"allreduce": {"2": [64, 512]}}
