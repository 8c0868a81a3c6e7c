"""The Tumult Analytics catalogue (``tmlt.analytics`` on ``tmlt.core``, on Spark): ``Session`` and
``QueryBuilder`` queries — count, count_distinct, sum, average, variance, stdev, quantile, median,
min, max, get_bounds, get_groups — ungrouped and grouped by a public ``KeySet``, under pure DP
(Laplace, two-sided geometric), ρ-zCDP (Gaussian, discrete Gaussian) and approximate DP budgets,
protecting ``AddOneRow``, ``AddMaxRows``, ``AddMaxRowsInMaxGroups`` and ``AddRowsWithID``; and the
transformations a query applies before its aggregation (map, flat_map, filter, select, rename, the
replacement and dropping of NaN and infinities, join_public, bin_column and histogram, enforce,
flat_map_by_id), views (``Session.create_view``) and ``Session.partition_and_create``.

Tumult's claim is the budget a query is evaluated with: ``Session.evaluate(query, budget)`` on a
session built with ``protected_change = AddOneRow()`` releases a ``PureDPBudget(ε)``-DP,
``RhoZCDPBudget(ρ)``-zCDP or ``ApproxDPBudget(ε, δ)``-DP answer for one row added or removed;
``AddMaxRows(k)`` protects up to k rows added or removed at once.  Values are clamped to the
aggregation's ``[low, high]`` and NaN and infinite values are dropped before an aggregation
(``QueryBuilder`` docstrings).

Each row of a dataset here is ``[x, g]``: a float value and a group g ∈ {0, 1, 2} for the keys
"a", "b", "c".  A release is the query's answer: one value (two for get_bounds) ungrouped; for each
key of the ``KeySet``, whether it is in the answer and its value when grouped; for get_groups,
whether each key is released.

**Transformations.**  A transformation's stability (how many rows of its output one input row can
change) multiplies the sensitivity the library's noise must cover: flat_map with ``max_rows=2`` and a
join with a public table holding a key twice are 2-stable, and enforce(MaxRowsPerID(2)) bounds an id's
rows by 2.  Each transformation row is a short query, then a count or a sum, so a stability the
library got wrong shows as a violation of the query's budget.

**Batched evaluation.**  One ``Session.evaluate`` costs seconds on Spark whatever the data's size,
so a row of a thousand draws a side, evaluated once a draw, would take hours.  Every ungrouped
aggregation in Tumult is a group-by on the empty ``KeySet`` (``QueryBuilder.count`` is
``self.groupby(KeySet.from_dict({})).count()``), and a group-by over a public ``KeySet`` releases
each group's aggregate with noise of its own.  So :class:`Batches` puts ``K`` copies of every
dataset of a case in one table with a column ``copy`` and evaluates the same aggregation grouped by
``KeySet(copy) × KeySet(g)``: each copy's answer is one independent draw of the release on its
dataset, by the library's own group-by code, its own clamping and its own noise, at a privacy cost
the library computes from the same budget (one row is in one copy, so the copies compose in
parallel).  The draws are served, each once, to the audit's calls on each dataset.  The
reproduction scripts draw the same way, 200 copies an evaluation (:func:`release`);
``evaluate([data], **params)`` is the plain query, for a look at one answer.

Tumult draws noise from its own generator, which cannot be seeded: rows are reproducible in
distribution only.

References
----------
Tumult Analytics documentation (Session, QueryBuilder, KeySet, PrivacyBudget, ProtectedChange);
the docstrings of tmlt.analytics 0.21.0; Berghel et al. (2022), "Tumult Analytics: a robust,
easy-to-use, scalable, and expressive framework for differential privacy", arXiv:2212.04133.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ZCDP, ApproxDP, PureDP, Relation
from mechanisms.validation import check_size

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, point_label, require_library
from .families import HUGE, row_pairs
from .registry import register_library

__all__ = ["LIBRARY", "spark", "table", "public_table", "transformed", "grouping", "build_query", "evaluate", "vector", "draws", "release", "Batches", "BatchedRelease", "entries", "public_api"]

ADD_REMOVE = Relation.ADD_REMOVE
KEYS = ("a", "b", "c")

analytics = require_library("tmlt.analytics", catalogue="tumult", install="pip install tmlt.analytics")
pyspark_sql = require_library("pyspark.sql", catalogue="tumult", install="pip install tmlt.analytics")


# -- release functions (their source goes into reproduction scripts) --------------------------------
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


# -- batched evaluation -------------------------------------------------------------------------------
class Batches:
    """``batch(data, size, rng) -> (size, k)`` for :class:`BatchedRelease`: draws of the release on each
    dataset of a case by :func:`draws` (the last column 1 for a draw whose evaluation raised), each
    draw served once.

    The first call fills every dataset of the case with ``per_call`` draws times the number of times
    it occurs in the case's pairs (the audit draws each side of each pair); a later shortfall refills
    the dataset that ran short.  Draws on different copies are independent: each group gets noise of
    its own, so serving them in any order gives i.i.d. samples of the release on that dataset.
    """

    def __init__(self, params: Mapping[str, Any], datasets: tuple, per_call: int = 2_100) -> None:
        self.params = dict(params)
        self.datasets = tuple(self._rows(d) for d in datasets)
        self.per_call = int(per_call)
        self._pool: dict = {}
        self._other: dict = {}

    def __getstate__(self) -> dict:
        return {"params": self.params, "datasets": self.datasets, "per_call": self.per_call}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _pool={}, _other={})

    @staticmethod
    def _rows(data: Any) -> np.ndarray:
        """The dataset as rows [x, g] (an empty table read back from a report has shape (0,))."""
        return np.asarray(data, dtype=np.float64).reshape(-1, 2)

    @staticmethod
    def _key(data: np.ndarray) -> bytes:
        return repr(data.shape).encode() + np.ascontiguousarray(data).tobytes()

    def _fill(self, wanted: Mapping[bytes, int]) -> None:
        order = [k for k, n in wanted.items() if n > 0]
        stored = {**self._other, **{self._key(d): d for d in self.datasets}}
        found = draws([stored[k] for k in order], [wanted[k] for k in order], **self.params)
        start = 0
        for key in order:
            self._pool.setdefault(key, []).extend(found[start:start + wanted[key]])
            start += wanted[key]

    def __call__(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        data = self._rows(data)
        key = self._key(data)
        self._other.setdefault(key, data)  # a dataset outside the case's pairs is drawn on demand
        if not self._pool:
            counts: dict = {}
            for d in self.datasets:
                counts[self._key(d)] = counts.get(self._key(d), 0) + self.per_call
            counts[key] = max(counts.get(key, 0), size)
            self._fill(counts)
        short = size - len(self._pool.get(key, []))
        if short > 0:
            self._fill({key: max(short, self.per_call)})
        taken, self._pool[key] = self._pool[key][:size], self._pool[key][size:]
        return np.asarray(taken, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class BatchedRelease(LibraryRelease):
    """A :class:`LibraryRelease` whose ``batch`` returns whole draws, the "raised" column included (a
    batched evaluation that raises is charged to the datasets whose own evaluation raises)."""

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        size = check_size(size)
        out = np.asarray(self.batch(np.asarray(dataset, dtype=np.float64), size, rng), dtype=np.float64)
        if out.shape != (size, self.output_dim):
            raise ValueError(f"{self.name}: batched draws have shape {out.shape}, expected ({size}, {self.output_dim})")
        return out

    def __reduce__(self) -> tuple:
        return (BatchedRelease, (self.release, self.params, self.name, self.claim, self.output_dim, self.batch,
                                 self.deterministic, self.reference))


# -- cases ----------------------------------------------------------------------------------------------
def _label(point: Mapping[str, Any]) -> str:
    return point_label(point, empty="default")


def _claim(budget: tuple):
    kind, *values = budget
    if kind == "pure":
        return PureDP(values[0], ADD_REMOVE)
    if kind == "rho":
        return ZCDP(values[0], ADD_REMOVE)
    return ApproxDP(values[0], values[1], ADD_REMOVE)


def _pairs(lo: float, hi: float, *, keys, light: bool) -> list[tuple]:
    """Add-remove pairs of one row [x, g]: at the upper and lower bound, beyond the upper bound
    (clamped), at 1e300, NaN and +inf (dropped); grouped, a row in key c, which the KeySet holds
    while the data do not (a new key) or does not hold (a key the KeySet leaves out); one row
    against two; the empty table against one row.  ``light`` keeps four pairs (quantiles cost a
    Python call per group)."""
    base = np.array([[hi if i % 2 else lo, float(i % 2)] for i in range(6)])
    beyond = hi + 10 * (hi - lo)
    extra = [([hi, 0.0], "add a row at high"), ([beyond, 0.0], "add a row beyond high (clamped)"),
             ([HUGE, 0.0], "add a row at 1e300")]
    if not light:
        extra += [([lo, 0.0], "add a row at low"), ([np.nan, 0.0], "add a row with NaN"),
                  ([np.inf, 0.0], "add a row at +inf")]
    if keys is not None and not light:
        extra.append(([hi, 2.0], "add a row in key c" + ("" if "c" in keys else " (not in the KeySet)")))
    pairs = row_pairs(base, extra, ADD_REMOVE)
    pairs.append((np.array([[lo, 0.0]]), np.array([[lo, 0.0], [hi, 0.0]]), "one row vs two"))
    if not light:
        pairs.append((np.zeros((0, 2)), np.array([[hi, 0.0]]), "empty vs one row"))
    return pairs


def _rows_scenario(pairs: list[tuple]):
    """The pairs as a scenario, checked to differ by one row (NaN written as a sentinel for the check,
    which cannot compare NaN); pairs holding NaN are then passed as they are, vouched for."""
    checked = _scenario.from_pairs([(np.nan_to_num(a, nan=-7.0e307), np.nan_to_num(b, nan=-7.0e307), label)
                                    for a, b, label in pairs], ADD_REMOVE)
    if not any(np.isnan(a).any() or np.isnan(b).any() for a, b, _ in pairs):
        return checked
    return _scenario.custom(pairs, ADD_REMOVE)


def _group_pairs() -> list[tuple]:
    """get_groups: n rows in key a against n + 1 with one row alone in key c, or one more in b."""
    base = np.array([[0.0, 0.0]] * 5 + [[0.0, 1.0]] * 5)
    pairs = row_pairs(base, [([0.0, 2.0], "add a row alone in new key c"), ([0.0, 1.0], "add a row in key b")],
                      ADD_REMOVE)
    pairs.append((np.zeros((0, 2)), np.array([[0.0, 2.0]]), "empty vs one row in c"))
    return pairs


def _max_rows_pairs(lo: float, hi: float, k: int) -> list[tuple]:
    """AddMaxRows(k): k rows added at once (at high, in one key), vouched for as neighbours."""
    base = np.array([[hi if i % 2 else lo, float(i % 2)] for i in range(6)])
    return [(base, np.concatenate([base, [[hi, 0.0]] * k]), f"add {k} rows at high"),
            (base, np.concatenate([base, [[hi, 0.0]], [[HUGE, 0.0]] * (k - 1)]), f"add {k} rows, at high and 1e300")]


def _groups_pairs(lo: float, hi: float, k: int) -> list[tuple]:
    """AddMaxRowsInMaxGroups("g", 1, k): up to k rows added in one key of g (an existing key, a new
    key c), vouched for as neighbours under the library's relation."""
    base = np.array([[hi if i % 2 else lo, float(i % 2)] for i in range(6)])
    return [(base, np.concatenate([base, [[hi, 0.0]] * k]), f"add {k} rows at high in key a"),
            (base, np.concatenate([base, [[hi, 2.0]] * k]), f"add {k} rows in new key c"),
            (base, np.concatenate([base, [[HUGE, 1.0]] * k]), f"add {k} rows at 1e300 in key b")]


