"""Reproduce: smartnoise-sql GROUP BY [epsilon=1.0, delta=1e-05, censor_dims=False]

Found on 1 release(s), each by its own sweep:
- The sweep of smartnoise-sql 0.1.1 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for GROUP BY
  [epsilon=1.0, delta=1e-05, censor_dims=False], which claims (2, 2e-05)-DP under add-remove:
  certified epsilon >= 4.552 at delta = 2e-05, at confidence 0.999519 (the sweep's Bonferroni
  share). Witness pair: add a row in new group c.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: released of a, col0 of a, released of b, col0 of b, released of c, col0 of c, non-finite values; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads a weighted sum of the whole vector (W).

Event: float(np.dot(W, output)) >= 74088601103.4938: a threshold on the weighted sum W of the released vector that the audit chose  (chosen by the sweep on draws of its own; these draws are fresh).
"""
import inspect
import numpy as np
import pandas as pd
import opendp.smartnoise.sql.private_reader as private_reader
from opendp.smartnoise.sql import PandasReader, PrivateReader
from opendp.smartnoise.metadata.collection import CollectionMetadata, Float, Int, String, Table


def reader_for(data, epsilon, delta, table):
    """A PrivateReader over the table of ``data`` (columns pid, the private key; x; g = 0, 1, 2 → "a",
    "b", "c"), one per dataset and parameters (kept on the function, as in the 1.0 catalogue)."""
    readers = reader_for.__dict__.setdefault("cache", {})
    key = (np.asarray(data).tobytes(), np.shape(data), epsilon, delta, repr(table))
    if key not in readers:
        rows = np.asarray(data, dtype=float).reshape(-1, 3)
        frame = pd.DataFrame({"pid": rows[:, 0].astype(int), "x": rows[:, 1],
                              "g": ["abc"[int(k)] for k in rows[:, 2]]})
        bounds = table.get("bounds")
        x = Float("x", minval=bounds[0], maxval=bounds[1]) if bounds is not None else Float("x")
        switches = {"censor_dims": table["censor_dims"], "use_dpsu": False}
        # 0.1.0.4 and 0.1.1 take the switches as reader options; later releases read them from the table.
        on_table = "censor_dims" in inspect.signature(Table).parameters
        metadata = CollectionMetadata([Table(schema="T", name="T", rowcount=len(frame), row_privacy=False, max_ids=1,
                                             columns=[Int("pid", is_key=True), x, String("g", card=3)],
                                             **(switches if on_table else {}))], "pandas")
        options = {} if on_table else {"options": private_reader.PrivateReaderOptions(row_privacy=False, **switches)}
        if len(readers) > 8:
            readers.clear()
        readers[key] = PrivateReader(reader=PandasReader(df=frame, metadata=metadata), metadata=metadata,
                                     epsilon_per_column=epsilon, delta=delta, **options)
    return readers[key]


def execute(reader, text):
    """``reader.execute(text)``'s rows, by the reader's ``_execute_ast(query, cache_exact=True)`` with
    the data-independent rewrite computed once per query and replayed (module docstring)."""
    rewrites = execute.__dict__.setdefault("cache", {})
    name = "_rewrite_ast" if hasattr(type(reader), "_rewrite_ast") else "rewrite_ast"  # renamed in 0.1.4.2
    key = (id(reader), text)  # the entry holds the reader: its id is not reused while cached
    if key not in rewrites:
        if len(rewrites) > 64:
            rewrites.clear()
        parsed = reader.parse_query_string(text)
        rewrites[key] = (reader, parsed, getattr(type(reader), name)(reader, parsed))
    _, parsed, rewritten = rewrites[key]
    if reader._cached_ast is not rewritten[0]:  # the reader's cached answer is another query's
        reader._cached_exact = None
    setattr(reader, name, lambda _query: rewritten)
    try:
        result = reader._execute_ast(parsed, cache_exact=True)
    finally:
        delattr(reader, name)
    rows = result.rows() if hasattr(result, "rows") else result  # 0.1.0.4-0.1.1: a typed rowset
    return [list(row) for row in rows]


