"""The sweep subcommand: resuming a run and running it (its spec flags:
runners.cli.spec_flags; verify and calibrate, which run ranks too: runners.cli.calibration)."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from runners.cli.common import UsageError, add_store_option, store_path
from runners.cli.spec_flags import add_spec_flags, spec_overrides
from runners.domain.names import run_id_problem
from runners.domain.status import RunStatus
from runners.domain.units import counted

if TYPE_CHECKING:
    from runners.domain.sweep.spec import SweepSpec
    from runners.jobs.sweep import SweepOutcome


def _resumed_spec(args: argparse.Namespace, path: Path):
    """The stored run's spec with its executable settings from this command line or the spec
    file given, never from the store unless --trust-stored-launcher says so."""
    from runners.domain.sweep.launcher import DEFAULT_LAUNCHER
    from runners.domain.sweep.spec import SPEC_KEYS, load_spec, parse_spec
    from runners.jobs.sweep import resume_spec

    stored = resume_spec(path, args.resume)
    overrides = spec_overrides(args)
    resumable = [key for key in SPEC_KEYS if key.resumable]
    if set(overrides) - {key.name for key in resumable}:
        flags = [key.alias or key.flag for key in resumable]
        raise UsageError(
            "--resume reuses the run's own grid and timing; only "
            f"{', '.join(flags[:-1])} and {flags[-1]} may be given with it"
        )
    default = stored.launcher == DEFAULT_LAUNCHER and not stored.launcher_shell
    if args.spec:
        source = load_spec(Path(args.spec))
    elif "launcher" in overrides or args.trust_stored_launcher or default:
        source = stored
    else:
        raise UsageError(
            f"run {args.resume} was started with launcher {stored.launcher!r}; a resume runs "
            "no command taken from the store: give it again with --launcher (or the spec "
            "file), or add --trust-stored-launcher"
        )
    settings = {key.name: source.values()[key.name] for key in resumable}
    return parse_spec(stored.with_values(**(settings | overrides)).to_toml())  # validated again


def sweep_labels(args: argparse.Namespace) -> dict:
    """The new run's name and tags (runs columns), checked; none with --resume, whose run has
    them already (`collsweep tag` changes them)."""
    from runners.domain.sweep.run_labels import checked_name, checked_tags

    if args.resume and (args.name is not None or args.tag):
        raise UsageError(
            "--name and --tag label a new run; change a stored run's with `collsweep tag RUN`"
        )
    name, tags = checked_name(args.name), checked_tags(args.tag or [])
    return {**({"name": name} if name else {}), **({"tags": tags} if tags else {})}


def _sweep_spec(args: argparse.Namespace, notes: list[str]):
    """The spec to run, checked (syntax, launcher program, memory) before any rank starts."""
    if args.run_id is not None and args.resume:
        raise UsageError("--resume takes the run to finish, --run-id names a new one")
    for given in (args.run_id, args.resume):
        if given is not None and run_id_problem(given):
            raise UsageError(str(run_id_problem(given)))
    from runners.domain.sweep import capacity, launcher
    from runners.domain.sweep.spec import load_spec, spec_from_mapping
    from runners.host.machine import physical_cores
    from runners.host.memory import available_bytes
    from runners.jobs import launch

    if args.resume:
        if args.workload:
            raise UsageError("--resume measures the run's own calls: leave --workload out")
        spec = _resumed_spec(args, store_path(args))
    elif args.workload:
        spec = _workload_spec(args, notes)
    elif not args.spec:
        overrides = spec_overrides(args)
        if not {"sizes", "ranks"} <= set(overrides):
            raise UsageError(
                "give a spec file (e.g. data/quick.toml), or at least --sizes and --ranks"
            )
        spec = spec_from_mapping(overrides, notes)
    else:
        spec = load_spec(Path(args.spec), spec_overrides(args), notes)
    if args.dedicated and not args.resume and launcher.runs_here(spec.launcher):
        kept, dropped = capacity.dedicated_ranks(spec.ranks, physical_cores())
        if dropped:
            notes.append(
                f"--dedicated: {physical_cores()} cores here, so group sizes "
                f"{', '.join(map(str, dropped))} are left out (more ranks than cores)"
            )
        spec = replace(spec, ranks=kept)
    problem = launch.launcher_problem(spec.launcher, spec.launcher_shell)
    problem = problem or launch.libraries_problem(spec.libraries)
    problem = problem or _files_problem(spec)
    if problem is None and launcher.runs_here(spec.launcher):
        problem = capacity.ranks_problem(spec.ranks, physical_cores())
    if problem is None:
        here = max(spec.ranks) if launcher.runs_here(spec.launcher) else 1
        problem = capacity.payload_problem(spec.sizes, here, available_bytes())
    if problem:
        raise UsageError(problem)
    return spec


WORKLOAD_KEYS = ("sizes", "ranks", "dtypes", "ops", "collectives")


def _workload_spec(args: argparse.Namespace, notes: list[str]):
    """The spec of a sweep of exactly the workload's calls: its grid keys from the workload,
    the algorithms, timing and launcher from the spec file (if any) and the options."""
    from runners.domain.sweep.spec import load_spec, spec_from_mapping
    from runners.domain.sweep.workload_spec import workload_overrides
    from runners.domain.workload.file import load_workload

    overrides = spec_overrides(args)
    clash = [key for key in WORKLOAD_KEYS if key in overrides]
    if clash:
        raise UsageError(f"--workload sets {', '.join(clash)} from its calls: leave them out")
    workload = load_workload(Path(args.workload))
    try:
        overrides |= workload_overrides(workload)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    left_out = [call for call in workload.calls if not call.measurable]
    if left_out:
        notes.append(
            f"{len(left_out)} of the workload's {len(workload.calls)} distinct calls are not "
            f"measured (datatype or op collsweep cannot time): "
            + ", ".join(f"{c.collective} {c.dtype} {c.op}" for c in left_out[:3])
        )
    if args.spec:
        return load_spec(Path(args.spec), overrides, notes)
    return spec_from_mapping(overrides, notes)


def _files_problem(spec) -> str | None:
    """Why a file an entry reads at start-up cannot be used (every rank reads it: check it
    now): collsweep's tuning file for the library's tuned entry, the autotuner's file for
    Intel MPI's impi:autotuned."""
    from runners.domain.libraries import LIBRARIES
    from runners.domain.libraries.catalog import ALGORITHMS
    from runners.host.tuning_files import tuning_problem

    for name in spec.algorithms:
        entry = ALGORITHMS[name]
        lib = LIBRARIES[entry.runs_on]
        if name == lib.vendor_tuned:
            path = Path(spec.vendor_tuning_file)
            if not path.is_file() or path.stat().st_size == 0:
                return f"vendor_tuning_file {path} is not a file with content ({name} reads it)"
        elif entry.own_launch:
            problem = tuning_problem(lib, spec.tuning_file)
            if problem:
                return problem
    return None


