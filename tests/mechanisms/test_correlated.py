"""Tests of Lebeda's correlated Gaussian mechanism (Algorithm 1, Lemmas 3.5 and 3.6).

Reference values name their source: "Lebeda" is C. J. Lebeda, "Better Gaussian Mechanism
using Correlated Noise" (2024), "GT" is docs/ground-truth.md.  Statistical tolerances are stated where they are used.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from mechanisms import CorrelatedGaussianMechanism, GaussianDP, Relation
from mechanisms.correlated import max_error_tail
from mechanisms.gdp import gdp_epsilon

SEED = 20240917


def paper_covariance(mu: float, d: int, c: float | None) -> np.ndarray:
    """Lebeda Corollary 3.1 / Figure 2: entries (A+B)/4, A/4, A/2, A with A = (d/C² + 1)/μ²,
    B = (d + C²)/μ² (C = d^{1/4} for Algorithm 1).  Built here, independently of the class."""
    c2 = math.sqrt(d) if c is None else c * c
    big_a, big_b = (d / c2 + 1.0) / mu**2, (d + c2) / mu**2
    cov = np.full((d + 1, d + 1), big_a / 4.0)
    cov[np.arange(d), np.arange(d)] = (big_a + big_b) / 4.0
    cov[:d, d] = cov[d, :d] = big_a / 2.0
    cov[d, d] = big_a
    return cov


def mahalanobis(delta: np.ndarray, cov: np.ndarray) -> float:
    """‖Σ^{-1/2} Δ‖: the μ of a pair of Gaussians with common covariance Σ and mean shift Δ."""
    return float(math.sqrt(delta @ np.linalg.solve(cov, delta)))


def corner_rows(d: int) -> list[np.ndarray]:
    return [np.array(bits, dtype=float) for bits in itertools.product((0.0, 1.0), repeat=d)]


# -- variances (Lebeda Lemma 3.1, Lemma 3.5, Lemma 3.6) -------------------------------------------
@pytest.mark.parametrize("mu, d", [(1.0, 100), (0.5, 100), (2.0, 7), (1.0, 1), (0.3, 10_000)])
def test_algorithm1_variances_are_lebedas(mu, d):
    mech = CorrelatedGaussianMechanism(mu, d)
    var = mech.noise_variance()
    assert var.shape == (d + 1,)
    # Lebeda Lemma 3.1: each query's error is N(0, (d + 2√d + 1)/(4μ²)).
    np.testing.assert_allclose(var[:d], (d + 2 * math.sqrt(d) + 1) / (4 * mu**2), rtol=1e-13)
    # GT §5: Var(ñ) = 4a = (√d + 1)/μ².
    assert var[d] == pytest.approx((math.sqrt(d) + 1) / mu**2, rel=1e-13)


def test_algorithm1_reference_numbers():
    # Lebeda Lemma 3.1 at d = 100, μ = 1: (100 + 20 + 1)/4 = 30.25, std (√d + 1)/(2μ) = 5.5.
    mech = CorrelatedGaussianMechanism(1.0, 100)
    assert mech.noise_variance()[0] == pytest.approx(30.25, rel=1e-15)
    assert mech.eta_variance == pytest.approx(11 / 4, rel=1e-15)  # Algorithm 1 line 3
    assert mech.z_variance == pytest.approx(110 / 4, rel=1e-15)  # Algorithm 1 line 5


@pytest.mark.parametrize("c", [0.5, 1.0, 2.0, 3.1622776601683795, 10.0, 40.0])
@pytest.mark.parametrize("mu, d", [(1.0, 100), (0.7, 13)])
def test_lemma35_variances(mu, d, c):
    var = CorrelatedGaussianMechanism(mu, d, c=c).noise_variance()
    # Lebeda Lemma 3.5: per-query variance (d + C² + d/C² + 1)/(4μ²).
    np.testing.assert_allclose(var[:d], (d + c**2 + d / c**2 + 1) / (4 * mu**2), rtol=1e-13)
    # Lebeda Lemma 3.5 proof: Var(ñ) = A = (d/C² + 1)/μ² (ñ estimates n, A/4 is for n/2).
    assert var[d] == pytest.approx((1 + d / c**2) / mu**2, rel=1e-13)


def test_lemma35_paper_example_and_default():
    # Lebeda §3.1 text: d = 10^4, C = √d = 100 gives per-query (d + 1)/(2μ²) = 5000.5 and A = 2.
    var = CorrelatedGaussianMechanism(1.0, 10_000, c=100.0).noise_variance()
    assert var[0] == pytest.approx(5000.5, rel=1e-14)
    assert var[-1] == pytest.approx(2.0, rel=1e-14)
    # C = d^{1/4} is Algorithm 1 (Lebeda Lemma 3.4).
    alg1 = CorrelatedGaussianMechanism(1.3, 81)
    explicit = CorrelatedGaussianMechanism(1.3, 81, c=3.0)
    np.testing.assert_allclose(explicit.noise_variance(), alg1.noise_variance(), rtol=1e-14)


@pytest.mark.parametrize("mu, d", [(1.0, 100), (0.5, 3)])
def test_lemma36_variance_and_layout(mu, d):
    mech = CorrelatedGaussianMechanism(mu, d, n_known=10)
    # Lebeda Lemma 3.6: Z ~ N(0, d/(4μ²) I_d); no size column.
    np.testing.assert_allclose(mech.noise_variance(), np.full(d, d / (4 * mu**2)), rtol=1e-14)
    assert mech.output_dim == d and mech.query_columns == tuple(range(d))
    assert not mech.releases_size


def test_output_covariance_is_corollary_31():
    for c in (None, 0.8, 5.0):
        mech = CorrelatedGaussianMechanism(0.9, 6, c=c)
        np.testing.assert_allclose(mech.output_covariance(), paper_covariance(0.9, 6, c),
                                   rtol=1e-13)
        np.testing.assert_array_equal(mech.noise_variance(), np.diag(mech.output_covariance()))


# -- exact privacy --------------------------------------------------------------------------------
@pytest.mark.parametrize("c", [None, 0.3, 1.0, 7.0])
@pytest.mark.parametrize("mu, d", [(1.0, 100), (0.25, 2), (3.0, 17)])
def test_exact_mu_add_remove_is_mu_for_whole_family(mu, d, c):
    # GT §5: μ_eff² = d/(4b) + 1/(4a) = μ² for every C > 0.
    mech = CorrelatedGaussianMechanism(mu, d, c=c)
    assert mech.exact_mu("add-remove") == pytest.approx(mu, rel=1e-13)


@pytest.mark.parametrize("mu", [1.0, 0.4])
def test_exact_mu_replacement_reference(mu):
    mech = CorrelatedGaussianMechanism(mu, 100, relation="replace")
    # GT §5: μ_rep² = 4μ²√d/(√d + 1) = 40μ²/11 at d = 100, i.e. μ_rep = 1.907μ.
    assert mech.exact_mu() == pytest.approx(mu * math.sqrt(40 / 11), rel=1e-13)
    assert mech.exact_mu() / mu == pytest.approx(1.907, abs=5e-4)
    assert mech.exact_mu("add-remove") == pytest.approx(mu, rel=1e-13)


def test_exact_mu_lemma36():
    # Derived (module docstring): released mean f − n/2·1 + n_known/2·1 moves by ±(x − ½·1)
    # (norm ≤ √d/2) under add/remove and by x − x' (norm ≤ √d) under replacement; σ = √d/(2μ).
    mech = CorrelatedGaussianMechanism(0.8, 9, n_known=4)
    assert mech.exact_mu("add-remove") == pytest.approx(0.8, rel=1e-13)
    assert mech.exact_mu("replace") == pytest.approx(1.6, rel=1e-13)


@pytest.mark.parametrize("c", [None, 0.6, 2.5])
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_exact_mu_by_brute_force_over_corner_pairs(d, c):
    """Independent check: max over corner neighbour pairs of ‖Σ^{-1/2}(m − m')‖ with the full
    (d+1)×(d+1) covariance of Corollary 3.1, means taken from the mechanism on real datasets."""
    mu = 0.8
    mech = CorrelatedGaussianMechanism(mu, d, c=c)
    cov = paper_covariance(mu, d, c)
    rng = np.random.default_rng(SEED + d)
    base = rng.integers(0, 2, size=(3, d)).astype(float)
    rows = corner_rows(d)
    # add/remove: D vs D ∪ {x}
    add = max(mahalanobis(mech.output_mean(np.vstack([base, x])) - mech.output_mean(base), cov)
              for x in rows)
    assert add == pytest.approx(mech.exact_mu("add-remove"), rel=1e-12)
    # the all-ones and all-zeros rows both attain it (GT §5)
    for x in (np.ones(d), np.zeros(d)):
        shift = mech.output_mean(np.vstack([base, x])) - mech.output_mean(base)
        assert mahalanobis(shift, cov) == pytest.approx(add, rel=1e-12)
    # replacement: D ∪ {x} vs D ∪ {x'}
    rep = max(mahalanobis(mech.output_mean(np.vstack([base, x]))
                          - mech.output_mean(np.vstack([base, y])), cov)
              for x in rows for y in rows)
    assert rep == pytest.approx(mech.exact_mu("replace"), rel=1e-12)
    # fractional rows never do worse than the corners (the maximised norm is convex)
    for x, y in rng.uniform(size=(50, 2, d)):
        assert mahalanobis(mech.output_mean(np.vstack([base, x]))
                           - mech.output_mean(np.vstack([base, y])), cov) <= rep * (1 + 1e-12)
        assert mahalanobis(mech.output_mean(np.vstack([base, x]))
                           - mech.output_mean(base), cov) <= add * (1 + 1e-12)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_exact_mu_lemma36_by_brute_force(d):
    mu, n_known = 1.3, 3
    mech = CorrelatedGaussianMechanism(mu, d, n_known=n_known)
    cov = np.eye(d) * d / (4 * mu**2)  # Lebeda Lemma 3.6
    base = np.ones((2, d))
    rows = corner_rows(d)
    add = max(mahalanobis(mech.output_mean(np.vstack([base, x])) - mech.output_mean(base), cov)
              for x in rows)
    rep = max(mahalanobis(mech.output_mean(np.vstack([base, x]))
                          - mech.output_mean(np.vstack([base, y])), cov)
              for x in rows for y in rows)
    assert add == pytest.approx(mech.exact_mu("add-remove"), rel=1e-12)
    assert rep == pytest.approx(mech.exact_mu("replace"), rel=1e-12)


def test_exact_truth_follows_mu_and_replacement_claim_is_violated():
    alg1 = CorrelatedGaussianMechanism(1.0, 100)
    assert alg1.claim == GaussianDP(1.0, Relation.ADD_REMOVE)
    # GT §1: μ = 1 (σ/Δ = 1), δ = 1e-5 → ε = 4.3771780957.
    assert alg1.epsilon_for_delta(1e-5) == pytest.approx(4.3771780957, rel=1e-9)
    misused = CorrelatedGaussianMechanism(1.0, 100, relation="replace")
    assert misused.claim.relation is Relation.REPLACE
    eps_true = misused.epsilon_for_delta(1e-5)
    assert eps_true == pytest.approx(gdp_epsilon(1e-5, math.sqrt(40 / 11)), rel=1e-12)
    assert eps_true > misused.claim.epsilon_at(1e-5) + 1.0
    grid = np.linspace(0.0, 8.0, 17)
    assert np.all(misused.privacy_profile(grid) > misused.claim.delta_at(grid))
    np.testing.assert_allclose(alg1.privacy_profile(grid), alg1.claim.delta_at(grid), rtol=1e-12)


# -- sampling -------------------------------------------------------------------------------------
N_SAMPLES = 200_000


@pytest.mark.statistical
@pytest.mark.parametrize("c", [None, 2.0, 0.5])
def test_sampling_moments_covariance_and_marginals(c):
    mu, d = 0.7, 4
    mech = CorrelatedGaussianMechanism(mu, d, c=c)
    rng = np.random.default_rng(SEED)
    data = rng.uniform(size=(5, d))
    out = mech(data, N_SAMPLES, np.random.default_rng(SEED + 1))
    assert out.shape == (N_SAMPLES, d + 1) and out.dtype == np.float64
    truth = np.append(data.sum(axis=0), 5.0)
    np.testing.assert_allclose(mech.true_answer(data), truth, rtol=1e-15)
    cov = paper_covariance(mu, d, c)
    noise = out - truth
    # Means: the sample mean has standard error √(σ_ii/N); allow 5 standard errors.
    assert np.all(np.abs(noise.mean(axis=0)) <= 5 * np.sqrt(np.diag(cov) / N_SAMPLES))
    # Covariances: for Gaussian data Var(sample cov_ij) ≈ (σ_ii σ_jj + σ_ij²)/N (CLT);
    # allow 5 standard errors per entry (25 entries: false-alarm rate ≲ 25 × 6e-7).
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / N_SAMPLES)
    assert np.all(np.abs(np.cov(noise, rowvar=False) - cov) <= 5 * se)
    # Marginals: each count's error is N(0, a + b), ñ's is N(0, 4a); KS, reject only at p < 1e-3.
    for j in range(d + 1):
        assert stats.kstest(noise[:, j], "norm", args=(0.0, math.sqrt(cov[j, j]))).pvalue > 1e-3


@pytest.mark.statistical
def test_sampling_lemma36():
    mu, d, n_known = 1.1, 3, 7
    mech = CorrelatedGaussianMechanism(mu, d, n_known=n_known)
    data = np.random.default_rng(SEED).uniform(size=(4, d))  # |X| = 4 ≠ n_known: biased counts
    out = mech(data, N_SAMPLES, np.random.default_rng(SEED + 2))
    assert out.shape == (N_SAMPLES, d)
    mean = data.sum(axis=0) + (n_known - 4) / 2.0  # Lemma 3.6 release f − n/2·1 + n_known/2·1 + Z
    np.testing.assert_allclose(mech.output_mean(data), mean, rtol=1e-15)
    np.testing.assert_allclose(mech.true_answer(data), data.sum(axis=0), rtol=1e-15)
    sigma2 = d / (4 * mu**2)
    noise = out - mean
    assert np.all(np.abs(noise.mean(axis=0)) <= 5 * math.sqrt(sigma2 / N_SAMPLES))  # 5 SE
    cov = np.eye(d) * sigma2
    se = np.sqrt((sigma2**2 + cov**2) / N_SAMPLES)  # CLT, as above
    assert np.all(np.abs(np.cov(noise, rowvar=False) - cov) <= 5 * se)
    for j in range(d):
        assert stats.kstest(noise[:, j], "norm", args=(0.0, math.sqrt(sigma2))).pvalue > 1e-3


def test_sampling_is_deterministic_and_handles_empty_data():
    mech = CorrelatedGaussianMechanism(1.0, 3)
    first = mech(np.zeros((0, 3)), 10, np.random.default_rng(5))
    second = mech(np.zeros((0, 3)), 10, np.random.default_rng(5))
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(mech.true_answer(np.zeros((0, 3))), np.zeros(4))


# -- accuracy -------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [1e-6, 0.01, 0.05, 0.5])
@pytest.mark.parametrize("c", [None, 4.0])
def test_error_bound_single_query_closed_form(alpha, c):
    mech = CorrelatedGaussianMechanism(0.9, 50, c=c)
    sd = math.sqrt(mech.noise_variance()[0])
    # GT §4 / §5: one query, error N(0, a + b): a = σ Φ⁻¹(1 − α/2).
    assert mech.error_bound(alpha) == pytest.approx(sd * stats.norm.isf(alpha / 2), rel=1e-13)


def test_error_bound_lemma36_references():
    # GT §4: σ = 2, α = 0.05: 3.91993 (k = 1) and 5.59925 (k = 10, exact).  Lemma 3.6 with d = 16,
    # μ = 1 has σ² = d/(4μ²) = 4.  References are given to 5 decimals: half a unit, 5e-6.
    mech = CorrelatedGaussianMechanism(1.0, 16, n_known=0)
    assert mech.error_bound(0.05) == pytest.approx(3.91993, abs=5e-6)
    assert mech.error_bound(0.05, k=10) == pytest.approx(5.59925, abs=5e-6)


def coverage_by_quad(t: float, a: float, b: float, k: int) -> float:
    """GT §5 formula ∫ φ_a(e) [Φ((t−e)/√b) − Φ((−t−e)/√b)]^k de by scipy's adaptive quadrature
    (independent of the mechanism's Gauss–Legendre rule)."""
    def integrand(e):
        inside = stats.norm.cdf((t - e) / math.sqrt(b)) - stats.norm.cdf((-t - e) / math.sqrt(b))
        return stats.norm.pdf(e, scale=math.sqrt(a)) * inside**k
    lim = 12 * math.sqrt(a)
    value, _ = integrate.quad(integrand, -lim, lim, points=[-t, t], epsabs=1e-14, epsrel=1e-12,
                              limit=200)
    return value


@pytest.mark.parametrize("c, k", [(None, 2), (None, 7), (None, 25), (1.5, 25), (0.4, 13)])
def test_error_bound_solves_the_coverage_equation(c, k):
    mech = CorrelatedGaussianMechanism(1.0, 25, c=c)
    t = mech.error_bound(0.05, k=k)
    cover = coverage_by_quad(t, mech.eta_variance, mech.z_variance, k)
    assert cover == pytest.approx(0.95, abs=1e-10)  # numerical accuracy of both quadratures
    # bracketed by the one-query bound and the union bound (GT §4)
    sd = math.sqrt(mech.eta_variance + mech.z_variance)
    assert sd * stats.norm.isf(0.025) < t < sd * stats.norm.isf(0.025 / k)


@pytest.mark.statistical
@pytest.mark.parametrize("c", [None, 0.5])
def test_error_bound_max_over_all_queries_by_monte_carlo(c):
    mu, d, alpha, n = 1.0, 25, 0.05, 400_000
    mech = CorrelatedGaussianMechanism(mu, d, c=c)
    t = mech.error_bound(alpha, k=d)
    noise = mech(np.zeros((0, d)), n, np.random.default_rng(SEED + 3))[:, :d]
    largest = np.max(np.abs(noise), axis=1)
    # Binomial: an exceedance frequency with true rate p has standard error √(p(1−p)/n)
    # (≈ 3.4e-4 at p = 0.05, n = 4e5); allow 5 of them.
    def tol(p: float) -> float:
        return 5 * math.sqrt(p * (1 - p) / n)
    assert abs(np.mean(largest > t) - alpha) <= tol(alpha)
    # A second point of the tail: the bound that wrongly treats the d errors as independent
    # (Šidák), whose true exceedance the quadrature also gives.
    sd = math.sqrt(mech.noise_variance()[0])
    sidak = sd * stats.norm.isf(-math.expm1(math.log1p(-alpha) / d) / 2)
    p_sidak = max_error_tail(sidak, mech.eta_variance, mech.z_variance, [d])
    assert abs(np.mean(largest > sidak) - p_sidak) <= tol(p_sidak)
    if c == 0.5:  # strongly correlated noise (a/(a+b) = 0.8): the test separates the two bounds
        assert abs(p_sidak - alpha) > 3 * tol(alpha)


def test_error_bound_is_monotone_in_k_and_alpha():
    mech = CorrelatedGaussianMechanism(0.5, 40)
    bounds = [mech.error_bound(0.05, k) for k in (1, 2, 5, 20, 40)]
    assert all(x < y for x, y in zip(bounds, bounds[1:]))
    assert mech.error_bound(0.01, 40) > mech.error_bound(0.1, 40)


# -- presentation ---------------------------------------------------------------------------------
def test_names():
    assert CorrelatedGaussianMechanism(1, 100).name == "CorrelatedGaussian[alg1](μ=1, d=100)"
    assert (CorrelatedGaussianMechanism(0.5, 10, c=2).name
            == "CorrelatedGaussian[lemma3.5](μ=0.5, d=10, C=2)")
    assert (CorrelatedGaussianMechanism(1, 4, n_known=9, relation="replace").name
            == "CorrelatedGaussian[lemma3.6](μ=1, d=4, n_known=9, replace)")


# -- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, text", [
    (dict(mu=0.0, d=3), ValueError, "`mu`"),
    (dict(mu=-1.0, d=3), ValueError, "-1.0"),
    (dict(mu=math.nan, d=3), ValueError, "`mu`"),
    (dict(mu=math.inf, d=3), ValueError, "inf"),
    (dict(mu="1", d=3), TypeError, "`mu`"),
    (dict(mu=1.0, d=0), ValueError, "`d`"),
    (dict(mu=1.0, d=2.5), TypeError, "2.5"),
    (dict(mu=1.0, d=True), TypeError, "`d`"),
    (dict(mu=1.0, d=3, c=0.0), ValueError, "`c`"),
    (dict(mu=1.0, d=3, c=-2.0), ValueError, "-2.0"),
    (dict(mu=1.0, d=3, c=math.nan), ValueError, "`c`"),
    (dict(mu=1.0, d=3, n_known=-1), ValueError, "`n_known`"),
    (dict(mu=1.0, d=3, n_known=2.5), TypeError, "2.5"),
    (dict(mu=1.0, d=3, c=2.0, n_known=4), ValueError, "`c`"),
    (dict(mu=1.0, d=3, relation="add"), ValueError, "'add'"),
    (dict(mu=1.0, d=3, relation="replacement"), ValueError, "`relation`"),
    (dict(mu=1.0, d=3, relation=3), TypeError, "`relation`"),
])
def test_bad_parameters_are_rejected(kwargs, error, text):
    with pytest.raises(error, match=None) as info:
        CorrelatedGaussianMechanism(**kwargs)
    assert text in str(info.value)


