"""Schedule-exact prediction (runners.domain.model.pricing) against schedules priced by hand, the
closed form it must agree with, and the overheads and variants built on it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from runners.analysis.params import Params, model_of, variant_of
from runners.analysis.points import predict_with
from runners.domain.libraries.catalog import ALGORITHMS
from runners.domain.model.closed_form import MODELS, OTHER_MODELS, predict
from runners.domain.model.overheads import family_of as overhead_family
from runners.domain.model.overheads import family_overheads
from runners.domain.model.pricing import Costs, MessageCost, round_loads, schedule_prediction
from runners.domain.nodes.placement import BLOCK, ROUND_ROBIN, Placement

A, B, G = 2e-6, 1e-9, 5e-10  # start-up s, s per byte, s per byte reduced
LINEAR = MessageCost.from_medians([0, 2**30], [A, A + B * 2**30])
PLAIN = Costs(LINEAR)


def cost(nbytes: float) -> float:
    return A + B * nbytes


def priced(algorithm: str, ranks: int, count: int, costs: Costs = PLAIN, **kw):
    spec = ALGORITHMS[algorithm]
    args = (spec.schedule, spec.parts(ranks), ranks, count * 4, 4, costs, G)
    return schedule_prediction(*args, **kw)


def test_message_cost_is_monotone_interpolated_and_extrapolated() -> None:
    curve = MessageCost.from_medians([64, 8, 1024], [3e-6, 2e-6, 1e-6])  # a noisy dip at 1 KiB
    assert curve.seconds == (2e-6, 3e-6, 3e-6)
    assert curve(0) == curve(8) == 2e-6
    assert curve(36) == pytest.approx(2.5e-6)
    steep = MessageCost.from_medians([0, 100, 200], [1.0, 2.0, 4.0])
    assert steep(300) == pytest.approx(6.0)  # the last segment's slope


def test_ring_p2_with_uneven_blocks_by_hand() -> None:
    # count 5 -> blocks of 3 and 2 elements. Reduce-scatter: both ranks exchange (3 elements
    # the larger way), the slower reduces 3; allgather: both exchange 3 again.
    assert round_loads(ALGORITHMS["ring"].schedule, 2, 5) == (
        (((3, 2, True, False),), ((3, 3, True, False),)),
        (((3, 0, True, False),),),
    )
    got = priced("ring", 2, 5)
    assert got.total_s == pytest.approx(2 * cost(12) + 12 * G)
    assert (got.messages, got.bytes_sent, got.bytes_reduced) == (2, 24, 12)


def test_recursive_doubling_p3_folds_by_hand() -> None:
    # rank 2 sends its 4 elements to rank 0, which reduces them; ranks 0 and 1 exchange and
    # reduce 4; rank 0 sends the result back to rank 2: three messages of 16 B, 32 B reduced
    got = priced("recursive_doubling", 3, 4)
    assert got.total_s == pytest.approx(3 * cost(16) + 32 * G)
    assert got.latency_s == pytest.approx(3 * A)


def test_rabenseifner_p3_and_binomial_tree_p4_by_hand() -> None:
    # rabenseifner p=3, count 6: fold-in 6 (reduce 6), reduce-scatter 3 (reduce 3),
    # allgather 3, fold-out 6
    got = priced("rabenseifner", 3, 6)
    assert got.total_s == pytest.approx(2 * cost(24) + 2 * cost(12) + 36 * G)
    # binomial tree p=4, count 2: reduce in 2 rounds, broadcast in 2, 8 B each, 2 reductions
    got = priced("binomial_tree", 4, 2)
    assert got.total_s == pytest.approx(4 * cost(8) + 16 * G)


@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("model", [m for m in (*MODELS, *OTHER_MODELS) if m in ALGORITHMS])
def test_with_a_straight_line_cost_it_is_the_closed_form(model: str, ranks: int) -> None:
    """Equal blocks and a linear message cost: both models count the same critical path
    (every collective's schedules)."""
    if ALGORITHMS[model].unsupported_reason(ranks, "sum", True):
        return
    count = ALGORITHMS[model].parts(ranks) * 64
    closed = predict(model, ranks, count * 4, A, B, G, 4)
    assert priced(model, ranks, count).total_s == pytest.approx(closed.total_s, rel=1e-12)
    smooth = priced(model, ranks, count * 3.5, smooth=True).total_s
    assert smooth == pytest.approx(
        predict(model, ranks, count * 14, A, B, G, 4, smooth=True).total_s
    )


def test_rounds_are_priced_at_their_own_size() -> None:
    """A protocol switch at 8 KiB: ring's 4 KiB blocks stay below it, recursive doubling's
    whole 8 KiB message pays it (the closed form would price both at the payload's segment)."""
    curve = MessageCost.from_medians([0, 8191, 8192, 2**20], [1e-6, 2e-6, 10e-6, 100e-6])
    ring = priced("ring", 2, 2048, Costs(curve))
    rd = priced("recursive_doubling", 2, 2048, Costs(curve))
    assert ring.bandwidth_s + ring.latency_s == pytest.approx(2 * curve(4096))
    assert rd.bandwidth_s + rd.latency_s == pytest.approx(curve(8192))


def test_overheads_replace_the_start_up_and_add_the_call() -> None:
    costs = Costs(LINEAR, round_s=3e-6, call_s=1e-6)
    got = priced("recursive_doubling", 2, 4, costs)
    assert got.software_s == 1e-6 and got.latency_s == pytest.approx(3e-6)
    assert got.total_s == pytest.approx(1e-6 + 3e-6 + (cost(16) - cost(0)) + 16 * G)


def test_contention_prices_only_the_exchanges_on_the_exchange_curve() -> None:
    slow = MessageCost.from_medians([0, 2**30], [A, A + 3 * B * 2**30])
    costs = Costs(LINEAR, exchange=slow, round_s=A)
    rd = priced("recursive_doubling", 2, 1024, costs)  # one exchange of 4 KiB
    assert rd.bandwidth_s == pytest.approx(3 * B * 4096)
    tree = priced("binomial_tree", 2, 1024, costs)  # a send and a send back: one-way
    assert tree.bandwidth_s == pytest.approx(2 * B * 4096)


def test_family_overheads_solve_call_and_round() -> None:
    runs = [
        {"algorithm": "recursive_doubling", "median_s": 3e-6},
        {"algorithm": "ring", "median_s": 5e-6},
        {"algorithm": "mpi:recursive_doubling", "median_s": 1e-6},
    ]
    got = family_overheads(runs)
    assert got == {"hand-written": {"call_s": pytest.approx(1e-6), "round_s": pytest.approx(2e-6)}}


def _params(**extra) -> Params:
    return Params("c1", "pingpong", A, B, gammas={"float32/sum": G}, **extra)


def test_each_point_gets_the_most_complete_variant_its_calibration_allows() -> None:
    bare = _params()
    assert variant_of(bare, "ring") == "textbook"
    curves = _params(message_cost=LINEAR, exchange_cost=LINEAR)
    assert variant_of(curves, "ring") == "schedule"  # no overheads measured
    full = _params(
        message_cost=LINEAR,
        exchange_cost=LINEAR,
        overheads={"hand-written": {"call_s": 1e-6, "round_s": 2e-6}},
    )
    assert variant_of(full, "ring") == "contention"
    assert variant_of(full, "ring", "overheads") == "overheads"
    assert variant_of(full, "mpi:ring") == "schedule"  # the library's were not measured
    assert variant_of(full, "mpi") == "textbook"  # the autotuned choice: a lower bound
    textbook = predict_with(full, "ring", 2, 4096, "float32", "sum", variant="textbook")
    assert textbook == predict("ring", 2, 4096, A, B, G, 4)
    assert predict_with(full, "ring", 2, 4096, "float64", "sum") is None  # no gamma


def test_a_curve_priced_over_an_array_is_the_scalar_pricing_size_by_size(demo_store) -> None:
    """points.smooth_times (schedules, closed forms, library_min, piecewise alpha/beta) gives
    what predict_with(smooth=True) gives for each size alone, for every calibration of the demo
    store, every variant and algorithm measured, from below one element a block to 16 MiB."""
    from runners import store
    from runners.analysis.points import load_points, smooth_times
    from runners.domain.model.pricing import VARIANTS

    runs = store.query(demo_store, "SELECT run_id FROM runs")["run_id"]
    ids = store.query(demo_store, "SELECT calibration_id FROM calibrations")["calibration_id"]
    calibrations = [store.get_calibration(demo_store, c) for c in ids]
    sizes = np.concatenate([np.arange(1, 40, dtype=float), np.geomspace(40, 2**24, 61)])
    points = [p for run in runs for p in load_points(demo_store, run)]
    cases = {(p.algorithm, p.key) for p in points}
    measured = [Params.from_row(c) for c in calibrations]
    curves = [p for p in measured if p.message_cost is not None]
    assert curves and any(p.segments for p in measured)
    families = {overhead_family(a): {"round_s": 1.5e-6, "call_s": 3e-6} for a, _ in cases}
    steeper = MessageCost.from_medians(
        curves[0].message_cost.sizes, [2 * s for s in curves[0].message_cost.seconds]
    )
    full = replace(curves[0], exchange_cost=steeper, copy_cost=LINEAR, overheads=families)
    cheap = MessageCost.from_medians(steeper.sizes, [s / 8 for s in steeper.seconds])
    on_nodes = [
        replace(full, node=replace(full, message_cost=cheap), placement=Placement(size, order))
        for size, order in ((1, BLOCK), (2, ROUND_ROBIN), (2, BLOCK))
    ]
    checked = set()
    for params in [*measured, full, *on_nodes]:
        for variant in VARIANTS:
            for algorithm, (ranks, dtype, op) in sorted(cases):
                if params.gamma(dtype, op) is None or model_of(algorithm) is None:
                    continue
                many = smooth_times(params, algorithm, (ranks, dtype, op), sizes, variant)
                one = [
                    predict_with(
                        params, algorithm, ranks, n, dtype, op, variant=variant, smooth=True
                    )
                    for n in sizes
                ]
                assert many == pytest.approx([p.total_s for p in one], rel=1e-12, abs=0), (
                    algorithm,
                    ranks,
                    variant,
                    params.calibration_id,
                )
                checked.add(variant_of(params, algorithm, variant))
    assert checked == set(VARIANTS)  # every variant's own pricing was compared


def test_the_autotuned_choice_on_nodes_is_the_fastest_library_algorithm_on_both_levels() -> None:
    """On nodes (a calibration of both levels) plain 'mpi' is priced as the fastest of the
    library's forced algorithms, each on both levels (two_level), no longer in the closed
    form that prices every message at the network's cost."""
    network = _params(message_cost=LINEAR)
    inside = MessageCost.from_medians([0, 2**30], [A / 4, A / 4 + B / 10 * 2**30])
    placed = replace(network, node=replace(network, message_cost=inside), placement=Placement(2))
    where = ("mpi", 4, 1 << 20, "float32", "sum")
    assert variant_of(placed, "mpi") == "two_level" and variant_of(network, "mpi") == "textbook"
    got = predict_with(placed, *where)
    library = [
        predict_with(placed, name, *where[1:])
        for name in ("mpi:recursive_doubling", "mpi:ring", "mpi:reduce_scatter_allgather")
    ]
    assert got is not None and got.total_s == min(p.total_s for p in library if p)
    flat = predict_with(network, *where)
    assert flat is not None and got.total_s != flat.total_s
