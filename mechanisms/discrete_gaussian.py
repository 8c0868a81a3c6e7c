"""The discrete Gaussian mechanism on a count (Canonne, Kamath & Steinke 2020), exact sampler and truth.

M(X) = c(X) + Y with c the count of 0/1 rows and Y ~ N_ℤ(0, σ²): P(Y = y) = e^{−y²/(2σ²)}/Z,
Z = Σ_{x∈ℤ} e^{−x²/(2σ²)}.  σ² is held as a rational p/q (the nearest with q ≤ 10⁴ to the given σ²,
``sigma_squared``) which the exact sampler of :mod:`mechanisms.exact_sampling` draws from exactly,
and the exact truth below uses the same σ².

Claim.  Either ``epsilon, delta``: the (ε, δ)-DP claim of the pair's exact profile at the given σ
(``DiscreteGaussianMechanism.calibrated`` finds the smallest such rational σ), or, by default, the
ρ-zCDP claim ρ = Δ²/(2σ²) of CKS Theorem 14.

Exact privacy (the count moves by at most 1; the pair c vs c + 1 is the worst under both
relations, and it is symmetric under y ↦ 2c + 1 − y).  The privacy loss of y is
L(y) = ((y − c − 1)² − (y − c)²)/(2σ²) = (1 − 2(y − c))/(2σ²), so with x = y − c

    δ(ε) = Σ_{x ≤ x*} P(x)(1 − e^{ε − L(x)}),   x* = ⌈(1 − 2εσ²)/2⌉ − 1,

a sum of positive terms taken over 12σ + 40 lattice points below x* (the rest is below e^{−72}
relative) in log space; Z by the same summation over |x| ≤ 12σ + 40.  ε(δ) by Brent's method on
log δ(ε); the trade-off curve by Neyman–Pearson on the truncated lattice (:mod:`.finite_pair`).
Checked in ``tests/mechanisms/test_discrete.py`` against plain summation over the lattice and against
dp-accounting's ``from_discrete_gaussian_mechanism``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

import numpy as np
from scipy import optimize, special

from ._counting import CountNoiseMechanism
from .claims import ZCDP, ApproxDP, as_relation
from .exact_sampling import MAX_DENOMINATOR, check_gaussian_denominator, discrete_gaussian
from .finite_pair import pair_tradeoff
from .laplace import _check_delta_closed, _check_epsilons
from .validation import check_epsilon_delta, check_finite_positive, check_int, check_open_unit

__all__ = ["DiscreteGaussianMechanism", "discrete_gaussian_profile", "discrete_gaussian_epsilon"]


def _window(sigma2: float) -> int:
    return int(math.ceil(12.0 * math.sqrt(sigma2))) + 40


def _log_normalizer(sigma2: float) -> float:
    x = np.arange(-_window(sigma2), _window(sigma2) + 1, dtype=np.float64)
    return float(special.logsumexp(-x * x / (2.0 * sigma2)))


def discrete_gaussian_profile(epsilon, sigma2: float) -> np.ndarray:
    """Exact δ(ε) of N_ℤ(0, σ²) against N_ℤ(1, σ²) (module docstring), vectorized in ε ≥ 0."""
    epsilon = _check_epsilons(epsilon)
    flat = epsilon.reshape(-1, 1)
    top = np.ceil((1.0 - 2.0 * flat * sigma2) / 2.0) - 1.0
    x = top - np.arange(_window(sigma2), dtype=np.float64)[None, :]
    loss = (1.0 - 2.0 * x) / (2.0 * sigma2)
    with np.errstate(divide="ignore"):
        terms = -x * x / (2.0 * sigma2) + np.log(-np.expm1(np.minimum(flat - loss, 0.0)))
    value = np.exp(special.logsumexp(terms, axis=1) - _log_normalizer(sigma2))
    return value.reshape(epsilon.shape)


def discrete_gaussian_epsilon(delta: float, sigma2: float) -> float:
    """The smallest ε ≥ 0 with :func:`discrete_gaussian_profile` ≤ δ (δ > 0; ε(0) = ∞)."""
    if delta == 0.0:
        return math.inf
    if delta >= float(discrete_gaussian_profile(0.0, sigma2)):
        return 0.0
    target = math.log(delta)

    def excess(eps: float) -> float:
        value = float(discrete_gaussian_profile(eps, sigma2))
        return (math.log(value) if value > 0 else -math.inf) - target

    upper = 1.0 / sigma2 + math.sqrt(2.0 * math.log(1.0 / delta) / sigma2) + 1.0
    while excess(upper) > 0:
        upper *= 2.0
    return optimize.brentq(excess, 0.0, upper, xtol=1e-13, rtol=1e-14, maxiter=500)


class DiscreteGaussianMechanism(CountNoiseMechanism):
    """c(X) + N_ℤ(0, σ²) with an exact sampler; claims ρ-zCDP, or (ε, δ) if both are given.

    Parameters
    ----------
    sigma : float
        Noise scale; σ² is stored as the nearest rational with denominator ≤ 10⁴.
    epsilon, delta : float, optional
        An (ε, δ)-DP claim (both or neither); default the ρ = Δ²/(2σ²) zCDP claim.
    sensitivity : int, default 1
        Declared sensitivity Δ of the count (true: 1).
    relation : {"add-remove", "replace"}

    References
    ----------
    Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy",
    Theorem 14 (zCDP), Algorithm 3 (sampler).
    """

    d = 1

    def __init__(self, sigma: float, epsilon: Optional[float] = None, delta: Optional[float] = None,
                 sensitivity: int = 1, relation: Any = "add-remove") -> None:
        sigma = check_finite_positive("sigma", sigma)
        self.sigma_squared = Fraction(sigma * sigma).limit_denominator(MAX_DENOMINATOR)
        if self.sigma_squared <= 0:
            raise ValueError(f"`sigma` is too small for a rational sigma^2 with denominator "
                             f"<= {MAX_DENOMINATOR}, got {sigma!r}")
        check_gaussian_denominator(self.sigma_squared)
        self.sigma = math.sqrt(float(self.sigma_squared))
        self.sensitivity = check_int("sensitivity", sensitivity)
        self.relation = as_relation(relation)
        self.epsilon, self.delta = check_epsilon_delta(epsilon, delta)
        if self.epsilon is None:
            self.claim = ZCDP(self.sensitivity**2 / (2.0 * float(self.sigma_squared)), self.relation)
        else:
            self.claim = ApproxDP(self.epsilon, self.delta, self.relation)
        self._freeze(sigma=self.sigma, epsilon=self.epsilon, delta=self.delta,
                     sensitivity=self.sensitivity, relation=self.relation.value)

    @classmethod
    def calibrated(cls, epsilon: float, delta: float, relation: Any = "add-remove"):
        """The smallest σ on a 10⁻³ grid whose exact profile meets (ε, δ), claiming (ε, δ)-DP."""
        epsilon, delta = check_finite_positive("epsilon", epsilon), check_open_unit("delta", delta)
        low, high = 1e-3, 1.0
        while float(discrete_gaussian_profile(epsilon, high * high)) > delta:
            low, high = high, 2.0 * high
        while high - low > 1e-3:
            middle = 0.5 * (low + high)
            if float(discrete_gaussian_profile(epsilon, middle * middle)) > delta:
                low = middle
            else:
                high = middle
        sigma = math.ceil(high * 1000.0) / 1000.0
        return cls(sigma, epsilon, delta, relation=relation)

    def _noise(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return discrete_gaussian(self.sigma_squared, size, rng)

    # -- exact privacy ----------------------------------------------------------------------------
    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """Exact δ(ε) by summation over the lattice (:func:`discrete_gaussian_profile`)."""
        self._relation(relation)
        return discrete_gaussian_profile(epsilon, float(self.sigma_squared))

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """Exact ε(δ); ∞ for δ = 0 (the privacy loss is unbounded)."""
        self._relation(relation)
        return discrete_gaussian_epsilon(_check_delta_closed(delta), float(self.sigma_squared))

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """Neyman–Pearson curve of N_ℤ(0, σ²) vs N_ℤ(1, σ²) on |x| ≤ 12σ + 40."""
        self._relation(relation)
        sigma2 = float(self.sigma_squared)
        x = np.arange(-_window(sigma2), _window(sigma2) + 2, dtype=np.float64)
        log_z = _log_normalizer(sigma2)
        return pair_tradeoff(alpha, -x * x / (2 * sigma2) - log_z, -(x - 1) ** 2 / (2 * sigma2) - log_z)

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_variance(self) -> np.ndarray:
        """E Y² = Σ x² P(x) by summation (slightly below σ², CKS Corollary 9)."""
        sigma2 = float(self.sigma_squared)
        x = np.arange(-_window(sigma2), _window(sigma2) + 1, dtype=np.float64)
        log_p = -x * x / (2.0 * sigma2) - _log_normalizer(sigma2)
        return np.array([float(np.sum(x * x * np.exp(log_p)))])

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """The smallest integer a with P(max over k queries |Y| > a) ≤ α, by summation."""
        alpha, k = check_open_unit("alpha", alpha), check_int("k", k)
        sigma2 = float(self.sigma_squared)
        q = -math.expm1(math.log1p(-alpha) / k)
        x = np.arange(0, _window(sigma2) + 1, dtype=np.float64)
        log_p = -x * x / (2.0 * sigma2) - _log_normalizer(sigma2)
        tail = 2.0 * np.exp(special.logsumexp(log_p[None, :], axis=1, b=(x[None, :] > x[:, None])))
        return float(x[np.argmax(tail <= q)])

    @property
    def name(self) -> str:
        parts = [f"σ²={self.sigma_squared}"]
        if self.epsilon is not None:
            parts += [f"ε={self.epsilon:g}", f"δ={self.delta:g}"]
        if self.relation.value != "add-remove":
            parts.append(str(self.relation))
        return f"DiscreteGaussian({', '.join(parts)})"
