"""The faulty-mechanism zoo: each exact truth contradicts its claim, checked independently.

Sources: "GT" is docs/ground-truth.md; dp_accounting 0.6 is the independent oracle for
Gaussian and Laplace privacy; scipy quadrature for the truncated Laplace (no library has it); the
Mahalanobis norm of the output-mean shift under a covariance built here from Lebeda's a and b for
the correlated Gaussians.  Tolerances are stated where used.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dp_accounting import get_epsilon_gaussian
from dp_accounting.pld import privacy_loss_distribution
from scipy import integrate

from mechanisms import CorrelatedGaussianMechanism, GaussianDP
from mechanisms.zoo.faulty import (HalfSizeNoiseCorrelatedGaussian, PerQueryLaplaceMechanism, exact_truth,
                                   laplace_product_profile)
from scenarios.faulty_cases import FAULTY_MECHANISMS
from mechanisms.truncated_laplace import geng_bound

SEED = 20261121
CASES = sorted(FAULTY_MECHANISMS)


# -- the registry -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_registry_entry_is_ready_to_audit(name):
    case = FAULTY_MECHANISMS[name]
    assert case.name == name
    assert case.fault and "\n" not in case.fault  # a one-line description
    mechanism, scenario = case()
    assert mechanism.name
    assert scenario.relation == mechanism.claim.relation
    assert scenario.d == mechanism.d
    assert scenario.checked and len(scenario.pairs) >= 2


@pytest.mark.parametrize("name", CASES)
def test_exact_truth_contradicts_the_claim(name):
    mechanism, _ = FAULTY_MECHANISMS[name]()
    truth = exact_truth(mechanism)
    claim = mechanism.claim
    if isinstance(claim, GaussianDP):
        assert truth["exact_mu"] > claim.mu * 1.5
    else:
        assert truth["exact_epsilon"] > claim.epsilon * 1.1
    # Every claim also bounds δ at its own ε; the exact δ there exceeds it (by e/2 = 1.36 for the
    # sparse histogram, whose violation lives in a rare region: the smallest margin of the zoo).
    assert truth["exact_delta"] > 1.3 * float(claim.delta_at(claim.epsilon))


@pytest.mark.parametrize("name", CASES)
def test_sampling_shapes_and_determinism(name):
    mechanism, scenario = FAULTY_MECHANISMS[name]()
    base = scenario.pairs[0].base
    first = mechanism(base, 5, np.random.default_rng(SEED))
    again = mechanism(base, 5, np.random.default_rng(SEED))
    assert first.shape == (5, mechanism.output_dim) and first.dtype == np.float64
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, mechanism(base, 5, np.random.default_rng(SEED + 1)))


# -- Gaussian mistakes: dp_accounting as the oracle ---------------------------------------------
def test_gaussian_sensitivity_underestimated_matches_dp_accounting():
    mechanism, _ = FAULTY_MECHANISMS["gaussian-sensitivity"]()
    # GT §1: analytic σ for (1, 1e-5) and Δ = 1 is 3.7306316348; the true Δ of 4 counts is 2.
    assert mechanism.sigma == pytest.approx(3.7306316348, rel=1e-9)
    assert mechanism.exact_mu() == pytest.approx(2 / 3.7306316348, rel=1e-9)
    # dp_accounting's epsilon for noise multiplier σ/Δ_true.  Its brentq runs with xtol = 1e-12
    # (absolute, the default tol) on the exact log δ, ours with xtol 1e-14, rtol 1e-15: abs=1e-11
    # is 10 times the oracle's tolerance, rel=1e-9 covers rounding in either profile.
    oracle = get_epsilon_gaussian(mechanism.sigma / 2.0, 1e-5)
    assert mechanism.epsilon_for_delta(1e-5) == pytest.approx(oracle, rel=1e-9, abs=1e-11)
    assert oracle > 2.0 * mechanism.claim.epsilon


def test_classical_calibration_at_large_epsilon_matches_dp_accounting():
    mechanism, _ = FAULTY_MECHANISMS["gaussian-classical-large-eps"]()
    sigma = math.sqrt(2 * math.log(1.25 / 0.1)) / 7.0  # Dwork & Roth Thm A.1, Δ = 1
    assert mechanism.sigma == pytest.approx(sigma, rel=1e-12)
    exact = mechanism.epsilon_for_delta(0.1)
    assert exact == pytest.approx(8.02, abs=0.005)  # the reference value
    # Oracle brentq xtol = 1e-12 absolute (see above): abs=1e-11, rel=1e-9.
    assert exact == pytest.approx(get_epsilon_gaussian(sigma, 0.1), rel=1e-9, abs=1e-11)


def test_classical_case_silences_only_its_own_warning():
    # pytest turns warnings into errors: building the case must not leak CalibrationWarning.
    FAULTY_MECHANISMS["gaussian-classical-large-eps"]()


# -- correlated Gaussian mistakes: Mahalanobis norm over every corner row ------------------------
def lebeda_variances(mu: float, d: int, c: float | None) -> tuple[float, float]:
    """Lemma 3.5's a = (1 + d/C²)/(4μ²), b = (d + C²)/(4μ²), C² = √d for Algorithm 1."""
    c2 = math.sqrt(d) if c is None else c * c
    return (1 + d / c2) / (4 * mu**2), (d + c2) / (4 * mu**2)


