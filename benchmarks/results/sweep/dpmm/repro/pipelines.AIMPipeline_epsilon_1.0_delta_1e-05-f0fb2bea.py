"""Reproduce: dpmm pipelines.AIMPipeline [epsilon=1.0, delta=1e-05]

The sweep of dpmm 0.1.9 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for pipelines.AIMPipeline
[epsilon=1.0, delta=1e-05], which claims (1, 1e-05)-DP under add-remove: certified epsilon >=
3.081 at delta = 1e-05, at confidence 0.983333 (the sweep's Bonferroni share). Witness pair: add
a record with a new category a = 3.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: categories of a, categories of b, a = 3 in the domain, count of cell (0, 0), count of cell (0, 1), count of cell (1, 0), count of cell (1, 1), count of cell (2, 0), count of cell (2, 1), count of cell (3, 0), count of cell (3, 1); each block of capacity c is [size, leading dimension, non-finite count, c values].
output[0] is categories of a.

Event: output[0] == 3.0  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws and the
audit's certified event is not one numpy can restate; carrying the simple event of the largest
excess in standard deviations.
"""
import numpy as np
import pandas as pd
from dpmm import pipelines

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


def generate(data, random_state, *, pipeline, epsilon, delta, rows, n_iters):
    """<pipeline>(epsilon, delta, n_jobs=1, gen_kwargs={"n_iters": n_iters}).fit(table).generate(rows)
    on categorical columns a, b: the number of categories of each column's dtype, whether a = 3 is
    one of them, and the count of each cell (a, b) of a ∈ {0..3} × b ∈ {0, 1} among the generated
    rows."""
    table = np.asarray(data, dtype=int).reshape(-1, 2)
    frame = pd.DataFrame({"a": pd.Categorical(table[:, 0]), "b": pd.Categorical(table[:, 1])})
    model = getattr(pipelines, pipeline)(epsilon=epsilon, delta=delta, n_jobs=1, gen_kwargs={"n_iters": n_iters})
    model.fit(frame, random_state=random_state)
    out = model.generate(rows)
    categories = [len(out["a"].cat.categories), len(out["b"].cat.categories), float(3 in set(out["a"].cat.categories))]
    synthetic = np.column_stack([np.asarray(out["a"], dtype=float), np.asarray(out["b"], dtype=float)])
    counts, _ = cell_statistics(synthetic, [], (DOMAIN_A, DOMAIN_B))
    return [float(c) for c in categories] + counts[:DOMAIN_A * DOMAIN_B]



release = generate
PARAMS = {'pipeline': 'AIMPipeline', 'rows': 20, 'n_iters': 100, 'epsilon': 1.0, 'delta': 1e-05}
D = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
D_PRIME = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 0.0]])  # add a record with a new category a = 3
N = 50
EPSILON, DELTA = 1.0, 1e-05  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(11), 1.0)


def event(output):
    return bool(output[0] == 3.0)


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
