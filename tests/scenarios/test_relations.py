"""Neighbour relations: truth tables, edge cases, and agreement with a naive multiset oracle."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms.claims import Relation
from scenarios import is_neighbor, neighbor_mismatch, row_difference

A, B, C = [0.0, 1.0], [1.0, 1.0], [0.5, 0.0]
EMPTY = np.zeros((0, 2))


def rows(*items):
    return np.array(items, dtype=float).reshape(len(items), 2)


ADD_REMOVE_TABLE = [
    # (D, D', neighbours?, why)
    (EMPTY, rows(A), True, "n = 0 -> 1"),
    (rows(A), EMPTY, True, "n = 1 -> 0"),
    (EMPTY, EMPTY, False, "two empty datasets are identical"),
    (rows(A, B), rows(A, B), False, "identical"),
    (rows(A, B), rows(B, A), False, "identical up to row order"),
    (rows(A, B), rows(B, C, A), True, "one row added, order shuffled"),
    (rows(B, C, A), rows(A, B), True, "one row removed, order shuffled"),
    (rows(A), rows(A, B, C), False, "two rows added"),
    (rows(A, B), rows(A, C, C), False, "one row added and one changed"),
    (rows(A, B), rows(A, A, B), True, "a duplicate row added"),
    (rows(A, A, B), rows(A, B, B), False, "same size"),
    (rows(A, A), rows(A, B, B), False, "multiplicities differ by more than one row"),
]

REPLACE_TABLE = [
    (EMPTY, EMPTY, False, "nothing to replace"),
    (EMPTY, rows(A), False, "sizes differ"),
    (rows(A), rows(B), True, "n = 1, one row changed"),
    (rows(A, B), rows(A, B), False, "identical"),
    (rows(A, B), rows(B, A), False, "identical up to row order"),
    (rows(A, B), rows(A, C), True, "one row changed"),
    (rows(A, B), rows(C, A), True, "one row changed, order shuffled"),
    (rows(A, B), rows(C, C), False, "two rows changed"),
    (rows(A, A), rows(A, B), True, "one of two duplicate rows changed"),
    (rows(A, A), rows(B, B), False, "both duplicate rows changed"),
    (rows(A, B), rows(A, B, C), False, "a row added, not replaced"),
]


@pytest.mark.parametrize("D, D_prime, expected, why", ADD_REMOVE_TABLE, ids=[r[3] for r in ADD_REMOVE_TABLE])
def test_add_remove_truth_table(D, D_prime, expected, why):
    assert is_neighbor(D, D_prime, "add-remove") is expected
    assert is_neighbor(D, D_prime, Relation.ADD_REMOVE) is expected


@pytest.mark.parametrize("D, D_prime, expected, why", REPLACE_TABLE, ids=[r[3] for r in REPLACE_TABLE])
def test_replace_truth_table(D, D_prime, expected, why):
    assert is_neighbor(D, D_prime, "replace") is expected
    assert is_neighbor(D_prime, D, "replace") is expected  # the relation is symmetric


def test_one_dimensional_arrays_are_columns():
    assert is_neighbor([0, 1, 1], [1, 0, 1, 1], "add-remove")
    assert is_neighbor([0, 1, 1], [1, 1, 1], "replace")


def test_negative_zero_equals_zero():
    assert not is_neighbor([[-0.0, 1.0]], [[0.0, 1.0]], "replace")
    assert is_neighbor([[-0.0, 1.0]], [[0.0, 1.0], [1.0, 1.0]], "add-remove")


def test_different_widths_are_not_neighbours():
    assert not is_neighbor(np.zeros((1, 2)), np.zeros((2, 3)), "add-remove")
    assert "widths" in neighbor_mismatch(np.zeros((1, 2)), np.zeros((2, 3)), "add-remove")


@pytest.mark.parametrize("D, D_prime, relation, phrase", [
    (rows(A), rows(A, B, C), "add-remove", "sizes 1 and 3 do not differ by one"),
    (rows(A, B), rows(A, C, C), "add-remove", "not the smaller plus one row"),
    (rows(A, B), rows(B, A), "replace", "identical"),
    (rows(A, B), rows(C, C), "replace", "2 rows differ on each side"),
    (rows(A), rows(A, B), "replace", "sizes 1 and 2 differ"),
])
def test_mismatch_reasons(D, D_prime, relation, phrase):
    assert phrase in neighbor_mismatch(D, D_prime, relation)


def test_row_difference_counts_multiplicity():
    assert row_difference(rows(A, A, B), rows(A, C)) == (2, 1)
    assert row_difference(EMPTY, rows(A, A)) == (0, 2)


@pytest.mark.parametrize("relation, error", [("swap", ValueError), ("Add-Remove", ValueError), (1, TypeError)])
def test_unknown_relation_is_rejected(relation, error):
    with pytest.raises(error, match=r"`relation` must be 'add-remove' or 'replace', got"):
        is_neighbor(rows(A), rows(B), relation)


@pytest.mark.parametrize("bad, error, match", [
    ([[np.nan, 1.0]], ValueError, "NaN"),
    ([["a", "b"]], TypeError, "numeric"),
    (np.zeros((1, 2, 2)), ValueError, r"shape \(1, 2, 2\)"),
])
def test_malformed_datasets_are_rejected(bad, error, match):
    with pytest.raises(error, match=match):
        is_neighbor(bad, rows(A), "add-remove")


def test_large_datasets_are_compared_quickly():
    rng = np.random.default_rng(20261121)
    data = rng.integers(0, 2, size=(200_000, 20)).astype(float)
    shuffled = rng.permutation(data)
    assert is_neighbor(data, np.vstack([shuffled, np.ones((1, 20))]), "add-remove")
    changed = shuffled.copy()
    changed[7] = 1.0 - changed[7]
    assert is_neighbor(data, changed, "replace")


# -- property tests: agreement with a naive Counter-based multiset oracle ---------------------------
def naive_neighbors(D: np.ndarray, D_prime: np.ndarray, relation: str) -> bool:
    left = Counter(map(tuple, D.tolist()))
    right = Counter(map(tuple, D_prime.tolist()))
    only_left = sum((left - right).values())
    only_right = sum((right - left).values())
    if relation == "add-remove":
        return (only_left, only_right) in ((1, 0), (0, 1))
    return (only_left, only_right) == (1, 1)


# Values from a tiny alphabet so that duplicates and near-misses are common.
datasets = st.integers(min_value=0, max_value=5).flatmap(
    lambda n: st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=2),
                       min_size=n, max_size=n)
).map(lambda items: np.array(items, dtype=float).reshape(-1, 2))


@settings(max_examples=300, deadline=None)
@given(datasets, datasets, st.sampled_from(["add-remove", "replace"]))
def test_agrees_with_naive_multiset_oracle(D, D_prime, relation):
    assert is_neighbor(D, D_prime, relation) == naive_neighbors(D, D_prime, relation)


@settings(max_examples=200, deadline=None)
@given(datasets, st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=2),
       st.randoms(use_true_random=False))
def test_adding_any_row_anywhere_gives_a_neighbour(D, row, random):
    order = list(range(len(D) + 1))
    random.shuffle(order)
    bigger = np.vstack([D, [row]])[order]
    assert is_neighbor(D, bigger, "add-remove")
    assert is_neighbor(bigger, D, "add-remove")
    if len(D):
        replaced = D.copy()
        index = random.randrange(len(D))
        replaced[index] = row
        assert is_neighbor(D, replaced, "replace") == (not np.array_equal(D[index], row))
