"""How an audit spends its draws (audit/allocation.py): the fixed split, and certification draws
moving from silent pairs to pairs with evidence."""

from __future__ import annotations

import numpy as np
import pytest

import scenarios
from audit import run_audit
from audit.allocation import (SILENCE_P_VALUE, SILENT_SHARE, allocate, lanes_look_silent, looks_silent, reallocate,
                              training_draws)
from audit.selection import PairCounts
from mechanisms import GaussianMechanism
from mechanisms.claims import ApproxDP


def test_split_of_samples():
    allocation = allocate(2_000_000, 0, (1 / 16, 1 / 4, 1.0))
    assert allocation.pilot == 2_000_000 // 32
    assert allocation.selection + allocation.pilot == 500_000  # 25% of the rest
    assert allocation.pilot + allocation.selection + allocation.certification == 2_000_000
    assert allocation.looks == 3 and allocation.certification_ends[-1] == allocation.certification
    assert training_draws(2_000_000, 1, learned=False) == 0


def test_reallocation_keeps_the_total_and_gives_silent_pairs_their_share():
    ends = (1_000,)
    moved = reallocate(ends, [True, False, False])
    assert moved[0] == (int(1_000 * SILENT_SHARE),)
    assert sum(e[-1] for e in moved) <= 3 * 1_000 and sum(e[-1] for e in moved) >= 3 * 1_000 - 2
    assert moved[1] == moved[2] and moved[1][-1] > 1_000


@pytest.mark.parametrize("silent", [[False, False], [True, True]])
def test_nothing_moves_unless_some_but_not_all_pairs_are_silent(silent):
    assert reallocate((16, 64, 256), silent) == [(16, 64, 256)] * 2


def test_with_looks_a_silent_pair_keeps_draws_at_every_look():
    moved = reallocate((64, 256, 1_024), [True, False])
    assert all(end > 0 for end in moved[0]) and moved[0][-1] == 128
    assert moved[1][-1] == 1_024 + (1_024 - 128)


def _counts(rng, shift, n=2_000, bins=64):
    edges = np.linspace(-4.0, 6.0, bins + 1)
    base = np.histogram(rng.standard_normal(n), edges)[0]
    neighbour = np.histogram(rng.standard_normal(n) + shift, edges)[0]
    return PairCounts(base, neighbour, n)


@pytest.mark.statistical
def test_silence_test_has_its_stated_false_positive_rate_and_sees_a_shift():
    # Identical sides: the KS p-value is (conservatively, once binned) uniform, so a pair is called
    # silent with probability ≥ 1 − SILENCE_P_VALUE; over 400 seeded pairs the rate must not fall
    # below that by more than three binomial standard errors.
    rng = np.random.default_rng(20261123)
    silent = np.mean([looks_silent(_counts(rng, 0.0)) for _ in range(400)])
    assert silent >= 1 - SILENCE_P_VALUE - 3 * np.sqrt(SILENCE_P_VALUE * (1 - SILENCE_P_VALUE) / 400)
    # A shift of 0.3 standard deviations at 2,000 draws per side: KS distance ≈ 0.12, far beyond its
    # null spread (p < 1e-10), so it is never called silent.
    assert not any(looks_silent(_counts(rng, 0.3)) for _ in range(50))


@pytest.mark.statistical
def test_counting_audit_moves_the_all_zeros_pairs_draws_to_the_other_pair():
    # counting(1): adding an all-zeros row leaves a count's distribution unchanged, so that pair is
    # called silent with probability ≥ 0.9 per audit and the other pair never is.  Over 10 seeded
    # audits at least 6 must move draws (P(≤ 5 of 10) ≤ 0.002 at rate 0.9), and every event must be
    # counted on its own pair's certification draws.
    moved = 0
    for seed in range(10):
        report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=100_000,
                           seed=seed, progress=False, accuracy=False)
        per_pair = report.draws.get("certification_per_pair")
        if per_pair is None:
            continue
        moved += 1
        labels = [pair.label for pair in report.pairs]
        assert labels[1].endswith("all-zeros row") and per_pair[1] < per_pair[0]
        for event in report.evidence:
            assert event["n"] == per_pair[labels.index(event["pair"])]
    assert moved >= 6


def test_a_pair_whose_events_already_use_half_the_claim_is_not_silent():
    # 40 of 1,750 neighbour draws in bin 10, where the base has none (its last draw is in bin 11, so
    # nothing lies beyond its range): the KS distance 39/1750 has p ≈ 0.8 and alone would call the
    # pair silent.  The event {bin ≥ 10} has pessimistic points A_lo(40/1750) ≈ 0.0172 and
    # B_hi(1/1750) ≈ 0.0027, δ ≈ 0.0172 − e·0.0027 ≈ 0.0098 at ε = 1: twice the claimed δ = 0.0049.
    base = np.zeros(16, dtype=np.int64)
    neighbour = np.zeros(16, dtype=np.int64)
    base[5], base[11] = 1749, 1
    neighbour[5], neighbour[10] = 1710, 40
    counts = PairCounts(base, neighbour, 1750)
    assert looks_silent(counts)
    assert not looks_silent(counts, ApproxDP(1.0, 0.0049))
    assert looks_silent(PairCounts(base, base.copy(), 1750), ApproxDP(1.0, 0.0049))


@pytest.mark.statistical
def test_a_pair_with_several_lanes_is_silent_as_often_as_with_one():
    # Identical sides seen through three lanes (independent draws here, the worst case for a
    # test asked of every lane), binned finely enough (1,024 bins, 20,000 draws) for the KS p-value
    # to be nearly uniform: the pair must still be called silent at rate ≥ 1 − SILENCE_P_VALUE
    # within three binomial standard errors over 400 seeded pairs.  Asking the KS test of all three
    # lanes gives about 0.9³ = 0.73 (0.755 on these seeds), 6 standard errors below.
    rng = np.random.default_rng(20261128)
    silent = np.mean([lanes_look_silent([_counts(rng, 0.0, 20_000, 1_024) for _ in range(3)]) for _ in range(400)])
    assert silent >= 1 - SILENCE_P_VALUE - 3 * np.sqrt(SILENCE_P_VALUE * (1 - SILENCE_P_VALUE) / 400)
    # A shifted primary is never silent, whatever its alternates look like.
    assert not any(lanes_look_silent([_counts(rng, 0.3), _counts(rng, 0.0)]) for _ in range(50))


def test_an_alternate_lane_keeps_a_rare_region_from_being_silenced():
    # The primary sees nothing; an alternate holds 40 neighbour draws where the base has none
    # (the counts of the test above): its event uses twice the claim, so the pair is not silent.
    # A run of SILENT_ONE_SIDED draws beyond the other side's range in an alternate counts too.
    base = np.zeros(16, dtype=np.int64)
    neighbour = np.zeros(16, dtype=np.int64)
    base[5], base[11] = 1749, 1
    neighbour[5], neighbour[10] = 1710, 40
    quiet = PairCounts(base, base.copy(), 1750)
    claim = ApproxDP(1.0, 0.0049)
    assert lanes_look_silent([quiet, quiet], claim)
    assert not lanes_look_silent([quiet, PairCounts(base, neighbour, 1750)], claim)
    beyond = neighbour.copy()
    beyond[10], beyond[14] = 0, 40  # beyond the base's last occupied bin (11)
    assert lanes_look_silent([quiet], None) and not lanes_look_silent([quiet, PairCounts(base, beyond, 1750)], None)
