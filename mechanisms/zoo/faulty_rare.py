"""Faulty mechanisms whose violation lives in a rare output region that one dataset never produces.

Registered in :data:`scenarios.faulty_cases.FAULTY_MECHANISMS` (as ``sparse-histogram-low-threshold``).

:class:`SparseHistogram` is a stability-based histogram (Korolova, Kenthapadi, Mishra & Ntoulas,
"Releasing search queries and clicks privately", WWW 2009; Vadhan, "The complexity of differential
privacy", 2017, §3.3) over K categories: every non-empty bin's count c gets Laplace noise,
Y = c + Lap(1/ε), and is released only if Y ≥ τ; every other bin outputs the sentinel −1.  Under
add/remove one row changes one count by one.  A correct threshold for (ε, δ)-DP is
τ = 1 + ln(1/(2δ))/ε, which makes a *new* bin (count 1) pass with probability exactly δ.  The
mistake modelled here is τ = ln(1/δ)/ε (the 1 and the ½ dropped), so a count of 1 passes with
probability p = ½e^{−(τ−1)ε} = (e^ε/2)·δ: 1.359·10⁻³ at ε = 1, δ = 10⁻³.

**Exact truth at ε' ≥ ε** (the claim's ε and above), from the two kinds of neighbouring pair:

* a bin going c → c + 1 with c ≥ 1 is a post-processing (threshold and sentinel) of the Laplace
  mechanism with shift 1 and scale 1/ε, so its hockey-stick divergence is 0 at every ε' ≥ ε
  (Dwork & Roth 2014, Thm 3.6 and Prop. 2.1); the other bins are the same on both sides;
* a bin going 0 → 1 compares the point mass at −1 (P) with Q = (1 − p)·δ₋₁ + the released part
  (mass p, where P has none): H_{e^ε'}(Q‖P) = p + (1 − p − e^ε')₊ = p and
  H_{e^ε'}(P‖Q) = (1 − e^ε'(1 − p))₊ = 0 for every ε' ≥ 0.

Hence δ(ε') = p exactly for ε' ≥ ε, and ε(δ') = ∞ for δ' < p: the (ε, δ) claim is false whenever
p > δ.  Below ε the profile mixes both kinds of pair and is not derived here (the exact methods
raise ``NotImplementedError``: truth unknown).  The refuting event — the new bin is released —
has probability p under one dataset and 0 under the other.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

from ..calibration import analytic_sigma
from ..claims import ApproxDP, Relation, as_relation
from ..parameters import FrozenParameters
from ..validation import check_dataset, check_finite_positive, check_int, check_open_unit, check_size

__all__ = ["SparseHistogram"]

#: The output of a bin that is empty or whose noisy count stays below the threshold.
SENTINEL = -1.0


class SparseHistogram(FrozenParameters):
    """Stability-based histogram over K categories with the threshold τ = ln(1/δ)/ε (module docstring).

    Parameters
    ----------
    epsilon, delta : float
        The claim ApproxDP(ε, δ) and the designer's parameters: Laplace scale 1/ε, τ = ln(1/δ)/ε.
    bins : int
        K, the number of categories (one output column each).
    relation : str
        Only add/remove is derived.
    claimed_delta : float, optional
        The claim's δ instead of ``delta`` (the threshold is unchanged): the exact p makes the
        claim true and tight at ε, for the validity study.
    """

    fault = "stability-based histogram with threshold ln(1/δ)/ε instead of 1 + ln(1/(2δ))/ε: a new bin passes with probability (e^ε/2)δ > δ"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-3, bins: int = 4, relation: Any = "add-remove",
                 claimed_delta: Any = None) -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.delta = check_open_unit("delta", delta)
        self.bins = check_int("bins", bins, minimum=2)
        self.relation = as_relation(relation)
        if self.relation is not Relation.ADD_REMOVE:
            raise ValueError(f"`relation` must be 'add-remove' (the replace analysis is not derived), got {relation!r}")
        self.scale = 1.0 / self.epsilon
        self.threshold = math.log(1.0 / self.delta) / self.epsilon
        if self.threshold < 1.0:
            raise ValueError(f"the threshold ln(1/δ)/ε must be >= 1, got {self.threshold!r} "
                             f"(epsilon={epsilon!r}, delta={delta!r})")
        claimed = self.delta if claimed_delta is None else check_open_unit("claimed_delta", claimed_delta)
        self.claim = ApproxDP(self.epsilon, claimed, self.relation)
        self._freeze(epsilon=self.epsilon, delta=self.delta, bins=self.bins, relation=self.relation.value,
                     claimed_delta=claimed_delta)

    @property
    def name(self) -> str:
        return f"SparseHistogram(K={self.bins}, ε={self.epsilon:g}, τ=ln(1/δ)/ε={self.threshold:.4g})"

    @property
    def d(self) -> int:
        """Columns of a dataset row: one category."""
        return 1

    @property
    def output_dim(self) -> int:
        """Output columns: one per category."""
        return self.bins

    @property
    def release_probability(self) -> float:
        """p = P(1 + Lap(1/ε) ≥ τ) = ½e^{−(τ−1)ε} (τ ≥ 1): a count of 1 is released."""
        return 0.5 * math.exp(-(self.threshold - 1.0) * self.epsilon)

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = check_dataset(dataset, 1, name=f"dataset of {self.name}", unit=False)[:, 0]
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        if data.size and (np.any(data != np.round(data)) or data.min() < 0 or data.max() >= self.bins):
            raise ValueError(f"`dataset` of {self.name} must hold categories 0..{self.bins - 1}")
        counts = np.bincount(data.astype(np.int64), minlength=self.bins).astype(np.float64)
        noisy = counts + rng.laplace(0.0, self.scale, (size, self.bins))
        released = (noisy >= self.threshold) & (counts > 0)
        return np.where(released, noisy, SENTINEL)

    def worst_pairs(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Both kinds of neighbouring pair: D = ten rows in bin 0 (released almost always) against D
        plus a row alone in bin K − 1 (a new bin of count 1, the worst at ε' ≥ ε), and against D
        plus a row in bin 0 (a count going 10 → 11)."""
        base = np.zeros((10, 1))
        return [(base, np.vstack([base, [[self.bins - 1.0]]])), (base, np.vstack([base, [[0.0]]]))]

    def _check(self, relation: Any, epsilon) -> np.ndarray:
        if relation is not None and as_relation(relation) is not Relation.ADD_REMOVE:
            raise NotImplementedError("only the add-remove relation is derived")
        epsilon = np.asarray(epsilon, dtype=np.float64)
        if np.any(epsilon < self.epsilon):
            raise NotImplementedError(f"δ(ε') below ε' = {self.epsilon:g} is not derived: truth unknown")
        return epsilon

    def privacy_profile(self, epsilon, relation: Any = None) -> np.ndarray:
        """δ(ε') = p for ε' ≥ ε (module docstring)."""
        epsilon = self._check(relation, epsilon)
        return np.full(epsilon.shape, self.release_probability)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """∞ for δ' < p; unknown (``NotImplementedError``) for δ' ≥ p."""
        self._check(relation, self.epsilon)
        if delta < self.release_probability:
            return math.inf
        raise NotImplementedError("ε(δ') for δ' ≥ p is not derived: truth unknown")


