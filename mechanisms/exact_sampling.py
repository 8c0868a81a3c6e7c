"""Exact samplers for discrete Laplace and discrete Gaussian noise (Canonne, Kamath & Steinke 2020).

Every random decision is an exact comparison of uniformly random *integers* drawn with
``Generator.integers``: no floating-point number is ever drawn, rounded or compared, so the
samples follow the stated distributions exactly (given an ideal integer generator).  All loops
are vectorized: each pass handles every still-undecided sample at once, and the number of passes
has a geometric tail.

- :func:`bernoulli_exp` draws Bernoulli(exp(−n/d)) for an integer array n ≥ 0 and an integer d > 0.  The fraction
  γ = r/d < 1 (r = n mod d) uses CKS Algorithm 1: K ← 1; while Bernoulli(γ/K) succeeds, K ← K + 1;
  return [K odd], since P(K > k) = γ^k/k! gives P(K odd) = e^{−γ}.  Bernoulli(γ/K) is drawn as
  Bernoulli(r/d) ∧ Bernoulli(1/K) (two independent integer draws, so d·K never overflows).  The
  integer part ⌊n/d⌋ multiplies in that many independent Bernoulli(e^{−1}) draws, stopping at the
  first failure.
- :func:`discrete_laplace` draws P(y) ∝ exp(−|y|·s/t) on ℤ for positive integers s, t
  (CKS Algorithm 2).
- :func:`discrete_gaussian` draws P(y) ∝ exp(−y²/(2σ²)) on ℤ for a rational σ² = p/q by rejection
  from the discrete Laplace of scale t = ⌊σ⌋ + 1, accepting with probability
  exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−c²/(2pqt²)), c = |Y|·t·q − p (CKS Algorithm 3).

Integer ranges.  Everything is int64.  The constructor-level check :func:`check_gaussian_denominator`
keeps 2pqt² below 2^62; c² is formed in int64 only for |c| ≤ 3·10^9 (c² < 2^63), and the
astronomically rare larger |c| (|Y| beyond hundreds of σ) are split into ⌊c²/D⌋ and c² mod D with
Python integers, which is still exact.

References
----------
C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
Algorithms 1–3.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["bernoulli_exp", "discrete_laplace", "discrete_gaussian", "check_gaussian_denominator",
           "MAX_DENOMINATOR"]

#: Largest denominator of the rationals (σ², ε/Δ) the mechanisms sample with.
MAX_DENOMINATOR = 10_000
_INT64_SAFE = 2**62
_SQUARE_SAFE = 3_000_000_000  # 3e9² < 2^63


def _bernoulli_exp_fraction(r: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(−r/d)) for integers 0 ≤ r ≤ d (CKS Algorithm 1), vectorized.

    Every undecided sample has the same K in a given pass, so both integer draws of a pass use a
    scalar bound (d, resp. K), which numpy draws far faster than per-element bounds.
    """
    stop = np.zeros(r.shape, dtype=np.int64)  # the K at which each sample's loop ended
    alive = np.arange(r.size)
    k = 1
    while alive.size:
        success = rng.integers(0, d, alive.size) < r[alive]  # Bernoulli(r/d)
        if k > 1:
            success &= rng.integers(0, k, alive.size) == 0  # ∧ Bernoulli(1/K)
        stop[alive[~success]] = k
        alive = alive[success]
        k += 1
    return stop % 2 == 1


def bernoulli_exp(n, d: int, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(exp(−n/d)) for an int64 array ``n`` ≥ 0 and an integer ``d`` > 0."""
    n = np.asarray(n, dtype=np.int64).ravel()
    d = int(d)
    whole, rest = n // d, n % d
    result = np.ones(n.shape, dtype=bool)
    ones = np.ones(n.shape, dtype=np.int64)
    pending = np.flatnonzero(whole > 0)
    while pending.size:  # ⌊n/d⌋ factors e^{−1}, stopping at the first failure
        result[pending] = _bernoulli_exp_fraction(ones[pending], 1, rng)
        whole[pending] -= 1
        pending = pending[result[pending] & (whole[pending] > 0)]
    undecided = np.flatnonzero(result)
    result[undecided] = _bernoulli_exp_fraction(rest[undecided], d, rng)
    return result


def discrete_laplace(s: int, t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of P(y) ∝ exp(−|y| s/t) on ℤ (CKS Algorithm 2), int64."""
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        m = todo.size
        u = rng.integers(0, t, m)
        keep = bernoulli_exp(u, t, rng)  # D ~ Bernoulli(exp(−U/t))
        u = u[keep]
        v = np.zeros(u.size, dtype=np.int64)  # V ~ Geometric: Bernoulli(e^{−1}) successes
        alive = np.arange(u.size)
        while alive.size:
            success = _bernoulli_exp_fraction(np.ones(alive.size, dtype=np.int64), 1, rng)
            v[alive[success]] += 1
            alive = alive[success]
        y = (u + t * v) // s
        sign = rng.integers(0, 2, u.size)
        accept = ~((sign == 1) & (y == 0))
        accepted = np.flatnonzero(accept)
        slots = todo[np.flatnonzero(keep)[accepted]]
        out[slots] = (1 - 2 * sign[accepted]) * y[accepted]
        done = np.zeros(m, dtype=bool)
        done[np.flatnonzero(keep)[accepted]] = True
        todo = todo[~done]
    return out


def check_gaussian_denominator(sigma2: Fraction) -> int:
    """t = ⌊σ⌋ + 1 for σ² = p/q, after checking that 2pqt² < 2^62 (int64-exact acceptance)."""
    p, q = sigma2.numerator, sigma2.denominator
    t = math.isqrt(p // q) + 1
    if 2 * p * q * t * t >= _INT64_SAFE:
        raise ValueError(f"`sigma` is too large for the exact int64 sampler (sigma^2 = {sigma2}, "
                         f"2pqt^2 = {2 * p * q * t * t} >= 2^62)")
    return t


def discrete_gaussian(sigma2: Fraction, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of the discrete Gaussian N_ℤ(0, σ²), σ² = p/q (CKS Algorithm 3), int64."""
    p, q = sigma2.numerator, sigma2.denominator
    t = check_gaussian_denominator(sigma2)
    denominator = 2 * p * q * t * t
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        y = discrete_laplace(1, t, todo.size, rng)
        c = np.abs(y) * (t * q) - p
        big = np.abs(c) > _SQUARE_SAFE
        n = np.where(big, 0, c) ** 2
        whole, rest = n // denominator, n % denominator
        for i in np.flatnonzero(big):  # exact Python-integer split, astronomically rare
            whole[i], rest[i] = divmod(int(c[i]) ** 2, denominator)
        # exp(−(whole + rest/D)) = exp(−whole)·exp(−rest/D): numerator whole·D + rest would
        # overflow, so pass the two factors separately.
        accept = bernoulli_exp(rest, denominator, rng)
        heavy = np.flatnonzero(accept & (whole > 0))
        if heavy.size:
            accept[heavy] = bernoulli_exp(whole[heavy], 1, rng)
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out
