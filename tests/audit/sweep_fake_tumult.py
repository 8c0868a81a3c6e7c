"""A small numpy fake of the Tumult Analytics API the ``tumult`` catalogue calls (``tmlt.analytics`` and
``pyspark.sql``), so that CI, which installs neither Tumult nor Spark, tests the catalogue's plumbing:
its queries, the widths of its release vectors, its coverage and the batched evaluation over copies.

A "Spark DataFrame" is a pandas frame; ``Session.evaluate`` computes the query's aggregate per group of
its KeySet in numpy and adds noise from a seeded generator (:data:`RNG`, reset by :func:`install`):
Laplace of scale Δ/ε under a pure budget (and an approximate one), Gaussian of σ = Δ/√(2ρ) under ρ-zCDP,
with Δ the aggregate's sensitivity for ``AddMaxRows(k)`` (k for counts, k·max(|low|, |high|) for sums).
Values are clamped to [low, high] and NaN and infinities dropped, as Tumult documents, and answers
are snapped to multiples of 2^-10.

Transformations before an aggregation act on the frame as Tumult documents them (map, flat_map
truncated to ``max_rows``, filter on a ``column op number`` condition, select, rename, replace and drop
of NaN and infinities, join_public, bin_column, enforce(MaxRowsPerID), flat_map_by_id), and so do
views (``Session.create_view``) and partitions (``Session.partition_and_create``: each part a session
of its own at the whole budget).  Each transformation maps the sensitivity through its stability:
flat_map multiplies it by ``max_rows``, join_public by the largest multiplicity of a join key in the
public table, and enforce(MaxRowsPerID(k)) sets it to k under ``AddRowsWithID`` (which refuses a query
without it).  ``AddMaxRowsInMaxGroups(g, m, k)`` has sensitivity m·k and, as in Tumult, refuses a query
not grouped by g.

``FLAGS["stability"] = False`` plants the bug class the transformation rows look for: the noise
ignores the transformations' stability (as if each were 1-stable).  ``FLAGS["clamp"] = False`` plants
another documented bug class: the sum forgets to clamp, so a row at 1e300 moves it by 1e300 against
noise of scale max(|low|, |high|)/ε.  ``FLAGS["overflow"] = True`` makes variance and stdev raise
OverflowError on a value whose square overflows, as tmlt.analytics 0.21 does (it squares the raw
value before clamping).  :data:`EVALUATIONS` counts the calls of ``Session.evaluate`` (the batched
evaluation must need few).
"""

from __future__ import annotations

import re
import sys
import types

import numpy as np
import pandas as pd
from fake_modules import forget

RNG = np.random.default_rng(0)
FLAGS = {"clamp": True, "overflow": False, "stability": True}
EVALUATIONS = [0]


def install(monkeypatch, seed: int = 0) -> None:
    """Put the fakes of ``tmlt.analytics`` and ``pyspark.sql`` into ``sys.modules`` (undone by
    ``monkeypatch``), and drop the catalogue module and its registration."""
    global RNG
    RNG = np.random.default_rng(seed)
    FLAGS.update(clamp=True, overflow=False, stability=True)
    EVALUATIONS[0] = 0
    from scenarios.libraries import registry

    for name, module in _modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    forget(monkeypatch, sys.modules, registry.BUILT_IN["tumult"])
    forget(monkeypatch, registry._REGISTRY, "tumult")


class _Row(dict):
    def asDict(self):  # noqa: N802 - pyspark's name
        return dict(self)


def _records(frame: pd.DataFrame, rows: list) -> pd.DataFrame:
    """A frame of ``rows`` (dicts) keeping the columns of ``frame`` when there are none."""
    return pd.DataFrame(rows) if rows else frame.iloc[0:0]


