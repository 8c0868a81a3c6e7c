"""E-processes for privacy claims, and the time-uniform lower bounds they give.

**The null and the bet.**  Let P and Q be a pair's two output distributions, E an event and A = Q(E),
B = P(E) (Q the side E is more likely under; both orientations are tried).  A pair that is
(ε, δ)-indistinguishable satisfies A ≤ e^ε B + δ for every event, in both orientations.  Every claim
the engine audits is a family of such constraints: (ε, δ)-DP is one; μ-GDP, zCDP, Rényi and profile
claims hold iff (ε, δ(ε))-DP holds for every ε ≥ 0 with δ(ε) their privacy profile (the primal–dual
view of trade-off curves: Dong, Roth & Su 2022, "Gaussian differential privacy", JRSS-B 84(1),
Proposition 2.12; for μ-GDP, δ_μ(ε) of their Corollary 2.13).  So for a draw y ~ Q and x ~ P,

    Z = 1[y ∈ E] − e^ε·1[x ∈ E] − δ        has  E[Z] = A − e^ε B − δ ≤ 0  under the null.

With W = Z/s, s = e^ε + δ (so W ≥ −1), and a bet λ ∈ [0, 1) chosen *predictably* (from draws made
before y and x), the factor 1 + λW is nonnegative with conditional mean ≤ 1, and the running
product K_t of such factors is a nonnegative supermartingale with K_0 = 1 under the null, whatever
the events, ε's and bets chosen along the way.  Ville's inequality (Ville 1939; e.g. Ramdas, Grünwald,
Vovk & Shafer 2023, "Game-theoretic statistics and safe anytime-valid inference", Statistical Science
38(4), Theorem 1) gives

    P(sup_t K_t ≥ 1/ℓ) ≤ ℓ,

so rejecting the null the first time K_t ≥ 1/ℓ is a level-ℓ test at *any* stopping time, however
the audit decides to stop or continue.  This is the construction of González, Dulce-Rubio, Ramdas &
Ribero (NeurIPS 2025, "Sequentially auditing differential privacy"), whose witness functions g with
values in [0, 1] include our indicator events; betting on linear payoffs is the test-by-betting of
Shafer (2021, JRSS-A) and Waudby-Smith & Ramdas (2024, JRSS-B, "Estimating means of bounded random
variables by betting").

**Rounds from counts.**  The engine draws in rounds (:mod:`audit.anytime`): a round fixes E, ε, δ and
λ from earlier rounds, then draws m outputs from each side and keeps only the counts c_A (of the m
draws from Q in E) and c_B (from P).  Pairing draw i of Q with draw π(i) of P, any fixed pairing π
gives m i.i.d. factors and a product of mean ≤ 1; so does their average over all m! pairings, which
depends on the counts alone (the number k of pairs with both draws in E is hypergeometric):

    e(c_A, c_B) = Σ_k H(k; m, c_A, c_B)·(1 + λw₁₁)^k (1 + λw₁₀)^(c_A − k) (1 − λ)^(c_B − k) (1 + λw₀₀)^(m − c_A − c_B + k),

with w₁₀ = (1 − δ)/s, w₁₁ = 1/s − 1, w₀₁ = −1, w₀₀ = −δ/s the values of W.  This is
:func:`round_log_evalue`.  Rounds are the looks: the product of round e-values is a test
supermartingale in the rounds' filtration, so an audit that stops after any round keeps its level.
Only terms of the sum are ever dropped (never added), and a safety margin is taken off its
logarithm, so rounding can only lower the e-value.

**Lower confidence bounds (confidence sequences).**  For a headline quantity q (ε at a δ, δ at an ε, or
μ) the null H(v) = "q ≤ v" is a claim of the same form: (v, δ₀)-DP, (ε₀, v)-DP, or v-GDP (for μ, the
ε of each bet is a tangent point chosen predictably, and δ = δ_v(ε)).  The bets λ and events are
chosen once per round, independently of v, so every v has its own e-process E_t(v) built from the
same counts.  The set {v : E_t(v) < 1/ℓ} is a (1 − ℓ)-confidence sequence for q (Howard, Ramdas,
McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann.
Statist. 49(2); Ramdas et al. 2023, Section 5): the true q is outside it at some time with
probability ≤ ℓ.  :func:`lower_confidence_bound` returns an L such that every v ≤ L is rejected,
so L ≤ q whenever q is in the set: valid at every time, hence at the audit's stopping time.  It
covers [0, L] with intervals on each of which a *lower* bound of E_t is ≥ 1/ℓ: each of the four
values w(v) is monotone in v (checked for the three families in :func:`payoff`), so on an
interval every factor is at least its value with each w at its smaller endpoint value.

**Several pairs.**  A pair's e-processes are combined by their mean, itself an e-process (the mean of
nonnegative supermartingales of one filtration), at the cost of a factor equal to the number of
pairs; each pair alone certifies at level ℓ·(pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Optional, Sequence

import numpy as np
from scipy import special

from mechanisms.gdp import gdp_delta

__all__ = ["Family", "Bet", "payoff", "round_log_evalue", "log_evalue", "bet_size", "growth",
           "lower_confidence_bound", "MAX_BET", "LOG_MARGIN"]

#: The largest bet λ (a fraction of what keeps every factor positive): 1 − λ is the factor of a
#: draw pair that lands against the bet, so this caps the loss per pair at 60%.
MAX_BET = 0.6
#: Subtracted from every round's log e-value: rounding in the sum can then only lower it.
LOG_MARGIN = 1e-9
#: Hypergeometric terms are summed over the mode ± this many standard deviations (and at least
#: :data:`_WINDOW_MIN` terms); the terms dropped only lower the e-value.
_WINDOW_SDS = 40.0
_WINDOW_MIN = 200


class Family(Enum):
    """Which claims H(v) a headline quantity's e-processes test: (v, δ₀)-DP for ε at δ₀, (ε₀, v)-DP
    for δ at ε₀, v-GDP for μ."""

    EPSILON = "epsilon"
    DELTA = "delta"
    MU = "mu"


@dataclass(frozen=True)
class Bet:
    """One round's bet on one pair: the counts of its event, the bet λ and, for μ, the tangent ε."""

    count_a: int  # draws from the side the event is more likely under that fell in it
    count_b: int  # draws from the other side that fell in it
    m: int  # draws per side in the round
    bet: float  # λ in [0, MAX_BET]
    tangent: float = 0.0  # the ε of the μ family's constraint (ignored by the others)


