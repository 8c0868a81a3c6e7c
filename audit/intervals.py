"""Clopper–Pearson confidence bounds for binomial proportions.

The exact (conservative) interval of Clopper & Pearson (1934): for k successes in n trials, the
one-sided upper bound at level γ is the (1 − γ) quantile of Beta(k + 1, n − k) (1 when k = n) and the
lower bound is the γ quantile of Beta(k, n − k + 1) (0 when k = 0).  Each one-sided bound fails with
probability at most γ whatever the true proportion.  We compute the quantiles with
``scipy.special.betaincinv`` and ``betainccinv``, the inverses of the regularized incomplete beta
function and of its complement (so a tail of 1e-12 keeps full precision).  They are the Boost
routines behind ``scipy.stats.beta`` without its per-call overhead: a scalar bound costs about 2 µs
instead of 0.15 ms, which matters because an audit certifies hundreds of events one by one.  The
tests check them against ``scipy.stats.beta`` quantiles and statsmodels'
``proportion_confint(method="beta")``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = ["ConfidenceInterval", "cp_lower", "cp_upper", "cp_interval", "cp_for_choosing"]


@dataclass(frozen=True)
class ConfidenceInterval:
    """An interval [low, high] for a quantity, holding with probability ≥ ``confidence``."""

    low: float
    high: float
    confidence: float

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict:
        return {"low": self.low, "high": self.high, "confidence": self.confidence}


def _validate(k, n, level):
    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("Clopper–Pearson needs 0 <= k <= n and n >= 1")
    if not 0.0 < level < 0.5:
        raise ValueError(f"`level` must be in (0, 0.5), got {level!r}")
    return k, n


def _lower(k, n, level):
    with np.errstate(invalid="ignore"):
        low = special.betaincinv(np.maximum(k, 1), n - k + 1, level)
    return np.where(k == 0, 0.0, np.nan_to_num(np.asarray(low, dtype=np.float64), nan=0.0))


def _upper(k, n, level):
    with np.errstate(invalid="ignore"):
        high = special.betainccinv(k + 1, np.maximum(n - k, 1), level)
    return np.where(k == n, 1.0, np.nan_to_num(np.asarray(high, dtype=np.float64), nan=1.0))


def cp_upper(k, n, level: float) -> np.ndarray:
    """One-sided upper Clopper–Pearson bound: P(p > bound) ≤ ``level`` (vectorized)."""
    k, n = _validate(k, n, level)
    return _upper(k, n, level)


def cp_lower(k, n, level: float) -> np.ndarray:
    """One-sided lower Clopper–Pearson bound: P(p < bound) ≤ ``level`` (vectorized)."""
    k, n = _validate(k, n, level)
    return _lower(k, n, level)


#: :func:`cp_for_choosing` is exact for the smallest and largest ``_EXACT_ENDS`` counts and
#: interpolates between ``_GRID`` log-spaced counts from either end in between.
_EXACT_ENDS = 64
_GRID = 256


def cp_for_choosing(bound, k, n: int, level: float) -> np.ndarray:
    """``bound`` (:func:`cp_upper` or :func:`cp_lower`) for a large array of counts out of one
    ``n``, cheaply: exact for k < 64 and n − k < 64, linearly interpolated in k between exact values
    at 2·256 log-spaced counts in between (the bounds are smooth and monotone in k).  For *choosing*
    events and statistics only; nothing certified uses it.  (For counts at all 32,769 thresholds of
    a histogram it evaluates about 640 quantiles instead of 32,769.)"""
    k = np.asarray(k, dtype=np.int64)
    n = int(n)
    if n + 1 <= 2 * _EXACT_ENDS + 2 * _GRID:  # decided by n alone: the same counts, the same values
        return bound(k, n, level)
    spaced = np.geomspace(_EXACT_ENDS, n + 1 - _EXACT_ENDS, _GRID).astype(np.int64)
    grid = np.unique(np.concatenate([np.arange(_EXACT_ENDS), n - np.arange(_EXACT_ENDS), spaced, n - spaced]))
    return np.interp(k, grid, bound(grid, n, level))


def cp_interval(k: int, n: int, confidence: float) -> ConfidenceInterval:
    """Two-sided Clopper–Pearson interval with each tail at (1 − confidence)/2."""
    level = (1.0 - confidence) / 2.0
    k, n = _validate(k, n, level)
    return ConfidenceInterval(float(_lower(k, n, level)), float(_upper(k, n, level)), confidence)
