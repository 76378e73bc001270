"""The alpha-beta-gamma models (counts walked from the schedules) against hand-computed counts."""

from __future__ import annotations

import itertools

import pytest

from runners.domain.model.closed_form import MODELS, library_models, model_for, predict

ALPHA, BETA, GAMMA = 2e-6, 1e-9, 5e-10


def counts(model: str, p: int, n: float, itemsize: int = 1) -> tuple[float, float, float]:
    """(messages, bytes_sent, bytes_reduced) of one prediction."""
    pr = predict(model, p, n, ALPHA, BETA, GAMMA, itemsize)
    return pr.messages, pr.bytes_sent, pr.bytes_reduced


# p = 8 (log2 p = 3), n = 1024 bytes, alpha = 2e-6, beta = 1e-9, gamma = 5e-10.
# (model, latency_s, bandwidth_s, reduction_s, total_s)
P8_N1024 = [
    # 3 msgs * 2e-6; 3 * 1024 = 3072 B * 1e-9; 3072 B * 5e-10
    ("recursive_doubling", 6e-6, 3.072e-6, 1.536e-6, 1.0608e-5),
    # 2*3 = 6 msgs * 2e-6; 6 * 1024 = 6144 B * 1e-9; 3 * 1024 = 3072 B * 5e-10
    ("binomial_tree", 1.2e-5, 6.144e-6, 1.536e-6, 1.968e-5),
    # 2*3 = 6 msgs; 2 * 7/8 * 1024 = 1792 B * 1e-9; 7/8 * 1024 = 896 B * 5e-10
    ("rabenseifner", 1.2e-5, 1.792e-6, 4.48e-7, 1.424e-5),
    # 2*7 = 14 msgs * 2e-6; 1792 B * 1e-9; 896 B * 5e-10
    ("ring", 2.8e-5, 1.792e-6, 4.48e-7, 3.024e-5),
    # ceil(log2 8) = 3 msgs * 2e-6; 1792 B * 1e-9; 896 B * 5e-10
    ("lower_bound", 6e-6, 1.792e-6, 4.48e-7, 8.24e-6),
]


@pytest.mark.parametrize(("model", "lat", "bw", "red", "total"), P8_N1024)
def test_power_of_two_times_by_hand(model, lat, bw, red, total):
    pr = predict(model, 8, 1024, ALPHA, BETA, GAMMA)
    assert pr.latency_s == pytest.approx(lat, rel=1e-12)
    assert pr.bandwidth_s == pytest.approx(bw, rel=1e-12)
    assert pr.reduction_s == pytest.approx(red, rel=1e-12)
    assert pr.total_s == pytest.approx(total, rel=1e-12)


# Non-power-of-two p, n chosen so that pof2 and p divide it (even blocks).
# (model, p, n, messages, bytes_sent, bytes_reduced)
NON_POWER_OF_TWO = [
    # p=3: pof2=2, log2 pof2=1, ceil(log2 3)=2; n/pof2 = 600, n/p = 400
    ("recursive_doubling", 3, 1200, 1 + 2, (1 + 2) * 1200, (1 + 1) * 1200),
    ("binomial_tree", 3, 1200, 2 * 2, 2 * 2 * 1200, 2 * 1200),
    ("rabenseifner", 3, 1200, 2 * 1 + 2, 2 * 1 * 600 + 2 * 1200, 1 * 600 + 1200),
    ("ring", 3, 1200, 2 * 2, 2 * 2 * 400, 2 * 400),
    ("lower_bound", 3, 1200, 2, 2 * 2 / 3 * 1200, 2 / 3 * 1200),
    # p=5: pof2=4, log2 pof2=2, ceil(log2 5)=3; n/pof2 = 1000, n/p = 800
    ("recursive_doubling", 5, 4000, 4, 4 * 4000, 3 * 4000),
    ("binomial_tree", 5, 4000, 6, 6 * 4000, 3 * 4000),
    ("rabenseifner", 5, 4000, 2 * 2 + 2, 2 * 3 * 1000 + 2 * 4000, 3 * 1000 + 4000),
    ("ring", 5, 4000, 8, 2 * 4 * 800, 4 * 800),
    ("lower_bound", 5, 4000, 3, 6400, 3200),
    # p=6: pof2=4, ceil(log2 6)=3; n/pof2 = 600, n/p = 400
    ("recursive_doubling", 6, 2400, 4, 9600, 7200),
    ("binomial_tree", 6, 2400, 6, 14400, 7200),
    ("rabenseifner", 6, 2400, 6, 2 * 3 * 600 + 4800, 3 * 600 + 2400),
    ("ring", 6, 2400, 10, 2 * 5 * 400, 5 * 400),
    # p=7: pof2=4, ceil(log2 7)=3; n/pof2 = 700, n/p = 400
    ("recursive_doubling", 7, 2800, 4, 11200, 8400),
    ("binomial_tree", 7, 2800, 6, 16800, 8400),
    ("rabenseifner", 7, 2800, 6, 2 * 3 * 700 + 5600, 3 * 700 + 2800),
    ("ring", 7, 2800, 12, 2 * 6 * 400, 6 * 400),
]