def payoff(family: Family, at: float, value, tangent: float = 0.0) -> np.ndarray:
    """The four values (w₁₀, w₁₁, w₀₁, w₀₀) of W = Z/s under H(value) (module docstring), for the
    outcomes (y ∈ E, x ∈ E) = (1, 0), (1, 1), (0, 1), (0, 0); ``value`` may be an array.

    Each is monotone in ``value``, as :func:`lower_confidence_bound` needs: with s = e^ε + δ,
    w₁₀ = (1 − δ)/s and w₁₁ = 1/s − 1 fall as ε or δ grows, w₀₁ = −1, and w₀₀ = −δ/s falls as δ
    grows and rises as ε grows (δ fixed).  For μ, δ = δ_v(ε) grows with v at a fixed tangent ε."""
    value = np.asarray(value, dtype=np.float64)
    if family is Family.EPSILON:
        exp_eps, delta = np.exp(value), np.full_like(value, float(at))
    elif family is Family.DELTA:
        exp_eps, delta = np.full_like(value, math.exp(float(at))), value
    else:
        exp_eps = np.full_like(value, math.exp(float(tangent)))
        delta = np.array([float(gdp_delta(float(tangent), float(v))) if v > 0 else 0.0
                          for v in np.atleast_1d(value)]).reshape(value.shape)
    s = exp_eps + delta
    return np.stack([(1.0 - delta) / s, 1.0 / s - 1.0, np.full_like(s, -1.0), -delta / s])


def _log_factors(w: np.ndarray, bet: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log1p(bet * np.asarray(w, dtype=np.float64))


def round_log_evalue(count_a: int, count_b: int, m: int, bet: float, w: Sequence[float]) -> float:
    """log e(c_A, c_B): the logarithm of the round's e-value, the average over pairings of the product
    of its m factors 1 + λW (module docstring), computed from the counts alone."""
    if bet <= 0.0:
        return 0.0
    l10, l11, l01, l00 = _log_factors(w, bet)
    low, high = max(0, count_a + count_b - m), min(count_a, count_b)
    if high - low + 1 > 2 * _WINDOW_MIN:  # sum around the largest term: the rest is negligible and dropped
        k = _largest_term(count_a, count_b, m, l11 + l00 - l10 - l01, low, high)
        mean = count_a * count_b / m
        sd = math.sqrt(max(mean * (1 - count_a / m) * (m - count_b) / max(m - 1, 1), 1.0))
        half = max(_WINDOW_MIN, int(_WINDOW_SDS * sd))
        low, high = max(low, k - half), min(high, k + half)
    k = np.arange(low, high + 1, dtype=np.float64)
    log_h = (_log_choose(count_a, k) + _log_choose(m - count_a, count_b - k) - _log_choose(m, count_b))
    terms = log_h + k * l11 + (count_a - k) * l10 + (count_b - k) * l01 + (m - count_a - count_b + k) * l00
    return _logsumexp(terms) - LOG_MARGIN


def _logsumexp(values) -> float:
    """log Σ exp(values), without scipy's per-call overhead (this runs thousands of times per audit)."""
    values = np.asarray(values, dtype=np.float64)
    top = float(values.max())
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.exp(values - top).sum()))