def _analysed(path: Path, outcome: SweepOutcome, verbose: bool = False) -> bool:
    """Analyse the stored run; False (said on stderr) when a stop signal ended the analysis:
    the points are stored, the run's status stays true, and `analyze` finishes the job."""
    from runners import analysis  # pandas: only once there is something to analyse
    from runners.jobs.sweep import Interrupted, signals_as_exceptions

    try:
        with signals_as_exceptions():
            analysis.after_sweep(path, outcome.run_id, verbose=verbose)
    except Interrupted as exc:
        print(
            f"collsweep sweep: interrupted ({exc}) during the analysis: run {outcome.run_id} "
            f"is stored ({outcome.status}) but its analysis did not finish; finish it with "
            f"`collsweep analyze {outcome.run_id} --store {path}`",
            file=sys.stderr,
        )
        return False
    return True


def precision_line(path: Path, run_id: str, target: float) -> str:
    """How many of the run's ok points met their precision target."""
    from runners import store

    met, ok = store.precision_counts(path, run_id)
    return (
        f"precision: {met} of {ok} points met their target (the interval over launches "
        f"within +-{target:.0%} of the median)"
    )


def _workload_answer(path: Path, run_id: str, args: argparse.Namespace) -> None:
    """The whole job's answer after a sweep of a workload's calls (stored, and printed)."""
    from runners.analysis.workload_report import report_workload
    from runners.cli.workload_report import report_text
    from runners.domain.workload.file import load_workload

    workload = load_workload(Path(args.workload)) if args.workload else None
    if workload is None:  # a resumed workload run: its report is made with `workload report`
        return
    print(report_text(report_workload(path, run_id, workload)))
    print(f"again, or with --replay: collsweep workload report {args.workload} --run {run_id}")


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run (or resume) a sweep into the store."""
    notes: list[str] = []
    labels = sweep_labels(args)
    spec = _sweep_spec(args, notes)  # before the store (and pandas) is imported: bad input is fast
    from runners.jobs.sweep import Interrupted, run_sweep

    path = store_path(args)
    _refuse_a_taken_run_id(args.run_id, path)
    for note in notes:
        print(f"collsweep sweep: note: {note}", file=sys.stderr)
    try:
        outcome = run_sweep(
            spec,
            path,
            command_line=shlex.join(sys.argv),
            run_id=args.resume or args.run_id,
            retry_failed=not args.keep_failed,
            verbose=args.verbose,
            labels=labels,
        )
    except Interrupted as exc:  # before the run was created: nothing to mark
        print(f"collsweep sweep: interrupted ({exc}) before any rank started", file=sys.stderr)
        return 130
    if args.resume and outcome.total == 0 and outcome.status == RunStatus.COMPLETE:
        print(
            f"run {outcome.run_id} is complete: nothing to measure; its verdict: "
            f"`collsweep crossovers {outcome.run_id} --summary --store {path}`"
        )
        return 0
    return _finish_sweep(path, spec, outcome, args)


def _refuse_a_taken_run_id(run_id: str | None, path: Path) -> None:
    """UsageError when --run-id names a run the store holds already."""
    if not run_id or not path.exists():
        return
    from runners import store

    if store.get_run(path, run_id) is not None:
        raise UsageError(f"run {run_id} is in {path} already: --resume it instead")


def _finish_sweep(
    path: Path, spec: SweepSpec, outcome: SweepOutcome, args: argparse.Namespace
) -> int:
    """Analyse a measured run and say how it went: its points, precision, time span, the
    workload's answer and cautions; the exit status (130: to be finished with --resume)."""
    analysed = outcome.stored and outcome.status != RunStatus.INTERRUPTED
    if analysed and not _analysed(path, outcome, args.verbose):
        return 130
    _say_outcome(path, spec, outcome)
    if spec.workload and outcome.stored and analysed:
        _workload_answer(path, outcome.run_id, args)
    for caution in outcome.cautions:
        print(f"caution: {caution}")
    if outcome.status == RunStatus.INTERRUPTED or not outcome.stored:
        print(f"finish it with: collsweep sweep --resume {outcome.run_id} --store {path}")
        return 130
    return 0 if outcome.status == RunStatus.COMPLETE else 1


