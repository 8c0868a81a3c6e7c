"""Exact privacy of Gaussian-shaped mechanisms: μ-GDP trade-off, privacy profile and ε(δ).

A pair of neighbours whose outputs are N(m, σ²I) and N(m', σ²I) has trade-off curve G_μ with
μ = ‖m − m'‖₂/σ (Dong, Roth & Su 2022, "Gaussian differential privacy").  Its privacy
profile is Balle & Wang (2018, Theorem 8):

    δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),   ε ≥ 0,

evaluated in log space for stability (docs/ground-truth.md §1).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

__all__ = ["gdp_tradeoff", "gdp_delta", "gdp_epsilon"]


def gdp_tradeoff(alpha, mu: float) -> np.ndarray:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), the type-II error of the best level-α test."""
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    return special.ndtr(special.ndtri(1.0 - alpha) - mu)


def gdp_delta(epsilon, mu: float) -> np.ndarray:
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) for ε ≥ 0 (vectorized).

    Computed as exp(logΦ(a) + log1p(−exp(ε + logΦ(b) − logΦ(a)))) so that tiny δ
    (down to ~1e-300) keep full relative precision.
    """
    epsilon = np.asarray(epsilon, dtype=np.float64)
    if not np.all(epsilon >= 0):  # also rejects NaN
        raise ValueError(f"`epsilon` must be >= 0, got {float(epsilon[~(epsilon >= 0)].ravel()[0])!r}")
    if mu == 0:
        return np.zeros_like(epsilon)
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    log_a = special.log_ndtr(a)
    log_ratio = epsilon + special.log_ndtr(b) - log_a  # always < 0 for μ > 0
    with np.errstate(divide="ignore"):
        return np.exp(log_a + np.log1p(-np.exp(np.minimum(log_ratio, 0.0))))


def gdp_epsilon(delta: float, mu: float) -> float:
    """The smallest ε ≥ 0 with δ_μ(ε) ≤ δ (δ_μ is strictly decreasing); 0 if δ ≥ δ_μ(0).

    Root of log δ_μ(ε) = log δ by Brent's method on [0, μ²/2 + μ√(2 ln(1/δ))]
    (docs/ground-truth.md §1).
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"`delta` must be in (0, 1), got {delta!r}")
    if mu == 0 or delta >= float(gdp_delta(0.0, mu)):
        return 0.0
    target = math.log(delta)
    upper = mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta))

    def excess(eps: float) -> float:
        value = float(gdp_delta(eps, mu))
        return (math.log(value) if value > 0 else -np.inf) - target

    while excess(upper) > 0:  # the bracket is provably enough; guard against rounding
        upper *= 2.0
    return optimize.brentq(excess, 0.0, upper, xtol=1e-14, rtol=1e-15, maxiter=500)
