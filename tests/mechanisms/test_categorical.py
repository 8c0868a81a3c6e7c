"""k-ary randomized response and the exponential mechanism: samplers and exact privacy by second routes."""

import math

import numpy as np
import pytest
from scipy import special, stats

from mechanisms.exponential import ExponentialMechanism
from mechanisms.finite_pair import pair_profile
from mechanisms.randomized_response import RandomizedResponse

EPSILONS = np.array([0.0, 0.2, 0.5, 0.9, 1.3, 2.0])


def _brute(p, q, epsilon):
    """Both orders of Σ (p − e^ε q)₊ over the outcomes, straight from the definition."""
    return max(np.maximum(p - math.exp(epsilon) * q, 0).sum(), np.maximum(q - math.exp(epsilon) * p, 0).sum())


@pytest.mark.parametrize("epsilon, k", [(0.5, 2), (1.0, 4), (2.0, 10)])
def test_randomized_response_profile_three_ways(epsilon, k):
    rr = RandomizedResponse(epsilon, k)
    z = math.exp(epsilon) + k - 1
    p = np.full(k, 1 / z)
    p[0] = math.exp(epsilon) / z
    q = np.roll(p, 1)
    closed = rr.privacy_profile(EPSILONS)
    # rounding only (atol: 1 − e^{ε−ε} cancels to ~1e-16 at the pure ε)
    assert np.allclose(closed, [_brute(p, q, e) for e in EPSILONS], rtol=1e-12, atol=1e-15)
    assert np.allclose(closed, pair_profile(EPSILONS, np.log(p), np.log(q)), rtol=1e-12, atol=1e-15)
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    # dp-accounting's RR: keep with 1 − r, else uniform over all k buckets: r = k/(e^ε + k − 1).
    loss = pld.from_randomized_response(k / z, k, value_discretization_interval=1e-5)
    accountant = np.array([loss.get_delta_for_epsilon(float(e)) for e in EPSILONS])
    # Pessimistic: it rounds each privacy loss up by at most the interval h = 1e-5, which raises
    # δ by at most (e^h − 1) ≤ 1.1e-5 in absolute terms (visible at ε' = ε, where δ = 0).
    assert np.all(accountant >= closed - 1e-12) and np.all(accountant <= closed + 1.1e-5)
    assert rr.epsilon_for_delta(0.0) == pytest.approx(epsilon, rel=1e-12)
    delta = 0.5 * float(closed[0])
    assert float(rr.privacy_profile(rr.epsilon_for_delta(delta))) == pytest.approx(delta, rel=1e-9)


def _chisquare_pvalue(draws, pmf):
    observed = np.bincount(draws.astype(int).ravel(), minlength=pmf.size)
    return stats.chisquare(observed, pmf * draws.size).pvalue


@pytest.mark.statistical
def test_samplers_follow_their_exact_distributions():
    # Chi-square goodness of fit, 2e5 seeded draws: a false failure has probability 1e-6.
    rng = np.random.default_rng(20261123)
    rr = RandomizedResponse(1.0, 5)
    data = np.ones((7, 1))  # count 7 → category 2
    assert _chisquare_pvalue(rr(data, 200_000, rng), np.exp(rr.log_pmf(2))) > 1e-6
    em = ExponentialMechanism(1.0)
    assert _chisquare_pvalue(em(np.ones((3, 1)), 200_000, rng), np.exp(em.log_pmf(3))) > 1e-6


@pytest.mark.parametrize("mechanism", [ExponentialMechanism(1.0), ExponentialMechanism(1.0, monotone=True),
                                       ExponentialMechanism(2.0, candidates=(-3.0, 0.5, 1.0, 7.0))])
def test_exponential_profile_is_the_max_over_all_count_pairs(mechanism):
    # Second route: the softmax for every count 0..60 (beyond every candidate) from scratch, and
    # the definition of the hockey stick; the finite set of pairs the mechanism uses must attain it.
    t = np.asarray(mechanism.candidates)

    def pmf(c):
        scores = mechanism.beta * -np.abs(c - t)
        return np.exp(scores - special.logsumexp(scores))

    brute = np.array([max(_brute(pmf(c), pmf(c + 1), e) for c in range(60)) for e in EPSILONS])
    assert np.allclose(mechanism.privacy_profile(EPSILONS), brute, rtol=1e-10, atol=1e-15)
    pure = max(np.max(np.abs(np.log(pmf(c)) - np.log(pmf(c + 1)))) for c in range(60))
    assert mechanism.epsilon_for_delta(0.0) == pytest.approx(pure, rel=1e-12)


def test_exponential_claims_against_truth():
    # β = ε/2: strictly inside the claim; β = ε ("monotone") on these non-monotone utilities: false.
    assert ExponentialMechanism(1.0).epsilon_for_delta(0.0) < 1.0
    assert ExponentialMechanism(1.0, monotone=True).epsilon_for_delta(0.0) > 1.4


def test_likelihood_ratio_is_monotone_in_the_index():
    # Why the output index is the right 1-D statistic for the engine's threshold events.
    em = ExponentialMechanism(1.0)
    for p, q in em._pairs():
        assert np.all(np.diff(p - q) <= 1e-12)
    rr = RandomizedResponse(1.0, 4)
    assert np.all(np.diff(rr.log_pmf(3) - rr.log_pmf(0)) >= -1e-12)


def test_categorical_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="`k`"):
        RandomizedResponse(1.0, 1)
    with pytest.raises(ValueError, match="`candidates`"):
        ExponentialMechanism(1.0, candidates=(2, 1))
    with pytest.raises(ValueError, match="0/1 entries"):
        RandomizedResponse(1.0)(np.full((2, 1), 0.3), 5, rng)
