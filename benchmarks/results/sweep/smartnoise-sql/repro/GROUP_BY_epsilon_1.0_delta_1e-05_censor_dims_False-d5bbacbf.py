"""Reproduce: smartnoise-sql GROUP BY [epsilon=1.0, delta=1e-05, censor_dims=False]

The sweep of smartnoise-sql 1.0.10 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for GROUP BY
[epsilon=1.0, delta=1e-05, censor_dims=False], which claims (1, 1.49999e-05)-DP under add-
remove: certified epsilon >= 4.132 at delta = 1.49999e-05, at confidence 0.996667 (the sweep's
Bonferroni share). Witness pair: add a row in new group c.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: released of a, col0 of a, released of b, col0 of b, released of c, col0 of c; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads a weighted sum of the whole vector (W).

Event: float(np.dot(W, output)) >= 884077409130.14: a threshold on the weighted sum W of the released vector that the audit chose  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: certain: on the sweep's choosing draws the lower confidence bound of its
excess over the claim is positive (at 95%, Bonferroni over every candidate event).
"""
import numpy as np
import pandas as pd
import snsql


def reader_for(data, epsilon, delta, table, mechanisms=None):
    """snsql.from_df on the table of ``data`` (columns pid, x, g; g = 0, 1, 2 → "a", "b", "c"),
    one reader per dataset and parameters (kept on the function: a checkpoint's digest of the
    release reads module globals, and readers hold weak references it cannot order)."""
    readers = reader_for.__dict__.setdefault("cache", {})
    key = (np.asarray(data).tobytes(), np.shape(data), epsilon, delta, repr(table), repr(mechanisms))
    if key not in readers:
        rows = np.asarray(data, dtype=float).reshape(-1, 3)
        frame = pd.DataFrame({"pid": rows[:, 0].astype(int), "x": rows[:, 1],
                              "g": ["abc"[int(k)] for k in rows[:, 2]]})
        privacy = snsql.Privacy(epsilon=epsilon, delta=delta)
        for stat, mech in (mechanisms or {}).items():
            privacy.mechanisms.map[getattr(snsql.Stat, stat)] = getattr(snsql.Mechanism, mech)
        person = {"type": "int", **({} if table.get("row_privacy") else {"private_id": True})}
        metadata = {"": {"T": {"T": {**table, "pid": person, "g": {"type": "string"}}}}}
        if len(readers) > 8:
            readers.clear()
        readers[key] = snsql.from_df(frame, privacy=privacy, metadata=metadata)
    return readers[key]


def execute(reader, sql):
    """reader.execute(sql), with the data-independent rewrite (parse, mechanism calibration) computed
    once per query, metadata and privacy and replayed (module docstring)."""
    rewrites = execute.__dict__.setdefault("cache", {})
    key = (sql, repr(reader.privacy.epsilon), repr(reader.privacy.delta), repr(reader.metadata),
           repr(reader.privacy.mechanisms.map))
    if key not in rewrites:
        parsed = reader.parse_query_string(sql)
        rewrites[key] = (parsed, type(reader)._rewrite_ast(reader, parsed))
    parsed, rewritten = rewrites[key]
    reader._rewrite_ast = lambda _query: rewritten
    try:
        return reader._execute_ast(parsed)
    finally:
        del reader._rewrite_ast


def query(data, random_state, *, sql, epsilon, delta, table, grouped=False, width=1, mechanisms=None):
    """One private answer to ``sql``: without GROUP BY, [rows returned, the first row's values]; with
    GROUP BY g (first column), for each group a, b, c: [released, its values]."""
    result = execute(reader_for(data, epsilon, delta, table, mechanisms), sql)[1:]
    if not grouped:
        first = [float(v) for v in result[0]] if result else [0.0] * width
        return [float(len(result))] + first
    found = {row[0]: row[1:] for row in result}
    out = []
    for key in "abc":
        values = found.get(key)
        out += [0.0] * (width + 1) if values is None else [1.0] + [float(v) for v in values]
    return out



release = query
PARAMS = {'sql': 'SELECT g, COUNT(*) AS n FROM T.T GROUP BY g', 'epsilon': 1.0, 'delta': 1e-05, 'table': {'row_privacy': True, 'censor_dims': False, 'x': {'type': 'float', 'lower': 0.0, 'upper': 1.0}}, 'grouped': True, 'width': 1}
D = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0], [3.0, 0.0, 1.0], [4.0, 1.0, 0.0], [5.0, 0.0, 1.0], [6.0, 1.0, 0.0], [7.0, 0.0, 1.0], [8.0, 1.0, 0.0], [9.0, 0.0, 1.0], [10.0, 1.0, 0.0], [11.0, 0.0, 1.0], [12.0, 1.0, 0.0], [13.0, 0.0, 1.0], [14.0, 1.0, 0.0], [15.0, 0.0, 1.0], [16.0, 1.0, 0.0], [17.0, 0.0, 1.0], [18.0, 1.0, 0.0], [19.0, 0.0, 1.0], [20.0, 1.0, 0.0], [21.0, 0.0, 1.0], [22.0, 1.0, 0.0], [23.0, 0.0, 1.0], [24.0, 1.0, 0.0], [25.0, 0.0, 1.0], [26.0, 1.0, 0.0], [27.0, 0.0, 1.0], [28.0, 1.0, 0.0], [29.0, 0.0, 1.0], [30.0, 1.0, 0.0], [31.0, 0.0, 1.0], [32.0, 1.0, 0.0], [33.0, 0.0, 1.0], [34.0, 1.0, 0.0], [35.0, 0.0, 1.0], [36.0, 1.0, 0.0], [37.0, 0.0, 1.0], [38.0, 1.0, 0.0], [39.0, 0.0, 1.0]])
D_PRIME = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0], [3.0, 0.0, 1.0], [4.0, 1.0, 0.0], [5.0, 0.0, 1.0], [6.0, 1.0, 0.0], [7.0, 0.0, 1.0], [8.0, 1.0, 0.0], [9.0, 0.0, 1.0], [10.0, 1.0, 0.0], [11.0, 0.0, 1.0], [12.0, 1.0, 0.0], [13.0, 0.0, 1.0], [14.0, 1.0, 0.0], [15.0, 0.0, 1.0], [16.0, 1.0, 0.0], [17.0, 0.0, 1.0], [18.0, 1.0, 0.0], [19.0, 0.0, 1.0], [20.0, 1.0, 0.0], [21.0, 0.0, 1.0], [22.0, 1.0, 0.0], [23.0, 0.0, 1.0], [24.0, 1.0, 0.0], [25.0, 0.0, 1.0], [26.0, 1.0, 0.0], [27.0, 0.0, 1.0], [28.0, 1.0, 0.0], [29.0, 0.0, 1.0], [30.0, 1.0, 0.0], [31.0, 0.0, 1.0], [32.0, 1.0, 0.0], [33.0, 0.0, 1.0], [34.0, 1.0, 0.0], [35.0, 0.0, 1.0], [36.0, 1.0, 0.0], [37.0, 0.0, 1.0], [38.0, 1.0, 0.0], [39.0, 0.0, 1.0], [40.0, 1.0, 2.0]])  # add a row in new group c
N = 200
EPSILON, DELTA = 1.0, 1.4999949999983109e-05  # the library's claim, at its reference delta


W = np.array([0.0, -0.025156214323736086, 0.0, 0.022051260356344998, 1768154818264.814, 1.1504158271543303, 0.0])  # the audit's Fisher discriminant


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(6), 1.0)


def event(output):
    return bool(float(np.dot(W, output)) >= 884077409130.14)


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
