"""The SmartNoise SQL catalogue (``smartnoise-sql``): private SQL queries over a pandas table, every
aggregate the rewriter supports, grouped with and without censoring of rare dimensions, each noise
mechanism, and row- and user-level privacy.

SmartNoise SQL's claim is its own odometer: ``reader.get_privacy_cost(query)`` returns the (ε, δ)
the query spends (one ε per noisy statistic, the count a mean or variance needs included, δ for
censoring rare groups and for Gaussian noise), read from the installed release.  With
``row_privacy`` the neighbours add or remove one row; otherwise one person (``max_ids`` rows at
most, more are sampled away).  Values are clamped to the metadata's bounds (``clamp_columns``,
the default).

**Gray-box replay.**  One ``reader.execute`` costs about 300 ms, nearly all of it in the rewrite
of the query: parsing, and calibrating each mechanism by OpenDP's binary search.  The rewrite
depends on the query, the metadata and the privacy parameters only, never on the data, so each
release here runs the library's own ``_execute_ast`` on the parsed query with the rewrite
computed once and replayed (:func:`execute`): the same exact aggregates, the same mechanisms and
the same post-processing, in about 3 ms.  The reproduction scripts carry the same function.

SmartNoise draws from OpenDP's generator, which cannot be seeded: rows are reproducible in
distribution only.

References
----------
SmartNoise SQL documentation (docs.smartnoise.org/sql: metadata, PrivateReader, Privacy); the
docstrings of smartnoise-sql 1.0.10; Wilson et al. (2020), "Differentially private SQL with
bounded user contribution", PoPETs 2020(2).
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, point_label, require_library
from .registry import register_library
from .sql_tables import person_pairs as _person_pairs
from .sql_tables import table_pairs as _pairs
from .sql_tables import table_rows as _rows

__all__ = ["LIBRARY", "reader_for", "execute", "query", "entries", "public_api"]

ADD_REMOVE = Relation.ADD_REMOVE

snsql = require_library("snsql", catalogue="smartnoise-sql", install="pip install smartnoise-sql")
pd = require_library("pandas", catalogue="smartnoise-sql", install="pip install smartnoise-sql")


# -- release functions (their source goes into reproduction scripts) --------------------------------
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


# -- cases ------------------------------------------------------------------------------------------
def _label(point: Mapping[str, Any]) -> str:
    return point_label(point, skip=("sql",), empty="default")


#: The reader's release method, as the installed package names it.
_READER = "snsql.sql.private_reader.PrivateReader"
_EXECUTE = f"{_READER}.execute"


def _entry(name: str, sql: str, grid, *, grouped: bool = False, width: int = 1, api=()) -> Entry:
    def build(point):
        lo, hi = point.get("bounds", (0.0, 1.0))
        # Without GROUP BY, censoring drops the one answer of a small table: off unless the point asks.
        table = {"row_privacy": point.get("max_ids") is None, "censor_dims": point.get("censor_dims", grouped),
                 "x": {"type": "float", "lower": lo, "upper": hi}}
        if point.get("max_ids") is not None:
            table["max_ids"] = point["max_ids"]
        params = {"sql": sql, "epsilon": point["epsilon"], "delta": point["delta"], "table": table,
                  "grouped": grouped, "width": width,
                  **({"mechanisms": point["mechanisms"]} if point.get("mechanisms") else {})}
        reader = reader_for(np.array(_rows([(lo, 0.0)])), point["epsilon"], point["delta"], table,
                            point.get("mechanisms"))
        epsilon, delta = (float(v) for v in reader.get_privacy_cost(sql))
        claim = PureDP(epsilon, ADD_REMOVE) if delta == 0 else ApproxDP(epsilon, delta, ADD_REMOVE)
        if point.get("max_ids") is not None:
            scenario = _scenario.custom(_person_pairs(lo, hi), ADD_REMOVE)
        else:
            scenario = _scenario.from_pairs(_pairs(lo, hi, grouped=grouped), ADD_REMOVE)
        label = _label(point)
        k = 3 * (width + 1) if grouped else width + 1
        layout = (tuple((f"{v} of {g}", None) for g in "abc" for v in ("released",) + tuple(f"col{j}" for j in range(width)))
                  if grouped else (("rows returned", None),) + tuple((f"col{j}", None) for j in range(width)))
        mechanism = LibraryRelease(query, params, f"snsql.{name}({label})", claim, k + 1, deterministic=False)
        return Case(name, label, {**point, "sql": sql}, mechanism, claim, scenario, query, params, "query",
                    statistic="coordinates" if k > 1 else "auto", layout=layout)
    text = (f"snsql PrivateReader.execute({sql!r}): (ε, δ) = reader.get_privacy_cost(query) (the odometer of "
            "the installed release); Privacy docstring: 'epsilon ... for each statistic', 'delta ... for each "
            "query'; row_privacy: one row added or removed, else one person (max_ids rows)")
    # The aggregates are labels of the SQL subset, not attributes: each entry also names the reader's
    # execute, which every query goes through, so that the installed release is seen to have it.
    names = tuple(dict.fromkeys((api or (f"snsql.{name}",)) + (_EXECUTE,)))
    return Entry(name, names, "query", text, ADD_REMOVE, tuple(grid), build)


def _entries() -> list[Entry]:
    base = [{"epsilon": 1.0, "delta": 1e-5}]
    bounded = [{"epsilon": 1.0, "delta": 1e-5, "bounds": (0.0, 1.0)},
               {"epsilon": 1.0, "delta": 1e-5, "bounds": (2.0, 10.0)}]
    return [
        _entry("COUNT", "SELECT COUNT(*) AS n FROM T.T",
               base + [{"epsilon": 0.3, "delta": 1e-5}, {"epsilon": 1.0, "delta": 1e-5, "max_ids": 1},
                       {"epsilon": 1.0, "delta": 1e-5, "mechanisms": {"count": "gaussian"}}]),
        _entry("SUM", "SELECT SUM(x) AS s FROM T.T",
               bounded + [{"epsilon": 1.0, "delta": 1e-5, "bounds": (0.0, 1.0), "mechanisms": {"sum_float": "gaussian"}}]),
        _entry("AVG", "SELECT AVG(x) AS m FROM T.T", bounded),
        _entry("VAR", "SELECT VAR(x) AS v FROM T.T", bounded[:1]),
        _entry("STDDEV", "SELECT STDDEV(x) AS sd FROM T.T", bounded[:1]),
        _entry("several", "SELECT COUNT(*) AS n, SUM(x) AS s, AVG(x) AS m FROM T.T", bounded[:1], width=3,
               api=(_EXECUTE,)),
        _entry("GROUP BY", "SELECT g, COUNT(*) AS n FROM T.T GROUP BY g",
               [{"epsilon": 1.0, "delta": 1e-5}, {"epsilon": 1.0, "delta": 1e-5, "censor_dims": False}],
               grouped=True, api=("snsql.metadata.censor_dims",)),
        _entry("GROUP BY SUM", "SELECT g, COUNT(*) AS n, SUM(x) AS s FROM T.T GROUP BY g",
               [{"epsilon": 1.0, "delta": 1e-5, "bounds": (0.0, 1.0)}], grouped=True, width=2,
               api=("snsql.GROUP BY",)),
    ]


# -- the library --------------------------------------------------------------------------------------
def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return tuple(_entries())


#: The aggregates SmartNoise SQL's rewriter accepts (its documented SQL subset), and the reader's entry
#: points that release data.
_AGGREGATES = ("COUNT", "SUM", "AVG", "VAR", "STDDEV", "GROUP BY", "COUNT DISTINCT")


def public_api() -> tuple[str, ...]:
    """The public DP names: the aggregates of the SQL subset, the reader's release methods (from the
    installed ``PrivateReader``), and the metadata switch that censors rare groups."""
    reader = importlib.import_module("snsql.sql.private_reader").PrivateReader
    methods = [n for n in dir(reader) if n.startswith("execute")]
    return tuple(sorted([f"snsql.{a}" for a in _AGGREGATES] + [f"{_READER}.{m}" for m in methods] +
                        ["snsql.metadata.censor_dims"]))


_EXCLUDED = {
    "snsql.COUNT DISTINCT": "not yet written",
    f"{_READER}.execute_df": "covered through another entry: several (execute, returned as a dataframe)",
    f"{_READER}.execute_with_accuracy": "covered through another entry: several (execute with "
                                        "accuracy intervals computed from public parameters)",
    f"{_READER}.execute_with_accuracy_df": "covered through another entry: several",
}

LIBRARY = register_library(Library(
    name="smartnoise-sql", distribution="smartnoise-sql", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header="import numpy as np\nimport pandas as pd\nimport snsql\n",
    helpers=(reader_for, execute), seeded=False))
