"""Reproduce: synthcity plugins.dpgan [epsilon=1.0, delta=1e-05]

The sweep of synthcity 0.2.12 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for plugins.dpgan
[epsilon=1.0, delta=1e-05], which claims (1, 1e-05)-DP under add-remove: certified epsilon >=
2.194 at delta = 1e-05, at confidence 0.99 (the sweep's Bonferroni share). Witness pair: add a
record with a new category a = 3.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: count of cell (0, 0), count of cell (0, 1), count of cell (1, 0), count of cell (1, 1), count of cell (2, 0), count of cell (2, 1), count of cell (3, 0), count of cell (3, 1), rows outside the domain, marginal a = 0, marginal a = 1, marginal a = 2, marginal a = 3, marginal b = 0, marginal b = 1, largest a, distance of [3.0, 0.0] to the table; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads a weighted sum of the whole vector (W).

Event: float(np.dot(W, output)) >= 1546990886.7216902: a threshold on the weighted sum W of the released vector that the audit chose (the audit's certified event itself)  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws;
carrying the audit's certified event.
"""
import sys
import numpy as np
import pandas as pd
from synthcity import plugins as plugins_module

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
    (a, b) of the domain, the rows outside it, the one-way marginals, the largest value of a, and
    each probe record's Hamming distance to the nearest synthetic row (:func:`~.tables.cell_statistics`)."""
    counts, distances = cell_statistics(table, probes, (DOMAIN_A, DOMAIN_B))
    rows = np.asarray(table, dtype=float).reshape(-1, 2)
    largest = float(rows[:, 0].max()) if len(rows) else -1.0
    return counts + [largest] + distances


def generate(data, random_state, *, plugin, rows, probes, seeded=True, **kwargs):
    """Plugins().get(plugin, **kwargs).fit(table).generate(rows): the synthetic table's statistics
    (:func:`table_statistics`).  ``seeded``: the plugin's ``random_state`` is drawn from
    ``random_state`` (else synthcity's default, 0, with which every fit draws the same noise)."""
    torch = sys.modules.get("torch")  # synthcity imported it; one thread a fit (the sweep runs its own workers)
    if torch is not None:
        torch.set_num_threads(1)
    frame = pd.DataFrame(np.asarray(data, dtype=int).reshape(-1, 2), columns=["a", "b"])
    if seeded:
        kwargs["random_state"] = int(random_state.randint(2**31 - 1))
    model = plugins_module.Plugins(categories=["privacy"]).get(plugin, **kwargs)
    model.fit(frame)
    table = model.generate(rows).dataframe()[["a", "b"]].to_numpy()
    return table_statistics(table, probes)



release = generate
PARAMS = {'plugin': 'dpgan', 'rows': 200, 'probes': [[3.0, 0.0]], 'seeded': True, 'n_iter': 10, 'batch_size': 8, 'epsilon': 1.0, 'delta': 1e-05}
D = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
D_PRIME = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [3.0, 0.0]])  # add a record with a new category a = 3
N = 45
EPSILON, DELTA = 1.0, 1e-05  # the library's claim, at its reference delta


W = np.array([-0.11405121011929314, 0.0422521160380824, -0.016881783017037664, -0.018686129917011896, 0.0009680383579580961, -0.04271871172728552, 0.1369504477451414, 0.012154546830362933, 0.0, -0.07180905256089595, -0.035587721987186814, -0.04171355382593653, 0.14911316303626812, 0.0069681559458774495, -0.006968155945877448, 773495447.0031009, -773495447.0031009, 0.0])  # the audit's Fisher discriminant


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(17), 1.0)


def event(output):
    return bool(float(np.dot(W, output)) >= 1546990886.7216902)


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
