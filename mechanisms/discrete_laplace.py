"""The discrete Laplace (two-sided geometric) mechanism on a count, exact sampler and exact privacy.

M(X) = c(X) + Y with c the count of 0/1 rows and P(Y = y) = ((1 − r)/(1 + r)) r^{|y|}, r = e^{−a},
a = ε/Δ (Ghosh, Roughgarden & Sundararajan 2012; Canonne, Kamath & Steinke 2020, Algorithm 2 for
the sampler, see :mod:`mechanisms.exact_sampling`).  a is held as a rational s/t (denominator at
most 10⁴, exact for ε like 0.5, 1, 2): the sampler and the exact truth use the same a.

Exact privacy (the count moves by at most 1 under both relations).  For P = c + Y and Q = c + 1 + Y
the privacy loss ln(p/q) is +a for y ≤ c and −a for y ≥ c + 1, so the pair reduces to the binary
pair P(y ≤ c) = 1/(1 + r), Q(y ≤ c) = r/(1 + r), randomized response with parameter a:

- δ(ε') = (1 − e^{ε' − a})₊/(1 + e^{−a}),  ε(δ) = max(0, a + ln(1 − δ(1 + e^{−a}))),  ε(0) = a;
- T(α) = f_{a,0}(α) = max{0, 1 − e^a α, e^{−a}(1 − α)}.

Checked in ``tests/mechanisms/test_discrete.py`` against direct summation over the lattice and dp-accounting's
``from_discrete_laplace_mechanism``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ._counting import CountNoiseMechanism
from .claims import PureDP, as_relation
from .exact_sampling import MAX_DENOMINATOR, discrete_laplace
from .laplace import _check_delta_closed, _check_epsilons
from .validation import check_finite_positive, check_int, check_open_unit

__all__ = ["DiscreteLaplaceMechanism", "discrete_laplace_max_error"]


def discrete_laplace_max_error(rate: float, alpha: float, k: int = 1) -> float:
    """The smallest integer a with P(max over k queries |Y| > a) ≤ α (exact, Y discrete Laplace).

    P(|Y| > m) = 2r^{m+1}/(1 + r), so P(max ≤ m) = (1 − 2r^{m+1}/(1 + r))^k; solve for the least
    integer m with 2r^{m+1}/(1 + r) ≤ q = 1 − (1 − α)^{1/k}.
    """
    q = -math.expm1(math.log1p(-alpha) / k)
    r_log = -rate
    m = math.ceil((math.log(q) + math.log1p(math.exp(r_log)) - math.log(2.0)) / r_log - 1.0)
    while m > 0 and 2 * math.exp(r_log * m) / (1 + math.exp(r_log)) <= q:  # rounding guard
        m -= 1
    while 2 * math.exp(r_log * (m + 1)) / (1 + math.exp(r_log)) > q:
        m += 1
    return float(max(m, 0))


class DiscreteLaplaceMechanism(CountNoiseMechanism):
    """c(X) + discrete Laplace noise with P(y) ∝ exp(−ε|y|/Δ), claiming ε-DP.

    Parameters
    ----------
    epsilon : float
        Claimed pure ε; the noise rate is a = ε/Δ, stored as the nearest rational with
        denominator ≤ 10⁴ (``rate``), and ``epsilon`` becomes a·Δ exactly.
    sensitivity : int, default 1
        Declared sensitivity Δ of the count (its true sensitivity is 1; declaring more is merely
        conservative, and the exact truth always uses 1).
    relation : {"add-remove", "replace"}

    References
    ----------
    Ghosh, Roughgarden & Sundararajan (2012), "Universally utility-maximizing privacy mechanisms";
    Canonne, Kamath & Steinke (2020), Algorithm 2.
    """

    d = 1

    def __init__(self, epsilon: float, sensitivity: int = 1, relation: Any = "add-remove") -> None:
        epsilon = check_finite_positive("epsilon", epsilon)
        self.sensitivity = check_int("sensitivity", sensitivity)
        self.relation = as_relation(relation)
        self.rate = Fraction(epsilon / self.sensitivity).limit_denominator(MAX_DENOMINATOR)
        if self.rate <= 0:
            raise ValueError(f"`epsilon` is too small for a rational rate with denominator "
                             f"<= {MAX_DENOMINATOR}, got {epsilon!r}")
        self.epsilon = float(self.rate) * self.sensitivity
        self.claim = PureDP(self.epsilon, self.relation)
        self._freeze(epsilon=self.epsilon, sensitivity=self.sensitivity, relation=self.relation.value)

    def _noise(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return discrete_laplace(self.rate.numerator, self.rate.denominator, size, rng)

    # -- exact privacy ----------------------------------------------------------------------------
    @property
    def exact_epsilon0(self) -> float:
        """a = ε/Δ · 1 (true sensitivity 1): the exact pure ε."""
        return float(self.rate)

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """δ(ε') = (1 − e^{ε' − a})₊/(1 + e^{−a}) (module docstring), vectorized."""
        self._relation(relation)
        a = self.exact_epsilon0
        epsilon = _check_epsilons(epsilon)
        return np.maximum(0.0, -np.expm1(epsilon - a)) / (1.0 + math.exp(-a)) + 0.0

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """ε(δ) = max(0, a + ln(1 − δ(1 + e^{−a}))); δ = 0 gives a."""
        self._relation(relation)
        a = self.exact_epsilon0
        delta = _check_delta_closed(delta)
        inside = 1.0 - delta * (1.0 + math.exp(-a))
        return a if delta == 0 else (max(0.0, a + math.log(inside)) if inside > 0 else 0.0)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """T = f_{a,0}: the pair is randomized response with parameter a."""
        self._relation(relation)
        return PureDP(self.exact_epsilon0).tradeoff(alpha)

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_variance(self) -> np.ndarray:
        """Var Y = 2r/(1 − r)²."""
        r = math.exp(-float(self.rate))
        return np.array([2.0 * r / (1.0 - r) ** 2])

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Exact smallest integer a with P(max over k queries |error| > a) ≤ α."""
        return discrete_laplace_max_error(float(self.rate), check_open_unit("alpha", alpha), check_int("k", k))

    @property
    def name(self) -> str:
        parts = [f"ε={self.epsilon:g}"]
        if self.sensitivity != 1:
            parts.append(f"Δ={self.sensitivity}")
        if self.relation.value != "add-remove":
            parts.append(str(self.relation))
        return f"DiscreteLaplace({', '.join(parts)})"
