"""Reproduce: opendp measurements.make_base_stability [n=10, scale=0.2, threshold=3.0]

The sweep of opendp 0.3.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
measurements.make_base_stability [n=10, scale=0.2, threshold=3.0], which claims (1.0006,
1e-06)-DP under replace: certified epsilon >= 3.034 at delta = 1e-06, at confidence 0.95 (the
sweep's Bonferroni share). Witness pair: last a → b (counts 6/4 → 5/5).

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: count of a, count of b; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads a weighted sum of the whole vector (W).

Event: float(np.dot(W, output)) <= -6.572156134568608: a threshold on the weighted sum W of the released vector that the audit chose  (chosen by the sweep on draws of its own; these draws are fresh).
"""
import atexit

import numpy as np
import opendp.mod as mod
import opendp.meas as meas
import opendp.trans as trans

mod.enable_features("contrib", "floating-point")
_CACHE = {}
atexit.register(_CACHE.clear)  # free the measurements before the interpreter shuts down


def measurement(name, **params):
    """The measurement ``meas.<name>(**params)`` or a chain ``trans.<kind> >> meas.<name>``, built
    once per process."""
    key = (name, repr(sorted(params.items())))
    if key not in _CACHE:
        chain = params.pop("chain", None)
        bounds = params.pop("bounds_in", None)
        size = params.pop("size", None)
        built = getattr(meas, name)(**(dict(params, size=size) if chain == "count_by" else params))
        if chain == "count_by":
            built = trans.make_count_by(size=size, MO=params["MI"], TIA=params["TIK"], TOA=params["TIC"]) >> built
        elif chain == "bounded_sum":
            built = trans.make_bounded_sum(bounds=bounds) >> built
        elif chain == "sized_bounded_mean":
            built = trans.make_sized_bounded_mean(size=size, bounds=bounds) >> built
        _CACHE[key] = built
    return _CACHE[key]


def release_counts(data, random_state, *, keys, **params):
    """One release of a count-by chain on the records ``keys[data[i]]``: each key's released count,
    0 where the key is not released (a released count is above a positive threshold)."""
    out = measurement(**params)([keys[int(v)] for v in np.ravel(data)])
    return [float(out.get(key, 0.0)) for key in keys]



release = release_counts
PARAMS = {'name': 'make_base_stability', 'chain': 'count_by', 'size': 10, 'scale': 0.2, 'threshold': 3.0, 'MI': 'L1Distance<f64>', 'TIK': 'String', 'TIC': 'u32', 'keys': ('a', 'b')}
D = np.array([[1.0], [1.0], [1.0], [1.0], [0.0], [0.0], [0.0], [0.0], [0.0], [0.0]])
D_PRIME = np.array([[1.0], [1.0], [1.0], [1.0], [0.0], [0.0], [0.0], [0.0], [0.0], [1.0]])  # last a → b (counts 6/4 → 5/5)
N = 200
EPSILON, DELTA = 1.0005970858037472, 1e-06  # the library's claim, at its reference delta


W = np.array([-2.75956705051295, 2.078152386093473, 0.0])  # the audit's Fisher discriminant


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(2), 1.0)


def event(output):
    return bool(float(np.dot(W, output)) <= -6.572156134568608)


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
