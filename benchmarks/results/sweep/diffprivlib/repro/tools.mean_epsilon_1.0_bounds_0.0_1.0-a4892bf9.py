"""Reproduce: diffprivlib tools.mean [epsilon=1.0, bounds=(0.0, 1.0)]

The sweep of diffprivlib 0.6.6 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for tools.mean
[epsilon=1.0, bounds=(0.0, 1.0)], which claims 1-DP under replace: certified epsilon >= 1.346 at
delta = 0, at confidence 0.999457 (the sweep's Bonferroni share). Witness pair: single record
lower vs upper.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: mean (capacity 1); each block of capacity c is [size, leading dimension, non-finite count, c values].
output[3] is mean[0] (flattened).

Event: the grain of output[3] (the exponent of the largest power of two dividing it: which grid of doubles the released value lies on) is one of 5 values (EVENT_GRAINS below) (the complement of the audit's certified event: the same test)  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: certain: on the sweep's choosing draws the lower confidence bound of its
excess over the claim is positive (at 95%, Bonferroni over every candidate event).
"""
import warnings
from functools import partial

import numpy as np
import diffprivlib as dpl

_LAST = {}


def encode(value, capacity):
    """One released value as ``3 + capacity`` floats: size, leading dimension, number of
    non-finite entries, then the entries (non-finite ones as 0) padded with 0 to ``capacity``.

    ``None`` encodes as size −1.  Entries beyond ``capacity`` are left out; the size records them.
    """
    if value is None:
        return np.concatenate([[-1.0, 0.0, 0.0], np.zeros(capacity)])
    array = np.asarray(value, dtype=np.float64)
    flat = array.ravel()
    finite = np.isfinite(flat)
    body = np.zeros(capacity)
    kept = np.where(finite, flat, 0.0)[:capacity]
    body[:kept.size] = kept
    leading = array.shape[0] if array.ndim else 1
    return np.concatenate([[flat.size, leading, flat.size - np.count_nonzero(finite)], body])


def released(*blocks):
    """Concatenate ``(value, capacity)`` blocks encoded by :func:`encode` into one vector."""
    return np.concatenate([encode(value, capacity) for value, capacity in blocks])


def fitted(model, name):
    """Attribute ``name`` of a fitted model; ``a:i`` is item i of attribute a, ``a.b`` nested."""
    value = model
    for part in name.split("."):
        key, _, index = part.partition(":")
        value = getattr(value, key, None)
        if index and value is not None:
            value = value[int(index)]
    return value


def seeded(factory, random_state, **kwargs):
    """``factory(random_state=random_state, **kwargs)``, or without ``random_state`` where the
    release takes none (diffprivlib before 0.5 draws from numpy's global generator)."""
    try:
        return factory(random_state=random_state, **kwargs)
    except TypeError as exc:
        if "random_state" not in str(exc):
            raise
        return factory(**kwargs)


def mechanism_object(mechanism, random_state, **kwargs):
    """diffprivlib.mechanisms.<mechanism>(random_state=random_state, **kwargs), built once and reused
    while the parameters and the generator stay the same (as a user calls ``randomise`` repeatedly)."""
    key = (mechanism, repr(sorted(kwargs.items())), id(random_state))
    if _LAST.get("key") != key:
        _LAST.clear()
        _LAST.update(key=key, mech=seeded(getattr(dpl.mechanisms, mechanism), random_state, **kwargs))
    return _LAST["mech"]


def query(data, random_state, *, function, capacity, **kwargs):
    """diffprivlib.tools.<function> on the data's values, everything it returns."""
    out = seeded(partial(getattr(dpl.tools, function), np.ravel(data)), random_state,
                 accountant=dpl.BudgetAccountant(), **kwargs)
    return released((out, capacity))



release = query
PARAMS = {'function': 'mean', 'capacity': 1, 'epsilon': 1.0, 'bounds': (0.0, 1.0)}
D = np.array([[0.0]])
D_PRIME = np.array([[1.0]])  # single record lower vs upper
N = 1237
EPSILON, DELTA = 1.0, 0.0  # the library's claim, at its reference delta


EVENT_GRAINS = frozenset([-57, -47, -56, -55, -54])  # the trained grains the audit's certified event leaves out


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
        return np.append(np.zeros(4), 1.0)


def event(output):
    return bool(grain(output[3]) in EVENT_GRAINS)


if __name__ == "__main__":
    random_state = np.random.RandomState(2026)
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
