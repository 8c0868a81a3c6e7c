"""Reproduce: pydp numerical_mechanisms.GaussianMechanism [epsilon=1.0, delta=1e-05, sensitivity=1.0]

The sweep of pydp 1.1.5 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
numerical_mechanisms.GaussianMechanism [epsilon=1.0, delta=1e-05, sensitivity=1.0], which claims
(1, 1e-05)-DP under replace: certified epsilon >= 4.828 at delta = 1e-05, at confidence 0.998864
(the sweep's Bonferroni share). Witness pair: v vs v + Δ.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: value; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[0] is value.

Event: the grain of output[0] (the exponent of the largest power of two dividing it: which grid of doubles the released value lies on) is one of 1 values (EVENT_GRAINS below) (the complement of the audit's certified event: the same test)  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: certain: on the sweep's choosing draws the lower confidence bound of its
excess over the claim is positive (at 95%, Bonferroni over every candidate event).
"""
import numpy as np
from pydp.algorithms import laplacian, numerical_mechanisms, partition_selection


def noise(data, random_state, *, mechanism, value="float", **kwargs):
    """numerical_mechanisms.<mechanism>(**kwargs).add_noise(x) on the one value x = data[0]."""
    x = np.ravel(data)[0]
    return [float(getattr(numerical_mechanisms, mechanism)(**kwargs).add_noise(int(x) if value == "int" else float(x)))]



release = noise
PARAMS = {'mechanism': 'GaussianMechanism', 'epsilon': 1.0, 'delta': 1e-05, 'sensitivity': 1.0}
D = np.array([0.0])
D_PRIME = np.array([1.0])  # v vs v + Δ
N = 4952
EPSILON, DELTA = 1.0, 1e-05  # the library's claim, at its reference delta


EVENT_GRAINS = frozenset([-54])  # the trained grains the audit's certified event leaves out


def grain(value):
    """The exponent g of the largest power of two dividing the double `value` (-inf for 0, nan
    for inf or nan): value = m * 2**e with 0.5 <= |m| < 1, M = |m| * 2**53 its integer significand,
    t the trailing zero bits of M, g = e - 53 + t."""
    value = float(value)
    if value != value or value in (float('inf'), float('-inf')):
        return float('nan')
    if value == 0.0:
        return float('-inf')
    m, e = np.frexp(value)
    significand = int(abs(m) * 2.0 ** 53)
    return e - 53 + ((significand & -significand).bit_length() - 1)


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(1), 1.0)


def event(output):
    return bool(grain(output[0]) in EVENT_GRAINS)


if __name__ == "__main__":
    random_state = None  # the library draws from its own generator
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D"] / N, hits["D_PRIME"] / N
    print(f"P[event | D] = {p:.4f}  ({hits['D']} of {N} releases)")
    print(f"P[event | D_PRIME] = {q:.4f}  ({hits['D_PRIME']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["D"] + 0.5) / (N + 1), (hits["D_PRIME"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {error:.4f} ({(p - allowed) / error:+.1f} standard errors)")
