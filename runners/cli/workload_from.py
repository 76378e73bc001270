"""`collsweep workload from-ddp|from-param`: a workload written from what users already have.

A bad input file is refused in one line (exit 2) and nothing is written; the target is
checked before the input is read."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from runners.cli.common import UsageError
from runners.domain.outputs import check_outputs, write_texts
from runners.domain.units import format_bytes
from runners.domain.workload.file import MAX_RANKS, Workload, workload_from_json
from runners.domain.workload.sources import read_json_file
from runners.domain.workload.sources.ddp import DEFAULT_BUCKET_CAP_MB, DdpOptions, ddp_workload
from runners.domain.workload.sources.ddp_input import model_from_json
from runners.domain.workload.sources.param import param_workload

MAX_STEPS = 10**9


DDP_FORMAT = """\
PARAMS.json: a JSON list of the model's parameters in model.named_parameters() order, or
{"parameters": [...], "buffers": [...]} (buffers in model.named_buffers() order). A
parameter is {"name": "fc.weight", "shape": [1000, 2048], "dtype": "float32",
"requires_grad": true} ("numel": N instead of "shape"; dtype default float32;
requires_grad default true) or a bare element count. From a torch model:

  params = [{"name": n, "shape": list(p.shape), "dtype": str(p.dtype).removeprefix("torch."),
             "requires_grad": p.requires_grad} for n, p in model.named_parameters()]
  buffers = [{"name": n, "shape": list(b.shape), "dtype": str(b.dtype).removeprefix("torch.")}
             for n, b in model.named_buffers()]
  json.dump({"parameters": params, "buffers": buffers}, open("params.json", "w"))

The workload holds DDP's calls as PyTorch 2.11.0 makes them (docs/guide/workloads.md, Workloads
from DDP and PARAM): the start-up shape check and broadcast of parameters and buffers from rank
0 (250 MiB chunks), then per step the buffers' broadcast and one allreduce (sum) per gradient
bucket in launch order: step 1 one bucket per dtype, later steps the rebuilt buckets (parameters
in reverse order; the first bucket 1 MiB and the others 25 MiB by default, all --bucket-mb when
given)."""


PARAM_FORMAT = """\
TRACE.json: one rank's PARAM comms trace in PARAM's basic format (commsTraceReplay
--trace-type basic): a JSON list of entries such as {"comms": "all_reduce", "in_msg_size":
1048576, "out_msg_size": 1048576, "dtype": "Float", "world_size": 8}; sizes in elements.
all_reduce, broadcast, reduce, all_gather(_base) and reduce_scatter(_base) become the
workload's calls in trace order (reductions as sum: the format has no op); wait, barrier,
point-to-point, all_to_all and compute entries are counted in its notes."""


def positive_int(text: str) -> int:
    """An argparse type: an integer from 1 to MAX_RANKS (ranks, steps)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if not 1 <= value <= MAX_RANKS:
        raise argparse.ArgumentTypeError(f"expected an integer from 1 to {MAX_RANKS}, got {text!r}")
    return value