@pytest.mark.parametrize("dataset, text", [
    (np.zeros((2, 4)), "shape"),
    (np.full((2, 3), 1.5), "[0, 1]"),
    (np.array([[0.1, math.nan, 0.2]]), "NaN"),
])
def test_bad_datasets_are_rejected(dataset, text):
    mech = CorrelatedGaussianMechanism(1.0, 3)
    with pytest.raises(ValueError) as info:
        mech(dataset, 5, np.random.default_rng(0))
    assert text in str(info.value)
    with pytest.raises(ValueError):
        mech.true_answer(dataset)


def test_bad_sampling_and_accuracy_arguments():
    mech = CorrelatedGaussianMechanism(1.0, 3)
    with pytest.raises(ValueError, match="`size`"):
        mech(np.zeros((1, 3)), 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="`rng`"):
        mech(np.zeros((1, 3)), 5, 42)
    for alpha in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="`alpha`"):
            mech.error_bound(alpha)
    with pytest.raises(ValueError, match="`k`.*got 4"):
        mech.error_bound(0.05, k=4)
    with pytest.raises(ValueError, match="`k`"):
        mech.error_bound(0.05, k=0)
    with pytest.raises(TypeError, match="`k`"):
        mech.error_bound(0.05, k=1.5)
    with pytest.raises(ValueError, match="`relation`"):
        mech.exact_mu("both")
