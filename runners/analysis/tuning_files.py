"""`collsweep tune`: a run's measured winners as a tuning file the library reads, with its
provenance beside it and, on request, a spec that validates it between the swept sizes.

Everything is checked before anything is written (a run with no decided winner, another library
or version than the tables collsweep has, a place that cannot be written), and the files are
written whole or not at all: each to a temporary name first, renamed into place at the end.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from runners import store
from runners.analysis.tuning import GroupTuning, assumption_states, group_tunings
from runners.domain.catalog import ALGORITHMS, DTYPES
from runners.domain.errors import BadInput
from runners.domain.models import LIBRARY
from runners.domain.outputs import check_outputs, write_texts
from runners.domain.spec import SweepSpec, parse_spec
from runners.domain.tuning import (
    MPIR_TABLE,
    POSIX_TABLE,
    TUNED,
    library_table,
    mpir_table,
    posix_path,
    posix_table,
    provenance_path,
)

TABLES_FOR = "MPICH 5.0."  # the library versions whose tables collsweep ships (mpich_tables/)


class TuneError(BadInput):
    """A tuning file that cannot be made: said in one line, exit status 2, nothing written."""


@dataclass(frozen=True)
class TuneRequest:
    """What `collsweep tune` was asked: the run, which groups and (dtype, op), where to write."""

    store: Path
    run_id: str
    out: Path
    ranks: tuple[int, ...] = ()
    dtype: str = ""
    op: str = ""
    validate_spec: Path | None = None


def installed_mpich() -> str:
    """The installed MPICH wheel's version as runs record it ('MPICH 5.0.2'), or ''."""
    try:
        return f"MPICH {metadata.version('mpich')}"
    except metadata.PackageNotFoundError:
        return ""


def _run(request: TuneRequest) -> dict[str, Any]:
    run = store.get_run(request.store, request.run_id)
    if run is None:
        raise TuneError(f"no run {request.run_id!r} in {request.store}; see `collsweep runs`")
    library = str(run.get("mpi_version") or "")
    if not library.startswith(TABLES_FOR):
        raise TuneError(
            f"run {request.run_id} measured {library or 'an unrecorded library'}; collsweep "
            f"has the selection tables of {TABLES_FOR}x only"
        )
    installed = installed_mpich()
    if not installed.startswith(TABLES_FOR):
        raise TuneError(f"the installed library is {installed or 'not MPICH'}, not {TABLES_FOR}x")
    return run


def _group_of(run: dict[str, Any], request: TuneRequest) -> tuple[str, str]:
    """The (dtype, op) whose winners decide: as asked, else the spec's first."""
    spec = parse_spec(run.get("spec_toml") or "")
    dtype, op = request.dtype or spec.dtypes[0], request.op or spec.ops[0]
    if dtype not in spec.dtypes or op not in spec.ops:
        raise TuneError(
            f"run {request.run_id} swept dtypes {', '.join(spec.dtypes)} and ops "
            f"{', '.join(spec.ops)}; no {dtype}/{op}"
        )
    return dtype, op


def _tunings(request: TuneRequest, dtype: str, op: str) -> dict[int, GroupTuning]:
    found = group_tunings(request.store, request.run_id, dtype, op)
    if request.ranks:
        missing = sorted(set(request.ranks) - set(found))
        if missing:
            raise TuneError(
                f"run {request.run_id} has no {dtype}/{op} points of two library algorithms "
                f"at ranks {missing}; it has {sorted(found) or 'none'}"
            )
        found = {r: t for r, t in found.items() if r in request.ranks}
    else:
        dedicated = {r: t for r, t in found.items() if not t.oversubscribed}
        if found and not dedicated:
            raise TuneError(
                f"every group of run {request.run_id} had more ranks than cores "
                f"(p={', '.join(map(str, sorted(found)))}): their times are the scheduler's, "
                "not a tuning; name one with --ranks to tune it anyway"
            )
        found = dedicated
    if not any(t.decided for t in found.values()):
        raise TuneError(
            f"run {request.run_id} has no decided winner among the library's algorithms other "
            f"than its default ({dtype}/{op}): a tuning file would change nothing; sweep the "
            "forced algorithms (mpi:<name>) beside mpi with more launches"
        )
    return found


