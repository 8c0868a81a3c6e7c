"""Mechanisms whose worst neighbouring pair is not the obvious one: targets for the pair search.

Each carries its ``claim`` and, where derivable, its exact truth, so that an audit that *searches*
for the pair (:func:`scenarios.search`) can be compared with one handed the known worst pair.

- :class:`ClippedBoxMean`: Σ clip(x_i)/n for a public n, plus N(0, σ²I).  Under add/remove the
  worst pair adds the corner of the box farthest from the origin, not the all-ones row.
- :class:`ThresholdHistogram`: noisy counts of the non-empty bins, released only where they pass
  a threshold τ.  Its δ comes only from a *new* bin of count 1 (a row alone in its bin).
- :class:`ExponentialMedian`: the exponential mechanism over {0, …, R} with the rank utility of
  the median; its exact ε(δ) is computed by enumerating every neighbouring pair of its (finite)
  input domain.

References
----------
F. McSherry and K. Talwar, "Mechanism design via differential privacy", FOCS 2007 (exponential
mechanism).  A. Korolova, K. Kenthapadi, N. Mishra and A. Ntoulas, "Releasing search queries and
clicks privately", WWW 2009, and S. Vadhan, "The complexity of differential privacy", 2017,
§3.3 (stability-based histograms).  B. Balle and Y.-X. Wang, ICML 2018 (Gaussian profile).
"""

from __future__ import annotations

import itertools
import math
from functools import cached_property
from typing import Any, Optional

import numpy as np
from scipy import optimize

from ..claims import ApproxDP, GaussianDP, PureDP, Relation, as_relation
from ..gdp import gdp_delta, gdp_epsilon, gdp_tradeoff
from ..parameters import FrozenParameters
from ..validation import check_dataset, check_finite_positive, check_int, check_size

__all__ = ["ClippedBoxMean", "ThresholdHistogram", "ExponentialMedian", "SEARCH_EXAMPLES"]


def _rows(dataset: Any, d: int, name: str) -> np.ndarray:
    return check_dataset(dataset, d, name=f"dataset of {name}", unit=False)


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


