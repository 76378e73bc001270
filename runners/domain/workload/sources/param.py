"""A workload from a PARAM comms trace in its "basic" format (no MPI).

Read from facebookresearch/param at commit 1e115ffc62c6 (train/comms/pt/): PARAM documents the
format only through its reader (commsTraceParser.py `_parseBasicTrace` and
`_parseBasicTraceComms`) and its writer (comms_utils.py `commsArgs.toDict`). A trace is one
rank's JSON list of entries, in the order the calls were made. An entry with "comms" is a
communication: its name goes through `paramToCommName` (lowercase, letters only, then aliases:
allreduce -> all_reduce, allgatherbase -> all_gather_base, reducescatterbase ->
reduce_scatter_base, ...; a name without an alias stays as written); every one but wait,
barrier, init and batch_isend_irecv carries "in_msg_size", "out_msg_size" (element counts:
commsTraceReplay.py multiplies them by the datatype's element size for bytes, and comms_utils.py
`prepComm` allocates that many elements) and "dtype" (lowercased, a key of PARAM's `dtypeMap`:
float, half, bfloat16, long, ...). "world_size", "global_ranks", "pg_id" and "root" are
optional. An entry with "compute" is a compute kernel; an entry with neither is refused.

The whole vector collsweep sizes (runners.domain.collectives.collective) is in_msg_size elements for
all_reduce, broadcast, reduce and reduce_scatter(_base) (their input: the whole vector), and
out_msg_size for all_gather(_base) (their output). The group size is len(global_ranks), else
world_size, else the caller's `ranks`. A root given as a global rank is made the group's own
rank through global_ranks; none means 0, as PARAM replays it. The basic format records no
reduction op: PARAM's replay always reduces with sum (commsTraceReplay.py: "FIXME: assuming
it's always sum"), and so does this workload, saying so in its notes.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from runners.domain.collectives.collective import NO_OP
from runners.domain.workload.file import Call, Workload, WorkloadError, integer
from runners.domain.workload.sources import TORCH_ITEMSIZE, CallLog

PARAM_COMMIT = "1e115ffc62c6d048405d9b963191736c13811b1d"
SWEPT = {  # PARAM's name -> collsweep's collective
    "all_reduce": "allreduce",
    "broadcast": "bcast",
    "reduce": "reduce",
    "all_gather": "allgather",
    "all_gather_base": "allgather",
    "reduce_scatter": "reduce_scatter",
    "reduce_scatter_base": "reduce_scatter",
}
WHOLE_IS_OUTPUT = ("all_gather", "all_gather_base")
MAX_NAMED = 20  # kinds of skipped entries the notes name; the rest count as "others"
ALIASES = {  # comms_utils.py paramToCommName
    "alltoall": "all_to_all",
    "alltoallv": "all_to_allv",
    "alltoallbase": "all_to_allv",
    "alltoallsingle": "all_to_all_single",
    "allreduce": "all_reduce",
    "allgather": "all_gather",
    "allgatherbase": "all_gather_base",
    "reducescatter": "reduce_scatter",
    "reducescatterbase": "reduce_scatter_base",
    "recvanysource": "recv",
}
DTYPES = {  # comms_utils.py ParamCommsBenchBase.dtypeMap, as PyTorch names
    "float": "float32",
    "float32": "float32",
    "float16": "float16",
    "float64": "float64",
    "double": "float64",
    "int32": "int32",
    "int": "int32",
    "long": "int64",
    "bfloat16": "bfloat16",
    "bool": "bool",
    "half": "float16",
    "byte": "uint8",
    "uint8": "uint8",
    "int8": "int8",
    "short": "int16",
    "char": "int8",
}


def comm_name(name: str) -> str:
    """PARAM's own name of a communication (paramToCommName)."""
    letters = "".join(c for c in name.lower() if c.isalpha())
    return ALIASES.get(letters, name.lower())


