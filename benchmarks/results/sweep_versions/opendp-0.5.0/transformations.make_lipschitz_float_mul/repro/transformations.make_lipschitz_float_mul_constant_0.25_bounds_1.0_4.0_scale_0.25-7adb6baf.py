"""Reproduce: opendp transformations.make_lipschitz_float_mul [constant=0.25, bounds=(1.0, 4.0), scale=0.25]

The sweep of opendp 0.5.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
transformations.make_lipschitz_float_mul [constant=0.25, bounds=(1.0, 4.0), scale=0.25], which
claims 1-DP under replace: certified epsilon >= 2.845 at delta = 0, at confidence 0.975 (the
sweep's Bonferroni share). Witness pair: upper bound vs beyond it.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: value; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[0] is value.

Event: output[0] <= 4.346120392981784  (chosen by the sweep on draws of its own; these draws are fresh).
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
        constant = params.pop("constant", None)
        built = getattr(meas, name)(**(dict(params, size=size) if chain == "count_by" else params))
        if chain == "count_by":
            built = trans.make_count_by(size=size, MO=params["MI"], TIA=params["TIK"], TOA=params["TIC"]) >> built
        elif chain == "bounded_sum":
            built = trans.make_bounded_sum(bounds=bounds) >> built
        elif chain == "sized_bounded_mean":
            built = trans.make_sized_bounded_mean(size=size, bounds=bounds) >> built
        elif chain == "sized_bounded_sum":
            built = trans.make_sized_bounded_sum(size=size, bounds=bounds, T="i32") >> built
        elif chain == "lipschitz_float_mul":
            built = trans.make_lipschitz_float_mul(constant, bounds) >> built
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
PARAMS = {'name': 'make_base_laplace', 'input': 'float', 'scale': 0.25, 'D': 'AllDomain<f64>', 'chain': 'lipschitz_float_mul', 'constant': 0.25, 'bounds_in': (1.0, 4.0)}
D = np.array([4.0])
D_PRIME = np.array([5.0])  # upper bound vs beyond it
N = 200
EPSILON, DELTA = 1.0000000000000009, 0.0  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(1), 1.0)


def event(output):
    return bool(output[0] <= 4.346120392981784)


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