def _say_outcome(path: Path, spec: SweepSpec, outcome: SweepOutcome) -> None:
    """The run's line (status, points done, why), its precision and time span, the store."""
    status = outcome.status if outcome.stored else f"{outcome.status} (not yet in the store)"
    partial = (
        f" ({outcome.partial} more measured in fewer than their {spec.timing.launches} launches)"
        if outcome.partial
        else ""
    )
    print(
        f"run {outcome.run_id}: {status}, {outcome.measured} of {outcome.total} "
        f"points done in {counted(spec.timing.launches, 'launch', 'launches')}{partial}"
        f"{': ' + outcome.reason if outcome.reason else ''}"
    )
    if outcome.stored:
        from runners.store.run_compare import time_span_note

        print(precision_line(path, outcome.run_id, spec.timing.target_rel_ci))
        span = time_span_note(path, outcome.run_id)
        if span:
            print(f"time span: {span}")
    print(f"store: {path}")


def add_sweep(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "sweep",
        help="run a sweep spec on real MPI ranks and store the results",
        description="Run every algorithm x ranks x bytes x dtype x op of a TOML spec "
        "(presets: data/quick.toml, data/standard.toml). The ranks are launched once per "
        "(ranks, library configuration); every finished point is stored at once, so an "
        "interrupted sweep keeps its points and --resume finishes the rest. Options "
        "override the spec's keys.",
    )
    parser.add_argument("spec", nargs="?", help="TOML spec file (with --resume: its launcher)")
    _add_resume_options(parser)
    parser.add_argument(
        "--dedicated",
        action="store_true",
        help="measure only the group sizes with a physical core per rank on this machine "
        "(the others are left out, with a note): what `make demo` runs",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="a line per measured point instead of one per launch, and the model's diagnostics "
        "(calibrations, agreement, accuracy) after the verdict",
    )
    _add_run_labels(parser)
    parser.add_argument(
        "--workload",
        metavar="W",
        help="measure exactly the calls of workload file W (its sizes, datatypes, ops, group "
        "sizes and collectives) with the spec's algorithms, launches and timing; then "
        "`collsweep workload report W --run RUN` answers for the whole job",
    )
    add_store_option(parser)
    add_spec_flags(parser)
    parser.set_defaults(handler=cmd_sweep)


def _add_resume_options(parser: argparse.ArgumentParser) -> None:
    """--resume and what it may be told: keep the failed points, trust the stored launcher."""
    parser.add_argument(
        "--resume",
        metavar="RUN",
        help="finish RUN: measure its missing, failed and timed-out points",
    )
    parser.add_argument(
        "--keep-failed",
        action="store_true",
        help="with --resume: keep failed and timed-out points instead of measuring them again",
    )
    parser.add_argument(
        "--trust-stored-launcher",
        action="store_true",
        help="with --resume: run the launcher stored with the run (read its spec_toml first)",
    )


def _add_run_labels(parser: argparse.ArgumentParser) -> None:
    """What the new run is called: its id, name and tags."""
    parser.add_argument(
        "--run-id",
        metavar="ID",
        help="name the new run (letters, digits, '.', '_', '-'); collsweep submit gives every "
        "task of a job the same id so that their shard stores merge into one run",
    )
    parser.add_argument(
        "--name",
        metavar="TEXT",
        help="what to call the new run (at most 200 printable characters), shown beside its id "
        "wherever runs are listed or picked; `collsweep tag RUN --name` changes it",
    )
    parser.add_argument(
        "--tag",
        action="append",
        metavar="T",
        help="a tag of the new run (1-64 letters, digits, '.', '_', '-', ':'; repeatable, at "
        "most 32); `collsweep tag RUN --add/--remove` changes them",
    )