def _id_pairs(lo: float, hi: float) -> list[tuple]:
    """AddRowsWithID("id"), an id being all rows of one key (of one copy, :func:`table`): the id of
    key c added with one, two or three rows (three exceed enforce(MaxRowsPerID(2)) and must be
    truncated), vouched for as neighbours under the library's relation."""
    base = np.array([[hi if i % 2 else lo, float(i % 2)] for i in range(6)])
    return [(base, np.concatenate([base, [[hi, 2.0]] * n]), f"add id c with {n} row{'s' if n > 1 else ''}")
            for n in (1, 2, 3)] + [(np.zeros((0, 2)), np.array([[hi, 2.0]] * 3), "empty vs id c with 3 rows")]


def _width(aggregation: str, keys) -> int:
    """The length of :func:`vector` (the count of non-finite values included)."""
    if aggregation == "get_groups":
        return len(KEYS) + 1
    width = 2 if aggregation == "get_bounds" else 1
    return 1 + (width if keys is None else (1 + width) * len(keys))


def _layout(aggregation: str, keys) -> tuple:
    names = ("lower bound", "upper bound") if aggregation == "get_bounds" else (aggregation,)
    if aggregation == "get_groups":
        return tuple((f"released {k}", None) for k in KEYS) + (("non-finite values", None),)
    if keys is None:
        return tuple((n, None) for n in names) + (("non-finite values", None),)
    return tuple((f"{v} of {k}", None) for k in keys for v in ("released",) + names) + (("non-finite values", None),)