@pytest.mark.parametrize(("model", "p", "n", "msgs", "sent", "reduced"), NON_POWER_OF_TWO)
def test_non_power_of_two_counts_by_hand(model, p, n, msgs, sent, reduced):
    assert counts(model, p, n) == pytest.approx((msgs, sent, reduced), rel=1e-12)


def test_non_power_of_two_times_by_hand():
    # p=3, n=1200, alpha=1e-6, beta=1e-9, gamma=1e-10:
    # recursive_doubling: 3 * 1e-6 + 3600 * 1e-9 + 2400 * 1e-10 = 6.84e-6
    # rabenseifner:       4 * 1e-6 + 3600 * 1e-9 + 1800 * 1e-10 = 7.78e-6
    # ring:               4 * 1e-6 + 1600 * 1e-9 +  800 * 1e-10 = 5.68e-6
    # binomial_tree:      4 * 1e-6 + 4800 * 1e-9 + 2400 * 1e-10 = 9.04e-6
    expected = {
        "recursive_doubling": 6.84e-6,
        "rabenseifner": 7.78e-6,
        "ring": 5.68e-6,
        "binomial_tree": 9.04e-6,
    }
    for model, total in expected.items():
        assert predict(model, 3, 1200, 1e-6, 1e-9, 1e-10).total_s == pytest.approx(total)


def test_ring_uneven_blocks_use_largest_block():
    # count = 1000 / 4 = 250 elements over p=3: ceil(250/3) = 84 elements = 336 bytes.
    # sent = 2 * (3-1) * 336 = 1344 (even blocks would give 1333.33), reduced = 2 * 336 = 672
    assert counts("ring", 3, 1000, itemsize=4) == (4, 1344, 672)


def test_rabenseifner_uneven_blocks_power_of_two():
    # count = 1001 float64 (n = 8008) over p=8: blocks of 126, 125, ..., 125 elements. The
    # halving rounds send the larger half: 501, 251, 126 elements = 878 per phase, so
    # sent = 2 * 878 * 8 = 14048 bytes (even blocks: 14014; largest block times 7: 14112)
    # and reduced = 878 * 8 = 7024.
    assert counts("rabenseifner", 8, 8008, itemsize=8) == (6, 14048, 7024)


def test_rabenseifner_uneven_blocks_folded():
    # p=6, pof2=4, count=10 int32 (n=40): ceil(10/4) = 3 elements = 12 bytes per block.
    # sent = 2 * 3 * 12 + 2 * 40 = 152, reduced = 3 * 12 + 40 = 76, messages = 2*2 + 2 = 6
    assert counts("rabenseifner", 6, 40, itemsize=4) == (6, 152, 76)


def test_fewer_elements_than_blocks():
    # 3 float64 over p=8 ranks: the largest block holds 1 element = 8 bytes.
    # ring: sent = 2 * 7 * 8 = 112, reduced = 7 * 8 = 56
    assert counts("ring", 8, 24, itemsize=8) == (14, 112, 56)