def half_size_covariance(mu: float, d: int, c: float | None) -> np.ndarray:
    """Covariance of (f + η1 + z, n + η), built here from a and b."""
    a, b = lebeda_variances(mu, d, c)
    cov = np.full((d + 1, d + 1), a)
    cov[np.arange(d), np.arange(d)] += b
    return cov


def worst_mahalanobis(cov: np.ndarray, d: int, relation: str) -> float:
    """max over corner neighbour pairs of ‖Σ^{-1/2} Δ‖, Δ the shift of (counts, size).

    The squared norm is convex in the row, so its maximum over [0, 1]^d is at a corner."""
    corners = [np.array(bits, float) for bits in itertools.product((0.0, 1.0), repeat=d)]
    if relation == "add-remove":  # add row x: counts + x, size + 1
        shifts = [np.append(x, 1.0) for x in corners]
    else:  # replace x by x': counts + x' − x, same size
        shifts = [np.append(x - y, 0.0) for x in corners for y in corners]
    return max(math.sqrt(s @ np.linalg.solve(cov, s)) for s in shifts)


@pytest.mark.parametrize("mu, d, c", [(1.0, 4, None), (0.5, 3, None), (2.0, 6, 1.7), (1.0, 1, None)])
def test_half_size_noise_is_exactly_two_mu(mu, d, c):
    mechanism = HalfSizeNoiseCorrelatedGaussian(mu, d, c=c)
    cov = half_size_covariance(mu, d, c)
    np.testing.assert_allclose(mechanism.output_covariance(), cov, rtol=1e-13)
    brute = worst_mahalanobis(cov, d, "add-remove")
    assert brute == pytest.approx(2 * mu, rel=1e-10)  # derivation in the class docstring
    assert mechanism.exact_mu() == pytest.approx(brute, rel=1e-12)
    assert mechanism.exact_mu("replace") == pytest.approx(worst_mahalanobis(cov, d, "replace"), rel=1e-10)
    # Gaussian pair ⇒ ε(δ) from μ; dp_accounting with noise multiplier 1/μ (oracle brentq
    # xtol = 1e-12 absolute, see above: abs=1e-11, rel=1e-9).
    assert mechanism.epsilon_for_delta(1e-5) == pytest.approx(get_epsilon_gaussian(1 / (2 * mu), 1e-5),
                                                              rel=1e-9, abs=1e-11)


@pytest.mark.statistical
def test_half_size_noise_samples_have_the_stated_covariance():
    mechanism = HalfSizeNoiseCorrelatedGaussian(1.0, 4)
    data = np.eye(4)[[0, 1, 1, 3, 2]]  # n = 5 rows
    n = 400_000
    out = mechanism(data, n, np.random.default_rng(SEED))
    cov = mechanism.output_covariance()
    v = np.diag(cov)
    # Means: CLT, column j's sample mean has standard error √(v_j/n); allow 5 standard errors.
    mean = np.append(data.sum(axis=0), 5.0)
    assert np.all(np.abs(out.mean(axis=0) - mean) <= 5 * np.sqrt(v / n))
    # Covariances: for Gaussian data Var(sample cov_ij) ≈ (σ_ii σ_jj + σ_ij²)/n (CLT); allow 5
    # standard errors per entry (25 entries + 5 means: false-alarm rate ≲ 30 × 6e-7).
    se = np.sqrt((np.outer(v, v) + cov**2) / n)
    assert np.all(np.abs(np.cov(out, rowvar=False) - cov) <= 5 * se)
    # The counts are Algorithm 1's counts, draw for draw (only the size column differs).
    reference = CorrelatedGaussianMechanism(1.0, 4)(data, 10, np.random.default_rng(SEED))
    mine = mechanism(data, 10, np.random.default_rng(SEED))
    np.testing.assert_array_equal(mine[:, :4], reference[:, :4])
    np.testing.assert_allclose(mine[:, 4] - 5.0, (reference[:, 4] - 5.0) / 2, rtol=1e-12, atol=1e-12)


