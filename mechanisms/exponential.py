"""The exponential mechanism as report-noisy-max with Gumbel noise, with its exact privacy.

Private selection of the candidate closest to the count: candidates t_1 < … < t_m, utility
u_i(X) = −|c(X) − t_i| (sensitivity Δ = 1 under both relations, since c moves by at most 1), and
the output is the index argmax_i (β u_i(X) + G_i) with i.i.d. standard Gumbel G_i, which is
exactly a draw from softmax(β u(X)) (Gumbel-max trick; McSherry & Talwar 2007, and Durfee &
Rogers 2019 for report-noisy-max with Gumbel noise).  β = ε/(2Δ), the textbook calibration of an
ε-DP claim; ``monotone=True`` uses β = ε/Δ, which is valid only for utilities that move in one
direction under every neighbour, which these do not (a known misuse to audit).

Exact privacy.  Only c(X) enters, so every neighbour pair is (softmax(βu(c)), softmax(βu(c + 1)))
for an integer c (or identical).  For c < t_1 − 1 or c ≥ t_m every utility moves by the same
amount and the softmax does not change, so the supremum over all pairs is a maximum over the
finitely many counts c ≥ 0 in [⌊t_1⌋ − 1, ⌈t_m⌉]: the profile is the maximum of those pairs' finite
profiles, ε(δ) the maximum of their ε(δ), and the trade-off curve their pointwise minimum
(:mod:`.finite_pair`).  The likelihood ratio of every such pair is monotone in the (sorted)
candidate index, so the output index is an optimal 1-D statistic for threshold events.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from scipy import special

from ._counting import CountCategoryMechanism, count
from .claims import PureDP, as_relation
from .finite_pair import max_loss, pair_epsilon, pair_profile, pair_tradeoff
from .laplace import _check_delta_closed, _check_epsilons
from .parameters import FrozenParameters
from .validation import check_finite_positive

__all__ = ["ExponentialMechanism"]


class ExponentialMechanism(FrozenParameters, CountCategoryMechanism):
    """Report-noisy-max with Gumbel noise over candidates t_i, utility −|c(X) − t_i|; claims ε-DP.

    Parameters
    ----------
    epsilon : float
        The claimed ε.
    candidates : sequence of float, default (0, 2, 4, 6, 8)
        Strictly increasing candidate values t_i (at least 2).
    monotone : bool, default False
        Use β = ε/Δ (valid for monotone utilities only) instead of ε/(2Δ).
    relation : {"add-remove", "replace"}
    """

    def __init__(self, epsilon: float, candidates: Sequence[float] = (0, 2, 4, 6, 8),
                 monotone: bool = False, relation: Any = "add-remove") -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        values = np.asarray(candidates, dtype=np.float64)
        if values.ndim != 1 or values.size < 2 or not np.all(np.isfinite(values)) or np.any(np.diff(values) <= 0):
            raise ValueError(f"`candidates` must be at least 2 strictly increasing finite numbers, got {candidates!r}")
        self.candidates = tuple(float(v) for v in values)
        if not isinstance(monotone, bool):
            raise TypeError(f"`monotone` must be True or False, got {monotone!r}")
        self.monotone = monotone
        self.relation = as_relation(relation)
        self.beta = self.epsilon / (1.0 if monotone else 2.0)
        self.claim = PureDP(self.epsilon, self.relation)
        self._freeze(epsilon=self.epsilon, candidates=self.candidates, monotone=self.monotone,
                     relation=self.relation.value)

    def utilities(self, c: float) -> np.ndarray:
        """u_i = −|c − t_i|."""
        return -np.abs(c - np.asarray(self.candidates))

    def log_pmf(self, c: float) -> np.ndarray:
        """log softmax(β u(c)): the exact output distribution for count c."""
        scores = self.beta * self.utilities(c)
        return scores - special.logsumexp(scores)

    def true_answer(self, dataset: Any) -> np.ndarray:
        """The index of the candidate with the highest utility (the noiseless selection)."""
        return np.array([float(np.argmax(self.utilities(count(dataset))))])

    def _draw(self, c: int, size: int, rng: np.random.Generator) -> np.ndarray:
        scores = self.beta * self.utilities(c)
        return np.argmax(scores + rng.gumbel(size=(size, scores.size)), axis=1)

    # -- exact privacy ----------------------------------------------------------------------------
    def _pairs(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(self.log_pmf(c), self.log_pmf(c + 1)) for c in self._counts()]

    def _counts(self) -> range:
        """Counts c ≥ 0 whose pair (c, c + 1) can differ: ⌊t_1⌋ − 1 ≤ c ≤ ⌈t_m⌉ (module docstring)."""
        low = max(0, math.floor(self.candidates[0]) - 1)
        return range(low, max(low, math.ceil(self.candidates[-1])) + 1)

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """max over the count pairs of their exact finite profiles (module docstring)."""
        self._relation(relation)
        epsilon = _check_epsilons(epsilon)
        return np.max([pair_profile(epsilon, p, q) for p, q in self._pairs()], axis=0)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """max over the count pairs of ε(δ); the exact pure ε for δ = 0."""
        self._relation(relation)
        delta = _check_delta_closed(delta)
        if delta == 0.0:
            return max(max_loss(p, q) for p, q in self._pairs())
        return max(pair_epsilon(delta, p, q) for p, q in self._pairs())

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """Pointwise minimum of the count pairs' Neyman–Pearson curves."""
        self._relation(relation)
        return np.min([pair_tradeoff(alpha, p, q) for p, q in self._pairs()], axis=0)

    def worst_count(self) -> int:
        """The count c whose pair (c, c + 1) has the largest pure privacy loss."""
        losses = [max_loss(p, q) for p, q in self._pairs()]
        return self._counts()[int(np.argmax(losses))]

    @property
    def name(self) -> str:
        tag = "monotone β=ε/Δ" if self.monotone else "β=ε/2Δ"
        suffix = "" if self.relation.value == "add-remove" else f", {self.relation}"
        return f"Exponential[{tag}](ε={self.epsilon:g}, m={len(self.candidates)}{suffix})"