def _log_choose(n, k) -> np.ndarray:
    k = np.asarray(k, dtype=np.float64)
    return special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)


def _largest_term(count_a, count_b, m, tilt, low, high) -> int:
    """The k of the largest term: the ratio of consecutive terms,
    (c_A − k)(c_B − k)/((k + 1)(m − c_A − c_B + k + 1))·e^tilt, falls with k (log-concave terms)."""
    while low < high:
        k = (low + high) // 2
        ratio = (math.log(count_a - k) + math.log(count_b - k) - math.log(k + 1)
                 - math.log(m - count_a - count_b + k + 1) + tilt)
        if ratio > 0:
            low = k + 1
        else:
            high = k
    return low


def log_evalue(family: Family, at: float, bets: Sequence[Bet], low: float, high: Optional[float] = None) -> float:
    """A lower bound on log E(v) for every v in [low, high] (``high`` = ``low``: log E(low) itself),
    E the product of the round e-values of ``bets`` under H(v): each w at its smaller endpoint value."""
    high = low if high is None else high
    total = 0.0
    for bet in bets:
        if bet.bet <= 0.0:
            continue
        ends = payoff(family, at, np.array([low, high]), bet.tangent)
        total += round_log_evalue(bet.count_a, bet.count_b, bet.m, bet.bet, ends.min(axis=1))
    return total


def bet_size(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The bet for estimated probabilities (a, b) of the event on its two sides: the maximiser of the
    second-order expansion λμ − λ²ν/2 of the expected log-factor, μ = E[W] and ν = E[W²] under
    independent draws (the GRAPA approximation of Waudby-Smith & Ramdas 2024), clipped to
    [0, :data:`MAX_BET`].  ``w`` holds the four payoff values (rows), per candidate or shared."""
    p = _outcome_probabilities(a, b)
    mean = (p * w).sum(axis=0)
    second = (p * w * w).sum(axis=0)
    return np.clip(np.where(second > 0, mean / np.maximum(second, 1e-300), 0.0), 0.0, MAX_BET)


def growth(a: np.ndarray, b: np.ndarray, w: np.ndarray, bet: np.ndarray) -> np.ndarray:
    """The expected log-factor per pair of draws, E[log(1 + λW)], under (a, b)."""
    p = _outcome_probabilities(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log1p(np.asarray(bet)[None, ...] * w)
    return np.nan_to_num((p * logs).sum(axis=0), nan=-np.inf)


def _outcome_probabilities(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.stack([a * (1 - b), a * b, (1 - a) * b, (1 - a) * (1 - b)])


def lower_confidence_bound(family: Family, at: float, bets_per_pair: Sequence[Sequence[Bet]], level: float,
                           *, start: float = 0.0, upper: float = math.inf, tolerance: float = 1e-3,
                           hint: Optional[float] = None) -> float:
    """The largest v found such that every value in [``start``, v] is rejected by the mean over pairs
    of the e-processes of ``bets_per_pair`` at ``level`` (module docstring): a lower confidence bound
    on the quantity, valid at any stopping time; ``start`` if even ``start`` is not rejected.

    The search grows v by steps that double after each interval found rejected and halve after one
    that is not, until the step is below ``tolerance`` (relative above 1); every accepted interval is
    certified by :func:`log_evalue`'s lower bound, so the result never depends on how the search
    went, only its tightness does.  ``hint`` (e.g. the value a claim allows) is tried first as the
    end of the first interval."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"`level` must be in (0, 1), got {level!r}")
    target = math.log(1.0 / level) + math.log(max(len(bets_per_pair), 1))

    def rejected(low: float, high: float) -> bool:
        logs = [log_evalue(family, at, bets, low, high) for bets in bets_per_pair]
        return bool(logs) and _logsumexp(logs) >= target

    if not rejected(start, start):
        return start
    value, step = start, 0.25 if upper == math.inf else (upper - start) / 8
    if hint is not None and math.isfinite(hint) and start < hint <= upper and rejected(start, hint):
        value = hint
    while step > tolerance * max(1.0, abs(value)):
        high = min(value + step, upper)
        if high > value and rejected(value, high):
            value = high
            step *= 2.0
        else:
            step /= 2.0
    return value
