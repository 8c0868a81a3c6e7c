"""Reproduce: diffprivlib models.KMeans [epsilon=1.0, bounds=(0.0, 1.0), n_clusters=2]

The sweep of diffprivlib 0.6.6 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for models.KMeans
[epsilon=1.0, bounds=(0.0, 1.0), n_clusters=2], which claims 1-DP under replace: certified
epsilon >= 1.377 at delta = 0, at confidence 0.999457 (the sweep's Bonferroni share). Witness
pair: last row lower → upper.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: cluster_centers_ (capacity 9), labels_ (capacity 9), inertia_ (capacity 9), n_iter_ (capacity 9); each block of capacity c is [size, leading dimension, non-finite count, c values].
output[27] is inertia_[0] (flattened).

Event: output[27] <= 0.1487388318896864  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws and the
audit's certified event is not one numpy can restate; carrying the simple event of the largest
excess in standard deviations.
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


def fit(data, random_state, *, model, attributes, capacity, supervised=True, probe=None, **kwargs):
    """diffprivlib.models.<model>(**kwargs).fit(X[, y]): the listed attributes of the fitted model,
    and its predictions (``predict_proba``) at the fixed ``probe`` points if given."""
    X, y = (data[:, :-1], data[:, -1]) if supervised else (data, None)
    try:
        est = getattr(dpl.models, model)(random_state=random_state, accountant=dpl.BudgetAccountant(), **kwargs)
    except (TypeError, AttributeError):  # releases before `random_state` and the accountant existed
        est = getattr(dpl.models, model)(**kwargs)
    est = est.fit(X, y) if supervised else est.fit(X)
    blocks = [(fitted(est, name), capacity) for name in attributes]
    if probe is not None:
        blocks.append((est.predict_proba(np.asarray(probe, dtype=float)), capacity))
    return released(*blocks)



release = fit
PARAMS = {'model': 'KMeans', 'attributes': ['cluster_centers_', 'labels_', 'inertia_', 'n_iter_'], 'capacity': 9, 'supervised': False, 'epsilon': 1.0, 'bounds': (0.0, 1.0), 'n_clusters': 2}
D = np.array([[0.0], [0.2], [0.4], [0.6000000000000001], [0.8], [0.0]])
D_PRIME = np.array([[0.0], [0.2], [0.4], [0.6000000000000001], [0.8], [1.0]])  # last row lower → upper
N = 1600
EPSILON, DELTA = 1.0, 0.0  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(48), 1.0)


def event(output):
    return bool(output[27] <= 0.1487388318896864)


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
