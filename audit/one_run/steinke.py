"""The binary-guess one-run bound of Steinke, Nasr & Jagielski (NeurIPS 2023).

m canaries are included in a single training run, each independently with probability ½
(S_i ∈ {in, out}).  After training the auditor scores every canary and, abstaining on the rest,
guesses "in" for the k₊ highest scores and "out" for the k₋ lowest: r = k₊ + k₋ guesses, of which
v are correct.  Their theorem for (ε, δ)-DP (Steinke, Nasr & Jagielski 2023, §5, with the p-value
of their Appendix D) bounds the chance of v or more correct guesses under any (ε, δ)-DP training:

    P[V ≥ v] ≤ p(ε, δ) = P[W ≥ v] + 2mδ · max_{i = 1..v} P[v − i ≤ W < v] / i,
    W ~ Binomial(r, e^ε / (1 + e^ε)),

so observing v rejects (ε, δ)-DP at level γ whenever p(ε, δ) < γ.  The certified bound is

    ε_lb = inf { ε ≥ 0 : p(ε, δ) ≥ γ },

so that ε_lb > ε* (the true ε) implies p(ε*, δ) < γ, an event of probability ≤ γ, whether or not
p is monotone in ε.  The binomial tails are computed exactly (scipy's binomial sf and pmf, no normal
approximation); ε_lb is located on a grid of step :data:`EPSILON_STEP` from 0 to the first grid
point where p ≥ γ and refined by bisection inside that last step.

The numbers of guesses must be fixed before the scores are seen; :func:`audit.one_run.one_run_audit`
pays for a set of candidate (k₊, k₋) by Bonferroni (each is tested at γ / #candidates) and reports
the best.

References
----------
T. Steinke, M. Nasr and M. Jagielski (2023), *Privacy auditing with one (1) training run*, NeurIPS,
§5 and Appendix D.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from mechanisms.validation import check_int, check_open_unit

__all__ = ["one_run_p_value", "one_run_epsilon", "EPSILON_STEP", "check_counts", "check_delta"]

#: Grid step of the ε search (the bound is then refined by bisection inside one step).
EPSILON_STEP = 1e-3
_EPSILON_MAX = 50.0


def one_run_p_value(m: int, r: int, v: int, epsilon, delta: float) -> np.ndarray:
    """p(ε, δ) of the module docstring, vectorized in ε (at most 1)."""
    m, r, v = check_counts(m, r, v)
    delta = check_delta(delta)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
    if np.any(~(eps >= 0)):
        raise ValueError(f"`epsilon` must be >= 0, got {epsilon!r}")
    q = 1.0 / (1.0 + np.exp(-eps))
    tail = stats.binom.sf(v - 1, r, q[:, None]).reshape(-1) if v > 0 else np.ones_like(eps)
    extra = np.zeros_like(eps)
    if v > 0 and delta > 0:
        below = stats.binom.pmf(np.arange(v - 1, -1, -1)[None, :], r, q[:, None])  # P[W = v − i]
        extra = (np.cumsum(below, axis=1) / np.arange(1, v + 1)).max(axis=1)
    p = np.minimum(1.0, tail + 2.0 * m * delta * extra)
    return p.reshape(np.shape(epsilon))


def one_run_epsilon(m: int, r: int, v: int, delta: float, gamma: float) -> float:
    """ε_lb = inf{ε ≥ 0 : p(ε, δ) ≥ γ} (0 when even ε = 0 is not rejected).

    The first grid point with p ≥ γ is found by branch and bound: a block of grid points is skipped
    when an upper bound on p over its ε-interval (:func:`_interval_upper`) is below γ, and blocks of
    at most 16 points are evaluated exactly.  This finds the same grid point as scanning the whole
    grid, without assuming p monotone, at O(v) cost per block instead of per point.
    """
    gamma = check_open_unit("gamma", gamma)
    m, r, v = check_counts(m, r, v)
    delta = check_delta(delta)
    if float(one_run_p_value(m, r, v, 0.0, delta)) >= gamma:
        return 0.0
    grid = _grid()
    index = _first_crossing(m, r, v, delta, gamma, grid, 0, grid.size - 1)
    if index is None:
        return math.inf
    high = float(grid[index])
    low = high - EPSILON_STEP
    for _ in range(30):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if float(one_run_p_value(m, r, v, mid, delta)) < gamma else (low, mid)
    return low


def _grid() -> np.ndarray:
    """The ε grid: chunks of 1024 steps from 0 to _EPSILON_MAX, each starting where the last ended."""
    chunks, start = [], 0.0
    while start < _EPSILON_MAX:
        chunk = start + EPSILON_STEP * np.arange(1, 1025)
        chunks.append(chunk)
        start = float(chunk[-1])
    return np.concatenate(chunks)


def _first_crossing(m, r, v, delta, gamma, grid, first, last):
    """The first index in ``grid[first:last + 1]`` with p ≥ γ, or None."""
    if _interval_upper(m, r, v, delta, float(grid[first]), float(grid[last])) < gamma:
        return None
    if last - first < 16:
        crossed = np.flatnonzero(one_run_p_value(m, r, v, grid[first:last + 1], delta) >= gamma)
        return first + int(crossed[0]) if crossed.size else None
    middle = (first + last) // 2
    found = _first_crossing(m, r, v, delta, gamma, grid, first, middle)
    return found if found is not None else _first_crossing(m, r, v, delta, gamma, grid, middle + 1, last)


def _interval_upper(m: int, r: int, v: int, delta: float, low: float, high: float) -> float:
    """An upper bound on p(ε, δ) over ε ∈ [low, high].

    P[W ≥ v] grows with q = e^ε/(1 + e^ε), so the tail at ``high`` bounds it; each P[W = w] is
    largest over q ∈ [q_low, q_high] at q = clip(w/r, q_low, q_high), so the running averages of
    those largest values bound the δ term.
    """
    q_low, q_high = 1.0 / (1.0 + math.exp(-low)), 1.0 / (1.0 + math.exp(-high))
    tail = float(stats.binom.sf(v - 1, r, q_high)) if v > 0 else 1.0
    if v == 0 or delta == 0:
        return min(1.0, tail)
    w = np.arange(v - 1, -1, -1)
    largest = stats.binom.pmf(w, r, np.clip(w / r, q_low, q_high))
    extra = float((np.cumsum(largest) / np.arange(1, v + 1)).max())
    return min(1.0, tail + 2.0 * m * delta * extra)


def check_counts(m, r, v):
    m, r, v = check_int("m", m, minimum=1), check_int("r", r, minimum=0), check_int("v", v, minimum=0)
    if not v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got m={m}, r={r}, v={v}")
    return m, r, v


def check_delta(delta) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)) or not 0 <= delta < 1:
        raise ValueError(f"`delta` must be in [0, 1), got {delta!r}")
    return float(delta)
