"""The linear statistic: the output itself (k = 1) or Fisher's discriminant ⟨w, x⟩ (k > 1).

For a Gaussian shift, the likelihood ratio is monotone in Fisher's discriminant w = Σ⁻¹(m₁ − m₀)
(Fisher 1936), so its threshold events are the Neyman–Pearson tests; for a 1-D output with a
monotone likelihood ratio (Gaussian or Laplace shifts) the output itself is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .base import Statistic

__all__ = ["LinearStatistic", "combine_moments", "chunk_moments", "lda_statistic"]


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


def chunk_moments(outputs: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """(count, mean, scatter matrix) of one chunk of outputs."""
    mean = outputs.mean(axis=0)
    centred = outputs - mean
    return outputs.shape[0], mean, centred.T @ centred


def combine_moments(parts) -> tuple[int, np.ndarray, np.ndarray]:
    """Chan et al.'s pairwise update of (count, mean, scatter), in the given (fixed) order."""
    count, mean, scatter = 0, None, None
    for n, m, s in parts:
        if mean is None:
            count, mean, scatter = n, m.copy(), s.copy()
            continue
        delta = m - mean
        total = count + n
        mean = mean + delta * (n / total)
        scatter = scatter + s + np.outer(delta, delta) * (count * n / total)
        count = total
    return count, mean, scatter


def lda_statistic(moments_base, moments_neighbour) -> LinearStatistic:
    """Fisher's discriminant w = Σ⁻¹(m₁ − m₀) with the pooled covariance Σ, scaled so that
    wᵀΣw = 1.  A tiny ridge keeps it defined when Σ is singular: a deterministic coordinate that
    differs between the datasets then dominates the statistic, as it should."""
    n0, m0, s0 = moments_base
    n1, m1, s1 = moments_neighbour
    k = m0.shape[0]
    cov = (s0 + s1) / max(n0 + n1 - 2, 1)
    ridge = 1e-12 * max(float(np.trace(cov)) / k, 1e-300)
    diff = m1 - m0
    weights = np.linalg.solve(cov + ridge * np.eye(k), diff)
    norm = math.sqrt(max(float(weights @ cov @ weights), 0.0))
    if norm > 0 and math.isfinite(norm):
        weights = weights / norm
    elif not np.any(weights):
        weights = np.ones(k) / math.sqrt(k)
    return LinearStatistic(weights=weights)
