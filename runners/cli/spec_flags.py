"""The sweep spec's command-line flags (each a spec key) and the overrides they make."""

from __future__ import annotations

import argparse

from runners.cli.common import UsageError, size_list
from runners.domain.catalog import DTYPES, OPS, known_names
from runners.domain.spec import STARTUP_GRACE_S
from runners.domain.units import parse_bytes

SPEC_FLAGS = {
    # flag: (spec key, parser, help)
    "--sizes": (
        "sizes",
        "sizes",
        "bytes: '8,64,512' or MIN:MAX[:FACTOR], e.g. 8:4M:8 (K/M/G suffixes are binary)",
    ),
    "--ranks": ("ranks", "ints", "group sizes, e.g. 2,3,4,8"),
    "--dtypes": ("dtypes", "names", f"datatypes: {known_names(DTYPES)}"),
    "--ops": ("ops", "names", f"reduction ops: {known_names(OPS)}"),
    "--algorithms": (
        "algorithms",
        "names",
        "algorithms, e.g. ring,mpi,mpi:ring (see README); with --collectives, ring stands for "
        "each collective's ring",
    ),
    "--collectives": (
        "collectives",
        "names",
        "collectives: allreduce (default), reduce_scatter, allgather, bcast, reduce, or all",
    ),
    "--libraries": (
        "libraries",
        "names",
        "MPI libraries to run the algorithms on: mpich (default), openmpi, impi, or several: "
        "mpich,openmpi,impi",
    ),
    "--warmup": ("warmup", int, "untimed calls before timing each point and pass"),
    "--min-iterations": ("min_iterations", int, "timed iterations at least (per launch)"),
    "--max-iterations": ("max_iterations", int, "timed iterations at most (all launches)"),
    "--target-rel-ci": (
        "target_rel_ci",
        float,
        "stop once the median's 95%% CI half-width is "
        "within this fraction of the median, e.g. 0.05",
    ),
    "--budget-s": ("budget_s", float, "seconds of timing per point (all launches and passes)"),
    "--passes": ("passes", int, "interleaved passes over the algorithms (drift control)"),
    "--launches": (
        "launches",
        int,
        "separate MPI launches per job, visiting the grid in rounds (launch-to-launch variation)",
    ),
    "--seed": ("seed", int, "seed of each launch's shuffled order of groups and cells"),
    "--library-switching": (
        "library_switching",
        str,
        "runtime: forced MPICH algorithms share each launch, switched through MPI_T "
        "(default); launch: a launch of their own, forced by environment",
    ),
    "--cache-mode": (
        "cache_mode",
        str,
        "hot: one reused buffer; cold: rotate buffers larger than the last-level cache",
    ),
    "--launcher": (
        "launcher",
        str,
        "launcher template, e.g. 'srun -n {ranks}' (default 'mpiexec -n {ranks}')",
    ),
    "--thread-level": ("thread_level", str, "MPI thread level to initialise (default single)"),
    "--point-timeout-s": (
        "point_timeout_s",
        float,
        "watchdog: seconds without progress before a job is declared hung (before a "
        f"launch's first point, {STARTUP_GRACE_S:g} s more for start-up)",
    ),
    "--tuning-file": (
        "tuning_file",
        str,
        "a tuning file `collsweep tune` wrote: adds the tuned entry of the library swept "
        "(mpi:tuned, openmpi:tuned, impi:tuned), the library following it",
    ),
    "--vendor-tuning-file": (
        "vendor_tuning_file",
        str,
        "a file Intel MPI's own autotuner wrote (mpitune_fast, or I_MPI_TUNING_BIN_DUMP): adds "
        "impi:autotuned, Intel MPI following it (I_MPI_TUNING_BIN)",
    ),
}


def _sizes_override(text: str) -> list[int] | dict[str, int]:
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise UsageError(f"--sizes range must be MIN:MAX[:FACTOR], got {text!r}")
        keys = ("min", "max", "factor")[: len(parts)]
        try:
            values = [parse_bytes(p) for p in parts[:2]] + [int(p) for p in parts[2:]]
        except ValueError:
            raise UsageError(
                f"--sizes range must be MIN:MAX[:FACTOR] sizes, got {text!r}"
            ) from None
        return dict(zip(keys, values, strict=True))
    return size_list(text)


# Older flag names, kept working beside the ones that match the spec keys.
FLAG_ALIASES = {
    "--budget-s": "--budget",
    "--target-rel-ci": "--target-ci",
    "--point-timeout-s": "--point-timeout",
}


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def spec_overrides(args: argparse.Namespace) -> dict:
    """The spec keys given on the command line, parsed to TOML-like values."""
    overrides: dict = {}
    if getattr(args, "launcher_shell", None):
        overrides["launcher_shell"] = True
    for flag, (key, kind, _help) in SPEC_FLAGS.items():
        text = getattr(args, _dest(flag))
        if text is None:
            continue
        if kind == "sizes":
            overrides[key] = _sizes_override(text)
        elif kind == "ints":
            try:
                overrides[key] = [int(v) for v in text.split(",") if v.strip()]
            except ValueError:
                raise UsageError(f"{flag} expects comma-separated integers, got {text!r}") from None
        elif kind == "names":
            overrides[key] = [v.strip() for v in text.split(",") if v.strip()]
        else:
            try:
                overrides[key] = kind(text)
            except ValueError:
                noun = "an integer" if kind is int else "a number"
                raise UsageError(f"{flag} expects {noun}, got {text!r}") from None
    return overrides


def add_spec_flags(parser: argparse.ArgumentParser) -> None:
    """Every spec flag (and its older alias) on `parser`."""
    for flag, (_key, _kind, text) in SPEC_FLAGS.items():
        aliases = [FLAG_ALIASES[flag]] if flag in FLAG_ALIASES else []
        parser.add_argument(flag, *aliases, dest=_dest(flag), help=text)