_API = {"count": "QueryBuilder.count", "count_distinct": "QueryBuilder.count_distinct", "sum": "QueryBuilder.sum",
        "average": "QueryBuilder.average", "variance": "QueryBuilder.variance", "stdev": "QueryBuilder.stdev",
        "quantile": "QueryBuilder.quantile", "median": "QueryBuilder.median", "min": "QueryBuilder.min",
        "max": "QueryBuilder.max", "get_bounds": "QueryBuilder.get_bounds", "get_groups": "QueryBuilder.get_groups"}


def _entry(name: str, aggregation: str, grid, *, api=(), transform=None) -> Entry:
    def build(point):
        keys = tuple(point["keys"]) if point.get("keys") is not None else None
        lo, hi = point.get("bounds", (0.0, 1.0))
        budget = tuple(point["budget"])
        max_rows = point.get("max_rows", 1)
        protect = tuple(point["protect"]) if "protect" in point else None
        bounded = aggregation not in ("count", "count_distinct", "get_bounds", "get_groups") or transform is not None
        params = {"aggregation": aggregation, "budget": budget, "max_rows": max_rows, "keys": keys,
                  **({"low": lo, "high": hi} if bounded else {}),
                  **({"quantile": point["quantile"]} if "quantile" in point else {}),
                  **({"mechanism": point["mechanism"]} if "mechanism" in point else {}),
                  **({"transform": transform} if transform is not None else {}),
                  **({"protect": protect} if protect is not None else {})}
        claim = _claim(budget)
        light = aggregation in ("quantile", "median", "min", "max", "get_bounds")
        if aggregation == "get_groups":
            scenario = _scenario.from_pairs(_group_pairs(), ADD_REMOVE)
        elif protect is not None and protect[0] == "groups":
            scenario = _scenario.custom(_groups_pairs(lo, hi, protect[2]), ADD_REMOVE)
        elif protect is not None:
            scenario = _scenario.custom(_id_pairs(lo, hi), ADD_REMOVE)
        elif max_rows > 1:
            scenario = _scenario.custom(_max_rows_pairs(lo, hi, max_rows), ADD_REMOVE)
        else:
            scenario = _rows_scenario(_pairs(lo, hi, keys=keys, light=light))
        datasets = tuple(d for pair in scenario.pairs for d in (pair.base, pair.neighbor))
        label = _label(point)
        shown = grouping(keys, transform, lo, hi)[1]
        width = _width(aggregation, shown)
        mechanism = BatchedRelease(release, params, f"tmlt.analytics.{name}({label})", claim, width + 1,
                                   batch=Batches(params, datasets), deterministic=False)
        return Case(name, label, dict(point), mechanism, claim, scenario, release, params, "query",
                    statistic="coordinates", layout=_layout(aggregation, shown))
    query = f"QueryBuilder(...).{aggregation}(...)" if transform is None else \
        f"QueryBuilder(...) after {transform}, then .{aggregation}(...)"
    text = (f"tmlt.analytics Session.evaluate({query}, budget): the answer "
            "satisfies the budget (PureDPBudget ε-DP, RhoZCDPBudget ρ-zCDP, ApproxDPBudget (ε, δ)-DP) for "
            "the session's protected change (AddOneRow: one row added or removed; AddMaxRows(k): up to k; "
            "AddMaxRowsInMaxGroups: up to k rows in each of up to m groups; AddRowsWithID: all rows of one id); "
            "values clamped to [low, high], NaN and infinities dropped (QueryBuilder docstrings); a "
            "transformation's stability is accounted for in the noise (Berghel et al. 2022, Section 3)")
    return Entry(name, api or (f"tmlt.analytics.{_API[aggregation]}",), "query", text, ADD_REMOVE, tuple(grid), build)


