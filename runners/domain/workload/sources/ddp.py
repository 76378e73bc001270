"""The collective calls PyTorch DDP makes for a model, from its parameters (no MPI, no torch).

Read from PyTorch 2.11.0 (the wheel's torch/nn/parallel/distributed.py and
torch/distributed/utils.py, git_version 70d99e998b4955e0049d13a98d77ae1b14db1f45) and
torch/csrc/distributed/c10d/reducer.cpp and comm.cpp (commits ad78a7b33a49 and 00c2d88d5792 of
pytorch/pytorch; reducer.hpp of 2.11.0 has the same constants), with DDP's defaults:
find_unused_parameters=False, static_graph=False, broadcast_buffers=True, init_sync=True, no
communication hook, no join, no no_sync().

- `compute_bucket_assignment_by_size` (reducer.cpp), here `assign_buckets`: tensors are taken
  in the order given; each datatype fills its own bucket; a tensor joins its datatype's bucket
  and the bucket closes once its bytes reach the current limit (>=), after which that datatype
  moves to the next limit (the last one repeats). The buckets still open at the end follow the
  closed ones. Without explicit tensor indices the buckets are then sorted by their smallest
  tensor index; with them (the rebuild) they stay in the order they were made.
- Construction (`DistributedDataParallel.__init__`): `_verify_param_shape_across_processes`
  allgathers each rank's parameter count (one int64) and broadcasts every trained parameter's
  sizes and strides (2 int64 per dimension); `_sync_module_states` broadcasts every parameter
  (trained or not) and buffer from rank 0 through `_broadcast_coalesced`: buckets of at most
  `broadcast_bucket_size` = 250 MiB (comm.cpp: the assignment above, one limit), one
  broadcast of each flattened bucket.
- Step 1 (`_ddp_init_helper`): with find_unused_parameters=False the limit is sys.maxsize,
  so the first backward reduces one bucket per datatype; the Reducer gets the buckets
  reversed, so the one holding the last parameters goes first.
- Step 2 (`_pre_forward` -> `Reducer::rebuild_buckets`): buckets are rebuilt once from the
  order gradients became ready in step 1, with the limits [first_bucket_bytes_cap,
  bucket_bytes_cap]: 1 MiB (`_DEFAULT_FIRST_BUCKET_BYTES`) then `bucket_cap_mb` (25 MiB) when
  bucket_cap_mb is left to its default; bucket_cap_mb for both when it is given. Rank 0's
  buckets are broadcast (`sync_bucket_indices`: an int32 tensor of every index and the bucket
  count, then one of the bucket sizes). From then on every step reduces the rebuilt buckets.
- Every step, before forward, the buffers are broadcast from rank 0 in 250 MiB buckets
  (`_sync_buffers`, when broadcast_buffers and the module has buffers); in backward one
  allreduce (sum) of each bucket, in bucket order (`mark_bucket_ready` launches them in
  sequence).

Assumed here, as the issue states it: gradients become ready in the reverse of the parameters'
order (DDP's own docstring: "gradient allreduce following the reverse order of the registered
parameters"). With several datatypes the rebuild leaves the buckets still open at the end in
an unordered_map's order, which C++ leaves unspecified: here, as PyTorch 2.11.0's Linux wheel
does (checked with dist._compute_bucket_assignment_by_size), the datatype seen last first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runners.domain.collectives.collective import NO_OP
from runners.domain.workload.file import Call, Workload, WorkloadError
from runners.domain.workload.sources import CallLog
from runners.domain.workload.sources.ddp_input import ModelTensors, Tensor

PYTORCH_VERSION = "2.11.0"
MIB = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25
DEFAULT_FIRST_BUCKET_BYTES = 1 * MIB  # dist._DEFAULT_FIRST_BUCKET_BYTES, kDefaultFirstBucketBytes
BROADCAST_BUCKET_BYTES = 250 * MIB  # DistributedDataParallel.broadcast_bucket_size
NO_LIMIT = 2**63 - 1  # sys.maxsize


@dataclass(frozen=True)
class DdpOptions:
    """How the job runs DDP. `bucket_cap_mb` None: DDP's default (25 MiB, first bucket 1 MiB)."""

    ranks: int
    steps: int = 100
    bucket_cap_mb: float | None = None
    broadcast_buffers: bool = True

    @property
    def limits(self) -> list[int]:
        """The rebuilt buckets' size limits: [first bucket, every other]."""
        if self.bucket_cap_mb is None:
            return [DEFAULT_FIRST_BUCKET_BYTES, DEFAULT_BUCKET_CAP_MB * MIB]
        cap = int(self.bucket_cap_mb * MIB)
        return [cap, cap]


def assign_buckets(
    tensors: Sequence[Tensor], limits: Sequence[int], indices: Sequence[int] | None = None
) -> list[list[int]]:
    """compute_bucket_assignment_by_size: the buckets, as lists of tensor indices (`indices[i]`
    names tensors[i] where given, else i)."""
    closed: list[list[int]] = []
    open_buckets: dict[str, list[int]] = {}  # by datatype, in the order each was first seen
    filled: dict[str, int] = {}
    limit_at: dict[str, int] = {}
    for position, tensor in enumerate(tensors):
        dtype, index = tensor.dtype, position if indices is None else indices[position]
        open_buckets.setdefault(dtype, []).append(index)
        filled[dtype] = filled.get(dtype, 0) + tensor.nbytes
        step = limit_at.setdefault(dtype, 0)
        if filled[dtype] >= limits[step]:
            closed.append(open_buckets[dtype])
            open_buckets[dtype], filled[dtype] = [], 0
            limit_at[dtype] = min(step + 1, len(limits) - 1)
    # The open buckets sit in an unordered_map; PyTorch's Linux build (libstdc++) walks it
    # newest datatype first, which only matters where nothing sorts them afterwards.
    buckets = closed + [bucket for bucket in reversed(open_buckets.values()) if bucket]
    if indices is None:
        buckets.sort(key=min)
    return buckets


