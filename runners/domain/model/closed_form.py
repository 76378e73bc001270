"""Alpha-beta-gamma cost models of the allreduce algorithms collsweep implements.

A message costs alpha + m * beta for m bytes; reducing m bytes locally costs m * gamma. A model
counts, on the critical path, the messages, the bytes sent and the bytes reduced of the
algorithm's own schedule (runners.domain.collectives.schedule.critical_path walks the
descriptor's steps for every rank: each round costs its largest message and its largest
reduction), so a `Prediction` shows which term dominates. docs/guide/algorithms.md gives the
closed forms these counts equal (tests/domain/collectives/test_schedules.py checks that they
do). With p ranks and n bytes, for example, the ring: 2 (p-1) messages, 2 (p-1) * b sent,
(p-1) * b reduced with b = n/p.

Exact counts walk the schedule for count = n / itemsize whole elements (uneven blocks
included). With smooth=True the bytes are scaled linearly from the count with one element
per block, b = max(n / parts, itemsize): continuous and piecewise linear in n, within one
element of the exact block, for drawing curves and solving crossovers (the exact staircase
makes two curves flip order back and forth within a few blocks of where they cross).
lower_bound (ceil(log2 p) messages, 2 (p-1)/p * n sent, (p-1)/p * n reduced) is a bound, not
an algorithm, and uses n / p unrounded. library_min predicts the library's autotuned allreduce,
whose choice is not known, as the fastest of the library's own algorithms that can run the
call (library_models). p == 1 costs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from runners.domain.algorithms import HAND_WRITTEN, OTHER_COLLECTIVES
from runners.domain.collectives.descriptor import MPICH
from runners.domain.collectives.schedule import Schedule, critical_path
from runners.domain.libraries.catalog import ALGORITHMS, algorithms_on
from runners.domain.model.sampled import sampled

LOWER_BOUND = "lower_bound"
LIBRARY_MIN = "library_min"
MODELS: tuple[str, ...] = (*(spec.name for spec in HAND_WRITTEN), LOWER_BOUND, LIBRARY_MIN)
# The other collectives' schedules, each its own model (no lower bound or library min yet).
OTHER_MODELS: tuple[str, ...] = tuple(spec.name for spec in OTHER_COLLECTIVES)
NOT_SCHEDULES = (LOWER_BOUND, LIBRARY_MIN)  # models that price no one schedule
LIBRARY = "mpi"


@dataclass(frozen=True)
class Prediction:
    """A predicted allreduce time, split into its alpha, beta and gamma terms (and, for the
    schedule-exact variants with overheads, the per-call software term).

    `messages`, `bytes_sent` and `bytes_reduced` are the critical-path counts the terms come
    from: in the closed form latency_s = messages * alpha, bandwidth_s = bytes_sent * beta and
    reduction_s = bytes_reduced * gamma.
    """

    latency_s: float
    bandwidth_s: float
    reduction_s: float
    messages: float
    bytes_sent: float
    bytes_reduced: float
    software_s: float = 0.0

    @property
    def total_s(self) -> float:
        """The predicted time: latency + bandwidth + reduction (+ software) terms."""
        return self.latency_s + self.bandwidth_s + self.reduction_s + self.software_s


def model_for(algorithm: str) -> str | None:
    """The model name for a measured algorithm name, or None when no model applies.

    Model names map to themselves. 'mpi:<name>' (the library with its algorithm forced, MPICH
    names) maps to the model its descriptor names (`modelled_by`, e.g.
    reduce_scatter_allgather -> rabenseifner). Plain 'mpi' (the library's autotuned choice)
    and other forced names give None: the algorithm run is unknown, so it has no schedule of
    its own (autotuned_model says how it is predicted instead).
    """
    if algorithm in MODELS or algorithm in OTHER_MODELS:
        return algorithm
    if algorithm in ALGORITHMS and ALGORITHMS[algorithm].modelled_by:
        return ALGORITHMS[algorithm].modelled_by
    if algorithm in ALGORITHMS and ALGORITHMS[algorithm].library:
        return None
    if algorithm in ALGORITHMS and ALGORITHMS[algorithm].schedule is not None:
        return algorithm  # a family's member (hierarchical(node=2)) is its own model
    if algorithm.startswith(LIBRARY + ":"):  # an MPICH algorithm collsweep does not list
        return None
    raise ValueError(f"unknown algorithm {algorithm!r}; models: {', '.join(MODELS)}")


def autotuned_model(algorithm: str) -> str | None:
    """The model a measured algorithm is predicted with: its own (model_for), library_min for
    a library's own choice (its autotuned entry, or mpi:tuned: the fastest of the library's
    own algorithms), None for a forced algorithm without a model (Open MPI's basic linear)."""
    spec = ALGORITHMS.get(algorithm)
    if spec is not None and spec.library and spec.forced and not spec.modelled_by:
        return None
    own = model_for(algorithm)
    if own is None and spec is not None and not _has_forced_models(spec.runs_on, spec.collective):
        return None  # the library lists none of its algorithms of this collective
    return own or LIBRARY_MIN


@cache
def _has_forced_models(library: str, collective: str) -> bool:
    """Whether `library` lists forced, modelled algorithms of `collective` (what library_min
    takes the fastest of); asked for every point priced, so answered once."""
    return any(s.library and s.modelled_by for s in algorithms_on(library, collective).values())


def library_models(
    ranks: int,
    count: float,
    commutative: bool = True,
    library: str = MPICH,
    collective: str = "allreduce",
) -> tuple[str, ...]:
    """The library algorithms (as 'mpi:<name>') its autotuner could pick for this call: those
    with a model that can run the op on `ranks` ranks and, for block schedules, at least one
    element per block (MPICH's own guard before reduce_scatter_allgather; Open MPI's
    algorithms fall back below it too)."""
    out = []
    for name, spec in algorithms_on(library, collective).items():
        if not (spec.library and spec.modelled_by):
            continue
        if spec.unsupported_reason(ranks, "op", commutative) is not None:
            continue
        parts = ALGORITHMS[spec.modelled_by].parts
        if parts is not None and parts(ranks) > 1 and count < parts(ranks):
            continue
        out.append(name)
    return tuple(out)


def predict(
    algorithm: str,
    ranks: int,
    nbytes: float,
    alpha: float,
    beta: float,
    gamma: float,
    itemsize: int = 1,
    *,
    smooth: bool = False,
    commutative: bool = True,
    library: str = MPICH,
    collective: str = "allreduce",
) -> Prediction:
    """Predict one allreduce of `nbytes` bytes on `ranks` ranks with the given parameters.

    `algorithm` is a model name or a library name `model_for` maps to one. `itemsize` is the
    element size in bytes; it and `smooth` set how blocks round (see the module docstring);
    `commutative` (the op's) limits library_min to the algorithms that can run it, among
    those of `library`.
    """
    model = _resolve(algorithm)
    _check(ranks, nbytes, itemsize)
    if model == LIBRARY_MIN:
        candidates = library_models(ranks, nbytes / itemsize, commutative, library, collective)
        args = (ranks, nbytes, alpha, beta, gamma, itemsize)
        preds = [predict(name, *args, smooth=smooth) for name in candidates]
        return min(preds, key=lambda p: p.total_s)
    messages, sent, reduced = _counts(model, ranks, float(nbytes), itemsize, smooth)
    return Prediction(
        latency_s=messages * alpha,
        bandwidth_s=sent * beta,
        reduction_s=reduced * gamma,
        messages=messages,
        bytes_sent=sent,
        bytes_reduced=reduced,
    )


def smooth_totals(
    algorithm: str,
    ranks: int,
    nbytes: np.ndarray,
    alphas: np.ndarray,
    betas: np.ndarray,
    gamma: float,
    itemsize: int = 1,
    *,
    commutative: bool = True,
    library: str = MPICH,
    collective: str = "allreduce",
) -> np.ndarray:
    """predict(..., smooth=True).total_s at every size in `nbytes`, each with its own alpha
    and beta: the counts are proportional to the size wherever every block holds an element,
    so those sizes are priced as arrays; smaller ones size by size."""
    model = _resolve(algorithm)
    nbytes = np.asarray(nbytes, dtype=float)
    if model != LIBRARY_MIN:
        messages, sent, reduced = _many_counts(model, ranks, nbytes, itemsize)
        return messages * alphas + sent * betas + reduced * gamma + 0.0
    choices = [
        library_models(ranks, n / itemsize, commutative, library, collective) for n in nbytes
    ]
    totals = np.full(nbytes.shape, np.inf)
    for names in set(choices):
        mine = np.array([c == names for c in choices])
        args = (ranks, nbytes[mine], alphas[mine], betas[mine], gamma, itemsize)
        for name in names:
            totals[mine] = np.minimum(totals[mine], smooth_totals(name, *args))
    return totals


def _many_counts(
    model: str, p: int, nbytes: np.ndarray, itemsize: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_counts(..., smooth=True) at every size in `nbytes`, as arrays."""
    if p == 1 or model == LOWER_BOUND:
        rows = [_counts(model, p, float(n), itemsize, True) for n in nbytes]
        messages, sent, reduced = np.array(rows, dtype=float).reshape(-1, 3).T
        return messages, sent, reduced
    spec = ALGORITHMS[model]
    parts, schedule = spec.blocks(p), spec.schedule_at(itemsize)
    count = nbytes / itemsize
    if not parts:  # its rounds depend on the count (descriptor.by_count): sampled.py

        def price(elements: int) -> np.ndarray:
            return np.array(_scaled_counts(schedule, p, elements, itemsize, parts))

        walked = sampled(price, count)
        return walked[:, 0], walked[:, 1], walked[:, 2]
    scaled = (count >= parts) | (parts == 1)
    path = critical_path(schedule, p, parts)
    messages = np.full(nbytes.shape, float(path.messages))
    sent, reduced = (
        path.sent * (count / parts) * itemsize,
        path.reduced * (count / parts) * itemsize,
    )
    few = _interpolated_counts if p > WALKED_RANKS else _scaled_counts
    for i in np.flatnonzero(~scaled):
        messages[i], sent[i], reduced[i] = few(schedule, p, count[i], itemsize, parts)
    return messages, sent, reduced


WALKED_RANKS = 64  # above this, a size below one element a block is priced by interpolation


def _interpolated_counts(
    schedule: Schedule, p: int, count: float, itemsize: int, parts: int
) -> tuple[float, float, float]:
    """_scaled_counts for fewer elements than blocks on many ranks, from the schedule's counts
    at the two powers of two around ``count`` (linear between them): each walk of a p-rank
    schedule costs O(p^2) steps, and a smooth grid asks for every count below p. There the
    bytes are a few elements a round, so the interpolation moves a price by a fraction of one
    element's beta a round; the message count is the schedule's own."""
    whole = max(1, math.ceil(count))
    low = 1 << (whole.bit_length() - 1)
    high = min(2 * low, parts)
    if low == whole or high <= low:
        return _scaled_counts(schedule, p, whole, itemsize, parts)
    a, b = (critical_path(schedule, p, n) for n in (low, high))
    share = (whole - low) / (high - low)
    sent = a.sent + share * (b.sent - a.sent)
    reduced = a.reduced + share * (b.reduced - a.reduced)
    return float(max(a.messages, b.messages)), sent * itemsize, reduced * itemsize


def _resolve(algorithm: str) -> str:
    model = model_for(algorithm)
    if model is None:
        raise ValueError(
            f"no model for {algorithm!r}: the library's algorithm choice is unknown; "
            f"use {LIBRARY_MIN!r} (the fastest library algorithm) or {LOWER_BOUND!r}"
        )
    return model


def _check(ranks: int, nbytes: float, itemsize: int) -> None:
    if ranks < 1:
        raise ValueError(f"ranks must be >= 1, got {ranks}")
    if not nbytes >= 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    if itemsize < 1:
        raise ValueError(f"itemsize must be >= 1, got {itemsize}")


def _counts(
    model: str, p: int, n: float, itemsize: int, smooth: bool
) -> tuple[float, float, float]:
    """(messages, bytes sent, bytes reduced) on the critical path."""
    if p == 1:
        return 0.0, 0.0, 0.0
    if model == LOWER_BOUND:
        share = (p - 1) / p * n
        return float((p - 1).bit_length()), 2 * share, share
    spec = ALGORITHMS[model]
    count = n / itemsize
    schedule = spec.schedule_at(itemsize)
    if not smooth and count == int(count):
        path = critical_path(schedule, p, int(count))
        return float(path.messages), path.sent * itemsize, path.reduced * itemsize
    return _scaled_counts(schedule, p, count, itemsize, spec.blocks(p))


def _scaled_counts(
    schedule: Schedule, p: int, count: float, itemsize: int, parts: int
) -> tuple[float, float, float]:
    """Counts for a fractional or smoothed count: bytes linear in n above one element a block.

    With count a multiple of `parts` every block is equal, so the bytes are proportional to
    the count (tests/domain/collectives/test_schedules.py checks it); below one element a block,
    the schedule's own count for the whole elements is used. A schedule of `parts` 0 (its
    rounds depend on the count: descriptor.by_count) is walked at the count rounded up.
    """
    if parts and (count >= parts or parts == 1):
        path, scale = critical_path(schedule, p, parts), count / parts
    else:
        whole = max(1, math.ceil(count))
        path, scale = critical_path(schedule, p, whole), (count / whole if not parts else 1.0)
    return float(path.messages), path.sent * scale * itemsize, path.reduced * scale * itemsize