def _entries() -> list[Entry]:
    pure, rho = ("pure", 1.0), ("rho", 0.5)
    bounded = [{"budget": pure, "bounds": (0.0, 1.0)}, {"budget": pure, "bounds": (2.0, 10.0)},
               {"budget": rho, "bounds": (0.0, 1.0)}]
    return [
        _entry("count", "count", [{"budget": pure}, {"budget": rho}, {"budget": ("approx", 1.0, 1e-5)},
                                  {"budget": pure, "mechanism": "laplace"}, {"budget": pure, "max_rows": 2}]),
        _entry("count_distinct", "count_distinct", [{"budget": pure}, {"budget": rho}]),
        _entry("sum", "sum", bounded + [{"budget": pure, "bounds": (-10.0, 10.0)},
                                        {"budget": pure, "bounds": (0.0, 1.0), "max_rows": 2}]),
        _entry("average", "average", bounded),
        # transformations before an aggregation: their stability must enter the noise
        _entry("histogram", "count", [{"budget": pure, "bounds": (0.0, 1.0)}], transform="bin_column",
               api=("tmlt.analytics.QueryBuilder.bin_column", "tmlt.analytics.QueryBuilder.histogram")),
        _entry("map", "sum", [{"budget": pure, "bounds": (0.0, 1.0)}], transform="map",
               api=("tmlt.analytics.QueryBuilder.map",)),
        _entry("flat_map", "count", [{"budget": pure}, {"budget": rho}], transform="flat_map",
               api=("tmlt.analytics.QueryBuilder.flat_map",)),
        _entry("filter", "sum", [{"budget": pure, "bounds": (0.0, 1.0)}], transform="filter",
               api=("tmlt.analytics.QueryBuilder.filter",)),
        _entry("select.rename", "sum", [{"budget": pure, "bounds": (0.0, 1.0)}], transform="select.rename",
               api=("tmlt.analytics.QueryBuilder.select", "tmlt.analytics.QueryBuilder.rename")),
        _entry("replace_null_and_nan.replace_infinity", "sum", [{"budget": pure, "bounds": (0.0, 1.0)}],
               transform="replace", api=("tmlt.analytics.QueryBuilder.replace_null_and_nan",
                                         "tmlt.analytics.QueryBuilder.replace_infinity")),
        _entry("drop_null_and_nan.drop_infinity", "count", [{"budget": pure}], transform="drop",
               api=("tmlt.analytics.QueryBuilder.drop_null_and_nan", "tmlt.analytics.QueryBuilder.drop_infinity")),
        _entry("join_public", "count", [{"budget": pure}], transform="join_public",
               api=("tmlt.analytics.QueryBuilder.join_public",)),
        _entry("create_view", "count", [{"budget": pure}], transform="create_view",
               api=("tmlt.analytics.Session.create_view",)),
        # the library's other protected changes
        _entry("AddMaxRowsInMaxGroups", "count", [{"budget": pure, "protect": ("groups", 1, 2), "keys": ("a", "b", "c")},
                                                  {"budget": rho, "protect": ("groups", 1, 2), "keys": ("a", "b", "c")}],
               api=("tmlt.analytics.AddMaxRowsInMaxGroups",)),
        _entry("partition_and_create", "count", [{"budget": pure, "keys": ("a", "b")}], transform="partition",
               api=("tmlt.analytics.Session.partition_and_create",)),
        _entry("AddRowsWithID.flat_map_by_id", "count", [{"budget": pure, "protect": ("ids",)}],
               transform="flat_map_by_id", api=("tmlt.analytics.QueryBuilder.flat_map_by_id",)),
        _entry("AddRowsWithID.enforce", "count", [{"budget": pure, "protect": ("ids",)}], transform="enforce",
               api=("tmlt.analytics.AddRowsWithID", "tmlt.analytics.QueryBuilder.enforce")),
        _entry("groupby.count", "count", [{"budget": pure, "keys": ("a", "b", "c")},
                                          {"budget": pure, "keys": ("a", "b")},
                                          {"budget": rho, "keys": ("a", "b", "c")}],
               api=("tmlt.analytics.QueryBuilder.groupby", "tmlt.analytics.KeySet.from_dict",
                    "tmlt.analytics.GroupedQueryBuilder.count")),
        _entry("groupby.sum", "sum", [{"budget": pure, "keys": ("a", "b", "c"), "bounds": (0.0, 1.0)}],
               api=("tmlt.analytics.GroupedQueryBuilder.sum",)),
        _entry("groupby.average", "average", [{"budget": rho, "keys": ("a", "b", "c"), "bounds": (0.0, 1.0)}],
               api=("tmlt.analytics.GroupedQueryBuilder.average",)),
        _entry("get_groups", "get_groups", [{"budget": ("approx", 1.0, 1e-5)}]),
        # the costlier aggregations (a Python call per group, or per group and bin)
        _entry("variance", "variance", bounded[:1] + bounded[2:]),
        _entry("stdev", "stdev", bounded[:1]),
        _entry("quantile", "quantile", [{"budget": pure, "bounds": (0.0, 1.0), "quantile": 0.9}]),
        _entry("median", "median", [{"budget": pure, "bounds": (-10.0, 10.0)}, {"budget": rho, "bounds": (0.0, 1.0)}]),
        _entry("min", "min", [{"budget": pure, "bounds": (0.0, 1.0)}]),
        _entry("max", "max", [{"budget": pure, "bounds": (0.0, 1.0)}]),
        _entry("get_bounds", "get_bounds", [{"budget": pure}]),
    ]


