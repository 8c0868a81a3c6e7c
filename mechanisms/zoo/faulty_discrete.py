"""Faulty variants of the discrete, categorical and subsampled mechanisms, each with its exact truth.

Registered in :data:`scenarios.faulty_cases.FAULTY_MECHANISMS`, whose factories of the same names
return ``(mechanism, scenario)`` (layers reach down only, so the scenarios live there):

================================= ================================================================
name                              mistake (claim → exact truth)
================================= ================================================================
subsampled-wrong-relation         Poisson-subsampled Gaussian (σ = 1, q = 0.3) audited under
                                  replacement with the add/remove accountant's (ε, δ):
                                  (1, 7.683e-3)-DP claimed, exact δ(1) = 1.924e-2 under replacement
rounded-gaussian-real-query       discrete noise by rounding a continuous N(0, σ²) draw, added to a
                                  real-valued sum, with the continuous Gaussian's (1, 1e-5) claim:
                                  neighbours whose sums differ by a non-integer have disjoint
                                  supports, exact δ(ε) = 1 for every ε (audited through a fixed
                                  post-processing built on y mod 1, which thresholds can exploit)
randomized-response-wrong-k       k = 4 categories kept with the binary probability e^ε/(e^ε + 1):
                                  ε = 1 claimed, exact pure ε = 1 + ln 3 = 2.0986
================================= ================================================================

On the rounding fault: rounding c + N(0, σ²) for an *integer* query c is post-processing of the
continuous Gaussian mechanism, so its continuous claim holds (and the result is not the discrete
Gaussian, whose profile differs slightly); the privacy failure appears when the lattice noise meets a
query that is not on the lattice, which is what this variant audits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from ..calibration import calibrate_sigma
from ..claims import ApproxDP, as_relation
from ..laplace import _check_delta_closed, _check_epsilons
from ..parameters import FrozenParameters
from ..randomized_response import RandomizedResponse
from ..subsampled_gaussian import PoissonSubsampledGaussian
from ..validation import check_dataset, check_finite_positive, check_int, check_open_unit

__all__ = ["WrongRelationSubsampledGaussian", "RoundedGaussianRealQuery", "RoundedGaussianFractionalView",
           "WrongCategoriesRandomizedResponse"]


class WrongRelationSubsampledGaussian(PoissonSubsampledGaussian):
    """Subsampling amplification computed for add/remove, claimed under replacement.

    The claim is (ε, δ_AR(ε)) with δ_AR the add/remove profile; the mechanism is audited under
    replacement, where the dominating pair mixes N(+1) and N(−1) and the exact (pessimistic PLD)
    profile is larger.  Truth: :class:`~mechanisms.subsampled_gaussian.PoissonSubsampledGaussian`
    under replacement.
    """

    fault = "subsampled Gaussian: add/remove amplification claimed under the replacement relation"

    def __init__(self, noise_multiplier: float = 1.0, sampling_probability: float = 0.3,
                 steps: int = 1, epsilon: float = 1.0) -> None:
        reference = PoissonSubsampledGaussian(noise_multiplier, sampling_probability, steps,
                                              epsilon=1.0, delta=0.5, relation="add-remove")
        claimed_delta = float(reference.privacy_profile(check_finite_positive("epsilon", epsilon)))
        super().__init__(noise_multiplier, sampling_probability, steps, epsilon=epsilon,
                         delta=claimed_delta, relation="replace")

    @property
    def name(self) -> str:
        return "SubsampledGaussian[add/remove δ under replace]" + super().name.partition("(")[1] + \
            super().name.partition("(")[2]


class RoundedGaussianRealQuery(FrozenParameters):
    """round(σZ) added to the sum of rows in [0, 1], claiming the continuous Gaussian's (ε, δ).

    σ is the analytic calibration for (ε, δ) and sensitivity 1 (Balle & Wang 2018), so the claim is
    what the continuous mechanism f(X) + σZ satisfies.  Here the output is f(X) + round(σZ): its
    support is f(X) + ℤ, so a neighbour pair whose sums differ by a non-integer (adding a row
    x = ½) has disjoint supports: the exact profile is δ(ε) = 1 for every ε, ε(δ) = ∞ for δ < 1,
    and the trade-off curve is 0.
    """

    fault = "lattice noise from rounding a continuous Gaussian, added to a real-valued sum"
    d = 1
    row_dim = 1
    output_dim = 1

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, relation: Any = "add-remove") -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.delta = check_open_unit("delta", delta)
        self.relation = as_relation(relation)
        self.sigma = calibrate_sigma("analytic", self.epsilon, self.delta, 1.0)
        self.claim = ApproxDP(self.epsilon, self.delta, self.relation)
        self._freeze(epsilon=self.epsilon, delta=self.delta, relation=self.relation.value)

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = check_dataset(dataset, 1)
        size = check_int("size", size)
        return data.sum() + np.round(self.sigma * rng.standard_normal((size, 1)))

    def true_answer(self, dataset: Any) -> np.ndarray:
        return check_dataset(dataset, 1).sum(axis=0)

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """δ(ε) = 1: a pair with a non-integer difference of sums has disjoint supports."""
        return np.ones_like(_check_epsilons(epsilon))

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """∞ for every δ < 1."""
        _check_delta_closed(delta)
        return math.inf

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """T ≡ 0 (perfect distinguishability)."""
        return np.zeros_like(np.asarray(alpha, dtype=np.float64))

    @property
    def name(self) -> str:
        return f"RoundedGaussian[real query](σ={self.sigma:.4g}, claimed ε={self.epsilon:g}, δ={self.delta:g})"


class RoundedGaussianFractionalView(RoundedGaussianRealQuery):
    """:class:`RoundedGaussianRealQuery` seen through the fixed post-processing g(y) = (y mod 1) + Φ(y/(10σ))/10.

    The engine's statistic is the output with threshold events, which cannot separate two
    interleaved lattices; y mod 1 = frac(f(X)) can, and the squashed copy Φ(y/(10σ))/10 ∈ (0, 0.1)
    keeps the rest of y (so the view stays a random, one-to-one function of y on each lattice).  Any
    refutation of g∘M refutes M (post-processing never increases privacy loss), and the truth of
    g∘M is the same: a pair whose sums differ by ½ puts g in [0, 0.1) resp. [0.5, 0.6), so δ(ε) = 1.
    """

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        y = super().__call__(dataset, size, rng)
        return np.mod(y, 1.0) + special.ndtr(y / (10.0 * self.sigma)) / 10.0

    @property
    def name(self) -> str:
        return super().name.replace("[real query]", "[real query, viewed mod 1]")


class WrongCategoriesRandomizedResponse(RandomizedResponse):
    """k-ary randomized response whose keep probability uses the formula for ``assumed_k`` categories.

    Keep probability p = e^ε/(e^ε + assumed_k − 1), the k − 1 other categories share 1 − p: the
    exact pure ε is ln(p(k − 1)/(1 − p)) = ε + ln((k − 1)/(assumed_k − 1)) (ε + ln 3 for k = 4,
    assumed_k = 2), and the exact profile is that of :class:`RandomizedResponse` with it.
    """

    fault = "randomized response over k categories with the binary keep probability e^ε/(e^ε + 1)"

    def __init__(self, epsilon: float = 1.0, k: int = 4, assumed_k: int = 2, relation: Any = "add-remove") -> None:
        self.assumed_k = check_int("assumed_k", assumed_k, minimum=2)
        super().__init__(epsilon, k, relation)
        if self.assumed_k == self.k:
            raise ValueError(f"`assumed_k` must differ from `k` (that is no fault), got {assumed_k!r}")
        object.__setattr__(self, "_params", self._params + (("assumed_k", self.assumed_k),))

    @property
    def keep_probability(self) -> float:
        return 1.0 / (1.0 + (self.assumed_k - 1) * math.exp(-self.epsilon))

    @property
    def name(self) -> str:
        return f"RandomizedResponse[keep p for k={self.assumed_k}](ε={self.epsilon:g}, k={self.k})"
