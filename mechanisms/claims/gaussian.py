"""μ-Gaussian differential privacy claims: T ≥ G_μ (Dong, Roth & Su 2022, *Gaussian differential
privacy*, JRSS-B), with G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) and the profile of Balle & Wang (2018,
Theorem 8) (docs/ground-truth.md §1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..validation import check_finite_positive
from ..gdp import gdp_delta, gdp_epsilon, gdp_tradeoff
from .base import Claim, Relation, as_relation

__all__ = ["GaussianDP"]


@dataclass(frozen=True)
class GaussianDP(Claim):
    """μ-Gaussian differential privacy under ``relation``: T ≥ G_μ.

    Reports state the headline ε bound of a GDP claim at ``reference_delta`` = 1e-5.
    """

    mu: float
    relation: Relation = Relation.ADD_REMOVE

    reference_delta = 1e-5
    kind = "gdp"
    config_keys = ("mu",)
    required_keys = ("mu",)

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

    @property
    def gaussian_mu(self) -> Optional[float]:
        return self.mu

    @property
    def label(self) -> str:
        return f"{self.mu:g}-GDP"

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
