"""`collsweep sweep`: a spec (or a workload's calls) measured on real ranks, stored and analysed;
--resume finishes a run."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from runners import store
from runners.analysis import adaptive_rounds, auto_parameters, run_analysis
from runners.analysis.libraries import spec_params
from runners.analysis.params import Params
from runners.analysis.workload_report import report_workload
from runners.cli.common import UsageError, add_run_argument, add_store_option, store_path
from runners.cli.spec_flags import add_spec_flags, spec_overrides
from runners.cli.workload_texts import report_text
from runners.domain.errors import BadInput
from runners.domain.status import RunStatus
from runners.domain.units import counted, wrapped
from runners.domain.verdict.placements import placement_name, placements_text
from runners.domain.workload.file import load_workload
from runners.jobs.calibrate import sweep_calibration
from runners.jobs.sweep import Interrupted, SweepOutcome, run_sweep, signals_as_exceptions
from runners.jobs.sweep_request import SweepRequest, checked_labels, checked_spec
from runners.store.run_compare import time_span_note

if TYPE_CHECKING:
    from runners.domain.sweep.spec import SweepSpec


def sweep_request(args: argparse.Namespace) -> SweepRequest:
    """The command line's sweep, as the jobs take it."""
    return SweepRequest(
        store=store_path(args),
        spec_file=Path(args.spec) if args.spec else None,
        overrides=spec_overrides(args),
        run_id=args.run_id,
        resume=args.resume,
        workload=Path(args.workload) if args.workload else None,
        dedicated=args.dedicated,
        trust_stored_launcher=args.trust_stored_launcher,
        name=args.name,
        tags=tuple(args.tag or ()),
    )


def _analysed(path: Path, outcome: SweepOutcome, verbose: bool = False) -> bool | None:
    """Analyse the stored run: True when it has an analysis to tell, None when it has none
    (no ok point, or the analysis failed and said so), False (said on stderr) when a stop
    signal ended it: the points are stored, the run's status stays true, and `analyze`
    finishes the job."""
    try:
        with signals_as_exceptions():
            return run_analysis.after_sweep(path, outcome.run_id, verbose=verbose) or None
    except Interrupted as exc:
        print(
            f"collsweep sweep: interrupted ({exc}) during the analysis: run {outcome.run_id} "
            f"is stored ({outcome.status}) but its analysis did not finish; finish it with "
            f"`collsweep analyze {outcome.run_id} --store {path}`",
            file=sys.stderr,
        )
        return False


def precision_line(path: store.Source, run_id: str, target: float) -> str:
    """How many of the run's ok points met their precision target."""
    met, ok = store.precision_counts(path, run_id)
    return (
        f"precision: {met} of {ok} points met their target (the interval over launches "
        f"within +-{target:.0%} of the median)"
    )


def _workload_answer(path: Path, run_id: str, args: argparse.Namespace) -> None:
    """The whole job's answer after a sweep of a workload's calls (stored, and printed)."""
    workload = load_workload(Path(args.workload)) if args.workload else None
    if workload is None:  # a resumed workload run: its report is made with `workload report`
        return
    print(report_text(report_workload(path, run_id, workload)))
    print(f"again, or with --replay: collsweep workload report {args.workload} --run {run_id}")


def run(args: argparse.Namespace) -> int:
    """Run (or resume) a sweep into the store."""
    notes: list[str] = []
    request = sweep_request(args)
    labels = checked_labels(request)
    spec = checked_spec(request, notes)
    path = request.store
    _refuse_a_taken_run_id(args.run_id, path)
    for note in notes:
        print(f"collsweep sweep: note: {note}", file=sys.stderr)
    if len(spec.ranks_per_node) > 1:
        return _each_placement(spec, path, labels, args)
    spec = _auto_resolved(spec, path)
    if spec.adaptive:
        return _adaptive(spec, path, labels, args)
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
        if run_analysis.analysis_missing(path, outcome.run_id):
            print(f"run {outcome.run_id} is complete: nothing to measure; analysing it", flush=True)
            return _finish_sweep(path, spec, outcome, args)
        print(
            f"run {outcome.run_id} is complete: nothing to measure; its verdict: "
            f"`collsweep crossovers {outcome.run_id} --summary --store {path}`"
        )
        return 0
    return _finish_sweep(path, spec, outcome, args)