def ddp_workload(model: ModelTensors, options: DdpOptions, name: str) -> Workload:
    """The workload of `options.steps` training steps of DDP over `model` (module docstring)."""
    trained = model.trained
    if not trained:
        raise WorkloadError(
            "no parameter requires grad: DDP refuses such a module (it has nothing to reduce)"
        )
    log, notes = CallLog(), _notes(model)
    for call in _construction(model, options):
        log.add(call)
    step_one = _broadcasts(model.buffers, options) if options.broadcast_buffers else []
    step_one += _allreduces(trained, assign_buckets(trained, [NO_LIMIT])[::-1], options)
    log.add_block(step_one, 1)
    rebuilt = _rebuilt(trained, options)
    step = _broadcasts(model.buffers, options) if options.broadcast_buffers else []
    step += _allreduces(trained, rebuilt, options)
    if options.steps > 1:
        for call in _rebuild_broadcasts(len(trained), len(rebuilt), options.ranks):
            log.add(call)
        log.add_block(step, options.steps - 1)
    steady = step if options.steps > 1 else step_one
    source = _source(model, options, len(rebuilt), sum(call.nbytes for call in steady))
    return log.workload(name, source, notes)


def _rebuilt(trained: Sequence[Tensor], options: DdpOptions) -> list[list[int]]:
    """The buckets rebuilt after step 1, gradients ready in reverse parameter order."""
    ready = list(range(len(trained)))[::-1]
    return assign_buckets([trained[i] for i in ready], options.limits, ready)


def _construction(model: ModelTensors, options: DdpOptions) -> list[Call]:
    """The constructor's calls: the shape check, then rank 0's parameters and buffers."""
    ranks = options.ranks
    calls = [Call("allgather", 8 * ranks, "int64", NO_OP, ranks, 1)]
    dims = sum(2 * (1 if t.dims is None else t.dims) for t in model.trained)
    if dims:
        calls.append(Call("bcast", 8 * dims, "int64", NO_OP, ranks, 1, 0))
    states = list(model.parameters) + (list(model.buffers) if options.broadcast_buffers else [])
    return calls + _broadcasts(states, options)


def _broadcasts(tensors: Sequence[Tensor], options: DdpOptions) -> list[Call]:
    """_broadcast_coalesced from rank 0: one bcast per 250 MiB bucket (empty ones skipped)."""
    buckets = assign_buckets(tensors, [BROADCAST_BUCKET_BYTES]) if tensors else []
    return _calls("bcast", NO_OP, tensors, buckets, options.ranks, root=0)


def _allreduces(
    trained: Sequence[Tensor], buckets: list[list[int]], options: DdpOptions
) -> list[Call]:
    return _calls("allreduce", "sum", trained, buckets, options.ranks, root=None)


def _calls(
    collective: str,
    op: str,
    tensors: Sequence[Tensor],
    buckets: list[list[int]],
    ranks: int,
    root: int | None,
) -> list[Call]:
    calls = []
    for bucket in buckets:
        nbytes = sum(tensors[i].nbytes for i in bucket)
        if nbytes:  # a bucket of empty tensors moves nothing and has no size to sweep
            calls.append(Call(collective, nbytes, tensors[bucket[0]].dtype, op, ranks, 1, root))
    return calls


def _rebuild_broadcasts(parameters: int, buckets: int, ranks: int) -> list[Call]:
    """sync_bucket_indices: every index and the bucket count, then the bucket sizes (int32)."""
    return [
        Call("bcast", 4 * (parameters + 1), "int32", NO_OP, ranks, 1, 0),
        Call("bcast", 4 * buckets, "int32", NO_OP, ranks, 1, 0),
    ]


def _source(model: ModelTensors, options: DdpOptions, buckets: int, step_bytes: int) -> dict:
    first, cap = options.limits
    return {
        "kind": "ddp",
        "pytorch": PYTORCH_VERSION,
        "ranks": options.ranks,
        "steps": options.steps,
        "bucket_cap_mb": options.bucket_cap_mb,
        "first_bucket_bytes": first,
        "bucket_bytes": cap,
        "broadcast_buffers": options.broadcast_buffers,
        "parameters": len(model.parameters),
        "trained_parameters": len(model.trained),
        "buffers": len(model.buffers),
        "buckets": buckets,
        "bytes_per_step": step_bytes,
    }


def _notes(model: ModelTensors) -> list[str]:
    notes = [
        f"DDP as PyTorch {PYTORCH_VERSION} runs it with its defaults (find_unused_parameters="
        "False, static_graph=False, no comm hook): step 1 reduces one bucket per datatype, "
        "later steps the buckets rebuilt after it, gradients assumed ready in reverse "
        "parameter order",
    ]
    frozen = len(model.parameters) - len(model.trained)
    if frozen:
        notes.append(f"{frozen} parameters do not require grad: broadcast at start, not reduced")
    if any(t.dims is None for t in model.trained):
        notes.append("parameters given by numel count as one dimension in DDP's shape check")
    return notes
