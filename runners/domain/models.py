"""Alpha-beta-gamma cost models of the allreduce algorithms collsweep implements.

A message costs alpha + m * beta for m bytes; reducing m bytes locally costs m * gamma. Each
model counts, on the critical path, the messages, the bytes sent and the bytes reduced of the
algorithm as runners/algorithms implements it (Thakur, Rabenseifner & Gropp 2005; Chan et al.
2007), so a `Prediction` shows which term dominates. With p ranks and n bytes:

- recursive_doubling: power-of-two p: log2 p messages, log2 p * n sent, log2 p * n reduced.
  Other p (MPICH fold into pof2 = 2^floor(log2 p) core ranks): log2 pof2 + 2 messages,
  (log2 pof2 + 2) * n sent, (log2 pof2 + 1) * n reduced.
- binomial_tree (any p): 2 ceil(log2 p) messages, 2 ceil(log2 p) * n sent,
  ceil(log2 p) * n reduced.
- rabenseifner: power-of-two p: 2 log2 p messages, 2 (p-1) * b sent, (p-1) * b reduced with
  block b = n/p. Other p: 2 log2 pof2 + 2 messages, 2 (pof2-1) * b + 2n sent,
  (pof2-1) * b + n reduced with b = n/pof2.
- ring (any p): 2 (p-1) messages, 2 (p-1) * b sent, (p-1) * b reduced with b = n/p.
- lower_bound: ceil(log2 p) messages, 2 (p-1)/p * n sent, (p-1)/p * n reduced.

Blocks are whole elements: with count = n / itemsize elements cut into `parts` blocks, the
largest block, b = ceil(count / parts) * itemsize bytes, sets every step (the implementations
give the first count % parts blocks one extra element). When parts divides count this is
exactly n / parts; otherwise it may overstate a step by up to one element. With smooth=True,
b = max(n / parts, itemsize) instead (for n > 0): continuous and piecewise linear in n, within
one element of the exact block, for drawing curves and solving crossovers (the exact staircase
makes two curves flip order back and forth within a few blocks of where they cross).
The lower bound is a bound, not an implementation, and uses n / p unrounded.
p == 1 costs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MODELS: tuple[str, ...] = (
    "recursive_doubling",
    "binomial_tree",
    "rabenseifner",
    "ring",
    "lower_bound",
)

LIBRARY = "mpi"

# MPICH's MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM names -> the closest model. MPICH's "tree" is
# a (possibly pipelined, k-ary) tree reduce + broadcast; binomial_tree models it approximately.
LIBRARY_MODELS: dict[str, str] = {
    "recursive_doubling": "recursive_doubling",
    "reduce_scatter_allgather": "rabenseifner",
    "ring": "ring",
    "tree": "binomial_tree",
}


@dataclass(frozen=True)
class Prediction:
    """A predicted allreduce time, split into its alpha, beta and gamma terms.

    `messages`, `bytes_sent` and `bytes_reduced` are the critical-path counts the terms come
    from: latency_s = messages * alpha, bandwidth_s = bytes_sent * beta and
    reduction_s = bytes_reduced * gamma.
    """

    latency_s: float
    bandwidth_s: float
    reduction_s: float
    messages: float
    bytes_sent: float
    bytes_reduced: float

    @property
    def total_s(self) -> float:
        """The predicted time: latency + bandwidth + reduction terms."""
        return self.latency_s + self.bandwidth_s + self.reduction_s


def model_for(algorithm: str) -> str | None:
    """The model name for a measured algorithm name, or None when no model applies.

    Model names map to themselves. 'mpi:<name>' (the library with its algorithm forced, MPICH
    names) maps to the closest model: recursive_doubling, reduce_scatter_allgather ->
    rabenseifner, ring, tree -> binomial_tree (approximate: MPICH's tree may be k-ary and
    pipelined). Plain 'mpi' (the library's autotuned choice) and other forced names give None:
    the algorithm run is unknown, so show the lower bound or the minimum over models instead.
    """
    if algorithm in MODELS:
        return algorithm
    if algorithm == LIBRARY:
        return None
    prefix, sep, forced = algorithm.partition(":")
    if prefix == LIBRARY and sep:
        return LIBRARY_MODELS.get(forced)
    raise ValueError(f"unknown algorithm {algorithm!r}; models: {', '.join(MODELS)}")


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
) -> Prediction:
    """Predict one allreduce of `nbytes` bytes on `ranks` ranks with the given parameters.

    `algorithm` is a model name or a library name `model_for` maps to one. `itemsize` is the
    element size in bytes; it and `smooth` set how blocks round (see the module docstring).
    """
    model = _resolve(algorithm)
    _check(ranks, nbytes, itemsize)
    messages, sent, reduced = _counts(model, ranks, float(nbytes), _Blocks(itemsize, smooth))
    return Prediction(
        latency_s=messages * alpha,
        bandwidth_s=sent * beta,
        reduction_s=reduced * gamma,
        messages=messages,
        bytes_sent=sent,
        bytes_reduced=reduced,
    )


def block_bytes(nbytes: float, itemsize: int, parts: int, smooth: bool = False) -> float:
    """Bytes in the largest of `parts` element-aligned blocks of `nbytes` bytes.

    Exact: ceil(count / parts) elements. smooth: max(nbytes / parts, itemsize), for nbytes > 0.
    """
    if nbytes <= 0:
        return 0.0
    if smooth:
        return max(nbytes / parts, float(itemsize))
    return float(math.ceil(nbytes / itemsize / parts - 1e-9) * itemsize)


@dataclass(frozen=True)
class _Blocks:
    itemsize: int
    smooth: bool

    def size(self, nbytes: float, parts: int) -> float:
        return block_bytes(nbytes, self.itemsize, parts, self.smooth)


def _resolve(algorithm: str) -> str:
    model = model_for(algorithm)
    if model is None:
        raise ValueError(
            f"no model for {algorithm!r}: the library's algorithm choice is unknown; "
            "use 'lower_bound' or the minimum over MODELS"
        )
    return model


def _check(ranks: int, nbytes: float, itemsize: int) -> None:
    if ranks < 1:
        raise ValueError(f"ranks must be >= 1, got {ranks}")
    if not nbytes >= 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    if itemsize < 1:
        raise ValueError(f"itemsize must be >= 1, got {itemsize}")


def _counts(model: str, p: int, n: float, blocks: _Blocks) -> tuple[float, float, float]:
    """(messages, bytes sent, bytes reduced) on the critical path."""
    if p == 1:
        return 0.0, 0.0, 0.0
    return _COUNTS[model](p, n, blocks)


def _pof2(p: int) -> tuple[int, int, bool]:
    """(pof2, log2 pof2, whether p needs the fold)."""
    log_pof2 = p.bit_length() - 1
    pof2 = 1 << log_pof2
    return pof2, log_pof2, pof2 != p


def _ceil_log2(p: int) -> int:
    return (p - 1).bit_length()


def _recursive_doubling(p: int, n: float, blocks: _Blocks) -> tuple[float, float, float]:
    _, k, folded = _pof2(p)
    if folded:
        return k + 2.0, (k + 2) * n, (k + 1) * n
    return float(k), k * n, k * n


def _binomial_tree(p: int, n: float, blocks: _Blocks) -> tuple[float, float, float]:
    k = _ceil_log2(p)
    return 2.0 * k, 2 * k * n, k * n


def _rabenseifner(p: int, n: float, blocks: _Blocks) -> tuple[float, float, float]:
    pof2, k, folded = _pof2(p)
    b = blocks.size(n, pof2)
    extra = 1.0 if folded else 0.0
    return 2.0 * k + 2 * extra, 2 * (pof2 - 1) * b + 2 * extra * n, (pof2 - 1) * b + extra * n


def _ring(p: int, n: float, blocks: _Blocks) -> tuple[float, float, float]:
    b = blocks.size(n, p)
    return 2.0 * (p - 1), 2 * (p - 1) * b, (p - 1) * b


def _lower_bound(p: int, n: float, blocks: _Blocks) -> tuple[float, float, float]:
    share = (p - 1) / p * n
    return float(_ceil_log2(p)), 2 * share, share


_COUNTS = {
    "recursive_doubling": _recursive_doubling,
    "binomial_tree": _binomial_tree,
    "rabenseifner": _rabenseifner,
    "ring": _ring,
    "lower_bound": _lower_bound,
}
