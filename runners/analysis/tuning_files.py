"""`collsweep tune`: a run's measured winners as a tuning file the library reads (MPICH's JSON
tables, Intel MPI's JSON tree: the library's descriptor writes it), with its provenance beside
it and, on request, a spec that validates it between the swept sizes.

Everything is checked before anything is written (a run with no decided winner, a library the
run did not measure, another version than the one installed or than the tables collsweep has,
a place that cannot be written), and the files are written whole or not at all: each to a
temporary name first, renamed into place at the end.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runners import store
from runners.analysis.tuning import group_tunings
from runners.analysis.tuning_provenance import (
    Tunings,
    file_bands,
    group_label,
    measured_version,
    op_of,
    placed,
    provenance,
)
from runners.domain.collectives.collective import NO_OP, qualified
from runners.domain.collectives.datatypes import DTYPES
from runners.domain.errors import BadInput
from runners.domain.imports.records import imported_tool
from runners.domain.libraries import DEFAULT, LIBRARIES, LibrarySpec
from runners.domain.libraries.catalog import autotuned_of, forced_on
from runners.domain.libraries.tuning import provenance_path
from runners.domain.outputs import check_outputs, write_texts
from runners.domain.status import PointStatus
from runners.domain.sweep.records import TimingPolicy
from runners.domain.sweep.simulated_run import simulated_words
from runners.domain.sweep.spec import SweepSpec, parse_spec
from runners.domain.units import format_bytes, format_ratio
from runners.host import libraries
from runners.store.records import RunRecord


class TuneError(BadInput):
    """A tuning file that cannot be made: said in one line, exit status 2, nothing written."""


@dataclass(frozen=True)
class TuneRequest:
    """What `collsweep tune` was asked: the run, which groups and (dtype, op), where to write."""

    store: store.Source
    run_id: str
    out: Path
    ranks: tuple[int, ...] = ()
    dtype: str = ""
    op: str = ""
    validate_spec: Path | None = None
    library: str = DEFAULT.name
    accept_provisional: bool = False  # tune from winners of a busy or unsteady machine
    other_runs: tuple[str, ...] = ()  # other placements of the same sweep, into the same file

    @property
    def spec(self) -> LibrarySpec:
        """The library the file is for."""
        return LIBRARIES[self.library]


def _run(request: TuneRequest) -> RunRecord:
    run = store.get_run(request.store, request.run_id)
    if run is None:
        raise TuneError(f"no run {request.run_id!r} in {request.store}; see `collsweep runs`")
    simulated = simulated_words(run.get("spec_toml"))
    if simulated:
        raise TuneError(
            f"run {request.run_id} was {simulated}: a tuning file is written from measured "
            "winners (sweep these sizes where the file will be used)"
        )
    lib, wanted = request.spec, request.spec.tuning_versions
    if not wanted:
        raise TuneError(f"collsweep writes no tuning file for {lib.title} yet")
    measured = measured_version(run, request.library)
    if not measured.startswith(wanted):
        raise TuneError(
            f"run {request.run_id} measured {measured or f'no {lib.title}'}; collsweep "
            f"writes {lib.title} tuning files for {wanted}x only"
        )
    installed = libraries.installed_version(lib)
    if not installed.startswith(wanted):
        raise TuneError(
            f"the installed library is {installed or f'not {lib.title}'}, not {wanted}x"
        )
    reason = stored_provisional_reason(request.store, request.run_id)
    if reason and not request.accept_provisional:
        raise TuneError(
            f"run {request.run_id}'s winners are provisional ({reason}): measure again on a "
            "quiet machine, or pass --accept-provisional to tune from them anyway"
        )
    return run


def stored_provisional_reason(path: store.Source, run_id: str) -> str:
    """Why the analysis stored the run's winners as provisional ('' when it did not)."""
    return next(iter(store.provisional_reasons(path, run_id)), "")


def swept_spec(request: TuneRequest, run: RunRecord) -> SweepSpec:
    """The run's spec; for a run imported from another tool (which has none), the grid of
    its points: sizes, group sizes, dtypes, ops, collectives and algorithms."""
    text = run.get("spec_toml") or ""
    if not imported_tool(text):
        return parse_spec(text)
    grid = store.point_grid(request.store, request.run_id, [PointStatus.OK])
    ops = tuple(dict.fromkeys(o for o in grid.op if o != NO_OP))
    return SweepSpec(
        sizes=tuple(sorted(set(map(int, grid.bytes)))),
        ranks=tuple(sorted(set(map(int, grid.ranks)))),
        dtypes=tuple(dict.fromkeys(grid.dtype)),
        ops=ops or SweepSpec.ops,
        collectives=tuple(dict.fromkeys(grid.collective)),
        algorithms=tuple(dict.fromkeys(grid.algorithm)),
    )


