"""k-ary randomized response on a categorical statistic of the data, with its exact privacy.

The input category is c(X) mod k for the count c of 0/1 rows (:mod:`mechanisms._counting`): any
function of the data would do, since randomized response is private for *every* change of its
input, and a neighbour changes the count by at most 1.  The output is the category itself with
probability e^ε/(e^ε + k − 1) and each other category with probability 1/(e^ε + k − 1)
(Warner 1965; Kairouz, Oh & Viswanath 2016 for k-ary RR).

Exact privacy: every pair of distinct inputs c ≠ c' is the same pair up to relabelling, and equal
inputs give identical outputs, so the worst pair over both relations has (Z = e^ε + k − 1)

    δ(ε') = (e^ε − e^{ε'})₊/Z  (only the output c contributes),   ε(0) = ε,
    ε(δ) = ln(e^ε − δZ) for δ < δ(0) = (e^ε − 1)/Z, and 0 beyond;

its trade-off curve is the Neyman–Pearson curve of the pair (:mod:`.finite_pair`).  Checked in
``tests/mechanisms/test_categorical.py`` against the finite-pair summation and dp-accounting's
``from_randomized_response``.

Auditing note: the engine's statistic is the output index; the threshold events it uses are
optimal only when the pair's inputs are the extreme categories (k − 1 and 0), which the bundled
scenario arranges (base count ≡ k − 1 mod k).  A categorical statistic removes that constraint.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._counting import CountCategoryMechanism, count
from .claims import PureDP, as_relation
from .finite_pair import pair_tradeoff
from .laplace import _check_delta_closed, _check_epsilons
from .parameters import FrozenParameters
from .validation import check_finite_positive, check_int

__all__ = ["RandomizedResponse"]


class RandomizedResponse(FrozenParameters, CountCategoryMechanism):
    """k-ary randomized response of c(X) mod k, claiming ε-DP.

    Parameters
    ----------
    epsilon : float
        The ε of the keep probability e^ε/(e^ε + k − 1), and the claim.
    k : int, default 4
        Number of categories (≥ 2).
    relation : {"add-remove", "replace"}
    """

    def __init__(self, epsilon: float, k: int = 4, relation: Any = "add-remove") -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.k = check_int("k", k, minimum=2)
        self.relation = as_relation(relation)
        self.claim = PureDP(self.epsilon, self.relation)
        self._freeze(epsilon=self.epsilon, k=self.k, relation=self.relation.value)

    @property
    def keep_probability(self) -> float:
        """P(output = input) = e^ε/(e^ε + k − 1)."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.epsilon))

    @property
    def exact_epsilon0(self) -> float:
        """ln(keep/other): the exact pure ε (= ε here; subclasses with another keep probability differ)."""
        keep = self.keep_probability
        return math.log(keep * (self.k - 1)) - math.log1p(-keep)

    def true_answer(self, dataset: Any) -> np.ndarray:
        return np.array([float(count(dataset) % self.k)])

    def _draw(self, c: int, size: int, rng: np.random.Generator) -> np.ndarray:
        category = c % self.k
        keep = rng.random(size) < self.keep_probability
        other = rng.integers(0, self.k - 1, size)
        other = other + (other >= category)  # uniform over the k − 1 other categories
        return np.where(keep, category, other)

    def log_pmf(self, category: int) -> np.ndarray:
        """log P(output = y | input category) for y = 0..k−1."""
        keep = self.keep_probability
        out = np.full(self.k, math.log1p(-keep) - math.log(self.k - 1))
        out[category] = math.log(keep)
        return out

    # -- exact privacy ----------------------------------------------------------------------------
    def _z_and_e(self) -> tuple[float, float]:
        e = math.exp(self.exact_epsilon0)
        return e + self.k - 1, e

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """δ(ε') = (e^{ε₀} − e^{ε'})₊/(e^{ε₀} + k − 1), ε₀ = :attr:`exact_epsilon0`."""
        self._relation(relation)
        epsilon = _check_epsilons(epsilon)
        eps0 = self.exact_epsilon0
        # (e^{ε₀} − e^{ε'})/(e^{ε₀} + k − 1) = −expm1(ε' − ε₀)/(1 + (k − 1)e^{−ε₀})
        return np.maximum(0.0, -np.expm1(epsilon - eps0)) / (1.0 + (self.k - 1) * math.exp(-eps0)) + 0.0

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """ε(δ) = ln(e^{ε₀} − δ(e^{ε₀} + k − 1)); ε₀ for δ = 0."""
        self._relation(relation)
        delta = _check_delta_closed(delta)
        z, e = self._z_and_e()
        inside = e - delta * z
        return self.exact_epsilon0 if delta == 0 else (max(0.0, math.log(inside)) if inside > 1.0 else 0.0)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """Neyman–Pearson curve of inputs 0 vs 1 (all distinct pairs are alike)."""
        self._relation(relation)
        return pair_tradeoff(alpha, self.log_pmf(0), self.log_pmf(1))

    @property
    def name(self) -> str:
        suffix = "" if self.relation.value == "add-remove" else f", {self.relation}"
        return f"RandomizedResponse(ε={self.epsilon:g}, k={self.k}{suffix})"
