"""Auditing with one training run (Steinke, Nasr & Jagielski, NeurIPS 2023).

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

The numbers of guesses must be fixed before the scores are seen; a set of candidate (k₊, k₋) is
paid for by Bonferroni (each is tested at γ / #candidates) and the best is reported.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from mechanisms.validation import check_int, check_open_unit

__all__ = ["OneRunResult", "one_run_p_value", "one_run_epsilon", "one_run_audit", "EPSILON_STEP"]

#: Grid step of the ε search (the bound is then refined by bisection inside one step).
EPSILON_STEP = 1e-3
_EPSILON_MAX = 50.0


def one_run_p_value(m: int, r: int, v: int, epsilon, delta: float) -> np.ndarray:
    """p(ε, δ) of the module docstring, vectorized in ε (at most 1)."""
    m, r, v = _check_counts(m, r, v)
    delta = _check_delta(delta)
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
    """ε_lb = inf{ε ≥ 0 : p(ε, δ) ≥ γ} (0 when even ε = 0 is not rejected)."""
    gamma = check_open_unit("gamma", gamma)
    if float(one_run_p_value(m, r, v, 0.0, delta)) >= gamma:
        return 0.0
    start = 0.0
    while start < _EPSILON_MAX:
        grid = start + EPSILON_STEP * np.arange(1, 1025)
        crossed = np.flatnonzero(one_run_p_value(m, r, v, grid, delta) >= gamma)
        if crossed.size:
            high = float(grid[crossed[0]])
            low = high - EPSILON_STEP
            for _ in range(30):
                mid = 0.5 * (low + high)
                low, high = (mid, high) if float(one_run_p_value(m, r, v, mid, delta)) < gamma else (low, mid)
            return low
        start = float(grid[-1])
    return math.inf


@dataclass(frozen=True)
class OneRunResult:
    """The one-run audit: the certified ε lower bound and the guesses it rests on.

    Attributes
    ----------
    epsilon_lower_bound : ε_lb at ``delta``, holding with probability ≥ ``confidence``.
    delta, confidence : the δ of the bound and its confidence.
    canaries : m.
    k_plus, k_minus : "in" and "out" guesses of the reported candidate; ``guesses`` = r = k₊ + k₋.
    correct : v, correct guesses.
    candidates : how many (k₊, k₋) pairs were tried (Bonferroni: each at γ / candidates).
    seconds : wall time of the bound's computation.
    """

    epsilon_lower_bound: float
    delta: float
    confidence: float
    canaries: int
    k_plus: int
    k_minus: int
    correct: int
    candidates: int
    seconds: float

    @property
    def guesses(self) -> int:
        return self.k_plus + self.k_minus

    @property
    def accuracy(self) -> float:
        return self.correct / self.guesses if self.guesses else float("nan")

    def to_dict(self) -> dict:
        return dict(self.__dict__, guesses=self.guesses)

    def summary(self) -> str:
        return (f"one-run audit: ε ≥ {self.epsilon_lower_bound:.4g} at δ = {self.delta:g} "
                f"(confidence {self.confidence:g}); {self.canaries} canaries, {self.guesses} guesses "
                f"({self.k_plus} in, {self.k_minus} out), {self.correct} correct")


def one_run_audit(scores, included, *, guesses: Sequence[tuple[int, int]], delta: float,
                  confidence: float = 0.95) -> OneRunResult:
    """Certify ε from one run's canary ``scores`` (higher = more likely "in") and the truth.

    Parameters
    ----------
    scores : array (m,)
        The auditor's score of each canary.
    included : bool array (m,)
        Whether each canary was in the training run (drawn with probability ½ each).
    guesses : sequence of (k₊, k₋)
        Candidate numbers of "in" and "out" guesses, fixed before seeing the scores; each is tested
        at level (1 − confidence)/len(guesses) and the largest bound is reported.
    delta : the δ of the (ε, δ) hypothesis.
    confidence : probability with which the bound holds.
    """
    started = time.perf_counter()
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    included = np.asarray(included).reshape(-1)
    if included.dtype != bool:
        raise TypeError(f"`included` must be a boolean array, got dtype {included.dtype}")
    if scores.shape != included.shape or scores.size == 0:
        raise ValueError(f"`scores` and `included` must have the same non-zero length, got "
                         f"{scores.shape} and {included.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("`scores` contains NaN or inf")
    confidence = check_open_unit("confidence", confidence)
    delta = _check_delta(delta)
    m = scores.size
    candidates = [(check_int("k_plus", kp, minimum=0), check_int("k_minus", km, minimum=0))
                  for kp, km in guesses]
    if not candidates:
        raise ValueError("`guesses` must contain at least one (k_plus, k_minus) pair")
    for kp, km in candidates:
        if kp + km > m or kp + km == 0:
            raise ValueError(f"`guesses` pair ({kp}, {km}) must make between 1 and m = {m} guesses")
    gamma = (1.0 - confidence) / len(candidates)
    order = np.argsort(scores, kind="stable")  # ascending; ties broken by index (score-independent)
    best = None
    for kp, km in candidates:
        v = int(included[order[m - kp:]].sum() if kp else 0) + int((~included[order[:km]]).sum())
        eps = one_run_epsilon(m, kp + km, v, delta, gamma)
        if best is None or eps > best[0]:
            best = (eps, kp, km, v)
    eps, kp, km, v = best
    return OneRunResult(float(eps), delta, confidence, m, kp, km, v, len(candidates),
                        time.perf_counter() - started)


def _check_counts(m, r, v):
    m, r, v = check_int("m", m, minimum=1), check_int("r", r, minimum=0), check_int("v", v, minimum=0)
    if not v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got m={m}, r={r}, v={v}")
    return m, r, v


def _check_delta(delta) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)) or not 0 <= delta < 1:
        raise ValueError(f"`delta` must be in [0, 1), got {delta!r}")
    return float(delta)