def _group_of(run: RunRecord, request: TuneRequest) -> tuple[str, str]:
    """The (dtype, op) whose winners decide: as asked, else the spec's first."""
    spec = swept_spec(request, run)
    dtype, op = request.dtype or spec.dtypes[0], request.op or spec.ops[0]
    if dtype not in spec.dtypes or op not in spec.ops:
        raise TuneError(
            f"run {request.run_id} swept dtypes {', '.join(spec.dtypes)} and ops "
            f"{', '.join(spec.ops)}; no {dtype}/{op}"
        )
    return dtype, op


def _collectives(run: RunRecord, request: TuneRequest) -> list[str]:
    """The run's collectives whose choices the library's file can hold."""
    swept = swept_spec(request, run).collectives
    lib = request.spec
    found = [c for c in swept if c in lib.tuning_collectives]
    if not found:
        raise TuneError(
            f"run {request.run_id} swept {', '.join(swept)}; collsweep tunes "
            f"{lib.title}'s {', '.join(lib.tuning_collectives)} only"
        )
    return found


def _tunings(request: TuneRequest, run: RunRecord, dtype: str, op: str) -> Tunings:
    """Per collective the library's file can tune, its groups' choices (those asked with
    --ranks, else those with a core per rank); the collectives where something was decided."""
    found = {
        c: group_tunings(request.store, request.run_id, dtype, op_of(c, op), request.library, c)
        for c in _collectives(run, request)
    }
    every = sorted(set().union(*found.values()))
    if request.ranks:
        missing = sorted(set(request.ranks) - set(every))
        if missing:
            raise TuneError(
                f"run {request.run_id} has no {dtype}/{op} points of two library algorithms "
                f"at ranks {missing}; it has {every or 'none'}"
            )
        found = {c: {r: t for r, t in g.items() if r in request.ranks} for c, g in found.items()}
    else:
        dedicated = {
            c: {r: t for r, t in g.items() if not t.oversubscribed} for c, g in found.items()
        }
        if every and not any(dedicated.values()):
            raise TuneError(
                f"every group of run {request.run_id} had more ranks than cores "
                f"(p={', '.join(map(str, every))}): their times are the scheduler's, "
                "not a tuning; name one with --ranks to tune it anyway"
            )
        found = dedicated
    return {c: g for c, g in found.items() if any(t.decided for t in g.values())}


def _nothing_decided(request: TuneRequest, group: tuple[str, str]) -> TuneError:
    """No run to tune from has a decided winner other than the default: said in one line."""
    ids = (request.run_id, *request.other_runs)
    which = f"run {ids[0]} has no" if len(ids) == 1 else f"none of runs {', '.join(ids)} has a"
    lib = request.spec
    return TuneError(
        f"{which} decided winner among the library's algorithms other than its default "
        f"({group[0]}/{group[1]}): a tuning file would change nothing; sweep the forced "
        f"algorithms ({lib.autotuned}:<name>) beside {lib.autotuned} with more launches"
    )


def file_warnings(tunings: Tunings, library: LibrarySpec) -> list[str]:
    """Where a file that must name an algorithm everywhere will be slower than the default:
    sizes at which the default was decidedly faster than every swept forced algorithm."""
    if library.keeps_default:
        return []
    out = []
    for collective, groups in tunings.items():
        for ranks, tuning in sorted(groups.items()):
            for size in tuning.sizes:
                if size.stand_in_loses:
                    slower = 1 / size.winner["ratio"] if size.winner.get("ratio") else math.nan
                    out.append(
                        f"{group_label(collective, ranks)} {format_bytes(size.nbytes)}: "
                        f"{library.title}'s file must name a preset, and the default was "
                        f"decidedly faster than every one swept (the closest, {size.stand_in}, "
                        f"{format_ratio(slower)} slower): the file is slower there; sweep more "
                        "presets at that size"
                    )
    return out


def reach_notes(tunings: Tunings, library: LibrarySpec) -> list[str]:
    """Where a file's band names an algorithm for sizes never measured: below the smallest
    swept size (down to 0 bytes) and above the largest (every larger call)."""
    out = []
    for collective, groups in tunings.items():
        for ranks, tuning in sorted(groups.items()):
            found = file_bands(tuning, library)
            if not found or not tuning.sizes:
                continue
            sizes = [s.nbytes for s in tuning.sizes]
            label = group_label(collective, ranks)
            if found[0].algorithm:
                out.append(
                    f"{label}: {found[0].algorithm} is named below {format_bytes(min(sizes))}, "
                    "the smallest size measured, down to 0 bytes"
                )
            if found[-1].algorithm and found[-1].upto is None:
                out.append(
                    f"{label}: {found[-1].algorithm} is named for every size above "
                    f"{format_bytes(max(sizes))}, the largest measured"
                )
    return out


