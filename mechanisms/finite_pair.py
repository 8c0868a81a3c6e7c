"""Exact privacy of a pair of distributions on a finite (or finitely truncated) set of outcomes.

For P, Q given by their log-probabilities on common outcomes (docs/ground-truth.md §3):

- hockey stick H_{e^ε}(P‖Q) = Σ_y p(y)(1 − e^{ε − L(y)})₊ with L = ln(p/q), a finite sum of
  non-negative terms (no cancellation), evaluated in log space; the profile of the pair in both
  orders is max(H(P‖Q), H(Q‖P));
- ε(δ) = the smallest ε with profile ≤ δ: the profile is continuous and non-increasing, and it is
  0 from the largest finite privacy loss on; Brent's method on log δ in between;
- the trade-off curve by Neyman–Pearson: rejecting outcomes in decreasing order of q/p (with
  randomisation on the boundary outcome) traces T(α) piecewise linearly; the worst order of the
  pair is min(T_{P,Q}, T_{Q,P}).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

__all__ = ["pair_profile", "pair_epsilon", "pair_tradeoff", "max_loss"]


def _hockey(logp: np.ndarray, logq: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        loss = logp - logq  # +inf where q = 0 < p
    flat = epsilon.reshape(-1, 1)
    positive = loss[None, :] > flat
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = logp[None, :] + np.log(-np.expm1(np.minimum(flat - loss[None, :], 0.0)))
    terms = np.where(positive, terms, -np.inf)
    return np.exp(special.logsumexp(terms, axis=1)).reshape(epsilon.shape)


def pair_profile(epsilon, logp, logq) -> np.ndarray:
    """max(H_{e^ε}(P‖Q), H_{e^ε}(Q‖P)), vectorized in ε ≥ 0."""
    epsilon = np.asarray(epsilon, dtype=np.float64)
    logp, logq = np.asarray(logp, dtype=np.float64), np.asarray(logq, dtype=np.float64)
    return np.maximum(_hockey(logp, logq, epsilon), _hockey(logq, logp, epsilon))


def max_loss(logp, logq) -> float:
    """The largest privacy loss |ln(p/q)| over outcomes with positive probability (∞ if one side is 0)."""
    logp, logq = np.asarray(logp, dtype=np.float64), np.asarray(logq, dtype=np.float64)
    live = np.isfinite(logp) | np.isfinite(logq)
    with np.errstate(invalid="ignore"):
        return float(np.max(np.abs(logp[live] - logq[live])))


def pair_epsilon(delta: float, logp, logq) -> float:
    """The smallest ε ≥ 0 with :func:`pair_profile` ≤ δ; δ = 0 gives the pure ε (:func:`max_loss`)."""
    top = max_loss(logp, logq)
    if delta == 0.0:
        return top
    if delta >= float(pair_profile(0.0, logp, logq)):
        return 0.0
    target = math.log(delta)

    def excess(eps: float) -> float:
        value = float(pair_profile(eps, logp, logq))
        return (math.log(value) if value > 0 else -math.inf) - target

    upper = top if math.isfinite(top) else 1.0
    while math.isinf(top) and excess(upper) > 0:
        upper *= 2.0
    return optimize.brentq(excess, 0.0, upper, xtol=1e-13, rtol=1e-14, maxiter=500)


def _one_order(alpha: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p > 0, q / p, np.inf)
    order = np.argsort(-ratio, kind="stable")
    alphas = np.concatenate([[0.0], np.cumsum(p[order])])
    betas = 1.0 - np.concatenate([[0.0], np.cumsum(q[order])])
    alphas[-1], betas[-1] = 1.0, max(betas[-1], 0.0)
    keep = np.r_[alphas[1:] != alphas[:-1], True]  # ties in α (outcomes with p = 0): lowest β
    return np.interp(alpha, alphas[keep], betas[keep])


def pair_tradeoff(alpha, logp, logq) -> np.ndarray:
    """min over both orders of the Neyman–Pearson trade-off curve (module docstring)."""
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    p, q = np.exp(np.asarray(logp, dtype=np.float64)), np.exp(np.asarray(logq, dtype=np.float64))
    return np.minimum(_one_order(alpha, p, q), _one_order(alpha, q, p))
