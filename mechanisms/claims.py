"""Privacy claims: (ε, δ)-DP, pure ε-DP and μ-GDP, each under a neighbour relation.

A claim is a lower bound on the trade-off curve of every pair of neighbours (Dong, Roth & Su
2022): (ε, δ)-DP ⇔ T ≥ f_{ε,δ} with

    f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)},

pure ε-DP is δ = 0, and μ-GDP ⇔ T ≥ G_μ (GROUND_TRUTH §1, §3).  Every claim therefore also
implies a privacy profile δ_claim(ε') = sup_α [1 − f(α) − e^{ε'} α]; for f_{ε,δ} this is
max(δ, 1 − (1 − δ)(1 + e^{ε'})/(1 + e^ε)).  The audit engine compares certified bounds with
these curves, so a claim never needs to know which quantity contradicted it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Union

import numpy as np

from ._validation import check_finite_positive, check_open_unit
from .gdp import gdp_delta, gdp_epsilon, gdp_tradeoff

__all__ = ["Relation", "ApproxDP", "PureDP", "GaussianDP", "Claim", "as_relation"]


class Relation(str, Enum):
    """Neighbour relations: add or remove one row, or replace one row (same size)."""

    ADD_REMOVE = "add-remove"
    REPLACE = "replace"

    def __str__(self) -> str:
        return self.value


def as_relation(value) -> Relation:
    """Parse a relation (exact names only), naming the parameter on failure."""
    if isinstance(value, Relation):
        return value
    if not isinstance(value, str):
        raise TypeError(f"`relation` must be 'add-remove' or 'replace', got {value!r}")
    try:
        return Relation(value)
    except ValueError:
        raise ValueError(f"`relation` must be 'add-remove' or 'replace', got {value!r}") from None


def _approx_tradeoff(alpha, epsilon: float, delta: float) -> np.ndarray:
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
    return np.maximum(delta, 1.0 - (1.0 - delta) * ratio)


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
class ApproxDP:
    """(ε, δ)-differential privacy under ``relation`` (Dwork & Roth 2014, Def. 2.4)."""

    epsilon: float
    delta: float
    relation: Relation = Relation.ADD_REMOVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_finite_positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        object.__setattr__(self, "relation", as_relation(self.relation))

    def tradeoff(self, alpha) -> np.ndarray:
        """The claimed lower bound f_{ε,δ}(α) on every neighbour pair's trade-off curve."""
        return _approx_tradeoff(alpha, self.epsilon, self.delta)

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

    def __str__(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "approx-dp", "epsilon": self.epsilon, "delta": self.delta,
                "relation": self.relation.value}


@dataclass(frozen=True)
class PureDP:
    """Pure ε-differential privacy under ``relation`` (δ = 0)."""

    epsilon: float
    relation: Relation = Relation.ADD_REMOVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_finite_positive("epsilon", self.epsilon))
        object.__setattr__(self, "relation", as_relation(self.relation))

    @property
    def delta(self) -> float:
        return 0.0

    def tradeoff(self, alpha) -> np.ndarray:
        """f_{ε,0}(α) = max{0, 1 − e^ε α, e^{−ε}(1 − α)}."""
        return _approx_tradeoff(alpha, self.epsilon, 0.0)

    def delta_at(self, epsilon) -> np.ndarray:
        return _approx_delta_at(epsilon, self.epsilon, 0.0)

    def epsilon_at(self, delta: float) -> float:
        return _approx_epsilon_at(delta, self.epsilon, 0.0)

    @property
    def reference_delta(self) -> float:
        return 0.0

    def __str__(self) -> str:
        return f"{self.epsilon:g}-DP [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "pure-dp", "epsilon": self.epsilon, "relation": self.relation.value}


@dataclass(frozen=True)
class GaussianDP:
    """μ-Gaussian differential privacy under ``relation`` (Dong, Roth & Su 2022): T ≥ G_μ.

    Reports state the headline ε bound of a GDP claim at ``reference_delta`` = 1e-5.
    """

    mu: float
    relation: Relation = Relation.ADD_REMOVE

    reference_delta = 1e-5

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_finite_positive("mu", self.mu))
        object.__setattr__(self, "relation", as_relation(self.relation))

    @property
    def epsilon(self) -> float:
        """The ε this claim implies at ``reference_delta``."""
        return gdp_epsilon(self.reference_delta, self.mu)

    @property
    def delta(self) -> float:
        return self.reference_delta

    def tradeoff(self, alpha) -> np.ndarray:
        return gdp_tradeoff(alpha, self.mu)

    def delta_at(self, epsilon) -> np.ndarray:
        return gdp_delta(np.maximum(np.asarray(epsilon, dtype=np.float64), 0.0), self.mu)

    def epsilon_at(self, delta: float) -> float:
        if delta <= 0:
            return math.inf
        if delta >= 1:
            return 0.0
        return gdp_epsilon(delta, self.mu)

    def __str__(self) -> str:
        return f"{self.mu:g}-GDP [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "gdp", "mu": self.mu, "relation": self.relation.value}


Claim = Union[ApproxDP, PureDP, GaussianDP]


def claim_from_dict(data: dict) -> Claim:
    """Inverse of ``Claim.to_dict``."""
    kind = data.get("type")
    relation = data.get("relation", "add-remove")
    if kind == "approx-dp":
        return ApproxDP(data["epsilon"], data["delta"], relation)
    if kind == "pure-dp":
        return PureDP(data["epsilon"], relation)
    if kind == "gdp":
        return GaussianDP(data["mu"], relation)
    raise ValueError(f"claim `type` must be 'approx-dp', 'pure-dp' or 'gdp', got {kind!r}")
