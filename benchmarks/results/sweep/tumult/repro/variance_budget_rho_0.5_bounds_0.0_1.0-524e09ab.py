"""Reproduce: tumult variance [budget=(rho, 0.5), bounds=(0.0, 1.0)]

The sweep of tumult 0.21.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for variance
[budget=(rho, 0.5), bounds=(0.0, 1.0)], which claims 0.5-zCDP under add-remove: certified
epsilon >= 6.05 at delta = 1e-05, at confidence 0.998889 (the sweep's Bonferroni share). Witness
pair: add a row at 1e300.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: variance, non-finite values; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads a weighted sum of the whole vector (W).

Event: float(np.dot(W, output)) >= 76426595580496.12: a threshold on the weighted sum W of the released vector that the audit chose (the audit's certified event itself)  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws;
carrying the audit's certified event.
"""
import os
import sys
import tempfile
import importlib
import numpy as np
import pyspark.sql as pyspark_sql
import tmlt.analytics as analytics
KEYS = ('a', 'b', 'c')


def spark():
    """One local SparkSession per process, on one core, its Python workers on this interpreter and
    its tables in a temporary folder (kept on the function, started on first use)."""
    cache = spark.__dict__
    if "session" not in cache:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        folder = tempfile.mkdtemp(prefix="dpaudit-tumult-")
        builder = (pyspark_sql.SparkSession.builder.master("local[1]").appName("dpaudit-tumult")
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
                   .config("spark.sql.warehouse.dir", os.path.join(folder, "warehouse"))
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                   .config("spark.driver.memory", "2g").config("spark.ui.showConsoleProgress", "false"))
        cache["session"] = builder.getOrCreate()
        cache["session"].sparkContext.setLogLevel("ERROR")
    return cache["session"]


def table(datasets, ids=False):
    """One Spark DataFrame of the rows ``[x, g]`` of each dataset (g = 0, 1, 2 → "a", "b", "c"), the
    i-th dataset's rows marked ``copy = i``; the schema is fixed, so an empty dataset is a table.
    ``ids`` adds a privacy-id column ``id = "copy:g"`` (all rows of one key of one copy are one id)."""
    pd = importlib.import_module("pandas")
    parts = [np.asarray(d, dtype=float).reshape(-1, 2) for d in datasets]
    sizes = [len(p) for p in parts]
    rows = np.concatenate(parts) if parts else np.zeros((0, 2))
    frame = pd.DataFrame({"copy": np.repeat(np.arange(len(parts)), sizes).astype("int64"), "x": rows[:, 0],
                          "g": np.array(KEYS)[rows[:, 1].astype(int)] if len(rows) else np.array([], dtype=str)})
    if not ids:
        return spark().createDataFrame(frame, schema="copy long, x double, g string")
    frame["id"] = frame["copy"].astype(str) + ":" + frame["g"]
    return spark().createDataFrame(frame, schema="copy long, x double, g string, id string")


def public_table():
    """The public table of join_public: key a twice (weights 1 and 2), b and c once — a join on g
    sends a row in key a to two rows, so a count after the join has sensitivity 2."""
    pd = importlib.import_module("pandas")
    frame = pd.DataFrame({"g": ["a", "a", "b", "c"], "w": [1.0, 2.0, 1.0, 1.0]})
    return spark().createDataFrame(frame, schema="g string, w double")


def transformed(source, transform, *, low=None, high=None):
    """The table a query aggregates: ``QueryBuilder(source)`` after ``transform`` (None: the table
    itself), and the name of the column the aggregation reads.  Each transformation is one a user
    writes before an aggregation; its stability enters the aggregation's noise."""
    base = analytics.QueryBuilder(source)
    if transform is None:
        return base, "x"
    column_type = analytics.ColumnType
    mid = (low + high) / 2 if low is not None else 0.5
    steps = {
        "map": lambda: (base.map(lambda row: {"y": None if row["x"] is None else 2.0 * row["x"]},
                                 {"y": column_type.DECIMAL}, augment=True), "y"),
        "flat_map": lambda: (base.flat_map(lambda row: [{"k": 0}, {"k": 1}], {"k": column_type.INTEGER},
                                           augment=True, max_rows=2), "x"),
        "filter": lambda: (base.filter(f"x > {mid!r}"), "x"),
        "select.rename": lambda: (base.select(["copy", "x", "g"]).rename({"x": "v"}), "v"),
        "replace": lambda: (base.replace_null_and_nan({"x": high}).replace_infinity({"x": (low, high)}), "x"),
        "drop": lambda: (base.drop_null_and_nan(["x"]).drop_infinity(["x"]), "x"),
        "join_public": lambda: (base.join_public("P", join_columns=["g"]), "x"),
        "bin_column": lambda: (base.bin_column("x", analytics.BinningSpec([low, mid, high]), name="x_binned"), "x"),
        "enforce": lambda: (base.enforce(analytics.MaxRowsPerID(2)), "x"),
        "flat_map_by_id": lambda: (base.flat_map_by_id(lambda rows: [{"copy": r["copy"], "x": r["x"]} for r in rows] * 2,
                                                       {"copy": column_type.INTEGER, "x": column_type.DECIMAL})
                                   .enforce(analytics.MaxRowsPerID(2)), "x"),
    }
    return steps[transform]()


