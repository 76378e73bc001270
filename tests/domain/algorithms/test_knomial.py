"""The k-nomial family (bcast, reduce, and allreduce as reduce + bcast), radix a parameter:
every member keeps its collective's contract for p = 1..12 (in rank order: a parent appends its
children's partial results on the right), radix 2 is the binomial tree's critical path, and a
larger radix trades rounds for messages a round."""

from __future__ import annotations

import itertools

import pytest

from runners.domain.algorithms.bcast.knomial import levels
from runners.domain.collectives.contract_check import contract_problems
from runners.domain.collectives.schedule import critical_path
from runners.domain.libraries.catalog import ALGORITHMS, canonical_name

FAMILIES = ("knomial", "bcast.knomial", "reduce.knomial")
BINOMIAL = {"knomial": "binomial_tree", "bcast.knomial": "bcast.binomial_tree",
            "reduce.knomial": "reduce.binomial_tree"}  # fmt: skip


def member(family: str, radix: int):
    """The catalog's descriptor of one member (radix 2, the default, named without it)."""
    return ALGORITHMS[canonical_name(f"{family}(radix={radix})", {})]


@pytest.mark.parametrize(("family", "radix"), list(itertools.product(FAMILIES, (2, 3, 4, 5, 8))))
def test_every_member_keeps_its_contract_for_p_1_to_12(family: str, radix: int) -> None:
    spec = member(family, radix)
    assert not spec.commutative_only  # checked in rank order too
    for p, count in itertools.product(range(1, 13), (0, 1, 3, 8)):
        assert contract_problems(spec, p, count) == [], (spec.name, p, count)


@pytest.mark.parametrize("family", FAMILIES)
def test_radix_2_is_the_binomial_tree_and_its_default(family: str) -> None:
    assert canonical_name(f"{family}(radix=2)", {}) == family  # the default left out
    for p in range(1, 17):
        mine = critical_path(ALGORITHMS[family].required_schedule, p, 8)
        binomial = critical_path(ALGORITHMS[BINOMIAL[family]].required_schedule, p, 8)
        assert (mine.messages, mine.sent, mine.reduced) == (
            binomial.messages, binomial.sent, binomial.reduced
        ), (family, p)  # fmt: skip


def test_a_larger_radix_has_fewer_rounds_and_more_messages_a_round() -> None:
    """Broadcast on 16 ranks: radix 2 is 4 rounds of one message; radix 4, 2 rounds of up to
    3 sends from one parent (6 on the critical path); radix 16, one round of 15 sends."""

    def path(radix: int) -> int:
        return critical_path(member("bcast.knomial", radix).required_schedule, 16, 8).messages

    assert [levels(16, k) for k in (2, 4, 16)] == [4, 2, 1]
    assert (path(2), path(4), path(16)) == (4, 6, 15)


def test_a_radix_below_2_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match="radix must be an integer from 2"):
        canonical_name("knomial(radix=1)", {})


def test_the_members_of_a_sweep_of_radixes_form_one_curve_per_family() -> None:
    """What the dashboard's Parameters page draws: a family's members at two or more radixes
    (the default named without it), other algorithms and a lone member left out."""
    from runners.domain.algorithms import FAMILIES
    from runners.domain.algorithms.parameters import parameter_curves

    names = ["knomial", "knomial(radix=4)", "ring", "mpi:knomial(radix=8)", "bcast.knomial"]
    (curve,) = parameter_curves(names, FAMILIES)
    assert (curve.family, curve.parameter, curve.title) == ("knomial", "radix", "knomial by radix")
    assert curve.members == ((2, "knomial"), (4, "knomial(radix=4)"))