def positive_mb(text: str) -> float:
    """An argparse type: a size in MiB > 0 (DDP's bucket_cap_mb may be fractional)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size in MiB, got {text!r}") from None
    if not 0 < value <= 2**20:  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected a size in MiB > 0, got {text!r}")
    return value


def cmd_from_ddp(args: argparse.Namespace) -> int:
    """Write the workload of DDP over the model PARAMS.json describes."""
    source = Path(args.params)
    out = _checked_target(args.out, source)
    if args.steps > MAX_STEPS:
        raise UsageError(f"--steps {args.steps} is more than {MAX_STEPS}")
    model = model_from_json(read_json_file(source, "parameter file"), f"parameter file {source}")
    options = DdpOptions(args.ranks, args.steps, args.bucket_mb, not args.no_broadcast_buffers)
    workload = ddp_workload(model, options, _name(args.name, "ddp", source))
    _write(out, workload)
    per_step = format_bytes(workload.source["bytes_per_step"])
    print(
        f"wrote {out}: {_counted(workload)}, {workload.source['buckets']} gradient buckets, "
        f"{per_step} a step over {args.steps} steps; see `collsweep workload show {out}`"
    )
    return 0


def cmd_from_param(args: argparse.Namespace) -> int:
    """Write the workload of a PARAM basic comms trace."""
    source = Path(args.trace)
    out = _checked_target(args.out, source)
    data = read_json_file(source, "PARAM trace")
    name = _name(args.name, "param", source)
    workload = param_workload(data, f"PARAM trace {source}", name, args.ranks)
    _write(out, workload)
    total = sum(call.nbytes * call.calls for call in workload.calls)
    print(
        f"wrote {out}: {_counted(workload)}, {format_bytes(total)} in all; "
        f"see `collsweep workload show {out}`"
    )
    return 0


def _checked_target(path: str, source: Path) -> Path:
    """--out as a path, refused (exit 2) before any input is read when it cannot be written
    or is the input `source` itself."""
    out = Path(path)
    check_outputs([out], inputs=[source])
    return out


def _name(given: str | None, kind: str, source: Path) -> str:
    name = given if given is not None else f"{kind}-{source.stem}"
    if len(name) > 200 or not name.isprintable():
        raise UsageError("--name must be a short printable name (200 characters at most)")
    return name


def _write(out: Path, workload: Workload) -> None:
    """Write the workload, read back first as `workload show` will read it."""
    text = workload.to_text()
    workload_from_json(json.loads(text), f"workload {out}")
    write_texts({out: text})


def _counted(workload: Workload) -> str:
    return f"{workload.total_calls} calls ({len(workload.calls)} distinct)"


def add_from_ddp(actions: argparse._SubParsersAction) -> None:
    """`workload from-ddp PARAMS.json --ranks N --out W`."""
    parser = actions.add_parser(
        "from-ddp",
        help="write the workload PyTorch DDP makes for a model, from its parameters",
        description="Write the collective calls PyTorch DistributedDataParallel makes for a\n"
        "model, computed with DDP's own bucketing rule from a list of its parameters.",
        epilog=DDP_FORMAT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("params", metavar="PARAMS.json", help="the model's parameters (below)")
    parser.add_argument("--ranks", type=positive_int, required=True, help="DDP's world size")
    parser.add_argument(
        "--bucket-mb",
        type=positive_mb,
        default=None,
        metavar="MB",
        help=f"DDP's bucket_cap_mb; omitted: DDP's default, {DEFAULT_BUCKET_CAP_MB} MiB with a "
        "first bucket of 1 MiB; given: every bucket, the first too, capped at MB (as PyTorch "
        "does when bucket_cap_mb is passed)",
    )
    parser.add_argument(
        "--steps", type=positive_int, default=100, help="training steps (default 100)"
    )
    parser.add_argument(
        "--no-broadcast-buffers",
        action="store_true",
        help="DDP's broadcast_buffers=False: buffers are not broadcast (at start or per step)",
    )
    _add_output_options(parser)
    parser.set_defaults(handler=cmd_from_ddp)


def add_from_param(actions: argparse._SubParsersAction) -> None:
    """`workload from-param TRACE.json --out W`."""
    parser = actions.add_parser(
        "from-param",
        help="write a workload from a PARAM comms trace (its basic JSON format)",
        description="Write the collective calls of a PARAM comms trace (facebookresearch/param\n"
        "commsTraceReplay, basic format), in the trace's order.",
        epilog=PARAM_FORMAT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("trace", metavar="TRACE.json", help="one rank's basic trace")
    parser.add_argument(
        "--ranks",
        type=positive_int,
        default=None,
        help="the group size of entries that give no world_size or global_ranks",
    )
    _add_output_options(parser)
    parser.set_defaults(handler=cmd_from_param)


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, metavar="W", help="the workload file to write")
    parser.add_argument("--name", default=None, help="the workload's name (default: from input)")


SOURCE_ACTIONS = [add_from_ddp, add_from_param]
