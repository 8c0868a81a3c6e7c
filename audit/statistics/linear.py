"""The linear statistic: the output itself (k = 1) or Fisher's discriminant ⟨w, x⟩ (k > 1).

For a Gaussian shift, the likelihood ratio is monotone in Fisher's discriminant w = Σ⁻¹(m₁ − m₀)
(Fisher 1936), so its threshold events are the Neyman–Pearson tests; for a 1-D output with a
monotone likelihood ratio (Gaussian or Laplace shifts) the output itself is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from .base import Statistic

__all__ = ["LinearStatistic", "Moments", "combine_moments", "chunk_moments", "common_scale", "pooled_covariance",
           "lda_statistic"]


@dataclass(frozen=True)
class LinearStatistic(Statistic):
    """T(x) = ⟨w, x⟩, the 1-D test statistic (w = None means the output itself, k = 1)."""

    weights: Optional[np.ndarray] = None
    kind = "linear"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if self.weights is None:
            return outputs[:, 0]
        return outputs @ self.weights

    def to_list(self) -> Optional[list[float]]:
        return None if self.weights is None else [float(v) for v in self.weights]

    def describe(self, threshold: float) -> str:
        name = "output" if self.weights is None else "<w, output>"
        return f"{name} >= {threshold:.9g}"

    def to_dict(self) -> dict:
        return {"kind": "output" if self.weights is None else "fisher-discriminant",
                "weights": self.to_list()}


#: On the scaled path every column is scaled by a power of two to magnitudes below 1 (below
#: 2**_TOP): then every centred value is below 2 and a scatter sum over up to 2**52 rows below
#: 2**54, whatever the magnitudes the mechanism released, and the columns are on comparable
#: scales, so that the ridge of :func:`lda_statistic` (relative to the trace) does not drown the
#: columns of ordinary size beside a column of 1e300 sentinels.
_TOP = 0


class Moments(NamedTuple):
    """(count, mean, scatter) of rows x, with ``exponents`` e: the mean and scatter are those of the
    rows scaled column by column, x_j·2^(−e_j) (exact: a power of two), or of x itself when
    ``exponents`` is None.  A plain 3-tuple (count, mean, scatter) is read as unscaled."""

    count: int
    mean: np.ndarray
    scatter: np.ndarray
    exponents: Optional[np.ndarray] = None


def _exponents_of(part) -> Optional[np.ndarray]:
    return part[3] if len(part) > 3 else None


def _plain_moments(outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = outputs.mean(axis=0)
    centred = outputs - mean
    return mean, centred.T @ centred


def _finite(*arrays: np.ndarray) -> bool:
    return all(bool(np.isfinite(array).all()) for array in arrays)


def _exponents_for(bound: np.ndarray) -> np.ndarray:
    """Per column the least e with bound_j·2^(−e) < 2^_TOP (bound: an upper bound on |x_j|; e may
    be negative, and is 0 for a column of zeros)."""
    _, exponent = np.frexp(np.asarray(bound, dtype=np.float64))  # bound < 2**exponent
    return exponent.astype(np.int32) - _TOP


def chunk_moments(outputs: np.ndarray) -> Moments:
    """(count, mean, scatter matrix) of one chunk of outputs.

    Computed as they are unless a sum overflows (outputs beyond about 1e150, such as a 1e300
    sentinel); then of the outputs scaled by a power of two per column, chosen from the chunk's
    largest magnitudes so that nothing overflows (:data:`_TOP`), with the exponents kept.  Finite
    outputs (the engine refuses any other) always give finite moments this way.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        mean, scatter = _plain_moments(outputs)
    if _finite(mean, scatter):
        return Moments(outputs.shape[0], mean, scatter)
    exponents = _exponents_for(np.max(np.abs(outputs), axis=0))
    mean, scatter = _plain_moments(np.ldexp(outputs, -exponents))
    return Moments(outputs.shape[0], mean, scatter, exponents)


def _rescaled(part, exponents: np.ndarray) -> Moments:
    """``part``'s moments on the scale 2^(−exponents), each at least its own (exact unless values
    far below the new scale underflow, which they may: they are negligible beside it)."""
    own = _exponents_of(part)
    shift = exponents - (0 if own is None else own)
    return Moments(part[0], np.ldexp(part[1], -shift), np.ldexp(part[2], -np.add.outer(shift, shift)), exponents)


def common_scale(parts) -> list[Moments]:
    """Moments on one common scale per column, on which sums of their scatters cannot overflow: the
    least on which every part's columns are bounded by 2^_TOP, with |x_j| ≤ |mean_j| + √scatter_jj
    (a part's values far below the largest part's may underflow: they are negligible beside them)."""
    exponents = None
    for part in parts:
        own = _exponents_of(part)
        own = np.zeros(part[1].shape[0], dtype=np.int32) if own is None else own
        with np.errstate(over="ignore"):
            bound = np.abs(part[1]) + np.sqrt(np.abs(np.diag(part[2])))
        needed = own + _exponents_for(bound)
        exponents = needed if exponents is None else np.maximum(exponents, needed)
    return [_rescaled(part, exponents) for part in parts]


