"""Lower bounds on ε, δ and μ from one certified test (docs/ground-truth.md §3).

A test that rejects "the output came from P" on an event E has type-I error α = P(E) and type-II
error β = 1 − Q(E).  Given one-sided upper confidence bounds α_hi ≥ α and β_hi ≥ β, every claim is
tested through the point (α_hi, β_hi): the true trade-off curve T satisfies T(α_hi) ≤ β_hi because T is
non-increasing.  Hence, for (ε, δ)-DP (Kairouz et al. 2015; Jagielski et al. 2020):

    α + e^ε β ≥ 1 − δ  and  e^ε α + β ≥ 1 − δ
    ⇒ ε ≥ max(ln((1 − δ − β_hi)/α_hi), ln((1 − δ − α_hi)/β_hi)),
    ⇒ δ ≥ max(1 − β_hi − e^ε α_hi, 1 − α_hi − e^ε β_hi),

and for μ-GDP (Nasr et al. 2023) μ ≥ Φ⁻¹(1 − α_hi) − Φ⁻¹(β_hi).  All three are clamped at 0 (the
quantities are non-negative) and are valid whenever α_hi and β_hi are.  A zero upper bound
(an "impossible" event, e.g. the truncated Laplace tail) gives ε = ∞ for any δ below 1 − β_hi.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["epsilon_lower_bound", "delta_lower_bound", "mu_lower_bound", "below_curve"]


def _log_ratio(numerator, denominator):
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(numerator) - np.log(denominator)
    return np.where(numerator > 0, value, 0.0)


def epsilon_lower_bound(alpha_hi, beta_hi, delta) -> np.ndarray:
    """max(0, ln((1 − δ − β_hi)/α_hi), ln((1 − δ − α_hi)/β_hi)), broadcasting over all inputs."""
    alpha_hi = np.asarray(alpha_hi, dtype=np.float64)
    beta_hi = np.asarray(beta_hi, dtype=np.float64)
    first = _log_ratio(1.0 - delta - beta_hi, alpha_hi)
    second = _log_ratio(1.0 - delta - alpha_hi, beta_hi)
    return np.maximum(0.0, np.maximum(first, second))


def delta_lower_bound(alpha_hi, beta_hi, epsilon) -> np.ndarray:
    """max(0, 1 − β_hi − e^ε α_hi, 1 − α_hi − e^ε β_hi)."""
    alpha_hi = np.asarray(alpha_hi, dtype=np.float64)
    beta_hi = np.asarray(beta_hi, dtype=np.float64)
    scale = np.exp(np.minimum(epsilon, 700.0))
    with np.errstate(invalid="ignore", over="ignore"):
        first = 1.0 - beta_hi - np.where(alpha_hi > 0, scale * alpha_hi, 0.0)
        second = 1.0 - alpha_hi - np.where(beta_hi > 0, scale * beta_hi, 0.0)
    return np.maximum(0.0, np.maximum(first, second))


def mu_lower_bound(alpha_hi, beta_hi) -> np.ndarray:
    """max(0, Φ⁻¹(1 − α_hi) − Φ⁻¹(β_hi)); symmetric in (α_hi, β_hi)."""
    alpha_hi = np.asarray(alpha_hi, dtype=np.float64)
    beta_hi = np.asarray(beta_hi, dtype=np.float64)
    value = -special.ndtri(alpha_hi) - special.ndtri(beta_hi)
    return np.maximum(0.0, np.nan_to_num(value, nan=0.0, posinf=np.inf))


def below_curve(alpha_hi, beta_hi, tradeoff, *, tolerance: float = 1e-12) -> np.ndarray:
    """Whether the certified point (α_hi, β_hi) lies strictly below the curve ``tradeoff``.

    Claimed curves are symmetric (f = f⁻¹), so checking (α_hi, β_hi) covers both orders of a pair.
    ``tolerance`` absorbs floating-point rounding only; it never makes a verdict more optimistic
    than the certified numbers (it can only prevent a VIOLATED).
    """
    return np.asarray(beta_hi) < np.asarray(tradeoff(alpha_hi)) - tolerance
