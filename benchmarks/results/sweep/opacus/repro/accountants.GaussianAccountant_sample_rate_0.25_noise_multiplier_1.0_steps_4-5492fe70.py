"""Reproduce: opacus accountants.GaussianAccountant [sample_rate=0.25, noise_multiplier=1.0, steps=4]

The sweep of opacus 1.6.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
accountants.GaussianAccountant [sample_rate=0.25, noise_multiplier=1.0, steps=4], which claims
0.655416-GDP under add-remove: certified epsilon >= 1.997 at delta = 1e-05, at confidence
0.997222 (the sweep's Bonferroni share). Witness pair: add a row with clipped gradient +C.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: step 1, step 2, step 3, step 4; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads a weighted sum of the whole vector (W).

Event: float(np.dot(W, output)) >= 3.8040742321357612: a threshold on the weighted sum W of the released vector that the audit chose (the audit's certified event itself)  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws;
carrying the audit's certified event.
"""
import contextlib
import inspect
import logging

import numpy as np
import torch
from opacus import PrivacyEngine
from opacus.utils.batch_memory_manager import BatchMemoryManager

logging.getLogger('opacus.data_loader').setLevel(logging.ERROR)  # empty Poisson batches


def subsampled_gaussian(data, random_state, *, noise_multiplier, sample_rate, steps):
    """The mechanism Opacus's accountants account for: T = ``steps`` releases of
    Σ_i B_i·g_i + σ·Z with B_i ~ Bernoulli(q) (Poisson sampling), g_i = 2x_i − 1 ∈ [−1, 1] a
    gradient clipped to C = 1, and Z ~ N(0, 1)."""
    g = 2.0 * np.ravel(data) - 1.0
    included = random_state.random_sample((steps, g.size)) < sample_rate
    return included @ g + noise_multiplier * random_state.standard_normal(steps)



release = subsampled_gaussian
PARAMS = {'noise_multiplier': 1.0, 'sample_rate': 0.25, 'steps': 4}
D = np.array([[0.5]])
D_PRIME = np.array([[0.5], [1.0]])  # add a row with clipped gradient +C
N = 200000
EPSILON, DELTA = 2.7009311074862716, 1e-05  # the library's claim, at its reference delta


W = np.array([0.46832776753682737, 0.4744487858310416, 0.482553134192583, 0.48848853646132734, 0.0])  # the audit's Fisher discriminant


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(4), 1.0)


def event(output):
    return bool(float(np.dot(W, output)) >= 3.8040742321357612)


if __name__ == "__main__":
    random_state = np.random.RandomState(2026)
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D_PRIME"] / N, hits["D"] / N
    print(f"P[event | D_PRIME] = {p:.4f}  ({hits['D_PRIME']} of {N} releases)")
    print(f"P[event | D] = {q:.4f}  ({hits['D']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D_PRIME] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["D_PRIME"] + 0.5) / (N + 1), (hits["D"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {error:.4f} ({(p - allowed) / error:+.1f} standard errors)")
