"""Reproduce: diffprivlib mechanisms.Wishart [epsilon=1.0, sensitivity=1.0]

The sweep of diffprivlib 0.4.1 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
mechanisms.Wishart [epsilon=1.0, sensitivity=1.0], which claims 1-DP under replace: certified
epsilon >= 4.719 at delta = 0, at confidence 0.95 (the sweep's Bonferroni share). Witness pair:
A vs A + x xᵀ, x = Δ·e2.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: W[0,0], W[0,1], W[1,0], W[1,1]; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[3] is W[1,1].

Event: output[3] <= 1.5120074258774578  (chosen by the sweep on draws of its own; these draws are fresh).
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


def wishart(data, random_state, *, epsilon, sensitivity):
    """The Wishart mechanism (diffprivlib before 0.5) on the second-moment matrix ``data``, row by row.

    It adds ``G Gᵀ`` with ``G`` a d × (d + 1) matrix of N(0, (Δ / 2ε)²) entries (Jiang, Xie & Zhang
    2016).  It draws from its own ``np.random.default_rng()``, which no argument seeds; that generator
    is replaced by one seeded from ``random_state``, so a sweep repeats.
    """
    with warnings.catch_warnings():  # deprecated in 0.4 with the warning that it is not DP
        warnings.simplefilter("ignore", DeprecationWarning)
        mech = dpl.mechanisms.Wishart(epsilon=epsilon, sensitivity=sensitivity)
    mech._rng = np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    return np.ravel(mech.randomise(np.asarray(data, dtype=float)))



release = wishart
PARAMS = {'epsilon': 1.0, 'sensitivity': 1.0}
D = np.array([[1.0, 0.0], [0.0, 0.5]])
D_PRIME = np.array([[1.0, 0.0], [0.0, 1.5]])  # A vs A + x xᵀ, x = Δ·e2
N = 200
EPSILON, DELTA = 1.0, 0.0  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(4), 1.0)


def event(output):
    return bool(output[3] <= 1.5120074258774578)


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