def combine_moments(parts) -> Moments:
    """Chan et al.'s pairwise update of (count, mean, scatter), in the given (fixed) order.

    Parts that are all unscaled are combined as they are when that stays finite; otherwise on a
    common scale (:func:`common_scale`), with its exponents.
    """
    parts = list(parts)
    if all(_exponents_of(part) is None for part in parts):
        with np.errstate(over="ignore", invalid="ignore"):
            combined = _combine(parts)
        if combined[1] is None or _finite(combined[1], combined[2]):
            return combined
    return _combine(common_scale(parts))


def _combine(parts) -> Moments:
    count, mean, scatter, exponents = 0, None, None, None
    for part in parts:
        n, m, s = part[0], part[1], part[2]
        if mean is None:
            count, mean, scatter, exponents = n, m.copy(), s.copy(), _exponents_of(part)
            continue
        delta = m - mean
        total = count + n
        mean = mean + delta * (n / total)
        scatter = scatter + s + np.outer(delta, delta) * (count * n / total)
        count = total
    return Moments(count, mean, scatter, exponents)


def pooled_covariance(moments_base, moments_neighbour
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray]]:
    """The pooled within-side covariance Σ = (S₀ + S₁)/(n₀ + n₁ − 2), both means, and the exponents
    of the columns' scale (None: unscaled) — the moments as they are when both are unscaled and Σ
    is finite, else on their common scale (:func:`common_scale`), where Σ, m₀ and m₁ are those of
    x_j·2^(−e_j)."""
    parts = [moments_base, moments_neighbour]
    if _exponents_of(moments_base) is None and _exponents_of(moments_neighbour) is None:
        with np.errstate(over="ignore", invalid="ignore"):
            cov = (moments_base[2] + moments_neighbour[2]) / max(moments_base[0] + moments_neighbour[0] - 2, 1)
        if _finite(cov, moments_base[1], moments_neighbour[1]):
            return cov, moments_base[1], moments_neighbour[1], None
    (n0, m0, s0, exponents), (n1, m1, s1, _) = common_scale(parts)
    return (s0 + s1) / max(n0 + n1 - 2, 1), m0, m1, exponents


def lda_statistic(moments_base, moments_neighbour) -> LinearStatistic:
    """Fisher's discriminant w = Σ⁻¹(m₁ − m₀) with the pooled covariance Σ, scaled so that
    wᵀΣw = 1.  A tiny ridge keeps it defined when Σ is singular: a deterministic coordinate that
    differs between the datasets then dominates the statistic, as it should.

    On moments of scaled columns x_j·2^(−e_j) (huge outputs, :func:`chunk_moments`) it is computed
    there, w' = Σ'⁻¹(m₁' − m₀') normalised, and folded back: ⟨w', D x⟩ = ⟨D w', x⟩ with
    D = diag(2^(−e_j)), so w = D w' is the same discriminant of the outputs themselves (Fisher's
    direction is equivariant under a change of the columns' scale; the ridge, relative to the
    trace, is taken on the scaled Σ').  A weight whose scale underflows becomes 0 or subnormal.
    """
    cov, m0, m1, exponents = pooled_covariance(moments_base, moments_neighbour)
    k = m0.shape[0]
    ridge = 1e-12 * max(float(np.trace(cov)) / k, 1e-300)
    diff = m1 - m0
    system = cov + ridge * np.eye(k)
    with np.errstate(over="ignore", invalid="ignore"):
        weights = np.linalg.solve(system, diff)
    if not np.isfinite(weights).all():
        weights = _direction(system, diff)
    norm = math.sqrt(max(float(weights @ cov @ weights), 0.0))
    if norm > 0 and math.isfinite(norm):
        weights = weights / norm
    elif not np.any(weights):
        weights = np.ones(k) / math.sqrt(k)
    if exponents is not None:
        weights = np.ldexp(weights, -exponents)
    return LinearStatistic(weights=weights)


def _direction(system: np.ndarray, diff: np.ndarray) -> np.ndarray:
    """Σ⁻¹(m₁ − m₀) up to a positive factor when the plain solve overflows: a tiny Σ (columns
    constant on the training draws leave only the ridge, 1e-312 when all are) divides a difference
    of means into infinities.  The system and the difference are scaled to magnitudes of order 1
    first and the solution by its largest entry; a positive factor does not change a threshold
    statistic's events.  Zero weights if even that is not finite."""
    top, size = float(np.max(np.abs(system))), float(np.max(np.abs(diff)))
    if not (top > 0 and size > 0):
        return np.zeros_like(diff)
    with np.errstate(over="ignore", invalid="ignore"):
        weights = np.linalg.solve(system / top, diff / size)
        weights = weights / np.max(np.abs(weights))
    return weights if np.isfinite(weights).all() else np.zeros_like(diff)