def query(data, random_state, *, sql, epsilon, delta, table, grouped=False, width=1):
    """One private answer to ``sql``: without GROUP BY, [rows returned, the first row's values]; with
    GROUP BY g (first column), for each group a, b, c: [released, its values]; then the number of
    non-finite values released (each written as 0: these releases return NaN for the square root of
    a negative noisy variance, and inf for a mean over a noisy count of 0)."""
    result = execute(reader_for(data, epsilon, delta, table), sql)[1:]
    if not grouped:
        out = [float(len(result))] + ([float(v) for v in result[0]] if result else [0.0] * width)
    else:
        found = {row[0]: row[1:] for row in result}
        out = []
        for key in "abc":
            values = found.get(key)
            out += [0.0] * (width + 1) if values is None else [1.0] + [float(v) for v in values]
    finite = np.isfinite(out)
    return list(np.where(finite, out, 0.0)) + [float(np.size(out) - np.count_nonzero(finite))]



release = query
PARAMS = {'sql': 'SELECT g, COUNT(*) AS n FROM T.T GROUP BY g', 'epsilon': 1.0, 'delta': 1e-05, 'table': {'censor_dims': False, 'bounds': (0.0, 1.0)}, 'grouped': True, 'width': 1}
D = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0], [3.0, 0.0, 1.0], [4.0, 1.0, 0.0], [5.0, 0.0, 1.0], [6.0, 1.0, 0.0], [7.0, 0.0, 1.0], [8.0, 1.0, 0.0], [9.0, 0.0, 1.0], [10.0, 1.0, 0.0], [11.0, 0.0, 1.0], [12.0, 1.0, 0.0], [13.0, 0.0, 1.0], [14.0, 1.0, 0.0], [15.0, 0.0, 1.0], [16.0, 1.0, 0.0], [17.0, 0.0, 1.0], [18.0, 1.0, 0.0], [19.0, 0.0, 1.0], [20.0, 1.0, 0.0], [21.0, 0.0, 1.0], [22.0, 1.0, 0.0], [23.0, 0.0, 1.0], [24.0, 1.0, 0.0], [25.0, 0.0, 1.0], [26.0, 1.0, 0.0], [27.0, 0.0, 1.0], [28.0, 1.0, 0.0], [29.0, 0.0, 1.0], [30.0, 1.0, 0.0], [31.0, 0.0, 1.0], [32.0, 1.0, 0.0], [33.0, 0.0, 1.0], [34.0, 1.0, 0.0], [35.0, 0.0, 1.0], [36.0, 1.0, 0.0], [37.0, 0.0, 1.0], [38.0, 1.0, 0.0], [39.0, 0.0, 1.0]])
D_PRIME = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0], [3.0, 0.0, 1.0], [4.0, 1.0, 0.0], [5.0, 0.0, 1.0], [6.0, 1.0, 0.0], [7.0, 0.0, 1.0], [8.0, 1.0, 0.0], [9.0, 0.0, 1.0], [10.0, 1.0, 0.0], [11.0, 0.0, 1.0], [12.0, 1.0, 0.0], [13.0, 0.0, 1.0], [14.0, 1.0, 0.0], [15.0, 0.0, 1.0], [16.0, 1.0, 0.0], [17.0, 0.0, 1.0], [18.0, 1.0, 0.0], [19.0, 0.0, 1.0], [20.0, 1.0, 0.0], [21.0, 0.0, 1.0], [22.0, 1.0, 0.0], [23.0, 0.0, 1.0], [24.0, 1.0, 0.0], [25.0, 0.0, 1.0], [26.0, 1.0, 0.0], [27.0, 0.0, 1.0], [28.0, 1.0, 0.0], [29.0, 0.0, 1.0], [30.0, 1.0, 0.0], [31.0, 0.0, 1.0], [32.0, 1.0, 0.0], [33.0, 0.0, 1.0], [34.0, 1.0, 0.0], [35.0, 0.0, 1.0], [36.0, 1.0, 0.0], [37.0, 0.0, 1.0], [38.0, 1.0, 0.0], [39.0, 0.0, 1.0], [40.0, 1.0, 2.0]])  # add a row in new group c
N = 200
EPSILON, DELTA = 2.0000000000000004, 2e-05  # the library's claim, at its reference delta


W = np.array([0.0, -0.018802798248360314, 0.0, 0.007409522390916093, 148177202207.40915, 0.49027766133761574, 0.0, 0.0])  # the audit's Fisher discriminant


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(7), 1.0)


def event(output):
    return bool(float(np.dot(W, output)) >= 74088601103.4938)


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