def validation_spec(
    request: TuneRequest,
    run: RunRecord,
    tunings: Tunings,
    group: tuple[str, str],
    placements: tuple[int, ...],
) -> str:
    """A spec that sweeps the tuned collectives and groups at the swept sizes and their
    geometric midpoints with the library's tuned entry, its default and the forced algorithms
    the run measured (boundaries off the grid), on every placement tuned (a run each)."""
    swept = swept_spec(request, run)
    itemsize = DTYPES[group[0]].itemsize
    sizes = sorted({s.nbytes for g in tunings.values() for t in g.values() for s in t.sizes})
    between = [_aligned(math.sqrt(a * b), itemsize) for a, b in itertools.pairwise(sizes)]
    lib = request.spec
    algorithms = [
        name
        for c in tunings
        for name in (
            autotuned_of(lib.name, c),
            *(a for a in swept.algorithms if _forced_here(a, lib.name, c)),
            qualified(c, lib.tuned),
        )
    ]
    spec = SweepSpec(
        sizes=tuple(sorted(set(sizes) | set(between))),
        ranks=tuple(sorted({r for g in tunings.values() for r in g})),
        dtypes=(group[0],),
        ops=(group[1],),
        collectives=tuple(tunings),
        algorithms=tuple(algorithms),
        libraries=(lib.name,),
        timing=TimingPolicy(budget_s=swept.timing.budget_s, launches=max(swept.timing.launches, 3)),
        launcher=swept.launcher,
        launcher_shell=swept.launcher_shell,
        tuning_file=str(request.out.resolve()),
        ranks_per_node=tuple(sorted(placements)),  # validated on the nodes it was tuned on
        placement=swept.placement,
        network=swept.network,
    )
    return spec.to_toml()


def _forced_here(algorithm: str, library: str, collective: str) -> bool:
    found = forced_on(library, collective).get(algorithm)
    return found is not None and LIBRARIES[library].tunable(found)


def _aligned(nbytes: float, itemsize: int) -> int:
    return max(itemsize, int(nbytes) // itemsize * itemsize)


def tune(request: TuneRequest) -> dict[int, Tunings]:
    """Write the tuning file (with MPICH, its shared-memory table) and provenance (and the
    validation spec when asked) from the run and any other placements' runs; per placement
    (ranks a node, 0: one host) and collective the groups' tunings, for the summary."""
    lib = request.spec
    mine = dict(forced_on(lib.name))
    tables = lib.tuning_tables(request.out, {}, mine)  # which files, before any is checked
    outputs = [*tables, provenance_path(request.out)]
    check_outputs([*outputs, *([request.validate_spec] if request.validate_spec else [])])
    found = _placements(request)
    placements = {
        n: {c: {r: file_bands(t, lib) for r, t in g.items()} for c, g in tunings.items()}
        for n, (_, _, tunings) in found.items()
    }
    texts = {
        **lib.tuning_tables(request.out, placements, mine),
        provenance_path(request.out): _provenance(request, found),
    }
    files = {
        p: t if isinstance(t, str) else json.dumps(t, indent=2) + "\n" for p, t in texts.items()
    }
    if request.validate_spec:
        run, group, _ = found[max(found)]  # a run on nodes says their network
        merged = _merged(t for _, _, t in found.values())
        files[request.validate_spec] = validation_spec(request, run, merged, group, tuple(found))
    write_texts(files)
    return {n: tunings for n, (_, _, tunings) in found.items()}


Placed = dict[int, tuple[RunRecord, tuple[str, str], Tunings]]  # per ranks a node


def _placements(request: TuneRequest) -> Placed:
    """Each run's (record, (dtype, op), tunings) by the ranks a node it measured: one run, or
    several of one sweep's placements for a library whose file keys them (keys_nodes())."""
    ids = (request.run_id, *request.other_runs)
    if len(ids) > 1 and not request.spec.keys_nodes():
        raise TuneError(
            f"{request.spec.title}'s file keys on communicator size only: one run (one "
            "placement) a file"
        )
    found: Placed = {}
    group: tuple[str, str] | None = None
    for run_id in ids:
        asked = replace(request, run_id=run_id)
        if group is not None:
            asked = replace(asked, dtype=group[0], op=group[1])
        run = _run(asked)
        group = group or _group_of(run, asked)
        nodes = placed(run)
        if nodes in found:
            raise TuneError(
                f"runs {found[nodes][0]['run_id']} and {run_id} both measured "
                f"{_placement_words(nodes)}: a file holds one run of each placement"
            )
        found[nodes] = (run, group, _tunings(asked, run, *group))
    if group is None or not any(tunings for _, _, tunings in found.values()):
        raise _nothing_decided(request, group or ("", ""))
    return found


def _placement_words(nodes: int) -> str:
    return f"nodes of {nodes} ranks" if nodes else "every rank on one host"


def _merged(every: Iterable[Tunings]) -> Tunings:
    """The collectives and group sizes of several placements' tunings (the validation spec's)."""
    out: Tunings = {}
    for tunings in every:
        for collective, groups in tunings.items():
            out.setdefault(collective, {}).update(groups)
    return out


def _provenance(request: TuneRequest, found: Placed) -> dict[str, Any]:
    """The file's provenance: its one run's, or each placement's by ranks a node."""
    made = {
        n: provenance(request.store, run, request.spec, group, tunings)
        for n, (run, group, tunings) in found.items()
    }
    if len(made) == 1:
        return next(iter(made.values()))
    return {"written_by": "collsweep tune", "placements": {str(n): p for n, p in made.items()}}