def _transformations() -> dict:
    """Each transformation as ``(frame, session, *args) -> (frame, stability)``, the stability a map
    of the sensitivity (the identity for 1-stable ones)."""
    same = lambda k: k  # noqa: E731

    def map_(frame, session, f, types_, augment=False):
        rows = [{**(r if augment else {}), **f(r)} for r in frame.to_dict("records")]
        return _records(frame, rows), same

    def flat_map(frame, session, f, types_, augment=False, grouping=False, max_rows=None):
        rows = [{**(r if augment else {}), **out} for r in frame.to_dict("records") for out in f(r)[:max_rows]]
        return _records(frame, rows), lambda k: k * (max_rows or 1)

    def filter_(frame, session, condition):
        column, op, value = re.fullmatch(r"\s*(\w+)\s*(>=|<=|>|<)\s*(\S+)\s*", condition).groups()
        x, v = frame[column].to_numpy(dtype=float), float(value)
        keep = {">": x > v, "<": x < v, ">=": x >= v, "<=": x <= v}[op]
        return frame[keep], same

    def replace_infinity(frame, session, replace_with):
        frame = frame.copy()
        for column, (low, high) in replace_with.items():
            frame[column] = frame[column].replace({-np.inf: low, np.inf: high})
        return frame, same

    def drop_infinity(frame, session, columns):
        return frame[np.isfinite(frame[columns].to_numpy(dtype=float)).all(axis=1) |
                     frame[columns].isna().any(axis=1)], same

    def join_public(frame, session, name, join_columns=None, how="inner"):
        public = session.public[name]
        multiplicity = int(public.groupby(join_columns).size().max()) if len(public) else 0
        return frame.merge(public, on=join_columns, how=how), lambda k: k * multiplicity

    def bin_column(frame, session, column, spec, name=None):
        frame = frame.copy()
        frame[name or f"{column}_binned"] = [spec.assign(x) for x in frame[column].to_numpy(dtype=float)]
        return frame, same

    def enforce(frame, session, constraint):
        return frame.groupby("id", sort=False).head(constraint.max_rows), lambda k: constraint.max_rows

    def flat_map_by_id(frame, session, f, types_):
        rows = [{**out, "id": key} for key, part in frame.groupby("id", sort=False) for out in f(part.to_dict("records"))]
        return _records(frame, rows), same

    return {"map": map_, "flat_map": flat_map, "filter": filter_,
            "select": lambda frame, session, columns: (frame[list(columns)], same),
            "rename": lambda frame, session, mapper: (frame.rename(columns=mapper), same),
            "replace_null_and_nan": lambda frame, session, replace_with: (frame.fillna(replace_with), same),
            "replace_infinity": replace_infinity,
            "drop_null_and_nan": lambda frame, session, columns: (frame.dropna(subset=columns), same),
            "drop_infinity": drop_infinity, "join_public": join_public, "bin_column": bin_column,
            "enforce": enforce, "flat_map_by_id": flat_map_by_id}


