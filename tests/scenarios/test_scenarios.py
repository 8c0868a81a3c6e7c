"""Scenarios and builders: every pair is a neighbour pair, worst cases reach the sensitivity."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scenarios
from scenarios import NeighborPair, Scenario, VOUCHED_NOTE, is_neighbor

RELATIONS = ("add-remove", "replace")


def all_builds():
    """A spread of builder calls: every domain, both relations, worst-case and random pairs."""
    for relation in RELATIONS:
        n_values = (0, 1, 7) if relation == "add-remove" else (1, 2, 7)
        for n in n_values:
            for d in (1, 2, 5):
                yield f"counting d={d} n={n} {relation}", scenarios.counting(d, n, relation)
                yield f"bounded d={d} n={n} {relation}", scenarios.bounded(d, n, relation)
                for groups in (1, 2, 3):
                    yield (f"grouped g={groups} d={d} n={n} {relation}",
                           scenarios.grouped(groups, d, n, relation))
            yield (f"counting random n={n} {relation}",
                   scenarios.counting(3, n, relation, pairs="random", count=10, seed=1))
            yield (f"bounded random n={n} {relation}",
                   scenarios.bounded(3, n, relation, pairs="random", count=10, seed=2))
            yield (f"grouped random n={n} {relation}",
                   scenarios.grouped(3, 2, n, relation, pairs="random", count=10, seed=3))


BUILDS = list(all_builds())


def sums(data: np.ndarray) -> np.ndarray:
    return np.asarray(data).sum(axis=0)


def l2_shift(pair: NeighborPair) -> float:
    return float(np.linalg.norm(sums(pair.base) - sums(pair.neighbor)))


def by_label(scenario: Scenario) -> dict[str, NeighborPair]:
    return {pair.label: pair for pair in scenario}


@pytest.mark.parametrize("name, scenario", BUILDS, ids=[b[0] for b in BUILDS])
def test_every_builder_pair_is_a_neighbour_pair_in_the_domain(name, scenario):
    assert scenario.checked and not scenario.vouched
    for pair in scenario:
        assert is_neighbor(pair.base, pair.neighbor, scenario.relation), pair.label
        for data in (pair.base, pair.neighbor):
            assert data.ndim == 2 and data.shape[1] == scenario.d
            assert data.min(initial=0.0) >= 0.0 and data.max(initial=0.0) <= 1.0
            if scenario.domain is scenarios.Domain.COUNTING:
                assert np.isin(data, (0.0, 1.0)).all()
            if scenario.domain is scenarios.Domain.GROUPED:
                blocks = data.reshape(len(data), scenario.groups, scenario.group_width)
                assert ((blocks != 0).any(axis=2).sum(axis=1) <= 1).all()


@pytest.mark.parametrize("name, scenario", BUILDS, ids=[b[0] for b in BUILDS])
def test_worst_case_pairs_come_with_their_exact_reverse(name, scenario):
    worst = [pair for pair in scenario if not pair.label.startswith("random")]
    assert len(worst) % 2 == 0 and worst
    for forward, backward in zip(worst[::2], worst[1::2]):
        assert np.array_equal(forward.base, backward.neighbor), forward.label
        assert np.array_equal(forward.neighbor, backward.base), forward.label


@pytest.mark.parametrize("builder", [scenarios.counting, scenarios.bounded])
@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("d", [1, 4, 100])
def test_worst_case_pairs_reach_sqrt_d_in_both_directions(builder, relation, d):
    """Column sums of rows in [0,1]^d have l2 sensitivity √d under both relations (docs/ground-truth.md §1)."""
    scenario = builder(d, 5, relation)
    labels = by_label(scenario)
    if relation == "add-remove":
        forward, backward = labels["add all-ones row"], labels["remove all-ones row"]
        assert (len(forward.base), len(forward.neighbor)) == (5, 6)
        zero_pairs = [labels["add all-zeros row"], labels["remove all-zeros row"]]
        assert [l2_shift(p) for p in zero_pairs] == [0.0, 0.0]  # only n changes
    else:
        forward = labels["replace all-ones row by all-zeros row"]
        backward = labels["replace all-zeros row by all-ones row"]
        assert len(forward.base) == len(forward.neighbor) == 5
    # sums of 0/1 values are exact in float64, so the norm is √d up to one rounding of sqrt
    assert l2_shift(forward) == pytest.approx(math.sqrt(d), rel=1e-15)
    assert l2_shift(backward) == pytest.approx(math.sqrt(d), rel=1e-15)
    assert np.array_equal(sums(forward.base) - sums(forward.neighbor),
                          -(sums(backward.base) - sums(backward.neighbor)))
    assert max(l2_shift(p) for p in scenario) == pytest.approx(math.sqrt(d), rel=1e-15)


def test_worst_case_labels():
    assert scenarios.counting(2).labels == (
        "add all-ones row", "remove all-ones row", "add all-zeros row", "remove all-zeros row")
    assert scenarios.bounded(2, relation="replace").labels == (
        "replace all-ones row by all-zeros row", "replace all-zeros row by all-ones row")
    assert scenarios.grouped(2, 3).labels == (
        "add all-ones row in group 0", "remove all-ones row in group 0",
        "add all-zeros row", "remove all-zeros row")
    assert scenarios.grouped(2, 3, relation="replace").labels == (
        "replace (1,…,1,0) in group 0 by its complement (0,…,0,1)",
        "replace (0,…,0,1) in group 0 by its complement (1,…,1,0)",
        "replace all-ones row in group 0 by all-zeros row",
        "replace all-zeros row by all-ones row in group 0",
        "move all-ones row from group 0 to group 1",
        "move all-ones row from group 1 to group 0")
    # d = 1 has no complement inside a group, one group has nowhere to move
    assert scenarios.grouped(1, 1, relation="replace").labels == (
        "replace all-ones row in group 0 by all-zeros row",
        "replace all-zeros row by all-ones row in group 0")


@pytest.mark.parametrize("groups, d", [(2, 1), (3, 4), (5, 10)])
def test_grouped_worst_cases_reach_the_group_corners(groups, d):
    add = by_label(scenarios.grouped(groups, d, 6))
    assert l2_shift(add["add all-ones row in group 0"]) == pytest.approx(math.sqrt(d), rel=1e-15)
    replace = by_label(scenarios.grouped(groups, d, 6, "replace"))
    assert l2_shift(replace["replace all-ones row in group 0 by all-zeros row"]) == pytest.approx(math.sqrt(d))
    assert l2_shift(replace["move all-ones row from group 0 to group 1"]) == pytest.approx(math.sqrt(2 * d))
    if d >= 2:  # the complement inside the group moves every count of group 0 by one
        shift = (sums(replace["replace (1,…,1,0) in group 0 by its complement (0,…,0,1)"].base)
                 - sums(replace["replace (1,…,1,0) in group 0 by its complement (0,…,0,1)"].neighbor))
        assert np.array_equal(np.abs(shift[:d]), np.ones(d)) and not shift[d:].any()


def test_base_datasets_are_the_documented_ones():
    assert np.array_equal(scenarios.counting(3, 3).pairs[0].base, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    assert np.array_equal(scenarios.bounded(2, 3).pairs[0].base, [[0, 0.5], [0.5, 1], [1, 0]])
    assert np.array_equal(scenarios.grouped(2, 2, 3).pairs[0].base,
                          [[1, 0.5, 0, 0], [0, 0, 0.5, 1], [1, 0.5, 0, 0]])
    empty = scenarios.counting(4, 0).pairs[0]
    assert empty.base.shape == (0, 4) and np.array_equal(empty.neighbor, np.ones((1, 4)))


def test_random_pairs_are_added_to_the_worst_case_ones_and_seeded():
    first = scenarios.counting(3, 6, pairs="random", count=5, seed=7)
    again = scenarios.counting(3, 6, pairs="random", count=5, seed=7)
    other = scenarios.counting(3, 6, pairs="random", count=5, seed=8)
    assert first.labels[:4] == scenarios.counting(3, 6).labels
    assert all(label.startswith(f"random #{i} (") for i, label in enumerate(first.labels[4:], 1))
    assert len(first) == 9
    assert all(np.array_equal(p.base, q.base) and np.array_equal(p.neighbor, q.neighbor)
               for p, q in zip(first, again))
    assert not all(np.array_equal(p.base, q.base) for p, q in zip(first.pairs[4:], other.pairs[4:]))


@pytest.mark.statistical
def test_random_pairs_use_both_directions_under_add_remove():
    scenario = scenarios.bounded(2, 4, pairs="random", count=40, seed=11)
    kinds = {label.split("(")[1].rstrip(")") for label in scenario.labels[4:]}
    assert kinds == {"add", "remove"}  # P(one kind missing) = 2·2^-40


@pytest.mark.parametrize("call, error, pattern", [
    (lambda: scenarios.counting(0), ValueError, r"`d` must be an integer >= 1, got 0"),
    (lambda: scenarios.counting(1.5), TypeError, r"`d` must be an integer, got 1.5"),
    (lambda: scenarios.counting(True), TypeError, r"`d` must be an integer, got True"),
    (lambda: scenarios.bounded(2, -1), ValueError, r"`n` must be an integer >= 0, got -1"),
    (lambda: scenarios.bounded(2, 0, "replace"), ValueError, r"`n` must be an integer >= 1 under the 'replace'.*got 0"),
    (lambda: scenarios.counting(2, relation="swap"), ValueError, r"`relation` must be .*got 'swap'"),
    (lambda: scenarios.counting(2, pairs="worst"), ValueError, r"`pairs` must be one of .*got 'worst'"),
    (lambda: scenarios.counting(2, pairs="random"), ValueError, r"`count` must be given with pairs='random', got None"),
    (lambda: scenarios.counting(2, pairs="random", count=0), ValueError, r"`count` must be an integer >= 1, got 0"),
    (lambda: scenarios.counting(2, pairs="random", count=3, seed=-4), ValueError, r"`seed` must be an integer >= 0, got -4"),
    (lambda: scenarios.counting(2, count=3), ValueError, r"`count` is only used with pairs='random', got 3"),
    (lambda: scenarios.counting(2, seed=3), ValueError, r"`seed` is only used with pairs='random', got 3"),
    (lambda: scenarios.grouped(0, 2), ValueError, r"`groups` must be an integer >= 1, got 0"),
    (lambda: scenarios.grouped(2, 0), ValueError, r"`d` must be an integer >= 1, got 0"),
])
def test_builder_parameters_are_validated(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


# -- Scenario / NeighborPair -------------------------------------------------------------------------
def test_neighbor_pair_holds_read_only_copies():
    source = np.zeros((2, 2))
    pair = NeighborPair(source, np.zeros((3, 2)), "x")
    source[0, 0] = 1.0
    assert pair.base[0, 0] == 0.0
    with pytest.raises(ValueError, match="read-only"):
        pair.base[0, 0] = 1.0
    with pytest.raises(ValueError, match="`label` must be a non-empty string"):
        NeighborPair(source, source, " ")


def test_scenario_rejects_a_non_neighbour_pair_naming_it():
    good = NeighborPair(np.zeros((1, 2)), np.zeros((2, 2)), "fine")
    bad = NeighborPair(np.zeros((1, 2)), np.zeros((3, 2)), "two rows added")
    with pytest.raises(ValueError, match=r"pair 1 \('two rows added'\) is not a neighbour pair under "
                                         r"'add-remove': sizes 1 and 3 do not differ by one"):
        Scenario("bounded", "add-remove", (good, bad), d=2)


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(domain="counting", pairs=(NeighborPair([[0.5]], [[0.5], [1.0]], "p"),), d=1),
     r"pair 0 \('p'\): the base dataset has values outside \{0, 1\}"),
    (dict(domain="bounded", pairs=(NeighborPair([[2.0]], [[2.0], [1.0]], "p"),), d=1),
     r"outside \[0, 1\]"),
    (dict(domain="grouped", pairs=(NeighborPair([[1.0, 1.0]], [[1.0, 1.0], [0, 0]], "p"),), d=2, groups=2),
     r"row 0 is non-zero in 2 groups"),
    (dict(domain="bounded", pairs=(NeighborPair([[1.0]], [[1.0], [0.0]], "p"),), d=2),
     r"rows of width 1, but the scenario has d = 2"),
    (dict(domain="grouped", pairs=(NeighborPair([[1.0]], [[1.0], [0.0]], "p"),), d=3, groups=2),
     r"`groups` dividing the row width `d`"),
    (dict(domain="bounded", pairs=(NeighborPair([[1.0]], [[1.0], [0.0]], "p"),), groups=2),
     r"`groups` is only meaningful for domain 'grouped', got 2"),
    (dict(domain="tabular", pairs=(NeighborPair([[1.0]], [[1.0], [0.0]], "p"),)),
     r"`domain` must be one of .*got 'tabular'"),
    (dict(domain="bounded", pairs=()), r"`pairs` must hold at least one pair"),
    (dict(domain="bounded", pairs=(NeighborPair([[1.0]], [[1.0], [0.0]], "p"),) * 2),
     r"pair labels must be distinct, got repeated \['p'\]"),
    (dict(domain="custom", pairs=(NeighborPair([1.0], [2.0], "p"),)), r"pass checked=False"),
    (dict(domain="bounded", pairs=(NeighborPair([[1.0]], [[1.0], [0.0]], "p"),), n=-1),
     r"`n` must be an integer >= 0, got -1"),
])
def test_scenario_constructor_validates(kwargs, pattern):
    kwargs.setdefault("relation", "add-remove")
    with pytest.raises(ValueError, match=pattern):
        Scenario(**kwargs)


def test_scenario_rejects_things_that_are_not_pairs():
    with pytest.raises(TypeError, match=r"`pairs\[0\]` must be a NeighborPair"):
        Scenario("bounded", "add-remove", ((np.zeros((1, 1)), np.zeros((0, 1))),))


def test_from_pairs_checks_user_pairs():
    scenario = scenarios.from_pairs([([0, 1], [0, 1, 1]), ([[1.0]], [[1.0], [0.0]], "extra zero")])
    assert scenario.domain is scenarios.Domain.ROWS and scenario.checked
    assert scenario.labels == ("pair #0", "extra zero") and scenario.d == 1
    assert scenario.pairs[0].base.shape == (2, 1)  # 1-D input read as one column
    with pytest.raises(ValueError, match=r"pair 1 \('flip'\) is not a neighbour pair under 'replace': "
                                         r"the datasets are identical"):
        scenarios.from_pairs([([[0.0]], [[1.0]]), ([[1.0]], [[1.0]], "flip")], "replace")
    with pytest.raises(ValueError, match=r"same number of columns, got \[1, 2\]"):
        scenarios.from_pairs([(np.zeros((1, 1)), np.zeros((2, 1))), (np.zeros((1, 2)), np.zeros((2, 2)))])
    with pytest.raises(TypeError, match=r"`pairs\[0\]` must be a NeighborPair or a \(D, D'\)"):
        scenarios.from_pairs([np.zeros((2, 1))])
    with pytest.raises(ValueError, match=r"at least one pair"):
        scenarios.from_pairs([])
    reused = scenarios.from_pairs(scenarios.counting(2, 3).pairs)
    assert reused.labels == scenarios.counting(2, 3).labels


def test_custom_scenarios_are_vouched_for_and_say_so():
    answers = scenarios.custom([(np.array([3.0, 1.0, 2.0]), np.array([2.0, 1.0, 2.0]), "first query -1")])
    assert answers.vouched and not answers.checked
    assert answers.domain is scenarios.Domain.CUSTOM
    assert answers.pairs[0].base.shape == (3,)  # passed to the mechanism as given
    assert VOUCHED_NOTE in answers.describe() and answers.check_note == VOUCHED_NOTE
    summary = answers.to_dict()
    assert summary["vouched"] is True and summary["check"] == VOUCHED_NOTE
    assert "removed" not in summary["pairs"][0]
    identical = scenarios.custom([([1.0], [1.0])], relation="replace")  # not checked: allowed
    assert identical.relation is scenarios.scenario.Relation.REPLACE


def test_to_dict_is_json_ready_and_names_the_differing_rows():
    summary = scenarios.counting(2, 3, "replace").to_dict()
    json.dumps(summary)
    assert summary["domain"] == "counting" and summary["relation"] == "replace"
    first = summary["pairs"][0]
    assert first["label"] == "replace all-ones row by all-zeros row"
    assert first["removed"] == [[1.0, 1.0]] and first["added"] == [[0.0, 0.0]]
    assert first["base_shape"] == [3, 2] and len(first["base"]) == 3
    big = scenarios.counting(100, 10).to_dict()["pairs"][0]
    assert "base" not in big and big["added"] == [[1.0] * 100]  # 1000 values: not written out


def test_describe():
    assert scenarios.counting(3, 10).describe() == "counting rows in {0,1}^3, n = 10, add-remove, 4 pairs"
    assert scenarios.grouped(2, 3, 5, "replace").describe() == (
        "grouped rows in [0,1]^(2x3), at most one non-zero group, n = 5, replace, 6 pairs")


# -- property test: random pairs are always neighbours -------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["counting", "bounded", "grouped"]),
       relation=st.sampled_from(RELATIONS),
       d=st.integers(1, 6), groups=st.integers(1, 4), n=st.integers(0, 12),
       count=st.integers(1, 8), seed=st.integers(0, 2**32))
def test_random_pairs_are_always_neighbours(kind, relation, d, groups, n, count, seed):
    n = max(n, 1) if relation == "replace" else n
    options = dict(relation=relation, pairs="random", count=count, seed=seed)
    if kind == "grouped":
        scenario = scenarios.grouped(groups, d, n, **options)
    else:
        scenario = getattr(scenarios, kind)(d, n, **options)
    random_pairs = [pair for pair in scenario if pair.label.startswith("random")]
    assert len(random_pairs) == count
    for pair in random_pairs:
        assert is_neighbor(pair.base, pair.neighbor, relation), pair.label
        assert len(pair.base) == n
