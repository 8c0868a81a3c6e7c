"""The ε, δ and μ lower-bound formulas of docs/ground-truth.md §3."""

import math

import numpy as np
import pytest
from scipy import stats

from audit.bounds import below_curve, delta_lower_bound, epsilon_lower_bound, mu_lower_bound
from mechanisms.claims import ApproxDP, GaussianDP
from mechanisms.gdp import gdp_tradeoff


def test_epsilon_formula_both_terms():
    # ε_lb = max(0, ln((1-δ-β)/α), ln((1-δ-α)/β))  (docs/ground-truth.md §3)
    assert epsilon_lower_bound(0.01, 0.5, 0.0) == pytest.approx(math.log(0.5 / 0.01))
    assert epsilon_lower_bound(0.5, 0.01, 0.0) == pytest.approx(math.log(0.5 / 0.01))
    assert epsilon_lower_bound(0.01, 0.5, 1e-3) == pytest.approx(math.log((1 - 1e-3 - 0.5) / 0.01))
    assert epsilon_lower_bound(0.6, 0.6, 0.0) == 0.0  # no positive numerator: no evidence


def test_impossible_event_gives_infinite_epsilon():
    # α_hi = 0 (an event never seen under the other side, bounded to 0) → ε = ∞ for δ < 1 − β.
    assert epsilon_lower_bound(0.0, 0.9, 0.05) == math.inf
    # The other term: (1 − δ − α)/β = 0.8/0.9 < 1, so no evidence at δ = 0.2 ... but the first term
    # (1 − δ − β)/α = (−0.1)/0 has a negative numerator: the bound is 0.
    assert epsilon_lower_bound(0.0, 0.9, 0.2) == 0.0


def test_delta_formula():
    # δ_lb = max(0, 1 − β − e^ε α, 1 − α − e^ε β)
    assert delta_lower_bound(0.01, 0.5, 1.0) == pytest.approx(1 - 0.5 - math.e * 0.01)
    assert delta_lower_bound(0.5, 0.5, 1.0) == 0.0
    assert delta_lower_bound(0.0, 0.99, 50.0) == pytest.approx(0.01)


def test_mu_formula_recovers_gdp_points():
    # Points on G_μ give back μ exactly: Φ⁻¹(1 − α) − Φ⁻¹(G_μ(α)) = μ (Nasr et al. 2023).
    alpha = np.array([1e-6, 0.01, 0.3, 0.5])
    assert mu_lower_bound(alpha, gdp_tradeoff(alpha, 1.3)) == pytest.approx(1.3, rel=1e-9)
    assert mu_lower_bound(0.01, 0.5) == pytest.approx(stats.norm.isf(0.01))
    assert mu_lower_bound(0.6, 0.6) == 0.0


def test_equivalence_of_verdict_and_epsilon_bound():
    # For an (ε, δ) claim, a point is below f_{ε,δ} exactly when its ε bound at δ exceeds ε.
    claim = ApproxDP(1.0, 1e-5)
    rng = np.random.default_rng(7)
    alpha = rng.uniform(0, 0.5, 2000)
    beta = rng.uniform(0, 1, 2000)
    below = below_curve(alpha, beta, claim.tradeoff, tolerance=0.0)
    eps = epsilon_lower_bound(alpha, beta, claim.delta)
    margin = np.abs(eps - claim.epsilon) > 1e-9
    assert np.array_equal(below[margin], (eps > claim.epsilon)[margin])


def test_below_gdp_curve():
    claim = GaussianDP(1.0)
    assert below_curve(0.05, float(gdp_tradeoff(0.05, 1.5)), claim.tradeoff)
    assert not below_curve(0.05, float(gdp_tradeoff(0.05, 0.9)), claim.tradeoff)
