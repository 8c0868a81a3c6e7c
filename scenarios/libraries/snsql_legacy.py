"""The SmartNoise SQL catalogue for the releases before 1.0, which ship as ``opendp-smartnoise``
0.1.0.4 to 0.1.4.2 (module ``opendp.smartnoise.sql``): the same library name, entries and grid points
as :mod:`.snsql`, through the API those releases have.

Those releases build a ``PrivateReader(reader=PandasReader(df=..., metadata=...), metadata=...,
epsilon_per_column=ε, delta=δ)`` over a ``CollectionMetadata`` of ``Table`` and column objects;
0.1.0.4 and 0.1.1 take the switches (``censor_dims``, ``use_dpsu``, ...) as a
``PrivateReaderOptions``, later releases from the ``Table``; each aggregate is one Gaussian
mechanism.  Their row-level privacy (``row_privacy``) is refused by their validator unless the
table has a private key, so each table here has the key ``pid`` and ``max_ids = 1``: every row is a
person, and adding a row adds a person (the pairs of :mod:`.sql_tables`).

**The claim** is the release's own statement.  Every release documents ``epsilon_per_column`` as
"the privacy budget to spend for each column" and ``delta`` as "the delta privacy parameter", and
tells how many noisy statistics k a query needs (releases before 0.1.4.2: the length of the list
``get_privacy_cost(query)`` returns; ``get_budget_multiplier``): each statistic is a Gaussian
mechanism calibrated to (ε, δ), and that reading's claim is their basic composition (kε, kδ), one
more δ for the censoring of rare groups (the threshold on the noisy count of keys).  0.1.4.2's
``get_privacy_cost(query)`` returns the (ε, δ) of its odometer (Kairouz et al.'s composition of
its k mechanisms, with a slack of δ/2 and no δ for censoring), which is the stronger of the two
readings in δ for a censored query and the weaker for the others; the claim there is the weaker
of the two in each coordinate, which both imply.  Every reading promises at least this much
privacy, so a refutation holds under any.

**Replay.**  One ``reader.execute`` parses and rewrites the query and runs the exact query through
pandasql (about 13 ms).  The rewrite depends on the query, metadata and privacy only; the exact
aggregates of a dataset do not change from one draw to the next (the tables hold one row a person,
so the reservoir sampling to ``max_ids`` keeps every row, and DPSU is off).  So each release runs
the reader's own ``_execute_ast(query, cache_exact=True)`` (the releases' cache of the exact
answer) with the rewrite computed once and replayed (:func:`execute`): the same mechanisms and
post-processing on every draw, in well under a millisecond.

**The release vector** is the 1.0 catalogue's (rows returned and the first row's values, or each
group's released flag and values) with one more coordinate, the number of non-finite values
(written as 0): these releases return NaN for the square root of a negative noisy variance.  A
refutation through the bits or the grain of a released double is linked to
opendp/smartnoise-sdk#464 (:data:`FLOAT_NOISE`): the noise is added to the exact aggregate in
floating point.

**Not in this release.**  A point a release refuses is a row "not in this release", never ERROR:
from 0.1.2 a SUM over a column without bounds raises ``ValueError`` (the fix of
opendp/smartnoise-sdk#317: 0.1.0.4 and 0.1.1 released that sum with no noise).  The 1.0 grid
points that choose a mechanism (``Privacy.mechanisms``) or put several rows in one person are not
in this grid: these releases have the Gaussian mechanism only, and the replay keeps every row.

References
----------
opendp-smartnoise 0.1.0.4-0.1.4.2, ``opendp/smartnoise/sql/private_reader.py`` (docstrings of
``PrivateReader.__init__`` and ``get_budget_multiplier``) and ``sql/odometer.py`` (0.1.4.2);
opendp/smartnoise-sdk#317 and PR #318 ("Checks for output with unbounded sensitivity", 2020-12-15).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Mapping

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, NotInRelease, point_label
from .registry import register_library
from .sql_tables import table_pairs, table_rows

__all__ = ["LIBRARY", "reader_for", "execute", "query", "privacy_claim", "entries", "public_api", "SNSQL_317",
           "FLOAT_NOISE"]

ADD_REMOVE = Relation.ADD_REMOVE
#: The documented violation the grid point ``bounds=None`` of SUM exercises.
SNSQL_317 = ("opendp/smartnoise-sdk#317 (a column without bounds summed with no noise; fixed by #318, "
             "released in opendp-smartnoise 0.1.2)")


#: A refutation through the bits of a released double: these releases add Gaussian noise to the exact
#: aggregate in floating point (Python's ``random.gauss`` to 0.1.1, smartnoise-core's from 0.1.2), so
#: v + noise lies on the grid of v's magnitude (Mironov 2012; Haney et al. 2022).
_FLOAT_ISSUE = ("opendp/smartnoise-sdk#464 (floating-point noise on sums of float columns: warned about in "
                "2022, not fixed; precision-based attacks, Haney et al. 2022)")
FLOAT_NOISE = {"grain of ": _FLOAT_ISSUE, "bits of ": _FLOAT_ISSUE}


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"the smartnoise-sql catalogue needs snsql (pip install smartnoise-sql) or, for the "
                          f"releases before 1.0, opendp-smartnoise (`dpaudit sweep smartnoise-sql==0.1.3.1` builds "
                          f"its environment); importing {name!r} failed: {exc}") from exc


pd = _import("pandas")
sql = _import("opendp.smartnoise.sql")
private_reader = _import("opendp.smartnoise.sql.private_reader")
collection = _import("opendp.smartnoise.metadata.collection")
PrivateReader, PandasReader = sql.PrivateReader, sql.PandasReader
CollectionMetadata, Table, Float, Int, String = (collection.CollectionMetadata, collection.Table, collection.Float,
                                                 collection.Int, collection.String)


# -- release functions (their source goes into reproduction scripts) --------------------------------
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


def privacy_claim(reader, text: str, *, censored: bool) -> tuple[float, float]:
    """The (ε, δ) the release states for ``text`` (module docstring): the basic composition of the
    k noisy statistics (one more δ when rare groups are censored), k the length of the list
    ``get_privacy_cost`` returns; on 0.1.4.2, whose ``get_privacy_cost`` is its odometer's (ε, δ)
    and ``get_budget_multiplier`` k, the weaker of the two readings in each coordinate."""
    cost = reader.get_privacy_cost(text)
    if len(cost) == 2 and all(isinstance(v, (int, float, np.floating)) for v in cost):
        k, privacy = reader.get_budget_multiplier(text), reader.privacy
        return (max(float(cost[0]), k * float(privacy.epsilon)),
                max(float(cost[1]), (k + int(censored)) * float(privacy.delta)))
    k = len(cost)
    return k * float(reader.epsilon_per_column), (k + int(censored)) * float(reader.delta)


# -- cases ------------------------------------------------------------------------------------------
def _label(point: Mapping[str, Any]) -> str:
    return point_label(point, skip=("sql",), empty="default")


#: The reader's release method, as these releases name it.
_READER = "opendp.smartnoise.sql.private_reader.PrivateReader"
_EXECUTE = f"{_READER}.execute"
_UNBOUNDED = "unbounded column"  # the refusal of 0.1.2 and later (PR #318)


def _entry(name: str, text: str, grid, *, grouped: bool = False, width: int = 1, api=()) -> Entry:
    def build(point):
        bounds = point.get("bounds", (0.0, 1.0))
        lo, hi = bounds if bounds is not None else (0.0, 1.0)
        censored = point.get("censor_dims", grouped)
        table = {"censor_dims": censored, "bounds": bounds}
        params = {"sql": text, "epsilon": point["epsilon"], "delta": point["delta"], "table": table,
                  "grouped": grouped, "width": width}
        base = np.array(table_rows([(lo, 0.0)]))
        reader = reader_for(base, point["epsilon"], point["delta"], table)
        try:
            execute(reader, text)
        except ValueError as exc:  # a refusal that depends on the query and metadata only
            if _UNBOUNDED in str(exc):
                raise NotInRelease(f"not in this release: {name} over a column without bounds is refused "
                                   f"(ValueError: {exc})") from None
            raise
        epsilon, delta = privacy_claim(reader, text, censored=censored and grouped)
        claim = PureDP(epsilon, ADD_REMOVE) if delta == 0 else ApproxDP(epsilon, delta, ADD_REMOVE)
        pairs = table_pairs(lo, hi, grouped=grouped)
        scenario = _scenario.from_pairs(pairs, ADD_REMOVE)
        label = _label(point)
        k = (3 * (width + 1) if grouped else width + 1) + 1
        layout = (tuple((f"{v} of {g}", None) for g in "abc" for v in ("released",) + tuple(f"col{j}" for j in range(width)))
                  if grouped else (("rows returned", None),) + tuple((f"col{j}", None) for j in range(width)))
        layout += (("non-finite values", None),)
        mechanism = LibraryRelease(query, params, f"opendp.smartnoise.sql.{name}({label})", claim, k + 1,
                                   deterministic=False)
        return Case(name, label, {**point, "sql": text}, mechanism, claim, scenario, query, params, "query",
                    statistic="coordinates", layout=layout,
                    known=SNSQL_317 if "bounds" in point and bounds is None else "")
    claim_text = (f"opendp.smartnoise.sql PrivateReader.execute({text!r}): epsilon_per_column, 'the privacy budget "
                  "to spend for each column', for each of the k noisy statistics get_privacy_cost lists, and delta, "
                  "'the delta privacy parameter' (basic composition: (kε, kδ), one more δ for censoring); 0.1.4.2: "
                  "that or get_privacy_cost's (ε, δ), the weaker in each coordinate; a private key with max_ids = 1: "
                  "one row added or removed")
    names = tuple(dict.fromkeys((api or (f"opendp.smartnoise.sql.{name}",)) + (_EXECUTE,)))
    return Entry(name, names, "query", claim_text, ADD_REMOVE, tuple(grid), build)


def _entries() -> list[Entry]:
    base = [{"epsilon": 1.0, "delta": 1e-5}]
    bounded = [{"epsilon": 1.0, "delta": 1e-5, "bounds": (0.0, 1.0)},
               {"epsilon": 1.0, "delta": 1e-5, "bounds": (2.0, 10.0)}]
    return [
        _entry("COUNT", "SELECT COUNT(*) AS n FROM T.T", base + [{"epsilon": 0.3, "delta": 1e-5}]),
        _entry("SUM", "SELECT SUM(x) AS s FROM T.T", bounded + [{"epsilon": 1.0, "delta": 1e-5, "bounds": None}]),
        _entry("AVG", "SELECT AVG(x) AS m FROM T.T", bounded),
        _entry("VAR", "SELECT VAR(x) AS v FROM T.T", bounded[:1]),
        _entry("STDDEV", "SELECT STDDEV(x) AS sd FROM T.T", bounded[:1]),
        _entry("several", "SELECT COUNT(*) AS n, SUM(x) AS s, AVG(x) AS m FROM T.T", bounded[:1], width=3,
               api=(_EXECUTE,)),
        _entry("GROUP BY", "SELECT g, COUNT(*) AS n FROM T.T GROUP BY g",
               [{"epsilon": 1.0, "delta": 1e-5}, {"epsilon": 1.0, "delta": 1e-5, "censor_dims": False}],
               grouped=True, api=("opendp.smartnoise.metadata.censor_dims",)),
        _entry("GROUP BY SUM", "SELECT g, COUNT(*) AS n, SUM(x) AS s FROM T.T GROUP BY g",
               [{"epsilon": 1.0, "delta": 1e-5, "bounds": (0.0, 1.0)}], grouped=True, width=2,
               api=("opendp.smartnoise.sql.GROUP BY",)),
    ]


# -- the library --------------------------------------------------------------------------------------
def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return tuple(_entries())


#: The aggregates of the SQL subset these releases rewrite.
_AGGREGATES = ("COUNT", "SUM", "AVG", "VAR", "STDDEV", "GROUP BY", "COUNT DISTINCT")


def public_api() -> tuple[str, ...]:
    """The public DP names: the aggregates, the reader's ``execute*`` methods (from the installed
    release) and the metadata switch that censors rare groups."""
    methods = [n for n in dir(PrivateReader) if n.startswith("execute")]
    return tuple(sorted([f"opendp.smartnoise.sql.{a}" for a in _AGGREGATES] + [f"{_READER}.{m}" for m in methods] +
                        ["opendp.smartnoise.metadata.censor_dims"]))


_COVERED = "covered through another entry: several (execute"
_EXCLUDED = {
    "opendp.smartnoise.sql.COUNT DISTINCT": "not yet written",
    f"{_READER}.execute_typed": f"{_COVERED}, returned as a typed rowset)",
    f"{_READER}.execute_ast": f"{_COVERED} of a parsed query)",
    f"{_READER}.execute_ast_typed": f"{_COVERED} of a parsed query, as a typed rowset)",
    f"{_READER}.execute_df": f"{_COVERED}, returned as a dataframe)",
    f"{_READER}.execute_with_accuracy": f"{_COVERED} with accuracy intervals computed from public parameters)",
    f"{_READER}.execute_with_accuracy_df": f"{_COVERED} with accuracy intervals, as a dataframe)",
}

LIBRARY = register_library(Library(
    name="smartnoise-sql", distribution="opendp-smartnoise", entries=entries, public_api=public_api,
    excluded=_EXCLUDED,
    script_header=("import inspect\nimport numpy as np\nimport pandas as pd\n"
                   "import opendp.smartnoise.sql.private_reader as private_reader\n"
                   "from opendp.smartnoise.sql import PandasReader, PrivateReader\n"
                   "from opendp.smartnoise.metadata.collection import CollectionMetadata, Float, Int, String, Table\n"),
    helpers=(reader_for, execute), seeded=False, witness_issues=FLOAT_NOISE))