def test_half_size_noise_rejects_public_size():
    with pytest.raises(ValueError, match="n_known"):
        HalfSizeNoiseCorrelatedGaussian(1.0, 4, n_known=10)


def test_algorithm1_under_replacement_matches_ground_truth():
    mechanism, scenario = FAULTY_MECHANISMS["correlated-replace"]()
    d = mechanism.d
    a, b = lebeda_variances(1.0, d, None)
    cov = np.full((d + 1, d + 1), a)  # Corollary 3.1: a·11ᵀ + b·I, 2a with ñ, 4a for ñ
    cov[np.arange(d), np.arange(d)] += b
    cov[:d, d] = cov[d, :d] = 2 * a
    cov[d, d] = 4 * a
    brute = worst_mahalanobis(cov, d, "replace")
    assert mechanism.exact_mu() == pytest.approx(brute, rel=1e-10)
    # GT §5: μ_rep = 2μ√(√d/(√d + 1)); 1.907μ at d = 100.
    assert mechanism.exact_mu() == pytest.approx(2 * math.sqrt(2 / 3), rel=1e-12)
    assert CorrelatedGaussianMechanism(1.0, 100).exact_mu("replace") == pytest.approx(1.907, abs=5e-4)


# -- truncated Laplace with half the bound: quadrature -------------------------------------------
def quadrature_profile(epsilon: float, lam: float, tau: float) -> float:
    """∫ (p(y) − e^ε p(y − 1))₊ dy with p the truncated Laplace density on [−τ, τ]."""
    norm = 2 * lam * (1 - math.exp(-tau / lam))

    def density(y: float) -> float:
        return math.exp(-abs(y) / lam) / norm if abs(y) <= tau else 0.0

    def excess(y: float) -> float:
        return max(0.0, density(y) - math.exp(epsilon) * density(y - 1.0))

    knots = sorted({-tau, 0.0, 0.5, 1.0 - tau, 1.0, tau})
    return sum(integrate.quad(excess, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
               for lo, hi in zip(knots, knots[1:]))


def test_truncated_laplace_half_bound_against_quadrature():
    mechanism, _ = FAULTY_MECHANISMS["truncated-laplace-half-bound"]()
    assert mechanism.bound == pytest.approx(geng_bound(1.0, 1e-5) / 2, rel=1e-15)
    assert mechanism.bound == pytest.approx(11.3611 / 2, abs=1e-4)  # GT §2: τ = 11.3611
    for eps in (0.0, 0.5, 0.99, 1.0, 3.0):
        # quad's absolute error is ≤ 1e-12 on these smooth pieces; allow 1e-10.
        exact = quadrature_profile(eps, mechanism.scale, mechanism.bound)
        assert float(mechanism.privacy_profile(eps)) == pytest.approx(exact, rel=1e-9, abs=1e-10)
    r = math.exp(-mechanism.bound)
    delta_inf = r * (math.e - 1) / (2 * (1 - r))  # GT §2: mass impossible under the neighbour
    assert mechanism.delta_infinity == pytest.approx(delta_inf, rel=1e-12)
    assert delta_inf > 100 * mechanism.claim.delta
    assert mechanism.epsilon_for_delta(1e-5) == math.inf


# -- Laplace with the per-query sensitivity: dp_accounting's PLD ---------------------------------
@pytest.mark.parametrize("eps0, k", [(0.5, 4), (1.0, 2), (0.3, 6), (1.0, 1)])
def test_laplace_product_profile_matches_dp_accounting(eps0, k):
    pld = privacy_loss_distribution.from_laplace_mechanism(1 / eps0, value_discretization_interval=1e-4)
    pld = pld.self_compose(k) if k > 1 else pld
    for eps in (0.0, 0.4, 1.0, 0.95 * k * eps0):
        # The PLD is a pessimistic discretization: above the truth by at most ~k·1e-4 in ε, so
        # δ agrees to well under 1e-3 relative (and never falls below the truth by > 1e-9).
        oracle = pld.get_delta_for_epsilon(eps)
        exact = float(laplace_product_profile(eps, eps0, k))
        assert exact <= oracle + 1e-9
        assert exact == pytest.approx(oracle, rel=1e-3, abs=1e-9)


def test_laplace_product_profile_reduces_to_the_closed_form():
    eps = np.linspace(0.0, 1.2, 13)
    closed = np.maximum(0.0, 1 - np.exp((eps - 1.0) / 2))  # GT §2, ε₀ = 1
    np.testing.assert_allclose(laplace_product_profile(eps, 1.0, 1), closed, rtol=1e-12, atol=1e-15)


def test_laplace_per_query_true_epsilon_is_k_epsilon():
    mechanism, scenario = FAULTY_MECHANISMS["laplace-per-query"]()
    k, eps = mechanism.d, mechanism.epsilon
    assert mechanism.scale == pytest.approx(1 / eps)
    assert mechanism.epsilon_for_delta(0.0) == pytest.approx(k * eps)
    assert float(mechanism.privacy_profile(k * eps)) == 0.0
    assert float(mechanism.privacy_profile(k * eps * (1 - 1e-6))) > 0.0
    # At a tiny δ the exact ε approaches the pure kε from below.  Lower bound: the worst pair's
    # privacy loss equals kε exactly with probability 2^{−k} (every coordinate's Laplace draw on the
    # far side of the shift), so δ(ε') ≥ 2^{−k}(1 − e^{ε' − kε}) and hence
    # ε(δ) ≥ kε + ln(1 − 2^k δ) (= 2 − 1.6e-7 here; the rest of the loss distribution adds only
    # O((kε − ε')²)).  1e-12 covers the root finder (xtol 1e-13, rtol 1e-14).
    atom_bound = k * eps + math.log1p(-(2.0**k) * 1e-8)
    assert atom_bound - 1e-12 <= mechanism.epsilon_for_delta(1e-8) < k * eps
    assert mechanism.claim.epsilon == eps  # the wrong claim


def test_per_query_laplace_validation():
    with pytest.raises(ValueError, match="epsilon"):
        PerQueryLaplaceMechanism(-1.0, d=3)
    with pytest.raises(NotImplementedError, match="d <= 10"):
        PerQueryLaplaceMechanism(0.1, d=11).privacy_profile(0.5)
    with pytest.raises(NotImplementedError):
        PerQueryLaplaceMechanism(0.1, d=3).tradeoff(0.1)


# --- the truncated Gaussian of the far-tail benchmark ---------------------------------------------

@pytest.mark.parametrize("delta", [1e-3, 1e-4])
def test_truncated_gaussian_one_sided_mass_by_quadrature(delta):
    # m = P(τ − 1 < Y ≤ τ) for Y ~ N(0, σ²) truncated to [−τ, τ]: the root-found τ gives m = 1.7δ,
    # and the density integrated numerically (a second route) gives the same m.
    from mechanisms.zoo.faulty_rare import TruncatedGaussianSum

    mechanism = TruncatedGaussianSum(1.0, delta)
    sigma, tau = mechanism.sigma, mechanism.bound
    assert mechanism.one_sided_mass == pytest.approx(1.7 * delta, rel=1e-9)
    density = lambda y: math.exp(-0.5 * (y / sigma) ** 2)  # noqa: E731
    inside, _ = integrate.quad(density, -tau, tau, epsabs=0, epsrel=1e-12)
    edge, _ = integrate.quad(density, tau - 1.0, tau, epsabs=0, epsrel=1e-12)
    assert edge / inside == pytest.approx(1.7 * delta, rel=1e-7)


@pytest.mark.statistical
def test_truncated_gaussian_draws_stay_in_the_bound_and_fill_the_edge_at_rate_m():
    from mechanisms.zoo.faulty_rare import TruncatedGaussianSum

    mechanism = TruncatedGaussianSum(1.0, 1e-3)
    n = 2_000_000
    outputs = mechanism(np.zeros((3, 1)), n, np.random.default_rng(20261128))
    assert np.all(np.abs(outputs) <= mechanism.bound)
    # The edge count is binomial(n, m) with n·m = 3,400: 5 standard deviations are ±292.
    edge = int(np.sum(outputs > mechanism.bound - 1.0))
    expected = n * mechanism.one_sided_mass
    assert abs(edge - expected) < 5 * math.sqrt(expected)