def grouping(keys, transform=None, low=None, high=None):
    """The grouping column and its public keys: g and ``keys``, or, after bin_column, the bins of
    ``[low, mid, high]`` (``BinningSpec.bins()``, the KeySet that ``histogram`` builds)."""
    if transform == "bin_column":
        return "x_binned", tuple(analytics.BinningSpec([low, (low + high) / 2, high]).bins())
    return "g", keys


def build_query(copies, *, aggregation, keys=None, low=None, high=None, quantile=None, mechanism="default",
                transform=None, source="T"):
    """The query on ``source``: ``aggregation`` ungrouped (``keys`` None) or grouped by the public
    KeySet of ``keys``, after ``transform`` (:func:`transformed`); with ``copies`` (a number), grouped
    by the KeySet of copies 0..copies-1 too.  Without copies, a count after bin_column is
    ``QueryBuilder.histogram`` itself."""
    column, keys = grouping(keys, transform, low, high)
    base, x = transformed(source, transform, low=low, high=high)
    if transform == "bin_column" and copies is None:
        return analytics.QueryBuilder(source).histogram("x", analytics.BinningSpec([low, (low + high) / 2, high]),
                                                        name="x_binned")
    keyset = analytics.KeySet.from_dict({column: list(keys)}) if keys is not None else None
    if copies is not None:
        by_copy = analytics.KeySet.from_dict({"copy": list(range(copies))})
        keyset = by_copy if keyset is None else by_copy * keyset
    if aggregation == "get_groups":
        return base.get_groups((["copy"] if copies is not None else []) + ["g"])
    grouped = base if keyset is None else base.groupby(keyset)
    bounded = {"low": low, "high": high}
    calls = {"count": lambda: grouped.count(mechanism=mechanism),
             "count_distinct": lambda: grouped.count_distinct([x], mechanism=mechanism),
             "sum": lambda: grouped.sum(x, **bounded, mechanism=mechanism),
             "average": lambda: grouped.average(x, **bounded, mechanism=mechanism),
             "variance": lambda: grouped.variance(x, **bounded, mechanism=mechanism),
             "stdev": lambda: grouped.stdev(x, **bounded, mechanism=mechanism),
             "quantile": lambda: grouped.quantile(x, quantile, **bounded),
             "median": lambda: grouped.median(x, **bounded),
             "min": lambda: grouped.min(x, **bounded),
             "max": lambda: grouped.max(x, **bounded),
             "get_bounds": lambda: grouped.get_bounds(x)}
    return calls[aggregation]()


def _budget(budget):
    kind, *values = budget
    return {"pure": analytics.PureDPBudget, "rho": analytics.RhoZCDPBudget,
            "approx": analytics.ApproxDPBudget}[kind](*values)


def _change(max_rows, protect=None):
    """The protected change: AddOneRow, AddMaxRows(max_rows), or ``protect`` = ("groups", m, k):
    AddMaxRowsInMaxGroups("g", m, k), ("ids",): AddRowsWithID("id")."""
    if protect is not None and protect[0] == "groups":
        return analytics.AddMaxRowsInMaxGroups("g", max_groups=protect[1], max_rows_per_group=protect[2])
    if protect is not None:
        return analytics.AddRowsWithID("id")
    return analytics.AddOneRow() if max_rows == 1 else analytics.AddMaxRows(max_rows)


