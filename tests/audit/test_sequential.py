"""The e-values and confidence sequences of audit/sequential.py, against independent computations.

* The round e-value, computed from counts, is the average over every pairing of the m draws of the
  product of the per-pair factors (enumerated for small m: an independent route).
* Its expectation under any point of the null is at most 1, computed exactly by summing over the
  two binomial counts (no simulation): the property every anytime guarantee rests on.
* The lower confidence bound only certifies values whose e-value reaches the threshold, and covers
  the truth in a seeded simulation at the level's binomial tolerance.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from audit.sequential import (LOG_MARGIN, MAX_BET, Bet, Family, bet_size, growth, log_evalue, lower_confidence_bound, payoff,
                              round_log_evalue)
from mechanisms.gdp import gdp_delta


def _brute_force(y_in, x_in, bet, w):
    """The mean over all pairings π of Π_i (1 + λ W(y_i, x_π(i)))."""
    w10, w11, w01, w00 = w
    value = {(1, 0): w10, (1, 1): w11, (0, 1): w01, (0, 0): w00}
    products = [np.prod([1 + bet * value[(y, x_in[j])] for y, j in zip(y_in, perm)])
                for perm in itertools.permutations(range(len(x_in)))]
    return float(np.mean(products))


@pytest.mark.parametrize("y_in, x_in", [((1, 1, 0, 0, 1), (0, 1, 0, 0, 0)), ((1, 0, 0, 0), (1, 1, 0, 1)),
                                        ((1, 1, 1), (1, 1, 1)), ((0, 0, 0, 0), (0, 0, 0, 0))])
@pytest.mark.parametrize("family, at, value", [(Family.EPSILON, 1e-3, 0.7), (Family.DELTA, 1.0, 0.05),
                                               (Family.MU, 0.0, 1.3)])
def test_the_round_evalue_is_the_mean_over_pairings(y_in, x_in, family, at, value):
    tangent = 0.4
    w = payoff(family, at, np.array([value]), tangent)[:, 0]
    computed = math.exp(round_log_evalue(sum(y_in), sum(x_in), len(y_in), 0.45, w))
    exact = _brute_force(y_in, x_in, 0.45, w)
    # Equal up to the safety margin taken off (and the last bits of the sum): never above.
    assert exact * math.exp(-LOG_MARGIN) * (1 - 1e-12) <= computed <= exact * (1 + 1e-12)


@pytest.mark.parametrize("m", [1, 7, 25])
@pytest.mark.parametrize("family, at, value, b", [(Family.EPSILON, 0.0, 1.0, 0.1), (Family.EPSILON, 1e-2, 0.5, 0.3),
                                                  (Family.DELTA, 1.0, 0.2, 0.05), (Family.MU, 0.0, 1.0, 0.2)])
@pytest.mark.parametrize("bet", [0.2, MAX_BET])
def test_the_round_evalue_has_mean_at_most_one_on_the_null(m, family, at, value, b, bet):
    # On the null's boundary A = e^ε B + δ (the worst case: the mean grows with A), exactly.
    tangent = 0.3
    w = payoff(family, at, np.array([value]), tangent)[:, 0]
    epsilon, delta = {Family.EPSILON: (value, at), Family.DELTA: (at, value),
                      Family.MU: (tangent, float(gdp_delta(tangent, value)))}[family]
    a = min(1.0, math.exp(epsilon) * b + delta)
    counts = np.arange(m + 1)
    e = np.array([[math.exp(round_log_evalue(int(ca), int(cb), m, bet, w)) for cb in counts] for ca in counts])
    mean = stats.binom.pmf(counts, m, a) @ e @ stats.binom.pmf(counts, m, b)
    assert mean <= 1.0 + 1e-9
    # ... and it is not trivially small: at A = e^ε B + δ with the pairs independent the mean is 1.
    if a < 1.0:
        assert mean == pytest.approx(1.0, abs=1e-7)


def test_large_rounds_sum_the_terms_that_matter():
    # A round of 10^6 draws sums a window around the largest term; the dropped terms are negligible.
    w = payoff(Family.EPSILON, 0.0, np.array([1.0]))[:, 0]
    full = round_log_evalue(30_000, 9_000, 1_000_000, 0.3, w)
    assert np.isfinite(full)
    # The exact value of a round with a single pairing class is known in closed form: with no draw
    # of P in the event, every pairing gives the same product.
    alone = round_log_evalue(300_000, 0, 1_000_000, 0.3, w)
    assert alone == pytest.approx(300_000 * math.log1p(0.3 * w[0]), rel=1e-12, abs=1e-6)


def test_bets_and_growth_favour_a_real_violation():
    w = payoff(Family.EPSILON, 0.0, np.array([1.0]))
    a, b = np.array([0.66, 0.3]), np.array([0.1, 0.3])  # a violation of ε = 1, and no difference
    bets = bet_size(a, b, np.broadcast_to(w, (4, 2)))
    assert bets[0] > 0 and bets[1] == 0
    rates = growth(a, b, np.broadcast_to(w, (4, 2)), bets)
    assert rates[0] > 0.02 and rates[1] == 0


@pytest.mark.parametrize("family, at", [(Family.EPSILON, 1e-5), (Family.DELTA, 1.0), (Family.MU, 0.0)])
def test_the_bound_certifies_only_rejected_values(family, at):
    bets = [[Bet(60, 5, 100, 0.5, 0.8), Bet(120, 14, 200, 0.5, 0.8)]]
    level = 0.05
    bound = lower_confidence_bound(family, at, bets, level, upper=1.0 if family is Family.DELTA else math.inf)
    assert bound > 0
    for value in np.linspace(0.0, bound, 25):
        assert log_evalue(family, at, bets[0], float(value)) >= math.log(1 / level)
    assert log_evalue(family, at, bets[0], bound * 1.05 + 0.01) < math.log(1 / level)


@pytest.mark.statistical
def test_the_bound_covers_the_truth_at_any_stopping_time():
    # A pure-DP pair with exact ε = 1 (A = e·B on the event): bet 40 rounds of 50 draws with a fixed
    # bet, and record whether the ε bound ever exceeds 1 along the way.  Crossings are a level-0.05
    # event for every seed (Ville): over 200 seeds more than the 0.999 binomial quantile would refute it.
    rng = np.random.default_rng(20261125)
    b = 0.1
    a = math.e * b
    crossings = 0
    for _ in range(200):
        wealth = 0.0
        for _ in range(40):
            wealth += log_evalue(Family.EPSILON, 0.0, [Bet(int(rng.binomial(50, a)), int(rng.binomial(50, b)), 50, 0.5)],
                                 1.0)
            if wealth >= math.log(20):
                crossings += 1
                break
    assert crossings <= stats.binom.ppf(0.999, 200, 0.05)
