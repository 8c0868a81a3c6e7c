"""The per-logical-step likelihood ratio of a trainer that cuts each batch into k physical steps.

**Virtual steps** (a common way to fit a large logical batch in memory) are correct when the k
physical steps of a logical batch only accumulate their clipped gradients and the noise σC is
added once, at the logical step.  The fault this view targets adds noise σC/√k at every
physical step and applies each step: the total noise of a logical step is still σC, but the
canary (in the logical batch with Poisson probability q) sits in one physical step J, uniform
among the k, whose noise is √k times smaller.  Read step by step, the canary's shift is √k/σ
physical noise units, not 1/σ: at σ = 2, T = 4, q = ½ the true ε(1e-3) is 2.20 at k = 4 and 6.22
at k = 16, against the 1.92 of Opacus's RDP accountant (benchmarks/results/training/zoo-limit.md,
"Virtual steps").

**The statistic** (``view="virtual"``, ``physical_steps=k``): the parameter watch
(:mod:`.watch`) records T·k writes of the canary column; write (t, j) is the j-th physical step of
logical step t.  Its projection on the canary's descent direction is divided by ŝ, the root mean
square of the noise columns' updates over all writes (:mod:`.crafted`: the physical noise's
σC·η/(B√k) whatever η and B the trainer uses), giving v_{t,j} in units of the physical noise.
In those units a logical step of the faulty trainer is k coordinates z_j + b·Δ·[j = J],
z_j standard normal, Δ = √k/σ, b ~ Bernoulli(q) with the canary and 0 without, so its
likelihood ratio is

    Λ_t = 1 − q + (q/k)·Σ_j exp(Δ·v_{t,j} − Δ²/2),

and the view outputs L = Σ_t log Λ_t, the privacy loss of that law and its optimal statistic
(Neyman–Pearson).  For k = 1 it is the per-step likelihood ratio of the Poisson-subsampled
Gaussian, 1 − q + q·e^{v/σ − 1/(2σ²)} (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini &
Terzis 2023, the white-box Dirac audit; docs/dpsgd.md), which a correct trainer meets.

Δ comes from the claim's σ and the stated k, and ŝ from the trainer's own noise: L is a closed
form of the released iterates, fixed before any draw, so the audit's bound is valid whatever the
trainer does; a trainer whose noise or shift differs from this law (a correct one, or another
fault) only makes the statistic less powerful.  The noise columns give the scale without knowing
the trainer's learning rate and batch size, which the stated σ alone cannot.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from ..validation import check_finite_positive, check_int, check_open_unit

__all__ = ["virtual_steps_loss"]


def virtual_steps_loss(values: np.ndarray, *, sample_rate: float, noise_multiplier: float,
                       physical_steps: int) -> np.ndarray:
    """L = Σ_t log(1 − q + (q/k)·Σ_j exp(Δ·v_{t,j} − Δ²/2)), Δ = √k/σ (module docstring).

    Parameters
    ----------
    values : (runs, T·k) projections v in units of the physical noise, write by write (the k
        physical steps of logical step 1 first).
    sample_rate : q, the logical batch's Poisson rate, in (0, 1].
    noise_multiplier : σ, the logical step's noise in units of the clip norm C.
    physical_steps : k ≥ 1.

    Returns
    -------
    (runs,) float64: the log likelihood ratio of "the canary is in the data" against "it is not".
    """
    q = 1.0 if sample_rate == 1 else check_open_unit("sample_rate", sample_rate)
    sigma = check_finite_positive("noise_multiplier", noise_multiplier)
    k = check_int("physical_steps", physical_steps, minimum=1)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] == 0 or v.shape[1] % k:
        raise ValueError(f"`values` must be (runs, T·k) with k = physical_steps = {k}, got shape {v.shape}")
    shift = np.sqrt(k) / sigma
    inside = logsumexp(shift * v.reshape(v.shape[0], -1, k) - shift**2 / 2, axis=2) - np.log(k)  # log of the mean over j
    step = np.log(q) + inside if q == 1 else np.logaddexp(np.log1p(-q), np.log(q) + inside)
    return step.sum(axis=1)