# -- the library --------------------------------------------------------------------------------------
def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return tuple(_entries())


def public_api() -> tuple[str, ...]:
    """The public DP names: the query methods of ``QueryBuilder`` and ``GroupedQueryBuilder`` (the
    aggregations and the transformations before them), ``Session``'s methods that spend budget or
    build sessions, the budgets, protected changes and mechanism enumerations."""
    names = []
    for cls in ("QueryBuilder", "GroupedQueryBuilder", "Session"):
        names += [f"tmlt.analytics.{cls}.{n}" for n in dir(getattr(analytics, cls)) if not n.startswith("_")]
    for cls in ("PureDPBudget", "RhoZCDPBudget", "ApproxDPBudget", "AddOneRow", "AddMaxRows", "AddMaxRowsInMaxGroups",
                "AddRowsWithID"):
        if hasattr(analytics, cls):
            names.append(f"tmlt.analytics.{cls}")
    names.append("tmlt.analytics.KeySet.from_dict")
    return tuple(sorted(set(names)))


_EXCLUDED = {
    "tmlt.analytics.QueryBuilder.join_private": (
        "not yet written: a join of two private tables needs a session of two private sources, each with "
        "its own protected change, and truncation strategies on both sides; neighbours then differ in "
        "either table, a relation this catalogue's one-table pairs do not state"),
    "tmlt.analytics.QueryBuilder.clone": "not DP: copies a query under construction",
    **{f"tmlt.analytics.GroupedQueryBuilder.{n}": f"covered through another entry: {n} (the ungrouped query "
       "is the same group-by on the empty KeySet, and every row is drawn through a KeySet of copies)"
       for n in ("count_distinct", "get_bounds", "max", "median", "min", "quantile", "stdev", "variance")},
    "tmlt.analytics.Session.evaluate": "covered through another entry: every entry (each release is one evaluate)",
    "tmlt.analytics.Session.from_dataframe": "covered through another entry: every entry",
    "tmlt.analytics.Session.Builder": "covered through another entry: every entry (from_dataframe builds through it)",
    **{f"tmlt.analytics.Session.{n}": "not DP: session bookkeeping, no data released" for n in (
        "add_public_dataframe", "delete_view", "describe", "get_column_types", "get_grouping_column",
        "get_id_column", "get_id_space", "get_schema", "private_sources", "public_source_dataframes",
        "public_sources", "remaining_privacy_budget", "stop")},
    "tmlt.analytics.PureDPBudget": "covered through another entry: every entry at budget pure",
    "tmlt.analytics.RhoZCDPBudget": "covered through another entry: count, sum, average, median, flat_map, "
                                    "AddMaxRowsInMaxGroups at budget rho",
    "tmlt.analytics.ApproxDPBudget": "covered through another entry: count, get_groups at budget approx",
    "tmlt.analytics.AddOneRow": "covered through another entry: every entry without max_rows or protect",
    "tmlt.analytics.AddMaxRows": "covered through another entry: count, sum with max_rows=2",
}

LIBRARY = register_library(Library(
    name="tumult", distribution="tmlt.analytics", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header="import os\nimport sys\nimport tempfile\nimport importlib\nimport numpy as np\n"
                  "import pyspark.sql as pyspark_sql\nimport tmlt.analytics as analytics\n"
                  "KEYS = ('a', 'b', 'c')\n",
    helpers=(spark, table, public_table, transformed, grouping, build_query, _budget, _change, evaluate,
             vector, draws), seeded=False))
