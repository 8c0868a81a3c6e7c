"""Discrete Gaussian and discrete Laplace: exact samplers and exact privacy, each by a second route."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mechanisms.discrete_gaussian import DiscreteGaussianMechanism, discrete_gaussian_profile
from mechanisms.discrete_laplace import DiscreteLaplaceMechanism
from mechanisms.exact_sampling import bernoulli_exp, discrete_gaussian, discrete_laplace

pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

EPSILONS = np.array([0.0, 0.1, 0.3, 0.7, 1.0, 1.5, 2.5])


def _lattice_pair(log_weights, shift=1):
    """P and Q = P shifted by one, by plain summation over a wide lattice (second route)."""
    x = np.arange(-2000, 2001)
    p = np.exp(log_weights(x) - np.max(log_weights(x)))
    q = np.exp(log_weights(x - shift) - np.max(log_weights(x)))
    return p / p.sum(), q / p.sum()


def _brute_delta(p, q, epsilon):
    return max(np.maximum(p - math.exp(epsilon) * q, 0).sum(), np.maximum(q - math.exp(epsilon) * p, 0).sum())


@pytest.mark.parametrize("sigma", [0.8, 2.0, 5.0])
def test_discrete_gaussian_profile_by_summation_and_dp_accounting(sigma):
    mechanism = DiscreteGaussianMechanism(sigma)
    sigma2 = float(mechanism.sigma_squared)
    p, q = _lattice_pair(lambda x: -x.astype(float) ** 2 / (2 * sigma2))
    exact = mechanism.privacy_profile(EPSILONS)
    # Summation of the same positive terms in another order: rounding only, 1e-9 relative
    # (plus 1e-15 absolute where δ underflows the direct sum's precision).
    brute = np.array([_brute_delta(p, q, e) for e in EPSILONS])
    assert np.allclose(exact, brute, rtol=1e-9, atol=1e-15)
    # dp-accounting's pessimistic PLD (discretisation 1e-5): an upper bound, within 1e-3 relative.
    loss = pld.from_discrete_gaussian_mechanism(mechanism.sigma, value_discretization_interval=1e-5)
    accountant = np.array([loss.get_delta_for_epsilon(float(e)) for e in EPSILONS])
    big = exact > 1e-12
    assert np.all(accountant[big] >= exact[big] * (1 - 1e-9))
    assert np.all(accountant[big] <= exact[big] * (1 + 1e-3) + 1e-12)
    # ε(δ): the accountant's pessimistic ε is within 1e-3 above the exact one.
    for delta in (1e-2, 1e-5):
        exact_eps = mechanism.epsilon_for_delta(delta)
        assert exact_eps <= loss.get_epsilon_for_delta(delta) + 1e-9 <= exact_eps + 1e-3


def test_discrete_gaussian_tradeoff_is_consistent_with_profile():
    # δ(ε) = sup_α [1 − T(α) − e^ε α] (docs/ground-truth.md §3); T is piecewise linear between the
    # Neyman–Pearson vertices, so evaluating at the vertices (α = P(X ≥ m)) is exact.
    mechanism = DiscreteGaussianMechanism(1.5)
    sigma2 = float(mechanism.sigma_squared)
    p, _ = _lattice_pair(lambda x: -x.astype(float) ** 2 / (2 * sigma2))
    vertices = np.cumsum(p[::-1])[::-1]
    curve = mechanism.tradeoff(vertices)
    for epsilon in (0.0, 0.5, 1.0):
        implied = np.max(1 - curve - math.exp(epsilon) * vertices)
        assert implied == pytest.approx(float(mechanism.privacy_profile(epsilon)), rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.0])
def test_discrete_laplace_profile_by_summation_and_dp_accounting(epsilon):
    mechanism = DiscreteLaplaceMechanism(epsilon)
    p, q = _lattice_pair(lambda x: -epsilon * np.abs(x).astype(float))
    brute = np.array([_brute_delta(p, q, e) for e in EPSILONS])
    assert np.allclose(mechanism.privacy_profile(EPSILONS), brute, rtol=1e-9, atol=1e-15)
    loss = pld.from_discrete_laplace_mechanism(epsilon, value_discretization_interval=1e-5)
    accountant = np.array([loss.get_delta_for_epsilon(float(e)) for e in EPSILONS])
    assert np.allclose(accountant, brute, rtol=1e-3, atol=1e-12)
    assert mechanism.epsilon_for_delta(0.0) == pytest.approx(epsilon, rel=1e-12)
    for delta in (1e-3, 0.1):  # inverse of the profile
        assert float(mechanism.privacy_profile(mechanism.epsilon_for_delta(delta))) == pytest.approx(delta, rel=1e-9)


@pytest.mark.statistical
def test_bernoulli_exp_frequencies():
    # n/d = 7/3 and 2/5; 4e5 draws each: |mean − e^{−γ}| ≤ 5 binomial standard deviations
    # (a false failure has probability < 1e-6).
    rng = np.random.default_rng(20261123)
    for n, d in ((7, 3), (2, 5), (0, 4)):
        draws = bernoulli_exp(np.full(400_000, n), d, rng)
        p = math.exp(-n / d)
        assert abs(draws.mean() - p) <= 5 * math.sqrt(p * (1 - p) / draws.size) + 1e-12


@pytest.mark.statistical
@pytest.mark.parametrize("sampler, log_weights", [
    (lambda rng, size: discrete_laplace(2, 3, size, rng), lambda x: -2 / 3 * np.abs(x)),
    (lambda rng, size: discrete_gaussian(Fraction(169, 100), size, rng), lambda x: -x**2 / (2 * 1.69)),
    (lambda rng, size: discrete_gaussian(Fraction(9, 1), size, rng), lambda x: -x**2 / 18.0),
])
def test_exact_samplers_match_their_pmf(sampler, log_weights):
    # Chi-square goodness of fit on 5e5 seeded draws (cells with expected count ≥ 20, tails
    # pooled): the test fails falsely with probability 1e-6 if the sampler is exact.
    draws = sampler(np.random.default_rng(7), 500_000)
    x = np.arange(-200, 201)
    pmf = np.exp(log_weights(x.astype(float)))
    pmf /= pmf.sum()
    keep = pmf * draws.size >= 20
    low, high = x[keep].min(), x[keep].max()
    observed = np.array([np.sum(draws <= low)] + [np.sum(draws == v) for v in range(low + 1, high)]
                        + [np.sum(draws >= high)])
    expected = np.concatenate([[pmf[x <= low].sum()], pmf[(x > low) & (x < high)], [pmf[x >= high].sum()]])
    result = stats.chisquare(observed, expected * draws.size)
    assert result.pvalue > 1e-6


def test_discrete_outputs_are_integers_and_validated():
    rng = np.random.default_rng(3)
    for mechanism in (DiscreteGaussianMechanism(2.0), DiscreteLaplaceMechanism(1.0)):
        out = mechanism(np.ones((4, 1)), 1000, rng)
        assert out.dtype == np.float64 and out.shape == (1000, 1) and np.all(out == np.round(out))
        with pytest.raises(ValueError, match="0/1 entries"):
            mechanism(np.full((3, 1), 0.5), 10, rng)
    with pytest.raises(ValueError, match="`sigma`"):
        DiscreteGaussianMechanism(-1.0)
    with pytest.raises(ValueError, match="both `epsilon` and `delta`"):
        DiscreteGaussianMechanism(2.0, epsilon=1.0)


def test_calibrated_discrete_gaussian_meets_its_claim_tightly():
    mechanism = DiscreteGaussianMechanism.calibrated(1.0, 1e-5)
    assert float(mechanism.privacy_profile(1.0)) <= 1e-5
    assert float(discrete_gaussian_profile(1.0, (mechanism.sigma - 2e-3) ** 2)) > 1e-5


def test_theory_prints_the_exact_privacy_of_the_new_mechanisms(capsys):
    from audit.cli import main

    assert main(["theory", "discrete-laplace", "--epsilon", "1"]) == 0
    out = capsys.readouterr().out
    # ε(0.01) = 1 + ln(1 − 0.01(1 + e^{−1})) = 0.986227 (the closed form of the module docstring)
    assert "ε(δ = 0.01) = 0.986227" in out and "the claim holds" in out
    assert main(["theory", "discrete-gaussian", "--sigma", "2"]) == 0
    out = capsys.readouterr().out
    assert "claim: 0.125-zCDP" in out and "ε(δ = 1e-05) = 2.01134" in out  # = dp-accounting's PLD