def param_workload(data: Any, where: str, name: str, ranks: int | None = None) -> Workload:
    """The workload of a basic trace's JSON value; `ranks` is the group size where an entry
    names none. WorkloadError naming the first problem."""
    if not isinstance(data, list) or not data:
        raise WorkloadError(f"{where} must be a non-empty JSON list of trace entries")
    log, skipped = CallLog(), Counter[str]()
    for number, entry in enumerate(data):
        call = _entry(entry, f"{where}: entry {number}", ranks, skipped)
        if call is not None:
            log.add(call)
    if not log.distinct:
        raise WorkloadError(
            f"{where}: none of its {len(data)} entries is a collective collsweep sweeps "
            f"({', '.join(SWEPT)})"
        )
    source = {"kind": "param", "format": "basic", "param_commit": PARAM_COMMIT}
    return log.workload(name, source, _notes(skipped))


def _entry(entry: Any, where: str, ranks: int | None, skipped: Counter) -> Call | None:
    """The call of one entry, or None (counted in `skipped`) for one collsweep does not sweep."""
    if not isinstance(entry, dict):
        raise WorkloadError(f"{where} must be an object")
    if "comms" not in entry:
        if "compute" not in entry:
            raise WorkloadError(f'{where} has neither "comms" nor "compute"')
        skipped["compute"] += 1
        return None
    if not isinstance(entry["comms"], str) or not entry["comms"]:
        raise WorkloadError(f"{where}: comms must be a name")
    comms = comm_name(entry["comms"])
    if comms not in SWEPT:
        known = comms in skipped or (len(skipped) < MAX_NAMED and len(comms) <= 40)
        skipped[comms if known and comms.isprintable() else "others"] += 1
        return None
    (group_size, group), size = _group(entry, where, ranks), _elements(entry, where, comms)
    dtype = _dtype(entry.get("dtype"), where)
    if size == 0:
        skipped[f"{comms} of 0 elements"] += 1
        return None
    collective = SWEPT[comms]
    rooted = collective in ("bcast", "reduce")
    op = NO_OP if collective in ("bcast", "allgather") else "sum"
    root = _root(entry, where, group_size, group) if rooted else None
    return Call(collective, size * TORCH_ITEMSIZE[dtype], dtype, op, group_size, 1, root)


def _elements(entry: dict, where: str, comms: str) -> int:
    """The whole vector's elements (module docstring)."""
    for key in ("in_msg_size", "out_msg_size"):
        if key not in entry:
            raise WorkloadError(f"{where}: {comms} has no {key}")
        integer(entry[key], f"{where}: {key}")
    return entry["out_msg_size"] if comms in WHOLE_IS_OUTPUT else entry["in_msg_size"]


def _dtype(value: Any, where: str) -> str:
    if not isinstance(value, str) or value.lower() not in DTYPES:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise WorkloadError(f"{where}: unknown dtype {shown} (PARAM's: {', '.join(DTYPES)})")
    return DTYPES[value.lower()]


def _group(entry: dict, where: str, ranks: int | None) -> tuple[int, list[int] | None]:
    """The group's size, and its global ranks where the trace lists them."""
    if "global_ranks" in entry:
        found = entry["global_ranks"]
        if not isinstance(found, list) or not found:
            raise WorkloadError(f"{where}: global_ranks must be a non-empty list of ranks")
        group = [integer(r, f"{where}: global_ranks[{i}]") for i, r in enumerate(found)]
        if len(set(group)) != len(group):
            raise WorkloadError(f"{where}: global_ranks names a rank twice")
        return len(group), group
    if entry.get("world_size") is not None:
        return integer(entry["world_size"], f"{where}: world_size", 1), None
    if ranks is None:
        raise WorkloadError(f"{where} gives no world_size or global_ranks: pass --ranks")
    return ranks, None


def _root(entry: dict, where: str, size: int, group: list[int] | None) -> int:
    """The root as a rank of the group (global_ranks maps a global root to it)."""
    if entry.get("root") is None:
        return 0
    root = integer(entry["root"], f"{where}: root")
    if group is not None and root in group:
        return group.index(root)
    if group is None and root < size:
        return root
    raise WorkloadError(f"{where}: root {root} is not one of the group's {size} ranks")


def _notes(skipped: Counter) -> list[str]:
    notes = [
        "PARAM's basic trace records no reduction op: reductions taken as sum, as PARAM "
        "replays them"
    ]
    if skipped:
        counted = ", ".join(f"{count} {what}" for what, count in sorted(skipped.items()))
        notes.append(f"entries not swept (not a collective collsweep sweeps): {counted}")
    return notes
