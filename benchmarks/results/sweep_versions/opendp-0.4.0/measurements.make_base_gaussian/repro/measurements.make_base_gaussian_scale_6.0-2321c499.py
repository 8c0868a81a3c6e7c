"""Reproduce: opendp measurements.make_base_gaussian [scale=6.0]

The sweep of opendp 0.4.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
measurements.make_base_gaussian [scale=6.0], which claims (0.882993, 1e-06)-DP under replace:
certified epsilon >= 5.02 at delta = 1e-06, at confidence 0.95 (the sweep's Bonferroni share).
Witness pair: v vs v + d_in.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: value; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[0] is value.

Event: the grain of output[0] (the exponent of the largest power of two dividing it: which grid of doubles the released value lies on) is one of 10 values (EVENT_GRAINS below) (the complement of the audit's certified event: the same test)  (chosen by the sweep on draws of its own; these draws are fresh).
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
        elif chain == "sized_bounded_sum":
            built = trans.make_sized_bounded_sum(size=size, bounds=bounds, T="i32") >> built
        _CACHE[key] = built
    return _CACHE[key]


def release(data, random_state, *, name, input, **params):
    """One release of the OpenDP measurement on ``data`` (OpenDP draws from its own generator:
    ``random_state`` is unused)."""
    values = np.ravel(data)
    arg = {"float": lambda: float(values[0]), "int": lambda: int(values[0]), "bool": lambda: bool(values[0]),
           "floats": lambda: [float(v) for v in values], "ints": lambda: [int(v) for v in values]}[input]()
    return [float(measurement(name, **params)(arg))]



release = release
PARAMS = {'name': 'make_base_gaussian', 'input': 'float', 'scale': 6.0, 'D': 'AllDomain<f64>'}
D = np.array([0.0])
D_PRIME = np.array([1.0])  # v vs v + d_in
N = 49115
EPSILON, DELTA = 0.8829925023019315, 1e-06  # the library's claim, at its reference delta


EVENT_GRAINS = frozenset([-63, -36, -61, -62, -60, -59, -58, -57, -56, -55])  # the trained grains the audit's certified event leaves out


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
