"""MPICH's tuning files from measured bands (pure: no MPI, no store, no files written; the
files on disk are read by runners.host.tuning_files; the bands by runners.domain.libraries.tuning).

A tuning file tells the library which algorithm of each collective to run per communicator
size and message size. MPICH reads one from `MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE` at
start-up (src/mpi/coll/src/csel.c): nested JSON objects whose keys are conditions
(`comm_size<=N`, `avg_msg_size<=N` / `total_msg_size<=N` in bytes of the whole vector,
`is_op_built_in=yes`, `count<pow2`, `... =any`), the first
matching sibling wins, and the leaves name an algorithm (`algorithm=MPIR_Allreduce_intra_ring`).
The file replaces the library's whole decision tree, so it starts from MPICH's own table for
the version (mpich_tables/) and replaces only the tuned collectives' subtrees.

On one node MPICH's shared-memory layer takes allreduce, bcast and reduce first (its own table,
`MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE`: release_gather), so a second file for
that layer hands the sizes where a tuned algorithm won to the generic selection (a band no
call matches, so the layer falls back to it) and keeps release_gather (the autotuned default)
elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from runners.domain.algorithms import FAMILIES
from runners.domain.algorithms.library import FORCED, OTHER_FORCED
from runners.domain.algorithms.library_trees import (
    CHUNK_CVAR,
    MULTIPLYING_KVAL_CVAR,
    TREE_KVAL_CVAR,
    TREE_TYPE_CVAR,
)
from runners.domain.algorithms.parameters import member_of
from runners.domain.collectives.descriptor import AlgorithmSpec
from runners.domain.inputs import BadInputFile, load_json_bytes
from runners.domain.libraries.tuning import Band, Placements, by_size_and_node

TABLES = Path(__file__).with_name("mpich_tables")
MPIR_TABLE, POSIX_TABLE = "mpir_generic.json", "posix_generic.json"
FILE_CVAR = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"  # the file mpi:tuned follows
POSIX_FILE_CVAR = "MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE"
POSIX_SUFFIX = ".posix.json"
ALLREDUCE = "collective=allreduce"
REQUIRED_COLLECTIVES = (ALLREDUCE, "collective=bcast", "collective=barrier", "collective=reduce")
# MPICH's defaults for the tree's parameters (src/mpi/coll/cvars.txt): a leaf names them all
TREE_PARAMETERS: dict[str, Any] = {
    "k=2": {},
    "tree_type=knomial_1": {},
    "chunk_size=0": {},
    "buffer_per_child=0": {},
}
# restrictions: size-ge-pof2, builtin-op (src/mpi/coll/coll_algorithms.txt)
NEEDS_BUILT_IN_OP = ("reduce_scatter_allgather", "reduce_scatter_gather")


# MPICH's forced algorithms, the only ones a band of its file names
MPICH_FORCED: dict[str, AlgorithmSpec] = {spec.name: spec for spec in (*FORCED, *OTHER_FORCED)}


@dataclass(frozen=True)
class MpichCollective:
    """How MPICH's JSON tables speak of one collective: its key, the message size its
    conditions test, its algorithms' function prefix, the algorithm a guarded leaf falls back
    to (one MPICH runs for every call), and its shared-memory leaf ('' where the shared-memory
    layer does not take the collective: its table has no entry)."""

    key: str
    size: str
    prefix: str
    fallback: str
    posix: str = ""


# csel.c measures allreduce, bcast and reduce by avg_msg_size (count x type size) and has only
# total_msg_size for allgather and reduce_scatter_block (recvcount x type size x p): both the
# whole vector, collsweep's size, so bands carry over unchanged.
MPICH_COLLECTIVES = {
    "allreduce": MpichCollective(
        ALLREDUCE,
        "avg_msg_size",
        "MPIR_Allreduce_intra_",
        "recursive_doubling",
        "algorithm=MPIDI_POSIX_mpi_allreduce_release_gather",
    ),
    "reduce_scatter": MpichCollective(
        "collective=reduce_scatter_block",
        "total_msg_size",
        "MPIR_Reduce_scatter_block_intra_",
        "recursive_doubling",  # any p, any op
    ),
    "allgather": MpichCollective(
        "collective=allgather", "total_msg_size", "MPIR_Allgather_intra_", "brucks"
    ),
    "bcast": MpichCollective(
        "collective=bcast",
        "avg_msg_size",
        "MPIR_Bcast_intra_",
        "binomial",
        "algorithm=MPIDI_POSIX_mpi_bcast_release_gather",
    ),
    "reduce": MpichCollective(
        "collective=reduce",
        "avg_msg_size",
        "MPIR_Reduce_intra_",
        "binomial",
        "algorithm=MPIDI_POSIX_mpi_reduce_release_gather",
    ),
}


def to_generic(collective: str) -> dict[str, Any]:
    """The shared-memory subtree that hands a call to the generic selection. No leaf for
    that exists (posix_init.c), but a search that matches nothing falls back to it
    (posix_coll.h): conditions no call meets, of kinds csel.c lets go without an `=any`
    sibling."""
    leaf = MPICH_COLLECTIVES[collective].posix
    return {"is_multi_threaded=yes": {"is_multi_threaded=no": {leaf: {}}}}


def _forced(algorithm: str) -> AlgorithmSpec:
    """A forced MPICH algorithm's descriptor: a fixed one, or a family's member (a k-nomial
    tree of some radix)."""
    found = MPICH_FORCED.get(algorithm) or member_of(algorithm, FAMILIES)
    if found is None:
        raise KeyError(f"{algorithm} is no forced MPICH algorithm")
    return found


# the settings a forced tree carries -> the tree leaf's parameter each one sets
TREE_LEAF_KEYS = {TREE_KVAL_CVAR: "k", TREE_TYPE_CVAR: "tree_type", CHUNK_CVAR: "chunk_size"}


def _tree_parameters(spec: AlgorithmSpec) -> dict[str, Any]:
    """A tree leaf's parameters: MPICH's defaults, but the tree type, radix and chunk size its
    settings force (a k-nomial or chain member's), so the file runs what the forced entry
    ran."""
    given = {TREE_LEAF_KEYS[name]: value for name, value in spec.settings if name in TREE_LEAF_KEYS}
    out: dict[str, Any] = {}
    for key in TREE_PARAMETERS:
        name = key.partition("=")[0]
        out[f"{name}={given[name]}" if name in given else key] = {}
    return out


def _algorithm_leaf(algorithm: str) -> dict[str, Any]:
    """The MPIR subtree that runs a forced library algorithm, with the guards MPICH checks
    before it when it chooses that algorithm itself (a file's choice is not guarded): its
    restrictions in src/mpi/coll/coll_algorithms.txt, each falling back to an algorithm
    without any."""
    spec = _forced(algorithm)
    how = MPICH_COLLECTIVES[spec.collective]
    fallback: dict[str, Any] = {f"algorithm={how.prefix}{how.fallback}": {}}
    leaf: dict[str, Any] = {f"algorithm={how.prefix}{spec.forced}": {}}
    if spec.forced == "tree":
        leaf = {f"algorithm={how.prefix}tree": _tree_parameters(spec)}
    radix = dict(spec.settings).get(MULTIPLYING_KVAL_CVAR)
    if radix is not None:  # its one parameter, k (MPICH's csel container)
        leaf = {f"algorithm={how.prefix}{spec.forced}": {f"k={radix}": {}}}
    if spec.forced in NEEDS_BUILT_IN_OP:
        return {
            "is_op_built_in=no": fallback,
            "count<pow2": fallback,
            "count=any": leaf,
        }
    if spec.commutative_only:
        return {"is_commutative=yes": leaf, "is_commutative=any": fallback}
    if spec.power_of_two_only:
        return {"comm_size=pow2": leaf, "comm_size=any": fallback}
    return leaf


def _sized(
    per_ranks: Mapping[int, Mapping[int, Sequence[Band]]], inner: Any, default: Any
) -> dict[str, Any]:
    """`comm_size` branches: exactly each tuned size (its bands, `inner(bands)`), the
    library's `default` subtree for every other size. A size tuned on nodes (per_ranks' inner
    keys: ranks a node, 0 for one host) holds its bands only where the communicator has that
    many ranks a node on average (`comm_avg_ppn`, which MPICH computes from its nodes,
    emulated ones too; one host: all of them), the default for any other placement; a size
    tuned on one host alone, for any placement."""
    tree: dict[str, Any] = {}
    for ranks in sorted(per_ranks):
        tree[f"comm_size<{ranks}"] = default
        placed = per_ranks[ranks]
        if set(placed) == {0}:
            tree[f"comm_size<={ranks}"] = inner(placed[0])
            continue
        ladder: dict[str, Any] = {}
        for per_node in sorted(placed, key=lambda n: n or ranks):
            ladder[f"comm_avg_ppn<{per_node or ranks}"] = default
            ladder[f"comm_avg_ppn<={per_node or ranks}"] = inner(placed[per_node])
        tree[f"comm_size<={ranks}"] = ladder | {"comm_avg_ppn=any": default}
    tree["comm_size=any"] = default
    return tree


def _by_size(items: Sequence[Band], leaf: Any, size: str = "avg_msg_size") -> dict[str, Any]:
    return {(f"{size}<={b.upto}" if b.upto is not None else f"{size}=any"): leaf(b) for b in items}


def mpir_table(
    per_ranks: Mapping[int, Mapping[int, Sequence[Band]]],
    generic: Mapping[str, Any],
    collective: str = "allreduce",
) -> dict:
    """MPICH's whole generic table with one collective's intra subtree replaced: the tuned
    communicator sizes take their bands (per ranks a node where tuned on nodes: _sized), every
    other size and every default band the library's own subtree of that collective."""
    how = MPICH_COLLECTIVES[collective]
    default = generic[how.key]["comm_type=intra"]

    def leaf(band: Band) -> Any:
        return default if band.algorithm is None else _algorithm_leaf(band.algorithm)

    table = json.loads(json.dumps(generic))
    table[how.key]["comm_type=intra"] = _sized(
        per_ranks, lambda b: _by_size(b, leaf, how.size), default
    )
    return table


def posix_table(
    per_ranks: Mapping[int, Sequence[Band]],
    generic: Mapping[str, Any],
    collective: str = "allreduce",
) -> dict:
    """MPICH's shared-memory table with one collective handed to the generic selection where
    a tuned algorithm won, release_gather (the library's one-node default) elsewhere; the
    table unchanged for a collective that layer does not take or without a size to tune."""
    how = MPICH_COLLECTIVES[collective]
    table = json.loads(json.dumps(generic))
    if not how.posix or not per_ranks:
        return table
    default = generic[how.key]["comm_type=intra"]
    handed = to_generic(collective)

    def leaf(band: Band) -> Any:
        return default if band.algorithm is None else handed

    table[how.key]["comm_type=intra"] = _sized(
        {r: {0: b} for r, b in per_ranks.items()}, lambda b: _by_size(b, leaf, how.size), default
    )
    return table


def mpich_tables(placements: Placements) -> tuple[dict, dict]:
    """MPICH's generic and shared-memory tables with each tuned collective's subtree
    replaced: mpir_table with every placement's bands, posix_table with those of the group
    sizes that sat on one node (one_node)."""
    mpir, posix = library_table(MPIR_TABLE), library_table(POSIX_TABLE)
    collectives = dict.fromkeys(c for p in placements.values() for c in p)
    for collective in collectives:
        per_ranks = by_size_and_node(placements, collective)
        mpir = mpir_table(per_ranks, mpir, collective)
        posix = posix_table(one_node(per_ranks), posix, collective)
    return mpir, posix


def one_node(per_ranks: Mapping[int, Mapping[int, Sequence[Band]]]) -> dict[int, Sequence[Band]]:
    """The bands of each tuned group size measured with all its ranks on one node (one host,
    or nodes at least as large). The shared-memory table is asked only of a communicator inside
    one node, so a size measured across nodes keeps MPICH's own subtree there: handed to the
    generic selection it would run MPICH's generic default instead of release_gather on one
    host (measured: 3.5-4.3x slower at p=2, 64 B .. 2 KiB, with a file tuned on 2 nodes x 1)."""
    out = {}
    for ranks, placed in per_ranks.items():
        inside = [n for n in placed if not n or n >= ranks]
        if inside:
            out[ranks] = placed[inside[0]]
    return out


@cache
def library_table(name: str) -> dict[str, Any]:
    """One of MPICH's own tables (mpich_tables/), parsed."""
    return json.loads((TABLES / name).read_text())


def posix_path(tuning_file: str | Path) -> Path:
    """Where the shared-memory table of a tuning file lives: beside it, FILE.posix.json."""
    return Path(f"{tuning_file}{POSIX_SUFFIX}")


def tables_problem(contents: Mapping[Path, bytes]) -> str | None:
    """Why a tuning file cannot be used, given the contents of its files read so far (the
    whole table, then its shared-memory table; runners.host.tuning_files reads them): not
    JSON, not a whole MPICH table; or None."""
    main = next(iter(contents))
    for path, data in contents.items():
        try:
            table = load_json_bytes(data, "tuning file", path)
        except BadInputFile as exc:
            return f"tuning file {path} is not readable JSON: {exc.reason}"
        wanted = REQUIRED_COLLECTIVES if path == main else (ALLREDUCE,)
        missing = [c for c in wanted if not isinstance(table, dict) or c not in table]
        if missing:
            return (
                f"tuning file {path} lacks {', '.join(missing)}: MPICH replaces its whole "
                "decision tree with the file, so it must hold every collective"
            )
    return None


def tuning_knobs(tuning_file: str | Path) -> dict[str, str]:
    """Environment that makes MPICH read the tuning file and its shared-memory table."""
    path = Path(tuning_file).resolve()
    return {FILE_CVAR: str(path), POSIX_FILE_CVAR: str(posix_path(path))}


def unknown_leaf(contents: Mapping[Path, bytes], known: AbstractSet[str]) -> str | None:
    """Why a tuning file's tables name an algorithm the installed MPICH does not know (its
    `algorithm=` names, `known`), or None: MPICH would fail inside the ranks on such a leaf,
    so it is refused before any starts. Run after tables_problem (the files are JSON)."""
    for path, data in contents.items():
        stack = [json.loads(data.decode())]
        while stack:
            node = stack.pop()
            if not isinstance(node, dict):
                continue
            for key, child in node.items():
                name = key.removeprefix("algorithm=")
                if key.startswith("algorithm=") and name not in known:
                    return f"tuning file {path} names {name}, an algorithm this MPICH does not have"
                stack.append(child)
    return None