def _each_placement(spec: SweepSpec, path: Path, labels: dict, args: argparse.Namespace) -> int:
    """A sweep of several ranks_per_node: a run each, in turn (each its own calibration,
    analysis and verdict), then their winners side by side; a run that does not complete
    stops the rest, said with the command that sweeps them."""
    if args.run_id:
        raise UsageError("--run-id names one run; several ranks_per_node make a run each")
    done: list[tuple[int, str]] = []
    for one in spec.per_placement():
        per_node = one.nodes.ranks_per_node
        print(f"ranks_per_node = {per_node}: a run of its own", file=sys.stderr, flush=True)
        named = {**labels, "name": placement_name(labels.get("name"), per_node)}
        one = _auto_resolved(one, path)
        try:
            outcome = run_sweep(
                one, path, command_line=shlex.join(sys.argv),
                retry_failed=not args.keep_failed, verbose=args.verbose, labels=named,
            )  # fmt: skip
        except Interrupted as exc:
            outcome = None
            print(f"collsweep sweep: interrupted ({exc}) before any rank started", file=sys.stderr)
        code = 130 if outcome is None else _finish_sweep(path, one, outcome, args)
        if code:
            left = ",".join(str(n) for n in spec.ranks_per_node[len(done) + 1 :])
            if left:
                print(f"not swept: ranks_per_node {left} (sweep them with --ranks-per-node {left})")
            return code
        done.append((per_node, outcome.run_id if outcome else ""))
    read = [(n, run_id, store.verdict_inputs(path, run_id)) for n, run_id in done]
    found = [(n, run_id, got["winners"], got["crossovers"]) for n, run_id, got in read]
    print("\n".join(placements_text(found)))
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _auto_resolved(spec: SweepSpec, path: Path) -> SweepSpec:
    """The spec with its `auto` parameters chosen on this host's calibration (measured first
    if the store has none: the run reuses it); BadInput when none can be had."""
    names = auto_parameters.auto_names(spec)
    if not names:
        return spec
    params = _host_params(spec, path, f"{names[0]}: auto", "name values")
    chosen, said = auto_parameters.resolved(spec, params)
    for line in said:
        _say(line)
    return chosen


def _host_params(spec: SweepSpec, path: Path, who: str, instead: str) -> Params:
    """The model's parameters on this host's calibration for the spec (measured first if the
    store has none: the run reuses it); BadInput, saying `instead`, when none can be had."""
    calibration_id = sweep_calibration(path, spec, _say)
    cal = store.get_calibration(path, calibration_id) if calibration_id else None
    if cal is None:
        raise BadInput(f"{who} needs this host's calibration, which failed: {instead}")
    return spec_params(path, spec, cal)


def _adaptive(spec: SweepSpec, path: Path, labels: dict, args: argparse.Namespace) -> int:
    """An adaptive sweep (runners.analysis.adaptive_rounds): its rounds, each a sweep of the
    points chosen so far, then the run's analysis and verdict as any sweep's."""
    params = _host_params(spec, path, "adaptive", "sweep the whole grid instead")
    outcomes: list[SweepOutcome] = []

    def measure_round(round_spec: SweepSpec, run_id: str | None) -> tuple[str, bool]:
        outcome = run_sweep(
            round_spec, path, command_line=shlex.join(sys.argv), run_id=run_id or args.run_id,
            retry_failed=not args.keep_failed, verbose=args.verbose, labels=labels,
        )  # fmt: skip
        outcomes.append(outcome)
        return outcome.run_id, outcome.status == RunStatus.COMPLETE and outcome.stored

    try:
        with signals_as_exceptions():  # between rounds too (each sweep handles its own)
            run = adaptive_rounds.sweep_adaptively(
                path, spec, params, measure_round, _say, run_id=args.resume
            )
    except Interrupted as exc:  # between rounds: the run says which round is left to measure
        done = outcomes[-1].run_id if outcomes else args.resume
        where = f"run {done} keeps its rounds; finish it with: collsweep sweep --resume {done}"
        print(f"collsweep sweep: interrupted ({exc}): {where if done else 'nothing stored'}")
        return 130
    chosen = len(run.state.choices)
    outcome = replace(outcomes[-1], measured=len(run.state.measured.times), total=chosen)
    _say(adaptive_rounds.ending_line(run, spec))
    return _finish_sweep(path, spec, outcome, args)