def evaluate(datasets, *, budget, max_rows=1, protect=None, copies=None, **query):
    """Session.from_dataframe on the rows of ``datasets`` (one copy each), then Session.evaluate of
    the query at ``budget`` (``("pure", ε)``, ``("rho", ρ)`` or ``("approx", ε, δ)``): the answer's
    rows as a list of dicts.  ``copies`` groups by the copy column too (:class:`Batches`).  A query
    after join_public joins the public table "P" (:func:`public_table`); after create_view, it reads
    the view "V", the flat_map of the source (each row twice) made by Session.create_view; after
    partition, Session.partition_and_create splits "T" by g into sessions "Ta" and "Tb" (keys a, b),
    each spending the whole budget on its part (parallel composition), and each is evaluated."""
    ids = protect is not None and protect[0] == "ids"
    session = analytics.Session.from_dataframe(privacy_budget=_budget(budget), source_id="T",
                                               dataframe=table(datasets, ids=ids),
                                               protected_change=_change(max_rows, protect))
    try:
        if query.get("transform") == "join_public":
            session.add_public_dataframe("P", public_table())
        if query.get("transform") == "create_view":
            session.create_view(transformed("T", "flat_map")[0], "V", cache=False)
            query = {**query, "transform": None, "source": "V"}
        if query.get("transform") == "partition":
            parts = session.partition_and_create("T", _budget(budget), column="g", splits={"Ta": "a", "Tb": "b"})
            rows = []
            try:
                for key, source in (("a", "Ta"), ("b", "Tb")):
                    plain = {**query, "transform": None, "keys": None, "source": source}
                    answer = parts[source].evaluate(build_query(copies, **plain), _budget(budget))
                    rows += [{**row.asDict(), "g": key} for row in answer.collect()]
            finally:
                for part in parts.values():
                    part.stop()
            return rows
        answer = session.evaluate(build_query(copies, **query), _budget(budget))
        return [row.asDict() for row in answer.collect()]
    finally:
        session.stop()


def vector(rows, *, aggregation, keys=None, transform=None, low=None, high=None, **_):
    """One release as finite numbers: ungrouped, the answer's value(s); grouped, for each key of
    ``keys`` (after bin_column, each bin) whether it is in the answer and its value; get_groups,
    whether each key a, b, c is released.  A None, NaN or infinite value is written as 0 and counted
    in a last entry."""
    column, keys = grouping(keys, transform, low, high)

    def values(row):
        return [None if row[c] is None else float(row[c]) for c in row if c not in ("copy", column)]
    if aggregation == "get_groups":
        found = {row["g"] for row in rows}
        return [float(k in found) for k in KEYS] + [0.0]
    width = 2 if aggregation == "get_bounds" else 1
    if keys is None:
        out = values(rows[0]) if rows else [None] * width
    else:
        found = {row[column]: values(row) for row in rows}
        out = []
        for key in keys:
            out += [1.0] + found[key] if key in found else [0.0] + [0.0] * width
    bad = sum(1 for v in out if v is None or not np.isfinite(v))
    return [v if v is not None and np.isfinite(v) else 0.0 for v in out] + [float(bad)]


def draws(datasets, counts, **params):
    """``counts[i]`` draws of the release on ``datasets[i]``, every copy in one Session.evaluate grouped
    by copy (module docstring); each draw is the vector of :func:`vector` and a last entry, 1.0 if the
    evaluation raised.  If it raises, each dataset is evaluated alone, so that an exception is charged
    to the datasets whose own evaluation raises."""
    copies = [d for d, n in zip(datasets, counts) for _ in range(n)]
    try:
        rows = evaluate(copies, copies=len(copies), **params)
    except Exception:  # noqa: BLE001 - any exception the library raises is an output
        if len(datasets) == 1:
            raised = [0.0] * len(vector([], **params)) + [1.0]
            return [list(raised) for _ in range(counts[0])]  # one list a draw, never one shared
        return [draw for d, n in zip(datasets, counts) for draw in draws([d], [n], **params)]
    by_copy: dict = {}
    for row in rows:
        by_copy.setdefault(row["copy"], []).append(row)
    return [vector(by_copy.get(i, []), **params) + [0.0] for i in range(len(copies))]


def release(data, random_state, **params):
    """One release of the query on ``data`` (Tumult's generator; ``random_state`` unused), served from
    a batch of 200 draws evaluated together (:func:`draws`; one Session.evaluate costs seconds); a call
    whose batch raised raises."""
    pool = release.__dict__.setdefault("pool", {})
    key = (np.asarray(data, dtype=float).tobytes(), np.shape(data), repr(sorted(params.items())))
    if not pool.get(key):
        pool[key] = draws([data], [200], **params)
    draw = pool[key].pop()
    if draw[-1]:
        raise RuntimeError("Session.evaluate raised on this dataset")
    return draw[:-1]



release = release
PARAMS = {'aggregation': 'variance', 'budget': ('rho', 0.5), 'max_rows': 1, 'keys': None, 'low': 0.0, 'high': 1.0}
D = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]])
D_PRIME = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [1e+300, 0.0]])  # add a row at 1e300
N = 392
EPSILON, DELTA = 4.728400132044044, 1e-05  # the library's claim, at its reference delta


W = np.array([-14.054103391733749, -3.2709607478797524, 152853191160995.72])  # the audit's Fisher discriminant


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(2), 1.0)


def event(output):
    return bool(float(np.dot(W, output)) >= 76426595580496.12)


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
