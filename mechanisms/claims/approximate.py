"""(ε, δ)-DP and pure ε-DP claims.

(ε, δ)-DP ⇔ T ≥ f_{ε,δ} for every pair of neighbours (Kairouz, Oh & Viswanath 2015; Dong, Roth &
Su 2022, Proposition 2.5), with

    f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)},

and pure ε-DP is δ = 0 (docs/ground-truth.md §3).  The profile f_{ε,δ} implies is
δ(ε') = max(δ, 1 − (1 − δ)(1 + e^{ε'})/(1 + e^ε)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import check_finite_positive, check_open_unit
from .base import Claim, Relation, as_relation

__all__ = ["approx_tradeoff", "ApproxDP", "PureDP"]


def approx_tradeoff(alpha, epsilon: float, delta: float) -> np.ndarray:
    """f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} (Kairouz et al. 2015), vectorized."""
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    e = math.exp(epsilon) if epsilon < 700 else math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        first = 1.0 - delta - np.where(alpha > 0, e * alpha, 0.0)
    second = (1.0 - delta - alpha) / e
    return np.maximum(0.0, np.maximum(first, second))


def _approx_delta_at(epsilon_prime, epsilon: float, delta: float) -> np.ndarray:
    epsilon_prime = np.asarray(epsilon_prime, dtype=np.float64)
    # 1 − (1−δ)(1 + e^{ε'})/(1 + e^ε), written with exp of differences to avoid overflow.
    ratio = np.exp(-np.logaddexp(0.0, epsilon)) * (1.0 + np.exp(np.minimum(epsilon_prime, 700.0)))
    # At ε' ≥ ε the formula is at most δ, so the profile is δ exactly (rounding would leave 1e-16).
    return np.where(epsilon_prime >= epsilon, delta, np.maximum(delta, 1.0 - (1.0 - delta) * ratio))


def _approx_epsilon_at(delta_prime: float, epsilon: float, delta: float) -> float:
    if delta_prime < delta:
        return math.inf
    if delta_prime >= 1.0:
        return 0.0
    # e^{ε'} = (1 − δ')(1 + e^ε)/(1 − δ) − 1
    log_value = math.log1p(-delta_prime) + np.logaddexp(0.0, epsilon) - math.log1p(-delta)
    value = math.expm1(log_value) if log_value < 700 else math.inf
    return max(0.0, math.log(value)) if value > 0 else 0.0


@dataclass(frozen=True)
class ApproxDP(Claim):
    """(ε, δ)-differential privacy under ``relation`` (Dwork & Roth 2014, Def. 2.4)."""

    epsilon: float
    delta: float
    relation: Relation = Relation.ADD_REMOVE

    kind = "approx-dp"
    config_keys = ("epsilon", "delta")
    required_keys = ("epsilon", "delta")

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_finite_positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        object.__setattr__(self, "relation", as_relation(self.relation))

    def tradeoff(self, alpha) -> np.ndarray:
        """The claimed lower bound f_{ε,δ}(α) on every neighbour pair's trade-off curve."""
        return approx_tradeoff(alpha, self.epsilon, self.delta)

    def delta_at(self, epsilon) -> np.ndarray:
        """The largest δ the claim allows at ε' (its implied privacy profile)."""
        return _approx_delta_at(epsilon, self.epsilon, self.delta)

    def epsilon_at(self, delta: float) -> float:
        """The largest ε the claim allows at δ' (``inf`` for δ' < δ)."""
        return _approx_epsilon_at(delta, self.epsilon, self.delta)

    @property
    def reference_delta(self) -> float:
        """The δ at which reports state their headline ε bound."""
        return self.delta

    @property
    def label(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP"


@dataclass(frozen=True)
class PureDP(Claim):
    """Pure ε-differential privacy under ``relation`` (δ = 0)."""

    epsilon: float
    relation: Relation = Relation.ADD_REMOVE

    kind = "pure-dp"
    config_keys = ("epsilon",)
    required_keys = ("epsilon",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_finite_positive("epsilon", self.epsilon))
        object.__setattr__(self, "relation", as_relation(self.relation))

    @property
    def delta(self) -> float:
        return 0.0

    def tradeoff(self, alpha) -> np.ndarray:
        """f_{ε,0}(α) = max{0, 1 − e^ε α, e^{−ε}(1 − α)}."""
        return approx_tradeoff(alpha, self.epsilon, 0.0)

    def delta_at(self, epsilon) -> np.ndarray:
        return _approx_delta_at(epsilon, self.epsilon, 0.0)

    def epsilon_at(self, delta: float) -> float:
        return _approx_epsilon_at(delta, self.epsilon, 0.0)

    @property
    def reference_delta(self) -> float:
        return 0.0

    @property
    def label(self) -> str:
        return f"{self.epsilon:g}-DP"