class ClippedBoxMean(FrozenParameters):
    """M(D) = Σ_i clip(x_i, lo, hi)/n + N(0, σ²I_d), rows in R^d clipped to the box [lo, hi].

    ``n`` is a public normaliser (the expected dataset size); datasets of any size are accepted.
    The l2 sensitivity is Δ = ‖c‖₂/n under add/remove, where c_j = max(|lo_j|, |hi_j|) is the
    corner of the box farthest from the origin (adding that row moves the sum by c), and
    Δ = ‖hi − lo‖₂/n under replacement (one corner replaced by the opposite one).  The output
    pair is then N(m, σ²I) against N(m + Δu, σ²I), so the mechanism is exactly μ-GDP with
    μ = Δ/σ (Dong, Roth & Su 2022) and ε(δ) follows from Balle & Wang (2018, Theorem 8).

    Parameters
    ----------
    lo, hi : sequence of float
        The box, lo_j < hi_j.
    n : int
        The public normaliser.
    sigma : float
        Noise standard deviation.
    relation : {"add-remove", "replace"}
    claimed_mu : float, optional
        The μ the mechanism claims; default the exact μ (a tight, true claim).
    """

    def __init__(self, lo, hi, n: int, sigma: float, relation: Any = "add-remove",
                 claimed_mu: Optional[float] = None) -> None:
        lo_arr = np.array(lo, dtype=np.float64).reshape(-1)
        hi_arr = np.array(hi, dtype=np.float64).reshape(-1)
        if lo_arr.shape != hi_arr.shape or lo_arr.size == 0 or not np.all(np.isfinite(lo_arr)) \
                or not np.all(np.isfinite(hi_arr)) or not np.all(lo_arr < hi_arr):
            raise ValueError(f"`lo` and `hi` must be finite vectors of one length with lo < hi, "
                             f"got lo={lo!r}, hi={hi!r}")
        lo_arr.setflags(write=False)
        hi_arr.setflags(write=False)
        self.lo, self.hi = lo_arr, hi_arr
        self.d = lo_arr.size
        self.n = check_int("n", n)
        self.sigma = check_finite_positive("sigma", sigma)
        self.relation = as_relation(relation)
        mu = self.exact_mu() if claimed_mu is None else check_finite_positive("claimed_mu", claimed_mu)
        self.claim = GaussianDP(mu, self.relation)
        self._freeze(lo=tuple(lo_arr), hi=tuple(hi_arr), n=self.n, sigma=self.sigma,
                     relation=self.relation.value, claimed_mu=claimed_mu)

    @property
    def name(self) -> str:
        return f"ClippedBoxMean(d={self.d}, n={self.n}, σ={self.sigma:g}, {self.relation})"

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = _rows(dataset, self.d, self.name)
        size, rng = check_size(size), _check_rng(rng)
        mean = np.clip(data, self.lo, self.hi).sum(axis=0) / self.n
        return mean + rng.normal(0.0, self.sigma, (size, self.d))

    def sensitivity(self, relation: Any = None) -> float:
        """Δ = ‖max(|lo|, |hi|)‖₂/n (add/remove) or ‖hi − lo‖₂/n (replace)."""
        relation = self.relation if relation is None else as_relation(relation)
        if relation is Relation.ADD_REMOVE:
            return float(np.linalg.norm(np.maximum(np.abs(self.lo), np.abs(self.hi)))) / self.n
        return float(np.linalg.norm(self.hi - self.lo)) / self.n

    def worst_pair(self, relation: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """A pair attaining Δ: (∅ + rest, rest + far corner) or (corner, opposite corner)."""
        relation = self.relation if relation is None else as_relation(relation)
        far = np.where(np.abs(self.lo) > np.abs(self.hi), self.lo, self.hi)
        rest = np.tile((self.lo + self.hi) / 2.0, (self.n - 1, 1))
        if relation is Relation.ADD_REMOVE:
            return rest, np.vstack([rest, far])
        return np.vstack([rest, self.lo]), np.vstack([rest, self.hi])

    def exact_mu(self, relation: Any = None) -> float:
        return self.sensitivity(relation) / self.sigma

    def privacy_profile(self, epsilon, relation: Any = None) -> np.ndarray:
        return gdp_delta(epsilon, self.exact_mu(relation))

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        return gdp_epsilon(delta, self.exact_mu(relation))

    def tradeoff(self, alpha, relation: Any = None) -> np.ndarray:
        return gdp_tradeoff(alpha, self.exact_mu(relation))


class ThresholdHistogram(FrozenParameters):
    """Stability-based histogram over categories {0, …, K−1} (one categorical column).

    For every bin j with count c_j ≥ 1 draw Y_j = c_j + Lap(b) and output Y_j if Y_j ≥ τ, else 0;
    empty bins always output 0.  Under add/remove one row changes one count by one.

    **Exact privacy at ε ≥ ε₀ = 1/b** (add/remove only).  With p = P(1 + Lap(b) ≥ τ) =
    ½e^{−(τ−1)/b} (τ ≥ 1):

    * a pair in which an existing bin goes c → c + 1 (c ≥ 1) is a post-processing of the Laplace
      mechanism with shift 1, so its hockey-stick divergence is 0 at every ε ≥ 1/b;
    * a pair that opens a new bin (0 → 1) compares the point mass at 0 (P) with Q = (1 − p)·δ₀ +
      the released part (mass p, where P has none): H_{e^ε}(Q‖P) = p + (1 − p − e^ε)₊ = p and
      H_{e^ε}(P‖Q) = (1 − e^ε(1 − p))₊ = 0 once e^ε ≥ 1/(1 − p).

    Hence δ(ε) = p exactly for ε ≥ max(1/b, −ln(1 − p)), and ε(δ) = ∞ for δ < p (the new-bin pair
    has δ = p at every ε).  Below ε₀ the profile mixes both kinds of pair and is not derived here
    (the exact methods raise ``NotImplementedError``: truth unknown).

    Parameters
    ----------
    bins : int
        K, the number of categories.
    scale : float
        b, the Laplace scale (ε₀ = 1/b).
    threshold : float
        τ ≥ 1.
    claimed_delta : float, optional
        The δ of the claim ApproxDP(1/b, δ); default the exact p (a tight, true claim).
    """

    def __init__(self, bins: int, scale: float, threshold: float,
                 claimed_delta: Optional[float] = None, relation: Any = "add-remove") -> None:
        self.bins = check_int("bins", bins)
        self.scale = check_finite_positive("scale", scale)
        self.threshold = check_finite_positive("threshold", threshold)
        if self.threshold < 1.0:
            raise ValueError(f"`threshold` must be >= 1, got {threshold!r}")
        self.relation = as_relation(relation)
        if self.relation is not Relation.ADD_REMOVE:
            raise ValueError(f"`relation` must be 'add-remove' (the replace analysis is not "
                             f"derived here), got {relation!r}")
        self.release_probability = 0.5 * math.exp(-(self.threshold - 1.0) / self.scale)
        delta = self.release_probability if claimed_delta is None else claimed_delta
        self.claim = ApproxDP(1.0 / self.scale, delta, self.relation)
        self._freeze(bins=self.bins, scale=self.scale, threshold=self.threshold,
                     claimed_delta=claimed_delta, relation=self.relation.value)

    @property
    def name(self) -> str:
        return f"ThresholdHistogram(K={self.bins}, b={self.scale:g}, τ={self.threshold:g})"

    @property
    def exact_epsilon0(self) -> float:
        return max(1.0 / self.scale, -math.log1p(-self.release_probability))

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = _rows(dataset, 1, self.name)[:, 0]
        size, rng = check_size(size), _check_rng(rng)
        if data.size and (np.any(data != np.round(data)) or data.min() < 0 or data.max() >= self.bins):
            raise ValueError(f"`dataset` of {self.name} must hold categories 0..{self.bins - 1}")
        counts = np.bincount(data.astype(np.int64), minlength=self.bins).astype(np.float64)
        noisy = counts + rng.laplace(0.0, self.scale, (size, self.bins))
        released = (noisy >= self.threshold) & (counts > 0)
        return np.where(released, noisy, 0.0)

    def worst_pair(self, relation: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """D = one row in bin 0, D' = D plus a row alone in bin K − 1 (K ≥ 2)."""
        base = np.zeros((1, 1))
        return base, np.vstack([base, [[self.bins - 1.0]]])

    def _check(self, relation, epsilon) -> np.ndarray:
        if relation is not None and as_relation(relation) is not Relation.ADD_REMOVE:
            raise NotImplementedError("only the add-remove relation is derived")
        epsilon = np.asarray(epsilon, dtype=np.float64)
        if np.any(epsilon < self.exact_epsilon0):
            raise NotImplementedError(f"δ(ε) below ε₀ = {self.exact_epsilon0:g} is not derived: "
                                      "truth unknown")
        return epsilon

    def privacy_profile(self, epsilon, relation: Any = None) -> np.ndarray:
        """δ(ε) = p for ε ≥ ε₀ (see the class docstring)."""
        epsilon = self._check(relation, epsilon)
        return np.full(epsilon.shape, self.release_probability)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """∞ for δ < p; unknown (``NotImplementedError``) for δ ≥ p."""
        self._check(relation, self.exact_epsilon0)
        if delta < self.release_probability:
            return math.inf
        raise NotImplementedError("ε(δ) for δ ≥ p is not derived: truth unknown")


class ExponentialMedian(FrozenParameters):
    """The exponential mechanism for the median over outputs {0, …, R}.

    P_D(r) ∝ exp(ε u(D, r)/2) with u(D, r) = −|#{x < r} − #{x > r}|, whose sensitivity is 1 under
    add/remove (one row moves one of the two counts by at most one).  So the mechanism claims
    PureDP(ε) (McSherry & Talwar 2007) under add/remove.  Inputs: integer rows in {0, …, R}, with
    between ``min_size`` and ``max_size`` rows (the mechanism's input domain).

    **Exact truth.**  Outputs are finite, so for a pair δ(ε') = Σ_r (P(r) − e^{ε'}Q(r))₊ exactly; the
    mechanism's profile is the maximum over *every* neighbouring pair of its finite input domain
    (both orders), enumerated as multisets (:meth:`pair_distributions`).  ε(δ) is the root of the
    decreasing δ(ε') − δ (Brent), and ε(0) the largest log-ratio.
    """

    def __init__(self, epsilon: float, top: int, max_size: int, min_size: int = 0,
                 relation: Any = "add-remove", claimed_epsilon: Optional[float] = None) -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.top = check_int("top", top)
        self.min_size = check_int("min_size", min_size, minimum=0)
        self.max_size = check_int("max_size", max_size, minimum=max(1, self.min_size))
        self.relation = as_relation(relation)
        if self.relation is not Relation.ADD_REMOVE:
            raise ValueError(f"`relation` must be 'add-remove' (sensitivity 1 of the rank utility "
                             f"is stated for it), got {relation!r}")
        claimed = self.epsilon if claimed_epsilon is None else claimed_epsilon
        self.claim = PureDP(claimed, self.relation)
        self._freeze(epsilon=self.epsilon, top=self.top, max_size=self.max_size,
                     min_size=self.min_size, relation=self.relation.value,
                     claimed_epsilon=claimed_epsilon)

    @property
    def name(self) -> str:
        return f"ExponentialMedian(ε={self.epsilon:g}, R={self.top}, n≤{self.max_size})"

    def distribution(self, values: np.ndarray) -> np.ndarray:
        """Output probabilities P_D(0), …, P_D(R) for the dataset of integer ``values``."""
        r = np.arange(self.top + 1)
        below = np.searchsorted(np.sort(values), r, side="left")
        above = values.size - np.searchsorted(np.sort(values), r, side="right")
        logits = -0.5 * self.epsilon * np.abs(below - above)
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = _rows(dataset, 1, self.name)[:, 0]
        size, rng = check_size(size), _check_rng(rng)
        if not self.min_size <= data.size <= self.max_size:
            raise ValueError(f"`dataset` of {self.name} must have {self.min_size}..{self.max_size} "
                             f"rows, got {data.size}")
        if data.size and (np.any(data != np.round(data)) or data.min() < 0 or data.max() > self.top):
            raise ValueError(f"`dataset` of {self.name} must hold integers 0..{self.top}")
        cdf = np.cumsum(self.distribution(data))
        index = np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right")
        return np.minimum(index, self.top).astype(np.float64).reshape(size, 1)

    @cached_property
    def _pairs(self) -> tuple[np.ndarray, np.ndarray, list]:
        """(P, Q, datasets): output distributions of every ordered add/remove pair, both orders."""
        base, bigger, labels = [], [], []
        for n in range(self.min_size, self.max_size):
            for values in itertools.combinations_with_replacement(range(self.top + 1), n):
                small = np.array(values, dtype=np.int64)
                p = self.distribution(small)
                for added in range(self.top + 1):
                    large = np.sort(np.append(small, added))
                    base.append(p)
                    bigger.append(self.distribution(large))
                    labels.append((small, large))
        p, q = np.array(base), np.array(bigger)
        return np.vstack([p, q]), np.vstack([q, p]), labels + [(b, a) for a, b in labels]

    def pair_distributions(self) -> tuple[np.ndarray, np.ndarray]:
        """Output distributions (P, Q) of every ordered neighbouring pair of the input domain."""
        p, q, _ = self._pairs
        return p, q

    def privacy_profile(self, epsilon, relation: Any = None) -> np.ndarray:
        """δ(ε') = max over all pairs of Σ_r (P(r) − e^{ε'}Q(r))₊ (exact enumeration)."""
        self._relation(relation)
        p, q = self.pair_distributions()
        epsilon = np.asarray(epsilon, dtype=np.float64)
        flat = epsilon.reshape(-1)
        values = np.array([np.maximum(p - math.exp(e) * q, 0.0).sum(axis=1).max() for e in flat])
        return values.reshape(epsilon.shape)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """Exact ε(δ): the largest log-ratio for δ = 0, else the root of δ(ε') = δ."""
        self._relation(relation)
        p, q = self.pair_distributions()
        top = float(np.max(np.log(p) - np.log(q)))
        if delta <= 0:
            return top
        if float(self.privacy_profile(0.0)) <= delta:
            return 0.0
        return optimize.brentq(lambda e: float(self.privacy_profile(e)) - delta, 0.0, top,
                               xtol=1e-13, rtol=1e-13)

    def worst_pair(self, relation: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """The ordered pair with the largest log-ratio (pure ε)."""
        self._relation(relation)
        p, q, labels = self._pairs
        index = int(np.argmax(np.max(np.log(p) - np.log(q), axis=1)))
        small, large = labels[index]
        return small.astype(np.float64).reshape(-1, 1), large.astype(np.float64).reshape(-1, 1)

    def _relation(self, relation) -> None:
        if relation is not None and as_relation(relation) is not Relation.ADD_REMOVE:
            raise NotImplementedError("only the add-remove relation is derived")


#: The example mechanisms by name.
SEARCH_EXAMPLES = {"clipped-box-mean": ClippedBoxMean, "threshold-histogram": ThresholdHistogram,
                   "exponential-median": ExponentialMedian}
