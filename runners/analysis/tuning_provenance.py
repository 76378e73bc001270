"""What a tuning file came from, written beside it (FILE.provenance.json): the run, host,
library, assumptions, the nodes it was measured on and how the file keys them, and every band
with the winners and intervals behind it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from runners import store
from runners.analysis.checks import stored_spec
from runners.analysis.tuning import GroupTuning, assumption_states
from runners.domain.collectives.collective import COLLECTIVES, DEFAULT_COLLECTIVE, NO_OP
from runners.domain.libraries import DEFAULT, LibrarySpec
from runners.domain.libraries.catalog import autotuned_of
from runners.domain.units import counted, format_bytes
from runners.host import libraries
from runners.store.records import RunRecord

Tunings = dict[str, dict[int, GroupTuning]]  # per collective, per group size


def measured_version(run: Mapping[str, Any], library: str) -> str:
    """The version of `library` whose ranks ran the run ('' when it ran none of them)."""
    versions = run.get("libraries") or {}
    if isinstance(versions, str):  # a JSON column some readers leave as text
        try:
            versions = json.loads(versions)
        except ValueError:
            versions = {}
    found = versions.get(library, {}).get("mpi_version") if isinstance(versions, dict) else None
    if found is None and library == DEFAULT.name and not versions:
        found = run.get("mpi_version")  # stored before runs.libraries
    return str(found or "")


def file_bands(tuning: GroupTuning, library: LibrarySpec) -> list:
    """The bands the library's file names: the default left in place where it can be, else
    the forced algorithm measured closest to it (SizeChoice.stand_in)."""
    return tuning.bands if library.keeps_default else tuning.concrete_bands


def provenance(
    path: store.Source, run: RunRecord, lib: LibrarySpec, group: tuple[str, str], tunings: Tunings
) -> dict[str, Any]:
    """What the file came from: the run (in the store at `path`), host, library, assumptions,
    the nodes, and per collective every band with the intervals of the winners it rests on."""
    return {
        "written_by": "collsweep tune",
        "run_id": run["run_id"],
        "store": str(path),
        "host": run.get("host"),
        "library": measured_version(run, lib.name),
        "installed_library": libraries.installed_version(lib),
        "dtype": group[0],
        "op": group[1],
        **_nodes_provenance(run, lib),
        **_inferred_provenance(run, tunings),
        "assumptions": assumption_states(path, run["run_id"]),
        "collectives": {
            c: {
                "op": op_of(c, group[1]),
                "groups": {str(r): _group_provenance(t, lib, c) for r, t in sorted(g.items())},
            }
            for c, g in tunings.items()
        },
    }


def placed(run: RunRecord) -> int:
    """The run's nodes' size, asked for (emulated, or told to a cluster's launcher); 0 for a
    run on one host."""
    spec = stored_spec(run)
    return spec.nodes.ranks_per_node if spec is not None else 0


def op_of(collective: str, op: str) -> str:
    """The op of a collective's points in a group of `op`: `none` where it reduces nothing."""
    return op if COLLECTIVES[collective].reduces else NO_OP


def _nodes_provenance(run: RunRecord, library: LibrarySpec) -> dict[str, Any]:
    """What the file says of the nodes the run measured: their size and how the file keys it
    (or that its format cannot, where the run had nodes)."""
    nodes = placed(run)
    if not nodes:
        return {"ranks_per_node": 0, "keyed_by_nodes": "one host: communicator size only"}
    keyed = library.keys_nodes() or (
        f"not said: {library.title}'s file keys on communicator size only, so its bands "
        f"apply to any placement, not only {nodes} ranks a node"
    )
    return {"ranks_per_node": nodes, "keyed_by_nodes": keyed}


def group_label(collective: str, ranks: int) -> str:
    """A tuned group in a line: `p=2` for allreduce, `bcast p=2` for another collective."""
    return f"p={ranks}" if collective == DEFAULT_COLLECTIVE else f"{collective} p={ranks}"


def inferred_sizes(run: RunRecord, tuning: GroupTuning) -> list[int]:
    """The sizes of an adaptive run's grid inside a tuned group's measured range that it did
    not measure: its bands span them by the measured sizes either side ([] for any other run)."""
    spec = stored_spec(run)
    measured = sorted(s.nbytes for s in tuning.sizes)
    if spec is None or not spec.adaptive or not measured:
        return []
    return [n for n in spec.sizes if measured[0] < n < measured[-1] and n not in measured]


def inferred_notes(run: RunRecord, tunings: Tunings) -> list[str]:
    """A line per tuned group of an adaptive run whose bands span sizes it did not measure."""
    out = []
    for collective, groups in tunings.items():
        for ranks, tuning in sorted(groups.items()):
            found = inferred_sizes(run, tuning)
            if found:
                out.append(
                    f"{group_label(collective, ranks)}: the bands span "
                    f"{counted(len(found), 'size')} this adaptive run did not measure "
                    f"({format_bytes(found[0])} .. {format_bytes(found[-1])}): each is placed "
                    "by the measured sizes either side, not by a measurement there"
                )
    return out


def _inferred_provenance(run: RunRecord, tunings: Tunings) -> dict[str, Any]:
    """An adaptive run's unmeasured sizes inside each tuned group ({} for any other run)."""
    spec = stored_spec(run)
    if spec is None or not spec.adaptive:
        return {}
    return {
        "adaptive": {
            "note": "built from an adaptive run: bands span sizes it did not measure, placed "
            "by the measured sizes either side (inferred, not measured)",
            "inferred_sizes": {
                c: {str(r): inferred_sizes(run, t) for r, t in sorted(g.items())}
                for c, g in tunings.items()
            },
        }
    }


def _group_provenance(tuning: GroupTuning, library: LibrarySpec, collective: str) -> dict:
    keep = ("winner", "runner_up", "decided", "ratio", "ratio_low", "ratio_high", "launches")
    default = f"{autotuned_of(library.name, collective)} (library default)"
    return {
        "oversubscribed": tuning.oversubscribed,
        "bands": [
            {"upto_bytes": b.upto, "algorithm": b.algorithm or default}
            for b in file_bands(tuning, library)
        ],
        "boundaries_at_measured_crossovers": [
            {"between": list(k), "bytes": v} for k, v in sorted(tuning.crossings.items())
        ],
        "sizes": [
            {
                "bytes": s.nbytes,
                "choice": s.choice,
                "stand_in_for_default": None if s.choice else s.stand_in,
                "stand_in_slower_than_default": s.stand_in_loses,
                "fastest_against_default": s.against_default or None,
                **{k: s.winner.get(k) for k in keep},
            }
            for s in tuning.sizes
        ],
    }
