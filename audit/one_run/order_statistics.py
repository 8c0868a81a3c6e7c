"""One-run bounds from order statistics, for canaries whose scores do not interfere.

The f-DP bound of :mod:`audit.one_run.fdp` holds for any mechanism, including ones that entangle
the canaries; that generality is what keeps it far from the truth.  When the canaries do not
interfere the exact null law of the correct-guess count can be written down, in the spirit of
Xiang, Wang, Xiao, Tian & Wang (2025), *Tight privacy audit in one run* (arXiv 2509.08704), who
model the released top-scored guesses through order statistics of an f-DP curve.  The statement
and proof below are ours.

**Assumption (independent canaries; the user must meet it).**  Given the inclusion bits S, the
canary scores X₁, …, X_m are independent and the law of X_j depends on S_j only: X_j ~ P_j if
canary j is in, Q_j if it is out.  It holds for Dirac gradient canaries on their own coordinates
with every update visible, and for the idealised Gaussian audit; it fails when canaries share
parameters (input-space canaries in one model), and then nothing here proves the bound below
(:mod:`audit.one_run.fdp` still holds).

**Claim tested.**  T(Q_j, P_j) ≥ f for every j; under the assumption this follows from the
mechanism being f-DP, since X_j is computed from the output and its law does not depend on S₋ⱼ.

**Proposition.**  Let (Q*, P*) be a pair with T(Q*, P*) = f, and C* the number of correct guesses
of the k most confident guesses in the *canonical experiment*: m independent pairs (S_j, Z_j) with
S_j a fair coin and Z_j ~ P* if S_j = 1, Q* if not, each guess being the more likely value of S_j
given Z_j.  Under the assumption, any auditor making exactly k guesses from the scores (and
randomness of its own) has P(C ≥ v) ≤ P(C* ≥ v) for every v.

*Proof.*  By Blackwell's theorem (Dong, Roth & Su 2022, *Gaussian differential privacy*, JRSS B,
Theorem 2.10) there are kernels K_j with K_j Q* = Q_j and K_j P* = P_j, so (S, (K_j(Z_j))_j) has the
law of (S, X).  Given Z and the kernels' and auditor's randomness, the S_j are independent with
P(S_j = 1 | ·) = π(Z_j), the canonical posterior; each guess is correct independently with
probability at most c_j = max(π(Z_j), 1 − π(Z_j)), and the k chosen probabilities are dominated one
by one by the k largest c_j.  A coupling gives the stochastic order, and averaging over Z ends the
proof.  ∎

The same argument, applied to the canonical pairs of two members of an ordered family, shows that
P(C* ≥ v) grows with μ (or ε): the rejected parameters form an interval [0, θ*).

**The two families' canonical laws.**

- ``"gdp"``: Q* = N(0, 1), P* = N(μ, 1).  Confidence grows with D = |Z − μ/2|; given D = d the
  guess is correct with probability q(d) = 1/(1 + e^{−μd}).  P(D > t) = Φ̄(t − μ/2) + Φ̄(t + μ/2) and
  P(correct, D > t) = Φ̄(t − μ/2).  The k-th largest D, t, has U = P(D > t) ~ Beta(k, m − k + 1);
  given t the other k − 1 guesses are correct independently with probability
  q̄(t) = Φ̄(t − μ/2)/P(D > t), so P(C* ≥ v) = E[g(t)] with
  g(t) = q(t)·P(B ≥ v − 1) + (1 − q(t))·P(B ≥ v), B ~ Bin(k − 1, q̄(t)).  g grows with t, so a sum
  over cells of U, each weighted by its exact Beta mass and valued at its largest t, is an upper
  bound on the integral: the p-value is never understated.
- ``"approx"``: the pair of Kairouz, Oh & Viswanath (2015), *The composition theorem for
  differential privacy*, §2: with probability δ the output names S_j (confidence 1), otherwise it
  is randomized response with q = e^ε/(1 + e^ε).  With L ~ Bin(m, δ) such canaries,
  P(C* ≥ v) = Σ_{l<k} P(L = l)·P(Bin(k − l, q) ≥ v − l) + P(L ≥ k), summed exactly (the tail of L
  beyond 1 − 1e-15 of its mass is added whole).

The test rejects the parameter when the p-value is below the level; k must be fixed in advance.

References
----------
Z. Xiang, T. Wang, H. Xiao, Y. Tian and D. Wang (2025), *Tight privacy audit in one run*,
arXiv 2509.08704.
J. Dong, A. Roth and W. J. Su (2022), *Gaussian differential privacy*, JRSS B, Theorem 2.10
(Blackwell) and Proposition 2.5.
P. Kairouz, S. Oh and P. Viswanath (2015), *The composition theorem for differential privacy*, ICML.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special, stats

from .families import PARAMETER_MAX, largest_rejected

__all__ = ["independent_p_value", "independent_bound", "CELLS"]

#: Cells of the Beta law of U in the Gaussian p-value: the upper sum exceeds the integral by at
#: most about 2/CELLS.
CELLS = 4096


@lru_cache(maxsize=64)
def _beta_quantiles(m: int, k: int, cells: int) -> np.ndarray:
    """Mid-cell quantiles of U ~ Beta(k, m − k + 1), read-only (cached across μ)."""
    targets = special.betaincinv(float(k), float(m - k + 1), (np.arange(cells) + 0.5) / cells)
    targets.setflags(write=False)
    return targets


def _gaussian_p_value(mu: float, m: int, k: int, v: int, cells: int) -> float:
    if mu == 0.0:
        return float(stats.binom.sf(v - 1, k, 0.5))
    half = 0.5 * mu
    a, b = float(k), float(m - k + 1)
    # Thresholds t_0 > t_1 > … near the Beta quantiles of U (their exact masses are used below,
    # so their accuracy only affects how fine the cells are, never the bound's validity).
    targets = _beta_quantiles(m, k, cells)
    t = np.maximum(half - special.ndtri(np.clip(0.5 * targets, 1e-300, 0.5)), 0.0)
    for _ in range(3):  # Newton steps on log P(D > t) = log u
        log_upper, log_lower = special.log_ndtr(half - t), special.log_ndtr(-half - t)
        log_tail = np.logaddexp(log_upper, log_lower)
        density = np.exp(-0.5 * (t - half) ** 2 - log_tail) + np.exp(-0.5 * (t + half) ** 2 - log_tail)
        t = np.maximum(t + (log_tail - np.log(targets)) / (density / np.sqrt(2 * np.pi)), 0.0)
    t = np.sort(t)[::-1]
    log_upper, log_lower = special.log_ndtr(half - t), special.log_ndtr(-half - t)
    u = np.exp(np.logaddexp(log_upper, log_lower))  # P(D > t), increasing along the grid
    cdf = special.betainc(a, b, np.minimum(u, 1.0))
    mass = np.diff(np.concatenate(([0.0], cdf, [1.0])))
    q_bar = special.expit(log_upper - log_lower)  # Φ̄(t − μ/2)/(Φ̄(t − μ/2) + Φ̄(t + μ/2))
    q_edge = special.expit(mu * t)
    g = (q_edge * stats.binom.sf(v - 2, k - 1, q_bar)
         + (1.0 - q_edge) * stats.binom.sf(v - 1, k - 1, q_bar))
    # cell 0 is [0, u_0] (t above t_0: g ≤ 1); cell i ≥ 1 is [u_{i−1}, u_i], where g ≤ g(t_{i−1})
    return float(min(1.0, mass[0] + np.dot(mass[1:], g)))


def _approx_p_value(epsilon: float, delta: float, m: int, k: int, v: int) -> float:
    q = special.expit(epsilon)
    if delta == 0.0:
        return float(stats.binom.sf(v - 1, k, q))
    top = int(min(k - 1, stats.binom.isf(1e-15, m, delta) + 1))
    leaks = np.arange(top + 1)
    terms = stats.binom.pmf(leaks, m, delta) * stats.binom.sf(v - leaks - 1, k - leaks, q)
    rest = stats.binom.sf(top, m, delta)  # P(L > top): counted as all correct
    return float(min(1.0, terms.sum() + rest))


def independent_p_value(family: str, parameter: float, m: int, k: int, v: int, delta: float = 0.0,
                        cells: int = CELLS) -> float:
    """An upper bound on P(C* ≥ v) in the canonical experiment of ``family`` at ``parameter``
    (μ, or ε at ``delta``): m canaries, the k most confident guesses (see the module docstring)."""
    if v <= 0:
        return 1.0
    if family == "gdp":
        return _gaussian_p_value(float(parameter), m, k, v, cells)
    return _approx_p_value(float(parameter), float(delta), m, k, v)


def independent_bound(m: int, k: int, v: int, level: float, family: str, delta: float,
                      cells: int = CELLS) -> float:
    """The family parameter certified at ``level`` under the independent-canary assumption."""
    if v == 0:
        return 0.0
    return largest_rejected(
        lambda theta: independent_p_value(family, theta, m, k, v, delta, cells) < level,
        PARAMETER_MAX[family], tolerance=1e-5)