class TruncatedGaussianSum(FrozenParameters):
    """A scalar sum of rows in [0, 1] plus Gaussian noise truncated to [−τ, τ], with τ too small.

    The author calibrates σ by the analytic Gaussian mechanism for (ε, δ) (Balle & Wang, ICML 2018,
    Algorithm 1) and then truncates the noise, Y ~ N(0, σ²) conditioned on |Y| ≤ τ, so that outputs
    stay bounded.  Truncation is not post-processing: the outputs in (f(D) + τ, f(D) + τ + 1] are
    impossible under D and have probability

        m = P(τ − 1 < Y ≤ τ) = (Φ(−(τ − 1)/σ) − Φ(−τ/σ)) / (1 − 2Φ(−τ/σ))

    under the neighbour D′ with f(D′) = f(D) + 1.  That region alone gives δ(ε′) ≥ m for every
    ε′ ≥ 0 (its hockey-stick term is m − e^{ε′}·0), so the claim (ε, δ) is false whenever m > δ.
    τ is chosen here so that m = ``excess``·δ exactly (a root of the formula above).  Only this lower
    bound on the truth is derived; the exact δ(ε′) is not (no exact methods).

    Parameters
    ----------
    epsilon, delta : float
        The claim ApproxDP(ε, δ), and the σ of the analytic Gaussian for it.
    excess : float, default 1.7
        m/δ (> 1 makes the claim false; the validity study uses the correct mechanism instead).
    """

    d = 1

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, excess: float = 1.7) -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.delta = check_open_unit("delta", delta)
        self.excess = check_finite_positive("excess", excess)
        if not self.excess * self.delta < 0.1:
            raise ValueError(f"`excess`·`delta` must be below 0.1, got {excess!r}·{delta!r}")
        self.sigma = analytic_sigma(self.epsilon, self.delta)
        target = self.excess * self.delta

        def log_mass(tau: float) -> float:
            return math.log(max(self._mass(tau), 1e-300)) - math.log(target)

        self.bound = float(optimize.brentq(log_mass, 1.0 + 1e-9, 30.0 * self.sigma, xtol=1e-12))
        self._edge = float(special.ndtr(-self.bound / self.sigma))
        self.claim = ApproxDP(self.epsilon, self.delta, Relation.ADD_REMOVE)
        self.relation = Relation.ADD_REMOVE
        self._freeze(epsilon=self.epsilon, delta=self.delta, excess=self.excess)

    def _mass(self, tau: float) -> float:
        edge = special.ndtr(-tau / self.sigma)
        return float((special.ndtr(-(tau - 1.0) / self.sigma) - edge) / (1.0 - 2.0 * edge))

    @property
    def name(self) -> str:
        return f"TruncatedGaussianSum(ε={self.epsilon:g}, δ={self.delta:g}, σ={self.sigma:.4g}, τ={self.bound:.4g})"

    @property
    def one_sided_mass(self) -> float:
        """m, the probability of the outputs only the neighbour produces (class docstring)."""
        return self._mass(self.bound)

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = check_dataset(dataset, 1, name=f"dataset of {self.name}")
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        # Inverse CDF on the upper tail, symmetric: |Y| = −σΦ⁻¹(Φ(−τ/σ) + u(½ − Φ(−τ/σ))), u ~ U(0, 1),
        # precise where the truncated tails live; the sign is a fair coin.
        u = rng.random(size)
        magnitude = -self.sigma * special.ndtri(self._edge + u * (0.5 - self._edge))
        sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
        return float(data.sum()) + sign * np.minimum(magnitude, self.bound)
