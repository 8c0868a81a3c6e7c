"""The single-threshold statistical limit: what an ideal audit could certify from n samples.

For two output distributions P (base dataset) and Q (neighbour) of a 1-D test statistic T, and a
threshold t, the event E_t = {T ≥ t} has probabilities B = P(E_t) and A = Q(E_t) (and the
roles swap for the other orientation).  An audit that certifies E_t from n samples per side sees
counts k_A ≈ nA and k_B ≈ nB.  **The limit** is the bound it would certify if the counts were
exactly their means:

    α_hi = CP_upper(nB, n, γ),  β_hi = 1 − CP_lower(nA, n, γ),
    ε_limit(n) = sup_t max(0, ln((1 − δ − β_hi)/α_hi), ln((1 − δ − α_hi)/β_hi)),
    μ_limit(n) = sup_t Φ⁻¹(1 − α_hi) − Φ⁻¹(β_hi),

with the Clopper–Pearson bounds evaluated at the real-valued count k = np through their Beta
quantile form (upper: the 1 − γ quantile of Beta(k + 1, n − k); lower: the γ quantile of
Beta(k, n − k + 1)), over both orientations and a fine grid of thresholds t, at the same per-bound
level γ the engine uses for the quantity (see :class:`audit.selection.Budget`).  This is the
expected certified bound of the best *single threshold* with the *ideal* statistic (the exact
likelihood-ratio direction; the engine learns it, and chooses its threshold on a finite histogram
from separate selection samples), so a real audit lands at or somewhat below it.  docs/ground-truth.md §3
tabulates the same quantity at the 95% one-sided level (γ = 0.025) for the classical Gaussian.

References
----------
Clopper & Pearson (1934); Kairouz, Oh & Viswanath (2015) for the test-to-ε inequalities;
Jagielski, Ullman & Oprea (2020) and Nasr et al. (2023) for the auditing bounds (docs/ground-truth.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import special

from audit.bounds import epsilon_lower_bound, mu_lower_bound

__all__ = ["Limit", "cp_upper_real", "cp_lower_real", "single_threshold_limit"]

#: A survival function t ↦ P(T ≥ t), vectorized.
Survival = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Limit:
    """The best single-threshold bounds at n samples per side (see the module docstring)."""

    samples: int
    epsilon: float
    mu: float
    epsilon_level: float
    mu_level: float
    delta: float
    epsilon_threshold: float
    mu_threshold: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _beta_quantile(a: np.ndarray, b: np.ndarray, p: float) -> np.ndarray:
    """The p quantile of Beta(a, b), elementwise, checked by a round trip.

    ``scipy.special.betaincinv`` (scipy 1.17) occasionally returns a wrong root for non-integer
    a with very large b (e.g. a = 4.7493990472807596, b ≈ 10⁸ gives 7.7e-6 instead of 1.49e-8);
    such entries are recomputed by bisection on ``betainc``.
    """
    x = special.betaincinv(a, b, p)
    bad = np.flatnonzero(~(np.abs(special.betainc(a, b, x) - p) <= 1e-6 * min(p, 1.0 - p)))
    if bad.size:  # bisection on log x, vectorized over the (few) bad entries
        ab, bb = a[bad], b[bad]
        low, high = np.full(bad.size, -745.0), np.zeros(bad.size)
        for _ in range(200):
            mid = 0.5 * (low + high)
            below = special.betainc(ab, bb, np.exp(mid)) < p
            low, high = np.where(below, mid, low), np.where(below, high, mid)
        fixed = np.exp(0.5 * (low + high))
        better = np.abs(special.betainc(ab, bb, fixed) - p) < np.abs(special.betainc(ab, bb, x[bad]) - p)
        x[bad[better]] = fixed[better]
    return x


def cp_upper_real(k: np.ndarray, n: int, level: float) -> np.ndarray:
    """Upper Clopper–Pearson bound at a real-valued count k: the 1 − level quantile of
    Beta(k + 1, n − k); 1 where k ≥ n."""
    k = np.clip(np.asarray(k, dtype=np.float64), 0.0, float(n))
    inner = k < n
    out = np.ones_like(k)
    out[inner] = _beta_quantile(k[inner] + 1.0, n - k[inner], 1.0 - level)
    return out


def cp_lower_real(k: np.ndarray, n: int, level: float) -> np.ndarray:
    """Lower Clopper–Pearson bound at a real-valued count k: the level quantile of
    Beta(k, n − k + 1); 0 where k ≤ 0."""
    k = np.clip(np.asarray(k, dtype=np.float64), 0.0, float(n))
    inner = k > 0
    out = np.zeros_like(k)
    out[inner] = _beta_quantile(k[inner], n - k[inner] + 1.0, level)
    return out


def _points(sf_a: np.ndarray, sf_b: np.ndarray, n: int, level: float):
    """(α_hi, β_hi) of the events {T ≥ t} (A = more likely side, B = the other) at mean counts."""
    alpha_hi = cp_upper_real(n * sf_b, n, level)
    beta_hi = 1.0 - cp_lower_real(n * sf_a, n, level)
    return alpha_hi, beta_hi


def single_threshold_limit(base_sf: Survival, neighbour_sf: Survival, thresholds: np.ndarray, *,
                           samples: int, delta: float, epsilon_level: float,
                           mu_level: float) -> Limit:
    """The single-threshold limit of ε at ``delta`` and of μ, from exact survival functions.

    Parameters
    ----------
    base_sf, neighbour_sf : callable
        t ↦ P(T ≥ t) under the base and the neighbour dataset (exact, vectorized).
    thresholds : array
        The thresholds t to try (a fine grid spanning both distributions' tails).
    samples : int
        n, samples per side of the certification phase.
    delta : float
        The δ of the ε bound (the claim's reference δ).
    epsilon_level, mu_level : float
        Per-bound one-sided Clopper–Pearson levels γ of the ε and μ bounds.
    """
    coarse = np.asarray(thresholds, dtype=np.float64)
    best = {}
    for name, level, score in (("epsilon", epsilon_level, lambda a, b: epsilon_lower_bound(a, b, delta)),
                               ("mu", mu_level, mu_lower_bound)):
        value, where = _search(base_sf, neighbour_sf, coarse, samples, level, score)
        if np.isfinite(where):  # refine between the coarse neighbours of the best threshold
            step = float(np.max(np.diff(coarse))) if coarse.size > 1 else 0.0
            fine = np.linspace(where - step, where + step, 2001)
            value, where = max((value, where),
                               _search(base_sf, neighbour_sf, fine, samples, level, score))
        best[name] = (value, where)
    return Limit(samples=int(samples), epsilon=best["epsilon"][0], mu=best["mu"][0],
                 epsilon_level=float(epsilon_level), mu_level=float(mu_level), delta=float(delta),
                 epsilon_threshold=best["epsilon"][1], mu_threshold=best["mu"][1])


def _search(base_sf: Survival, neighbour_sf: Survival, t: np.ndarray, n: int, level: float,
            score) -> tuple[float, float]:
    """The best score over thresholds t and both orientations, and where it is reached."""
    p, q = np.asarray(base_sf(t), dtype=np.float64), np.asarray(neighbour_sf(t), dtype=np.float64)
    # Thresholds with (expected) no sample on either side, or all of them on both, certify nothing.
    useful = (np.maximum(p, q) * n >= 0.5) & (np.minimum(p, q) * n <= n - 0.5)
    t, p, q = t[useful], p[useful], q[useful]
    value, where = 0.0, float("nan")
    for sf_a, sf_b in ((q, p), (p, q)):  # orientation: more likely under Q, then under P
        if t.size == 0:
            break
        alpha_hi, beta_hi = _points(sf_a, sf_b, n, level)
        scores = score(alpha_hi, beta_hi)
        i = int(np.argmax(scores))
        if scores[i] > value:
            value, where = float(scores[i]), float(t[i])
    return value, where
