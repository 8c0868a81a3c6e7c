"""A small numpy fake of the Tumult Analytics API the ``tumult`` catalogue calls (``tmlt.analytics`` and
``pyspark.sql``), so that CI, which installs neither Tumult nor Spark, tests the catalogue's plumbing:
its queries, the widths of its release vectors, its coverage and the batched evaluation over copies.

A "Spark DataFrame" is a pandas frame; ``Session.evaluate`` computes the query's aggregate per group of
its KeySet in numpy and adds noise from a seeded generator (:data:`RNG`, reset by :func:`install`):
Laplace of scale Δ/ε under a pure budget (and an approximate one), Gaussian of σ = Δ/√(2ρ) under ρ-zCDP,
with Δ the aggregate's sensitivity for ``AddMaxRows(k)`` (k for counts, k·max(|low|, |high|) for sums).
Values are clamped to [low, high] and NaN and infinities dropped, as Tumult documents, and answers
are snapped to multiples of 2^-10.

``FLAGS["clamp"] = False`` plants a documented bug class: the sum forgets to clamp, so a row at 1e300
moves it by 1e300 against noise of scale max(|low|, |high|)/ε.  ``FLAGS["overflow"] = True`` makes
variance and stdev raise OverflowError on a value whose square overflows, as tmlt.analytics 0.21
does (it squares the raw value before clamping).  :data:`EVALUATIONS` counts the calls
of ``Session.evaluate`` (the batched evaluation must need few).
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pandas as pd

RNG = np.random.default_rng(0)
FLAGS = {"clamp": True, "overflow": False}
EVALUATIONS = [0]


def install(monkeypatch, seed: int = 0) -> None:
    """Put the fakes of ``tmlt.analytics`` and ``pyspark.sql`` into ``sys.modules`` (undone by
    ``monkeypatch``), and drop the catalogue module and its registration."""
    global RNG
    RNG = np.random.default_rng(seed)
    FLAGS.update(clamp=True, overflow=False)
    EVALUATIONS[0] = 0
    from scenarios.libraries import registry

    for name, module in _modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delitem(sys.modules, registry.BUILT_IN["tumult"], raising=False)
    monkeypatch.delitem(registry._REGISTRY, "tumult", raising=False)


class _Row(dict):
    def asDict(self):  # noqa: N802 - pyspark's name
        return dict(self)


def _modules() -> dict:
    class Builder:
        def master(self, *_):
            return self

        appName = config = master  # noqa: N815 - pyspark's names

        def getOrCreate(self):  # noqa: N802
            return types.SimpleNamespace(createDataFrame=lambda frame, schema=None: frame.copy(),
                                         sparkContext=types.SimpleNamespace(setLogLevel=lambda level: None))

    SparkSession = types.SimpleNamespace(builder=Builder())

    class KeySet:
        def __init__(self, frame):
            self.frame = frame

        @staticmethod
        def from_dict(domains):
            if not domains:
                return KeySet(pd.DataFrame(index=[0]))
            (column, values), = domains.items()
            return KeySet(pd.DataFrame({column: list(values)}))

        def __mul__(self, other):
            return KeySet(self.frame.merge(other.frame, how="cross"))

    class Budget:
        def __init__(self, *values):
            self.values = values

    PureDPBudget = type("PureDPBudget", (Budget,), {})
    RhoZCDPBudget = type("RhoZCDPBudget", (Budget,), {})
    ApproxDPBudget = type("ApproxDPBudget", (Budget,), {})

    class AddOneRow:
        max_rows = 1

    class AddMaxRows:
        def __init__(self, max_rows):
            self.max_rows = max_rows

    def _noise(budget, sensitivity, size):
        if isinstance(budget, RhoZCDPBudget):
            return RNG.normal(0.0, sensitivity / np.sqrt(2 * budget.values[0]), size)
        return RNG.laplace(0.0, sensitivity / budget.values[0], size)

    class Query:
        def __init__(self, keyset, aggregation, column=None, low=None, high=None, quantile=None):
            self.keyset, self.aggregation, self.column = keyset, aggregation, column
            self.low, self.high, self.quantile = low, high, quantile

        def _values(self, x):
            x = x[np.isfinite(x)]
            return np.clip(x, self.low, self.high) if FLAGS["clamp"] and self.low is not None else x

        def answer(self, frame, budget, k):
            bound = max(abs(self.low or 0.0), abs(self.high or 0.0)) or 1.0
            keys = list(self.keyset.frame.columns)
            xs = frame["x"].to_numpy()
            index: dict = {}
            for i, key in enumerate(zip(*(frame[c].to_numpy() for c in keys))):
                index.setdefault(key, []).append(i)
            out = []
            for key in self.keyset.frame.to_dict("records"):
                x = xs[index.get(tuple(key[c] for c in keys), [])] if keys else xs
                v = self._values(x)
                name = f"x_{self.aggregation}"
                if self.aggregation in ("count", "count_distinct"):
                    n = len(x) if self.aggregation == "count" else len(np.unique(x))
                    value = {self.aggregation: float(round(n + _noise(budget, k, 1)[0]))}
                elif self.aggregation == "sum":
                    value = {name: float(np.sum(v) + _noise(budget, k * bound, 1)[0])}
                elif self.aggregation in ("average", "variance", "stdev"):
                    if FLAGS["overflow"] and self.aggregation != "average" and (np.abs(x[np.isfinite(x)]) > 1e154).any():
                        raise OverflowError("(34, 'Numerical result out of range')")  # x ** 2 before clamping
                    mid = (self.low + self.high) / 2
                    count = max(len(v) + _noise(budget, k, 1)[0], 1.0)
                    mean = float(np.clip(mid + (np.sum(v - mid) + _noise(budget, k * bound, 1)[0]) / count,
                                         self.low, self.high))
                    spread = float(np.clip(np.var(v) if len(v) else 0.0, 0, (self.high - self.low) ** 2 / 4))
                    value = {name: {"average": mean, "variance": spread, "stdev": np.sqrt(spread)}[self.aggregation]}
                elif self.aggregation == "get_bounds":
                    top = float(2.0 ** np.ceil(np.log2(max(np.max(np.abs(v)) if len(v) else 1.0, 1e-300))))
                    value = {"x_lower_bound": -top, "x_upper_bound": top}
                else:
                    q = {"median": 0.5, "min": 0.0, "max": 1.0}.get(self.aggregation, self.quantile)
                    centre = np.quantile(v, q) if len(v) else (self.low + self.high) / 2
                    value = {name: float(np.clip(centre + _noise(budget, self.high - self.low, 1)[0],
                                                 self.low, self.high))}
                # Snapped to multiples of 2^-10, as exact samplers round: the float grain of v + noise
                # would otherwise tell v = 0 from v = 1 (Mironov 2012), a leak the fake does not plant.
                value = {k: round(v * 1024) / 1024 for k, v in value.items()}
                out.append(_Row({**{c: key[c] for c in keys}, **value}))
            return out

    class GroupsQuery:
        def __init__(self, columns):
            self.columns = columns

        def answer(self, frame, budget, k):
            keys = list(zip(*(frame[c].to_numpy() for c in self.columns)))
            sizes = {key: keys.count(key) for key in set(keys)}
            kept = [key for key, n in sizes.items() if n + RNG.laplace(0.0, 1 / budget.values[0]) > 5]
            return [_Row(dict(zip(self.columns, key))) for key in kept]

    class GroupedQueryBuilder:
        def __init__(self, keyset):
            self.keyset = keyset

        def count(self, name=None, mechanism="default"):
            return Query(self.keyset, "count")

        def count_distinct(self, columns=None, name=None, mechanism="default"):
            return Query(self.keyset, "count_distinct")

        def get_bounds(self, column, lower_bound_column=None, upper_bound_column=None):
            return Query(self.keyset, "get_bounds", column)

        def quantile(self, column, quantile, low, high, name=None):
            return Query(self.keyset, "quantile", column, low, high, quantile)

    def _bounded(aggregation):
        def method(self, column, low, high, name=None, mechanism="default"):
            return Query(self.keyset, aggregation, column, low, high)
        return method

    for aggregation in ("sum", "average", "variance", "stdev", "median", "min", "max"):
        setattr(GroupedQueryBuilder, aggregation, _bounded(aggregation))

    class QueryBuilder(GroupedQueryBuilder):
        def __init__(self, source_id):
            super().__init__(KeySet.from_dict({}))

        def groupby(self, by):
            return GroupedQueryBuilder(by)

        def get_groups(self, columns=None):
            return GroupsQuery(list(columns))

        def clone(self):
            return self

    for name in ("bin_column", "drop_infinity", "drop_null_and_nan", "enforce", "filter", "flat_map", "flat_map_by_id",
                 "histogram", "join_private", "join_public", "map", "rename", "replace_infinity",
                 "replace_null_and_nan", "select"):
        setattr(QueryBuilder, name, lambda self, *args, **kwargs: self)

    class Answer:
        def __init__(self, rows):
            self.rows = rows

        def collect(self):
            return self.rows

    class Session:
        Builder = object

        def __init__(self, frame, change):
            self.frame, self.change = frame, change

        @staticmethod
        def from_dataframe(privacy_budget, source_id, dataframe, protected_change):
            return Session(dataframe, protected_change)

        def evaluate(self, query_expr, privacy_budget):
            EVALUATIONS[0] += 1
            return Answer(query_expr.answer(self.frame, privacy_budget, self.change.max_rows))

        def stop(self):
            pass

    for name in ("add_public_dataframe", "create_view", "delete_view", "describe", "get_column_types",
                 "get_grouping_column", "get_id_column", "get_id_space", "get_schema", "partition_and_create"):
        setattr(Session, name, lambda self, *args, **kwargs: None)
    for name in ("private_sources", "public_source_dataframes", "public_sources", "remaining_privacy_budget"):
        setattr(Session, name, property(lambda self: None))

    analytics = types.ModuleType("tmlt.analytics")
    analytics.__dict__.update(
        KeySet=KeySet, QueryBuilder=QueryBuilder, GroupedQueryBuilder=GroupedQueryBuilder, Session=Session,
        PureDPBudget=PureDPBudget, RhoZCDPBudget=RhoZCDPBudget, ApproxDPBudget=ApproxDPBudget, AddOneRow=AddOneRow,
        AddMaxRows=AddMaxRows, AddMaxRowsInMaxGroups=object, AddRowsWithID=object)
    tmlt = types.ModuleType("tmlt")
    tmlt.analytics = analytics
    sql = types.ModuleType("pyspark.sql")
    sql.SparkSession = SparkSession
    pyspark = types.ModuleType("pyspark")
    pyspark.sql = sql
    return {"tmlt": tmlt, "tmlt.analytics": analytics, "pyspark": pyspark, "pyspark.sql": sql}
