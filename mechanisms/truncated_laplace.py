"""The truncated Laplace mechanism for a scalar sum, with its exact privacy and accuracy.

M(X) = Σ_rows X + Y for rows in [0, 1], where Y has density p(y) = e^{−|y|/λ}/(2λ(1 − r)) on
[−τ, τ], r = e^{−τ/λ} (Geng, Ding, Guo & Kumar, AISTATS 2020; Wu's lecture notes §1.2, eq. (14)).
Geng et al.'s calibration for (ε, δ) and sensitivity Δ is

    λ = Δ/ε,   τ = (Δ/ε) ln(1 + (e^ε − 1)/(2δ)),   i.e.  r = 2δ/(e^ε − 1 + 2δ).

All formulas below are docs/ground-truth.md §2.  CDF: F(t) = (e^{t/λ} − r)/(2(1 − r)) on [−τ, 0] and
1 − (e^{−t/λ} − r)/(2(1 − r)) on [0, τ]; quantile F⁻¹(u) = λ ln(r + 2u(1 − r)) for u ≤ ½ and
−λ ln(r + 2(1 − u)(1 − r)) for u > ½.

Exact privacy of the worst pair (outputs Y and Y + 1: the true sensitivity of a sum of rows in
[0, 1] is 1 under both relations), with ε₀ = 1/λ:

- the likelihood ratio p(y)/p(y − 1) is non-increasing (p is log-concave), so the hockey-stick
  divergence is attained on a half-line: δ(ε') = sup_t [F(t) − e^{ε'} F(t − 1)];
- for 1 ≤ τ this is δ(ε') = [1 − e^{(m − ε₀)/2} + r(e^m − 1)/2]/(1 − r), m = min(ε', ε₀), flat at
  δ_∞ = r(e^{ε₀} − 1)/(2(1 − r)) for ε' ≥ ε₀: the mass of outputs impossible under the neighbour;
- the trade-off curve is T(α) = F(F⁻¹(1 − α) − 1); it starts at T(0) = 1 − δ_∞ and is 0 for
  α ≥ 1 − δ_∞.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from scipy import optimize

from .base import ReferenceMechanism
from .claims import ApproxDP, as_relation
from .laplace import _check_delta_closed, _check_epsilons
from .parameters import FrozenParameters
from .validation import check_dataset, check_finite_positive, check_int, check_open_unit

__all__ = ["TruncatedLaplaceMechanism", "geng_bound"]

#: The true l1 sensitivity of a sum of rows in [0, 1], under both relations.
TRUE_SHIFT = 1.0

#: δ within this relative distance below δ_∞ counts as δ_∞ (rounding of the calibration,
#: which makes δ_∞ equal the claimed δ exactly in exact arithmetic).
_ROUNDING = 1e-12


def geng_bound(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """τ = (Δ/ε) ln(1 + (e^ε − 1)/(2δ)) (Geng et al. 2020), overflow-free for large ε."""
    epsilon = check_finite_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    sensitivity = check_finite_positive("sensitivity", sensitivity)
    if epsilon < 700.0:
        log_term = math.log1p(math.expm1(epsilon) / (2.0 * delta))
    else:  # ln(e^ε − 1 + 2δ) − ln(2δ) with e^ε dominant
        log_term = epsilon + math.log1p((2.0 * delta - 1.0) * math.exp(-epsilon)) - math.log(2.0 * delta)
    return sensitivity / epsilon * log_term


class TruncatedLaplaceMechanism(FrozenParameters, ReferenceMechanism):
    """A scalar sum of rows in [0, 1] plus truncated Laplace noise (Geng et al. 2020).

    Parameters
    ----------
    epsilon : float
        Claimed ε > 0.
    delta : float
        Claimed δ in (0, 1).
    sensitivity : float, default 1.0
        The sensitivity Δ used for calibration (the true one is 1).
    bound : float, optional
        Override the truncation bound τ (default: Geng's τ for (ε, δ, Δ)).  The claim stays
        (ε, δ); with τ below Geng's bound the exact truth shows the violation.
    relation : {"add-remove", "replace"}, default "add-remove"

    Attributes
    ----------
    scale : float
        λ = Δ/ε.
    bound : float
        τ.
    claim : ApproxDP
        ApproxDP(ε, δ, relation).

    References
    ----------
    Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
    approximate differential privacy", AISTATS 2020; Wu, lecture notes on approximate DP §1.2.
    """

    d = 1
    epsilon: float
    delta: float
    sensitivity: float
    scale: float
    bound: float

    def __init__(self, epsilon: float, delta: float, sensitivity: float = 1.0,
                 bound: Optional[float] = None, relation: Any = "add-remove") -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.delta = check_open_unit("delta", delta)
        self.sensitivity = check_finite_positive("sensitivity", sensitivity)
        self.relation = as_relation(relation)
        self.scale = self.sensitivity / self.epsilon
        if bound is None:
            self.bound = geng_bound(self.epsilon, self.delta, self.sensitivity)
        else:
            self.bound = check_finite_positive("bound", bound)
        self._r = math.exp(-self.bound / self.scale)
        self.claim = ApproxDP(self.epsilon, self.delta, self.relation)
        self._freeze(epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity,
                     bound=None if bound is None else self.bound, relation=self.relation.value)

    # -- the noise distribution -------------------------------------------------------------------
    def cdf(self, t: Any) -> np.ndarray:
        """F(t) of the noise (0 below −τ, 1 above τ), vectorized."""
        lam, r, tau = self.scale, self._r, self.bound
        t = np.clip(np.asarray(t, dtype=np.float64), -tau, tau)
        left = (np.exp(np.minimum(t, 0.0) / lam) - r) / (2.0 * (1.0 - r))
        right = 1.0 - (np.exp(-np.maximum(t, 0.0) / lam) - r) / (2.0 * (1.0 - r))
        return np.clip(np.where(t <= 0.0, left, right), 0.0, 1.0)

    def quantile(self, u: Any) -> np.ndarray:
        """F⁻¹(u) for u in [0, 1], vectorized."""
        lam, r = self.scale, self._r
        u = np.asarray(u, dtype=np.float64)
        lower = lam * np.log(r + 2.0 * np.minimum(u, 0.5) * (1.0 - r))
        upper = -lam * np.log(r + 2.0 * np.minimum(1.0 - u, 0.5) * (1.0 - r))
        return np.where(u <= 0.5, lower, upper)

    # -- sampling ---------------------------------------------------------------------------------
    def true_answer(self, dataset: Any) -> np.ndarray:
        """The sum, shape ``(1,)``."""
        return check_dataset(dataset, 1).sum(axis=0)

    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        # Exact inverse-CDF sampling, one vectorized call, no rejection loop.
        return data.sum(axis=0) + self.quantile(rng.random((size, 1)))

    # -- exact privacy ----------------------------------------------------------------------------
    @property
    def exact_epsilon0(self) -> float:
        """ε₀ = 1/λ: the privacy loss of an output possible under both neighbours is ≤ ε₀."""
        return TRUE_SHIFT / self.scale

    @property
    def delta_infinity(self) -> float:
        """δ_∞ = P[Y > τ − 1] = F(1 − τ): the profile's value for every ε' ≥ ε₀."""
        r, eps0 = self._r, self.exact_epsilon0
        if self.bound >= TRUE_SHIFT:
            return r * math.expm1(eps0) / (2.0 * (1.0 - r))  # no cancellation
        return float(self.cdf(TRUE_SHIFT - self.bound))

    @property
    def _epsilon_top(self) -> float:
        """The ε' from which the profile is flat at δ_∞: min(ε₀, (2τ − 1)/λ)."""
        return min(self.exact_epsilon0, (2.0 * self.bound - TRUE_SHIFT) / self.scale)

    def _closed_form(self, epsilon: np.ndarray) -> np.ndarray:
        """[1 − e^{(m−ε₀)/2} + r(e^m − 1)/2]/(1 − r), m = min(ε', ε₀), for τ ≥ 1."""
        r, eps0 = self._r, self.exact_epsilon0
        m = np.minimum(epsilon, eps0)
        return (-np.expm1((m - eps0) / 2.0) + r * np.expm1(m) / 2.0) / (1.0 - r)

    def _halfline_sup(self, epsilon: np.ndarray) -> np.ndarray:
        """sup_t [F(t) − e^{ε'} F(t − 1)] at its maximiser, for any τ.

        The privacy loss L(y) = ln p(y)/p(y − 1) is +∞ on [−τ, 1 − τ), (1 − 2y)/λ on the
        overlap (clipped to [−ε₀, ε₀]) and −∞ beyond τ; the sup is attained at the end of the
        half-line {L > ε'}: t̂ = max(1 − τ, min(τ, (1 − λε')/2)) for ε' < ε₀, else t̂ = 1 − τ.
        """
        lam, tau = self.scale, self.bound
        inner = np.where(epsilon < self.exact_epsilon0, (TRUE_SHIFT - lam * epsilon) / 2.0, -np.inf)
        t_hat = np.maximum(TRUE_SHIFT - tau, np.minimum(tau, inner))
        shifted = self.cdf(t_hat - TRUE_SHIFT)
        with np.errstate(divide="ignore"):
            penalty = np.exp(epsilon + np.log(shifted))  # e^{ε'} F(t̂ − 1), 0 when F = 0
        return np.maximum(0.0, self.cdf(t_hat) - penalty)

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """Exact δ(ε') of the worst pair (symmetric in the two neighbours), vectorized in ε' ≥ 0.

        Closed form for τ ≥ 1; the half-line supremum (:meth:`_halfline_sup`) for τ < 1, where
        part of each output distribution is impossible under the other (δ = 1 for τ ≤ ½).
        """
        self._relation(relation)
        epsilon = _check_epsilons(epsilon)
        if self.bound >= TRUE_SHIFT:
            return self._closed_form(epsilon)
        return self._halfline_sup(epsilon)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """The smallest ε' with δ(ε') ≤ δ: ``math.inf`` when δ < δ_∞, 0 when δ ≥ δ(0).

        Otherwise the root of log δ(ε') = log δ on [0, min(ε₀, (2τ − 1)/λ)], where the profile
        is strictly decreasing, by Brent's method (absolute tolerance 1e-14 in ε').
        A δ within 1e-12 relative below δ_∞ counts as δ_∞ (floating-point rounding of the
        calibration, which sets δ_∞ = δ exactly).
        """
        self._relation(relation)
        delta = _check_delta_closed(delta)
        delta_inf = self.delta_infinity
        if delta < delta_inf * (1.0 - _ROUNDING):
            return math.inf
        top = self._epsilon_top
        if top <= 0.0 or delta <= delta_inf:
            return max(top, 0.0)
        if delta >= float(self.privacy_profile(0.0)):
            return 0.0
        target = math.log(delta)

        def excess(eps: float) -> float:
            return math.log(float(self.privacy_profile(eps))) - target

        if excess(top) >= 0.0:  # rounding at the flat end
            return top
        return optimize.brentq(excess, 0.0, top, xtol=1e-14, rtol=1e-15, maxiter=500)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """T(α) = F(F⁻¹(1 − α) − 1): T(0) = 1 − δ_∞ and T(α) = 0 for α ≥ 1 − δ_∞."""
        self._relation(relation)
        alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
        return self.cdf(self.quantile(1.0 - alpha) - TRUE_SHIFT)

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_variance(self) -> np.ndarray:
        """Var Y = (2λ² − r(τ² + 2λτ + 2λ²))/(1 − r) (docs/ground-truth.md §4), shape ``(1,)``."""
        lam, r, tau = self.scale, self._r, self.bound
        return np.array([(2 * lam**2 - r * (tau**2 + 2 * lam * tau + 2 * lam**2)) / (1.0 - r)])

    def mean_absolute_error(self) -> float:
        """E|Y| = (λ − r(τ + λ))/(1 − r) (docs/ground-truth.md §4)."""
        lam, r, tau = self.scale, self._r, self.bound
        return (lam - r * (tau + lam)) / (1.0 - r)

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Exact t with P(max over k independent copies |Y| > t) = α.

        P(|Y| > t) = (e^{−t/λ} − r)/(1 − r) for t ≤ τ, so with q = 1 − (1 − α)^{1/k},
        t = −λ ln(r + q(1 − r)) ≤ τ (docs/ground-truth.md §4).
        """
        alpha = check_open_unit("alpha", alpha)
        k = check_int("k", k)
        q = -math.expm1(math.log1p(-alpha) / k)
        return -self.scale * math.log(self._r + q * (1.0 - self._r))

    def worst_case_error(self) -> float:
        """τ: the noise never exceeds it."""
        return self.bound

    # -- presentation -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        parts = [f"ε={self.epsilon:g}", f"δ={self.delta:g}", f"τ={self.bound:.4g}"]
        if self.sensitivity != 1.0:
            parts.append(f"Δ={self.sensitivity:g}")
        if self.relation.value != "add-remove":
            parts.append(str(self.relation))
        return f"TruncatedLaplace({', '.join(parts)})"