def _modules() -> dict:
    class Builder:
        def master(self, *_):
            return self

        appName = config = master  # noqa: N815 - pyspark's names

        def getOrCreate(self):  # noqa: N802
            return types.SimpleNamespace(createDataFrame=lambda frame, schema=None: frame.copy(),
                                         sparkContext=types.SimpleNamespace(setLogLevel=lambda level: None))

    SparkSession = types.SimpleNamespace(builder=Builder())
    ColumnType = types.SimpleNamespace(INTEGER="INTEGER", DECIMAL="DECIMAL", VARCHAR="VARCHAR")

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

    class BinningSpec:
        """Bins [e0, e1], (e1, e2], ... named as Tumult names them; other values (NaN too) go to None."""

        def __init__(self, bin_edges):
            self.edges = [float(e) for e in bin_edges]

        def bins(self):
            names = [f"({a:.2f}, {b:.2f}]" for a, b in zip(self.edges[:-1], self.edges[1:])]
            return ["[" + names[0][1:]] + names[1:]

        def assign(self, x):
            if not np.isfinite(x) or x < self.edges[0] or x > self.edges[-1]:
                return None
            return self.bins()[max(int(np.searchsorted(self.edges, x, side="left")) - 1, 0)]

    class MaxRowsPerID:
        def __init__(self, max_rows):
            self.max_rows = max_rows

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

    class AddMaxRowsInMaxGroups:
        def __init__(self, grouping_column, max_groups, max_rows_per_group):
            self.grouping_column, self.max_rows = grouping_column, max_groups * max_rows_per_group

    class AddRowsWithID:
        max_rows = None  # set by enforce(MaxRowsPerID(k)); a query without it is refused

        def __init__(self, id_column):
            self.id_column = id_column

    def _noise(budget, sensitivity, size):
        if isinstance(budget, RhoZCDPBudget):
            return RNG.normal(0.0, sensitivity / np.sqrt(2 * budget.values[0]), size)
        return RNG.laplace(0.0, sensitivity / budget.values[0], size)

    steps = _transformations()

    def _prepare(session, source, chain, change):
        """The source's frame after the chain of transformations, and the sensitivity they give."""
        if source in session.views:
            view = session.views[source]
            frame, k = _prepare(session, view.source, view.chain, change)
        else:
            frame, k = session.tables[source], change.max_rows
        for name, args, kwargs in chain:
            frame, stability = steps[name](frame, session, *args, **kwargs)
            if FLAGS["stability"]:
                k = stability(k)
            elif k is None:  # the planted bug: every transformation taken as 1-stable
                k = 1
        if k is None:
            raise RuntimeError("AddRowsWithID needs a MaxRowsPerID constraint before an aggregation")
        return frame, k

    class Query:
        def __init__(self, builder, aggregation, column=None, low=None, high=None, quantile=None):
            self.keyset, self.source, self.chain = builder.keyset, builder.source, builder.chain
            self.aggregation, self.column = aggregation, column or "x"
            self.low, self.high, self.quantile = low, high, quantile

        def _values(self, x):
            x = x[np.isfinite(x)]
            return np.clip(x, self.low, self.high) if FLAGS["clamp"] and self.low is not None else x

        def answer(self, session, budget):
            frame, k = _prepare(session, self.source, self.chain, session.change)
            keys = list(self.keyset.frame.columns)
            grouping = getattr(session.change, "grouping_column", None)
            if grouping is not None and grouping not in keys:
                raise ValueError(f"Column '{grouping}' produced by grouping transformation is not in groupby columns {keys}.")
            bound = max(abs(self.low or 0.0), abs(self.high or 0.0)) or 1.0
            xs = frame[self.column].to_numpy(dtype=float) if self.column in frame else np.zeros(len(frame))
            index: dict = {}
            for i, key in enumerate(zip(*(frame[c].to_numpy() for c in keys))):
                index.setdefault(key, []).append(i)
            out = []
            for key in self.keyset.frame.to_dict("records"):
                x = xs[index.get(tuple(key[c] for c in keys), [])] if keys else xs
                v = self._values(x)
                name = f"{self.column}_{self.aggregation}"
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
                    value = {f"{self.column}_lower_bound": -top, f"{self.column}_upper_bound": top}
                else:
                    q = {"median": 0.5, "min": 0.0, "max": 1.0}.get(self.aggregation, self.quantile)
                    centre = np.quantile(v, q) if len(v) else (self.low + self.high) / 2
                    value = {name: float(np.clip(centre + _noise(budget, self.high - self.low, 1)[0],
                                                 self.low, self.high))}
                # Snapped to multiples of 2^-10, as exact samplers round: the float grain of v + noise
                # would otherwise tell v = 0 from v = 1 (Mironov 2012), a leak the fake does not plant.
                value = {k_: round(v_ * 1024) / 1024 for k_, v_ in value.items()}
                out.append(_Row({**{c: key[c] for c in keys}, **value}))
            return out

    class GroupsQuery:
        def __init__(self, builder, columns):
            self.builder, self.columns = builder, columns

        def answer(self, session, budget):
            frame, _ = _prepare(session, self.builder.source, self.builder.chain, session.change)
            keys = list(zip(*(frame[c].to_numpy() for c in self.columns)))
            sizes = {key: keys.count(key) for key in set(keys)}
            kept = [key for key, n in sizes.items() if n + RNG.laplace(0.0, 1 / budget.values[0]) > 5]
            return [_Row(dict(zip(self.columns, key))) for key in kept]

    class GroupedQueryBuilder:
        def __init__(self, keyset, source="T", chain=()):
            self.keyset, self.source, self.chain = keyset, source, tuple(chain)

        def count(self, name=None, mechanism="default"):
            return Query(self, "count")

        def count_distinct(self, columns=None, name=None, mechanism="default"):
            return Query(self, "count_distinct", (columns or ["x"])[0])

        def get_bounds(self, column, lower_bound_column=None, upper_bound_column=None):
            return Query(self, "get_bounds", column)

        def quantile(self, column, quantile, low, high, name=None):
            return Query(self, "quantile", column, low, high, quantile)

    def _bounded(aggregation):
        def method(self, column, low, high, name=None, mechanism="default"):
            return Query(self, aggregation, column, low, high)
        return method

    for aggregation in ("sum", "average", "variance", "stdev", "median", "min", "max"):
        setattr(GroupedQueryBuilder, aggregation, _bounded(aggregation))

    class QueryBuilder(GroupedQueryBuilder):
        def __init__(self, source_id, chain=()):
            super().__init__(KeySet.from_dict({}), source_id, chain)

        def groupby(self, by):
            return GroupedQueryBuilder(by, self.source, self.chain)

        def get_groups(self, columns=None):
            return GroupsQuery(self, list(columns))

        def histogram(self, column, bin_edges, name=None):
            name = name or f"{column}_binned"
            spec = bin_edges if isinstance(bin_edges, BinningSpec) else BinningSpec(bin_edges)
            return self.bin_column(column, spec, name).groupby(KeySet.from_dict({name: spec.bins()})).count()

        def clone(self):
            return self

    def _step(name):
        def method(self, *args, **kwargs):
            return QueryBuilder(self.source, self.chain + ((name, args, kwargs),))
        return method

    for name in steps:
        setattr(QueryBuilder, name, _step(name))
    QueryBuilder.join_private = lambda self, *args, **kwargs: self

    class Answer:
        def __init__(self, rows):
            self.rows = rows

        def collect(self):
            return self.rows

    class Session:
        Builder = object

        def __init__(self, tables, change):
            self.tables, self.change, self.public, self.views = tables, change, {}, {}

        @staticmethod
        def from_dataframe(privacy_budget, source_id, dataframe, protected_change):
            return Session({source_id: dataframe}, protected_change)

        def evaluate(self, query_expr, privacy_budget):
            EVALUATIONS[0] += 1
            return Answer(query_expr.answer(self, privacy_budget))

        def add_public_dataframe(self, source_id, dataframe):
            self.public[source_id] = dataframe

        def create_view(self, query_expr, source_id, cache):
            self.views[source_id] = query_expr

        def partition_and_create(self, source_id, privacy_budget, column, splits):
            frame = self.tables[source_id]
            return {name: Session({name: frame[frame[column] == value]}, self.change) for name, value in splits.items()}

        def stop(self):
            pass

    for name in ("delete_view", "describe", "get_column_types", "get_grouping_column", "get_id_column",
                 "get_id_space", "get_schema"):
        setattr(Session, name, lambda self, *args, **kwargs: None)
    for name in ("private_sources", "public_source_dataframes", "public_sources", "remaining_privacy_budget"):
        setattr(Session, name, property(lambda self: None))

    analytics = types.ModuleType("tmlt.analytics")
    analytics.__dict__.update(
        KeySet=KeySet, QueryBuilder=QueryBuilder, GroupedQueryBuilder=GroupedQueryBuilder, Session=Session,
        PureDPBudget=PureDPBudget, RhoZCDPBudget=RhoZCDPBudget, ApproxDPBudget=ApproxDPBudget, AddOneRow=AddOneRow,
        AddMaxRows=AddMaxRows, AddMaxRowsInMaxGroups=AddMaxRowsInMaxGroups, AddRowsWithID=AddRowsWithID,
        BinningSpec=BinningSpec, MaxRowsPerID=MaxRowsPerID, ColumnType=ColumnType)
    tmlt = types.ModuleType("tmlt")
    tmlt.analytics = analytics
    sql = types.ModuleType("pyspark.sql")
    sql.SparkSession = SparkSession
    pyspark = types.ModuleType("pyspark")
    pyspark.sql = sql
    return {"tmlt": tmlt, "tmlt.analytics": analytics, "pyspark": pyspark, "pyspark.sql": sql}