def provenance(
    request: TuneRequest, run: dict[str, Any], group: tuple[str, str], tunings: dict
) -> dict[str, Any]:
    """What the file came from: the run, host, library, assumptions, and every band with the
    intervals of the winners it rests on."""
    return {
        "written_by": "collsweep tune",
        "run_id": request.run_id,
        "store": str(request.store),
        "host": run.get("host"),
        "library": run.get("mpi_version"),
        "installed_library": installed_mpich(),
        "dtype": group[0],
        "op": group[1],
        "assumptions": assumption_states(request.store, request.run_id),
        "groups": {str(r): _group_provenance(t) for r, t in sorted(tunings.items())},
    }


def _group_provenance(tuning: GroupTuning) -> dict[str, Any]:
    keep = ("winner", "runner_up", "decided", "ratio", "ratio_low", "ratio_high", "launches")
    return {
        "oversubscribed": tuning.oversubscribed,
        "bands": [
            {"upto_bytes": b.upto, "algorithm": b.algorithm or f"{LIBRARY} (library default)"}
            for b in tuning.bands
        ],
        "boundaries_at_measured_crossovers": [
            {"between": list(k), "bytes": v} for k, v in sorted(tuning.crossings.items())
        ],
        "sizes": [
            {"bytes": s.nbytes, "choice": s.choice, **{k: s.winner.get(k) for k in keep}}
            for s in tuning.sizes
        ],
    }


def validation_spec(request: TuneRequest, run: dict[str, Any], tunings: dict, group) -> str:
    """A spec that sweeps the tuned groups at the swept sizes and their geometric midpoints
    with mpi:tuned, mpi and the forced algorithms the run measured (boundaries off the grid)."""
    swept = parse_spec(run.get("spec_toml") or "")
    itemsize = DTYPES[group[0]].itemsize
    sizes = sorted({s.nbytes for t in tunings.values() for s in t.sizes})
    between = [_aligned(math.sqrt(a * b), itemsize) for a, b in itertools.pairwise(sizes)]
    forced = [a for a in swept.algorithms if ALGORITHMS[a].forced]
    spec = SweepSpec(
        sizes=tuple(sorted(set(sizes) | set(between))),
        ranks=tuple(sorted(tunings)),
        dtypes=(group[0],),
        ops=(group[1],),
        algorithms=(LIBRARY, *forced, TUNED),
        budget_s=swept.budget_s,
        launches=max(swept.launches, 3),
        launcher=swept.launcher,
        launcher_shell=swept.launcher_shell,
        tuning_file=str(request.out.resolve()),
    )
    return spec.to_toml()


def _aligned(nbytes: float, itemsize: int) -> int:
    return max(itemsize, int(nbytes) // itemsize * itemsize)


def tune(request: TuneRequest) -> dict[int, GroupTuning]:
    """Write the tuning file, its shared-memory table and provenance (and the validation spec
    when asked); the groups' tunings, for the summary."""
    run = _run(request)
    group = _group_of(run, request)
    outputs = [request.out, posix_path(request.out), provenance_path(request.out)]
    check_outputs([*outputs, *([request.validate_spec] if request.validate_spec else [])])
    tunings = _tunings(request, *group)
    per_ranks = {r: t.bands for r, t in tunings.items()}
    texts = [
        mpir_table(per_ranks, library_table(MPIR_TABLE)),
        posix_table(per_ranks, library_table(POSIX_TABLE)),
        provenance(request, run, group, tunings),
    ]
    files = {path: json.dumps(t, indent=2) + "\n" for path, t in zip(outputs, texts, strict=True)}
    if request.validate_spec:
        files[request.validate_spec] = validation_spec(request, run, tunings, group)
    write_texts(files)
    return tunings