def _refuse_a_taken_run_id(run_id: str | None, path: Path) -> None:
    """UsageError when --run-id names a run the store holds already."""
    if not run_id or not path.exists():
        return

    if store.get_run(path, run_id) is not None:
        raise UsageError(f"run {run_id} is in {path} already: --resume it instead")


def _finish_sweep(
    path: Path, spec: SweepSpec, outcome: SweepOutcome, args: argparse.Namespace
) -> int:
    """Analyse a measured run and say how it went: its points, precision, time span, the
    workload's answer, then its winners and verdict, last, where the eye lands (the cautions
    said before the launches come back there as the verdict's provisional and oversubscribed
    flags); the exit status (130: to be finished with --resume)."""
    analysed = outcome.stored and outcome.status != RunStatus.INTERRUPTED
    told = _analysed(path, outcome, args.verbose) if analysed else None
    if told is False:
        return 130
    _say_outcome(path, spec, outcome)
    if spec.workload and outcome.stored and analysed:
        _workload_answer(path, outcome.run_id, args)
    sys.stdout.flush()  # the story (stderr) comes last, after these lines (stdout)
    if told:
        with store.Store.open(path) as reader:  # one connection for a dozen reads
            run_analysis.tell_the_story(reader, outcome.run_id, verbose=args.verbose)
    if outcome.status == RunStatus.INTERRUPTED or not outcome.stored:
        print(f"finish it with: collsweep sweep --resume {outcome.run_id} --store {path}")
    left_on_a_signal = not outcome.stored and outcome.status != RunStatus.FAILED
    if outcome.status == RunStatus.INTERRUPTED or left_on_a_signal:
        return 130
    return 0 if outcome.status == RunStatus.COMPLETE and outcome.stored else 1


def _say_outcome(path: Path, spec: SweepSpec, outcome: SweepOutcome) -> None:
    """The run's line (status, points done, why), its precision and time span, the store."""
    status = outcome.status if outcome.stored else f"{outcome.status} (not yet in the store)"
    partial = (
        f" ({outcome.partial} more measured in fewer than their {spec.timing.launches} launches)"
        if outcome.partial
        else ""
    )
    print(
        wrapped(
            f"run {outcome.run_id}: {status}, {outcome.measured} of {outcome.total} "
            f"points done in {counted(spec.timing.launches, 'launch', 'launches')}{partial}"
            f"{': ' + outcome.reason if outcome.reason else ''}"
        )
    )
    if outcome.stored:
        with store.Store.open(path) as reader:  # one connection for the reads
            print(precision_line(reader, outcome.run_id, spec.timing.target_rel_ci))
            span = time_span_note(reader, outcome.run_id)
        if span:
            print(wrapped(f"time span: {span}"))
    print(f"store: {path}")


def add(sub: argparse._SubParsersAction) -> None:
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
    parser.set_defaults(handler=run)


def _add_resume_options(parser: argparse.ArgumentParser) -> None:
    """--resume and what it may be told: keep the failed points, trust the stored launcher."""
    add_run_argument(
        parser,
        "--resume",
        metavar="RUN",
        help="finish RUN (an id or a name): measure its missing, failed and timed-out points",
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
