"""Poisson-subsampled Gaussian: dp-accounting's truth checked by numerical integration (k = 1)."""

import math

import numpy as np
import pytest
from scipy import integrate

dp_accounting = pytest.importorskip("dp_accounting")

from mechanisms.claims import ProfileClaim  # noqa: E402
from mechanisms.subsampled_gaussian import PoissonSubsampledGaussian  # noqa: E402


def _integrated_profile(sigma, q, relation, epsilon):
    """max over both orders of ∫ (p − e^ε q)₊ dy for the dominating pair, by adaptive quadrature."""
    norm = 1.0 / (sigma * math.sqrt(2 * math.pi))

    def pdf(y, mean):
        return norm * math.exp(-((y - mean) ** 2) / (2 * sigma * sigma))

    upper = lambda y: (1 - q) * pdf(y, 0) + q * pdf(y, 1)  # noqa: E731
    if relation == "add-remove":
        lower = lambda y: pdf(y, 0)  # noqa: E731
    else:
        lower = lambda y: (1 - q) * pdf(y, 0) + q * pdf(y, -1)  # noqa: E731
    span = 40 * sigma + 2
    values = []
    for a, b in ((upper, lower), (lower, upper)):
        values.append(integrate.quad(lambda y: max(a(y) - math.exp(epsilon) * b(y), 0.0), -span, span,
                                     points=[-1, 0, 1], limit=500, epsabs=1e-15, epsrel=1e-12)[0])
    return max(values)


@pytest.mark.parametrize("relation, sigma, q", [("add-remove", 1.0, 0.3), ("replace", 1.0, 0.3),
                                                ("replace", 0.7, 0.05)])
def test_single_step_truth_against_numerical_integration(relation, sigma, q):
    # The PLD estimate is pessimistic: never below the integral (up to quadrature error 1e-12),
    # and with connect-the-dots discretisation 1e-4 it is within 1e-6 relative (measured ~1e-12).
    mechanism = PoissonSubsampledGaussian(sigma, q, relation=relation, epsilon=1.0, delta=0.5)
    for epsilon in (0.0, 0.5, 2.0):
        exact = _integrated_profile(sigma, q, relation, epsilon)
        value = float(mechanism.privacy_profile(epsilon))
        assert value >= exact - 1e-12
        assert value <= exact * (1 + 1e-6) + 1e-12


def test_composition_truth_matches_the_pld_accountant_and_rdp_bounds_it():
    mechanism = PoissonSubsampledGaussian(1.0, 0.1, steps=20, epsilon=1.0, delta=0.5)
    accountant = dp_accounting.pld.PLDAccountant()
    accountant.compose(mechanism.dp_event())
    # Two routes through dp-accounting (self_compose of one PLD vs the accountant's composition):
    # same discretisation, so agreement to 1e-3 in ε.
    assert mechanism.epsilon_for_delta(1e-5) == pytest.approx(accountant.get_epsilon(1e-5), abs=1e-3)
    rdp = dp_accounting.rdp.RdpAccountant()
    rdp.compose(mechanism.dp_event())
    assert rdp.get_epsilon(1e-5) >= mechanism.epsilon_for_delta(1e-5)  # RDP is an upper bound


def test_default_claim_is_the_accountants_profile():
    mechanism = PoissonSubsampledGaussian(1.0, 0.3)
    assert isinstance(mechanism.claim, ProfileClaim)
    assert mechanism.claim.epsilon == pytest.approx(mechanism.epsilon_for_delta(1e-5), abs=1e-6)


@pytest.mark.statistical
def test_sampler_moments():
    # 4 rows of 1 (contribution +1) and 2 rows of 0 (−1): mean (4 − 2)q, variance σ² + 6q(1 − q).
    # 4e5 draws per step: the means lie within 5 standard errors (false failure < 1e-5).
    sigma, q, size = 1.5, 0.2, 400_000
    mechanism = PoissonSubsampledGaussian(sigma, q, steps=3, epsilon=1.0, delta=1e-5)
    out = mechanism(np.array([[1.0]] * 4 + [[0.0]] * 2), size, np.random.default_rng(31))
    variance = sigma**2 + 6 * q * (1 - q)
    assert out.shape == (size, 3)
    assert np.all(np.abs(out.mean(axis=0) - 2 * q) <= 5 * math.sqrt(variance / size))
    # the sample variance's standard error is ≈ √(2/size)·variance (near-Gaussian output)
    assert np.all(np.abs(out.var(axis=0) - variance) <= 5 * math.sqrt(2.0 / size) * variance)


def test_validation():
    with pytest.raises(ValueError, match="`sampling_probability`"):
        PoissonSubsampledGaussian(1.0, 1.5)
    with pytest.raises(ValueError, match="both `epsilon` and `delta`"):
        PoissonSubsampledGaussian(1.0, 0.5, epsilon=1.0)
    with pytest.raises(NotImplementedError):
        PoissonSubsampledGaussian(1.0, 0.5, epsilon=1.0, delta=1e-5).privacy_profile(1.0, relation="replace")
