"""Reproduce: smartnoise-synth synthesizers.aim [epsilon=1.0, delta=1e-09]

The sweep of smartnoise-synth 1.0.8 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
synthesizers.aim [epsilon=1.0, delta=1e-09], which claims (1, 1e-09)-DP under add-remove:
certified epsilon >= 2.237 at delta = 1e-09, at confidence 0.996429 (the sweep's Bonferroni
share). Witness pair: add a record with a new category a = 3.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: count of cell (0, 0), count of cell (0, 1), count of cell (1, 0), count of cell (1, 1), count of cell (2, 0), count of cell (2, 1), count of cell (3, 0), count of cell (3, 1), rows outside the domain, marginal a = 0, marginal a = 1, marginal a = 2, marginal a = 3, marginal b = 0, marginal b = 1, distance of [3.0, 0.0] to the table; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[12] is marginal a = 3.

Event: output[12] >= 0.25  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: certain: on the sweep's choosing draws the lower confidence bound of its
excess over the claim is positive (at 95%, Bonferroni over every candidate event).
"""
import contextlib
import importlib
import importlib.util
import io
import os
import numpy as np
import pandas as pd
import snsynth

DOMAIN_A, DOMAIN_B = 4, 2


def cell_statistics(table, probes, domain):
    """The counts of a table of rows (a, b) over the domain ``range(domain[0]) × range(domain[1])``.

    Returns ``(counts, distances)``: ``counts`` is the count of each cell (row-major), the rows
    outside the domain (not integers, out of range, NaN or inf), the marginals of a, then of b;
    ``distances`` holds each probe's Hamming distance to the nearest row (2 for an empty table).
    Vectorized over the rows: no Python loop per synthetic row.
    """
    rows = np.asarray(table, dtype=float).reshape(-1, 2)
    size = np.asarray(domain)
    inside = np.all((rows >= 0) & (rows < size) & (rows == np.floor(rows)), axis=1)
    cells = np.zeros(tuple(int(d) for d in domain))
    np.add.at(cells, tuple(rows[inside].astype(int).T), 1.0)
    outside = float(len(rows) - np.count_nonzero(inside))
    points = np.asarray(probes, dtype=float).reshape(-1, 2)
    if len(rows):
        distances = [float(d) for d in np.sum(rows[None, :, :] != points[:, None, :], axis=2).min(axis=1)]
    else:
        distances = [2.0] * len(points)
    return list(cells.ravel()) + [outside] + list(cells.sum(axis=1)) + list(cells.sum(axis=0)), distances


def table_statistics(table, probes):
    """What one record can change in a synthetic table of columns a, b: the count of each cell
    (a, b) of the domain, the rows outside it, the one-way marginals, and each probe record's
    Hamming distance to the nearest synthetic row (:func:`~.tables.cell_statistics`)."""
    counts, distances = cell_statistics(table, probes, (DOMAIN_A, DOMAIN_B))
    return counts + distances


def covariance_class():
    """snsynth.models.dp_covariance.DPcovariance; releases up to 1.0.5 fail to import the package
    ``snsynth.models`` on scikit-learn ≥ 0.24 (``sklearn.linear_model.base``), so the module's file is
    then loaded on its own (it imports only numpy, pandas and math)."""
    try:
        return importlib.import_module("snsynth.models.dp_covariance").DPcovariance
    except ImportError:
        path = os.path.join(os.path.dirname(snsynth.__file__), "models", "dp_covariance.py")
        spec = importlib.util.spec_from_file_location("snsynth_dp_covariance", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.DPcovariance


def synthesize(data, random_state, *, synth, epsilon, rows, probes, public_domain=False, **kwargs):
    """Synthesizer.create(synth, epsilon).fit(table) then sample(rows): the synthetic table's
    statistics (:func:`table_statistics`).  ``public_domain``: the transformer is first fitted on a
    table of every category of the public domain, as snsynth's documentation advises.  What the
    fit prints (AIM prints its initial σ) is discarded."""
    frame = pd.DataFrame(np.asarray(data, dtype=int).reshape(-1, 2), columns=["a", "b"])
    model = snsynth.Synthesizer.create(synth, epsilon=epsilon, **kwargs)
    with contextlib.redirect_stdout(io.StringIO()):
        if public_domain:
            domain = pd.DataFrame([(a, b) for a in range(DOMAIN_A) for b in range(DOMAIN_B)], columns=["a", "b"])
            style = "gan" if synth in ("dpctgan", "patectgan", "dpgan", "pategan") else "cube"  # as each fit's own
            transformer = snsynth.TableTransformer.create(domain, style=style, categorical_columns=["a", "b"])
            transformer.fit(domain, epsilon=0.0)  # else fit() below fits it on the data (create only types it)
            model.fit(frame, transformer=transformer, preprocessor_eps=0.0)
        else:
            model.fit(frame, categorical_columns=["a", "b"], preprocessor_eps=0.0)
        table = model.sample(rows)
    return table_statistics(table[["a", "b"]].to_numpy(), probes)



release = synthesize
PARAMS = {'synth': 'aim', 'rows': 200, 'probes': [[3.0, 0.0]], 'epsilon': 1.0, 'delta': 1e-09}
D = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
D_PRIME = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 0.0]])  # add a record with a new category a = 3
N = 212
EPSILON, DELTA = 1.0, 1e-09  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(16), 1.0)


def event(output):
    return bool(output[12] >= 0.25)


if __name__ == "__main__":
    random_state = None  # the library draws from its own generator
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