def test_smooth_blocks():
    # smooth: b = max(n / parts, itemsize). ring p=3, n=1000, itemsize=4: b = 333.33
    # sent = 4 * 333.33 = 1333.33, reduced = 666.67 (exact blocks: 1344, 672)
    pr = predict("ring", 3, 1000, ALPHA, BETA, GAMMA, 4, smooth=True)
    assert (pr.bytes_sent, pr.bytes_reduced) == pytest.approx((4000 / 3, 2000 / 3))
    # 3 float64 over 8 ranks: n/8 = 3 bytes < one element, so b = 8 (as exact blocks)
    assert predict("ring", 8, 24, ALPHA, BETA, GAMMA, 8, smooth=True).bytes_sent == 112
    # divisible counts: smooth and exact agree
    for model in MODELS:
        exact = predict(model, 6, 2400, ALPHA, BETA, GAMMA, 4)
        assert predict(model, 6, 2400, ALPHA, BETA, GAMMA, 4, smooth=True) == exact


def test_zero_bytes_still_pays_latency():
    assert counts("ring", 4, 0) == (6, 0, 0)
    assert counts("recursive_doubling", 5, 0) == (4, 0, 0)


@pytest.mark.parametrize("model", MODELS)
def test_one_rank_costs_nothing(model):
    pr = predict(model, 1, 1 << 20, ALPHA, BETA, GAMMA, 4)
    assert (pr.messages, pr.bytes_sent, pr.bytes_reduced, pr.total_s) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("model", "p", "n"),
    list(itertools.product(MODELS, [2, 3, 4, 5, 6, 7, 8, 13, 64], [0, 7, 4096])),
)
def test_terms_sum_to_total_and_come_from_counts(model, p, n):
    pr = predict(model, p, n, ALPHA, BETA, GAMMA, itemsize=1)
    assert pr.total_s == pytest.approx(pr.latency_s + pr.bandwidth_s + pr.reduction_s)
    assert pr.latency_s == pytest.approx(pr.messages * ALPHA)
    assert pr.bandwidth_s == pytest.approx(pr.bytes_sent * BETA)
    assert pr.reduction_s == pytest.approx(pr.bytes_reduced * GAMMA)


@pytest.mark.parametrize("p", [2, 3, 5, 8, 12, 64])
def test_lower_bound_is_below_every_model(p):
    for n in (8, 4096, 1 << 22):
        bound = predict("lower_bound", p, n, ALPHA, BETA, GAMMA).total_s
        others = [predict(m, p, n, ALPHA, BETA, GAMMA) for m in MODELS]
        assert all(bound <= pr.total_s * (1 + 1e-12) for pr in others)


@pytest.mark.parametrize("p", [2, 3, 4, 8])
def test_library_min_is_the_fastest_library_algorithm_that_can_run(p):
    """The autotuned library's model: the minimum over its own algorithms' models, those that
    can run the call (no ring or Rabenseifner below one element a block, none for a
    non-commutative op), never below the lower bound."""
    for n in (4, 8, 4096, 1 << 22):
        got = predict("library_min", p, n, ALPHA, BETA, GAMMA, 4).total_s
        names = library_models(p, n / 4)
        library = [predict(model_for(a), p, n, ALPHA, BETA, GAMMA, 4).total_s for a in names]
        assert got == min(library)
        assert got >= predict("lower_bound", p, n, ALPHA, BETA, GAMMA, 4).total_s * (1 - 1e-12)
    assert "mpi:ring" not in library_models(p, p - 1) and "mpi:ring" in library_models(p, p)
    assert library_models(p, 1 << 20, commutative=False) == ("mpi:recursive_doubling", "mpi:tree")


def test_model_for_library_names():
    assert model_for("mpi:recursive_doubling") == "recursive_doubling"
    assert model_for("mpi:reduce_scatter_allgather") == "rabenseifner"
    assert model_for("mpi:ring") == "ring"
    assert model_for("mpi:tree") == "binomial_tree"
    assert model_for("mpi") is None
    assert model_for("mpi:recexch") is None
    assert model_for("ring") == "ring"


def test_predict_accepts_forced_library_names():
    assert predict("mpi:reduce_scatter_allgather", 6, 2400, ALPHA, BETA, GAMMA) == predict(
        "rabenseifner", 6, 2400, ALPHA, BETA, GAMMA
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("bogus", 4, 8), "unknown algorithm"),
        (("mpi", 4, 8), "no model"),
        (("ring", 0, 8), "ranks must be >= 1"),
        (("ring", 4, -1), "nbytes must be >= 0"),
    ],
)
def test_bad_inputs_raise(args, message):
    with pytest.raises(ValueError, match=message):
        predict(*args, ALPHA, BETA, GAMMA)
