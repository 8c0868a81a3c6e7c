"""SmartNoise SQL releases before 1.0 (``opendp-smartnoise`` 0.1.x): their environment, the choice of
their catalogue, and the catalogue on a small numpy fake of their reader API.

CI installs none of these releases.  The fake (:func:`_install`) has the names the catalogue calls,
with their signatures in the two API styles of those releases (``style="options"``: 0.1.0.4-0.1.1,
switches passed as ``PrivateReaderOptions`` and a typed rowset returned; ``style="table"``: 0.1.2
on, switches on the ``Table``), and a Gaussian mechanism with the releases' own calibration.
``unbounded`` plants the behaviour on either side of opendp/smartnoise-sdk#317: ``"no noise"``
releases the sum of a column without bounds exactly (0.1.1), ``"refuse"`` raises as 0.1.2 does.
The audits of the real releases are in ``benchmarks/sweep_versions.py``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from audit.sweep import releases
from audit.sweep.plan import plan_rows
from audit.sweep.rows import audit_row
from audit.sweep.smartnoise_core_ffi import DECLARED, FIXED, declare_gaussian_arguments
from fake_modules import cases_and_absent, forget

RNG = np.random.default_rng(0)
STATE = {"rewrites": 0}


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    module.__dict__.update(attrs)
    return module


def _fake(style: str, unbounded: str) -> dict:
    """The modules of a fake opendp-smartnoise 0.1.x."""

    class Column:
        def __init__(self, name, minval=None, maxval=None, is_key=False, card=None):
            self.name, self.minval, self.maxval, self.is_key = name, minval, maxval, is_key

    def Float(name, minval=None, maxval=None, is_key=False, bounded=False):  # noqa: N802 - the library's names
        return Column(name, minval, maxval, is_key)

    def Int(name, minval=None, maxval=None, is_key=False, bounded=False):  # noqa: N802
        return Column(name, minval, maxval, is_key)

    def String(name, card, is_key=False, bounded=False):  # noqa: N802
        return Column(name, is_key=is_key, card=card)

    if style == "table":
        class Table:
            def __init__(self, schema, name, columns, rowcount=0, rows_exact=None, row_privacy=False, max_ids=1,
                         sample_max_ids=True, clamp_counts=False, clamp_columns=True, use_dpsu=False,
                         censor_dims=True):
                self.columns = {c.name: c for c in columns}
                self.censor_dims, self.use_dpsu, self.row_privacy = censor_dims, use_dpsu, row_privacy
    else:
        class Table:  # 0.1.0.4-0.1.1: rowcount before columns, no switches
            def __init__(self, schema, name, rowcount, columns, row_privacy=False, max_ids=1, sample_max_ids=True,
                         rows_exact=None):
                self.columns = {c.name: c for c in columns}
                self.row_privacy = row_privacy

    class CollectionMetadata:
        def __init__(self, tables, engine, compare=None):
            self.table = tables[0]

    class PrivateReaderOptions:
        def __init__(self, censor_dims=True, clamp_counts=True, reservoir_sample=True, clamp_columns=True,
                     row_privacy=False, max_contrib=None, use_dpsu=True):
            self.censor_dims, self.use_dpsu = censor_dims, use_dpsu

    class PandasReader:
        def __init__(self, df, metadata):
            self.df, self.metadata = df, metadata

    class Rowset:
        def __init__(self, rows):
            self._rows = rows

        def rows(self):
            return self._rows

    class PrivateReader:
        def __init__(self, reader, metadata, epsilon_per_column=1.0, delta=10e-16, options=None):
            if style == "table" and options is not None:
                raise ValueError("Options has been deprecated.  Use metadata")
            assert (style == "options") == (options is not None), "the switches go where the release reads them"
            self.reader, self.metadata = reader, metadata
            self.epsilon_per_column, self.delta = epsilon_per_column, delta
            switches = options if options is not None else metadata.table
            assert not switches.use_dpsu and metadata.table.columns["pid"].is_key and not metadata.table.row_privacy
            self.censor = switches.censor_dims
            self._cached_exact = self._cached_ast = None

        def parse_query_string(self, text):
            return text

        def rewrite_ast(self, query):
            STATE["rewrites"] += 1
            aggregates = [part.split("(")[0].split()[-1] for part in query.split(" FROM ")[0].split(",") if "(" in part]
            return (("subquery", query, tuple(aggregates)), query)

        def _symbols(self, aggregates):
            need = {"COUNT": ["count"], "SUM": ["sum"], "AVG": ["sum", "count"], "VAR": ["sum", "count", "sumsq"],
                    "STDDEV": ["sum", "count", "sumsq"]}
            return ["keycount"] + list(dict.fromkeys(s for a in aggregates for s in need[a]))

        def get_privacy_cost(self, text):
            return [(name, object()) for name in self._symbols(self.rewrite_ast(text)[0][2])]

        def _execute_ast(self, query, cache_exact=False):
            subquery, text = self.rewrite_ast(query)
            if cache_exact:
                if self._cached_exact is not None and self._cached_ast is not subquery:
                    raise ValueError("Cannot run different query against cached result.")
                self._cached_exact, self._cached_ast = True, subquery
            column = self.metadata.table.columns["x"]
            bounded = column.minval is not None and column.maxval is not None
            if not bounded and unbounded == "refuse" and any(a != "COUNT" for a in subquery[2]):
                raise ValueError("Query is attempting to query an unbounded column that isn't part of the grouping key")
            frame = self.reader.df
            x = np.clip(frame["x"].to_numpy(), column.minval, column.maxval) if bounded else frame["x"].to_numpy()
            # the Gaussian scale of opendp-smartnoise 0.1.1 (per unit of sensitivity)
            scale = ((math.sqrt(math.log(1 / self.delta)) + math.sqrt(math.log(1 / self.delta) + self.epsilon_per_column))
                     / (math.sqrt(2) * self.epsilon_per_column))
            reach = max(abs(column.minval), abs(column.maxval)) if bounded else None

            def noisy(value, sensitivity):
                return value if sensitivity is None else value + RNG.normal(0.0, scale * sensitivity)

            def answer(values):
                count, total = noisy(len(values), 1.0), noisy(float(np.sum(values)), reach)
                out = {"COUNT": round(count), "SUM": total, "AVG": total / count if count else math.nan,
                       "VAR": 0.1 + noisy(0.0, 1.0), "STDDEV": 0.3 + noisy(0.0, 1.0)}
                return [out[a] for a in subquery[2]]

            if " GROUP BY " in text:
                rows = []
                for group, part in frame.groupby("g"):
                    released = answer(x[part.index.to_numpy()])
                    if not self.censor or noisy(len(part), 1.0) > 10:
                        rows.append([group, *released])
            else:
                rows = [answer(x)]
            result = [["col"] * (len(rows[0]) if rows else 1)] + rows
            return Rowset(result) if style == "options" else result

        execute = execute_typed = lambda self, text: None  # noqa: E731 - the public names the coverage lists

    reader_module = _module("opendp.smartnoise.sql.private_reader", PrivateReader=PrivateReader,
                            PrivateReaderOptions=PrivateReaderOptions)
    collection = _module("opendp.smartnoise.metadata.collection", CollectionMetadata=CollectionMetadata, Table=Table,
                         Float=Float, Int=Int, String=String)
    sql = _module("opendp.smartnoise.sql", PrivateReader=PrivateReader, PandasReader=PandasReader,
                  private_reader=reader_module)
    return {"opendp.smartnoise": _module("opendp.smartnoise", sql=sql), "opendp.smartnoise.sql": sql,
            "opendp.smartnoise.sql.private_reader": reader_module,
            "opendp.smartnoise.metadata": _module("opendp.smartnoise.metadata", collection=collection),
            "opendp.smartnoise.metadata.collection": collection}


def _install(monkeypatch, style: str = "table", unbounded: str = "refuse"):
    """The fake in ``sys.modules``, and the legacy catalogue built on it afresh."""
    global RNG
    RNG = np.random.default_rng(0)
    from scenarios.libraries import registry

    for name, module in _fake(style, unbounded).items():
        monkeypatch.setitem(sys.modules, name, module)
    forget(monkeypatch, sys.modules, "scenarios.libraries.snsql_legacy")
    forget(monkeypatch, registry._REGISTRY, "smartnoise-sql")
    return importlib.import_module("scenarios.libraries.snsql_legacy")


@pytest.mark.parametrize("style", ["options", "table"])
def test_every_case_releases_on_the_fake_with_its_declared_width(monkeypatch, style):
    catalogue = _install(monkeypatch, style)
    cases, absent = cases_and_absent(catalogue.entries())
    # 0.1.2 on refuses the sum of a column without bounds: that point, and only it, is not in the release
    assert [name for name, _ in absent] == ["SUM"] and "without bounds is refused" in absent[0][1]
    for case in cases:
        for pair in case.scenario.pairs:
            out = case.mechanism(pair.base, 2, np.random.default_rng(0))
            assert out.shape == (2, case.mechanism.output_dim) and not out[:, -1].any(), (case.key, pair.label)
            assert len(case.release(pair.neighbor, None, **case.release_params)) == case.mechanism.output_dim - 1
    coverage = catalogue.LIBRARY.coverage(catalogue.entries())
    assert coverage.unaccounted == () and coverage.fraction >= 0.9


def test_the_claim_is_the_release_statement(monkeypatch):
    catalogue = _install(monkeypatch, "options", "no noise")
    claims = {c.key: c.claim for e in catalogue.entries() for c in e.cases()}
    # k noisy statistics (the key count included) at (ε, δ) each, basic composition; one δ more for censoring
    assert (claims["AVG [epsilon=1.0, delta=1e-05, bounds=(0.0, 1.0)]"].epsilon, claims[
        "AVG [epsilon=1.0, delta=1e-05, bounds=(0.0, 1.0)]"].delta) == (3.0, pytest.approx(3e-5))
    censored = claims["GROUP BY [epsilon=1.0, delta=1e-05]"]
    assert censored.epsilon == 2.0 and censored.delta == pytest.approx(3e-5)
    assert claims["GROUP BY [epsilon=1.0, delta=1e-05, censor_dims=False]"].delta == pytest.approx(2e-5)
    # 0.1.4.2's get_privacy_cost is its odometer's (ε, δ), taken as it is where it is the weaker reading
    privacy = types.SimpleNamespace(epsilon=1.0, delta=1e-5)
    odometer = types.SimpleNamespace(get_privacy_cost=lambda text: (1.7, 2.5e-5), privacy=privacy,
                                     get_budget_multiplier=lambda text: 1)
    assert catalogue.privacy_claim(odometer, "SELECT 1", censored=True) == (1.7, 2.5e-5)
    # ... and the per-column reading where that one is: 0.1.4.2's censored GROUP BY, k = 2 (measured),
    # odometer (2, 2.49995e-05), which leaves out the δ of censoring
    grouped = types.SimpleNamespace(get_privacy_cost=lambda text: (2.0, 2.49995e-05), privacy=privacy,
                                    get_budget_multiplier=lambda text: 2)
    assert catalogue.privacy_claim(grouped, "SELECT 1", censored=True) == (2.0, pytest.approx(3e-5))
    assert catalogue.privacy_claim(grouped, "SELECT 1", censored=False) == (2.0, 2.49995e-05)


def test_a_non_finite_release_is_counted_and_written_as_zero(monkeypatch):
    catalogue = _install(monkeypatch, "table")
    monkeypatch.setattr(catalogue, "execute", lambda reader, text: [["m"], [math.nan]])
    table = {"censor_dims": False, "bounds": (0.0, 1.0)}
    assert catalogue.query(np.zeros((1, 3)), None, sql="SELECT AVG(x) AS m FROM T.T", epsilon=1.0, delta=1e-5,
                           table=table) == [1.0, 0.0, 1.0]
    monkeypatch.setattr(catalogue, "execute", lambda reader, text: [["g", "n"], ["b", math.inf]])
    assert catalogue.query(np.zeros((1, 3)), None, sql="SELECT g, COUNT(*) AS n FROM T.T GROUP BY g", epsilon=1.0,
                           delta=1e-5, table=table, grouped=True) == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]


def test_one_rewrite_per_query_and_reader_and_the_reader_is_restored(monkeypatch):
    catalogue = _install(monkeypatch, "options")
    case = next(c for e in catalogue.entries() if e.name == "several" for c in e.cases())
    pair = case.scenario.pairs[0]
    case.mechanism(pair.base, 3, np.random.default_rng(0))
    before = STATE["rewrites"]
    case.mechanism(pair.base, 20, np.random.default_rng(0))
    assert STATE["rewrites"] == before  # replayed: no rewrite on a reader that has one
    reader = catalogue.reader_for(pair.base, case.release_params["epsilon"], case.release_params["delta"],
                                  case.release_params["table"])
    assert "rewrite_ast" not in vars(reader) and "_rewrite_ast" not in vars(reader)


@pytest.mark.statistical
@pytest.mark.parametrize("unbounded, verdict", [("no noise", "VIOLATED"), ("refuse", "absent")])
def test_a_sum_without_bounds_is_refuted_on_the_buggy_release_and_absent_from_the_fixed(monkeypatch, tmp_path,
                                                                                        unbounded, verdict):
    """opendp/smartnoise-sdk#317 on the fake: the buggy reader releases the exact sum (a deterministic
    leak, refuted at any confidence by the small budget); the fixed one refuses the query."""
    catalogue = _install(monkeypatch, "options" if unbounded == "no noise" else "table", unbounded)
    entry = next(e for e in catalogue.entries() if e.name == "SUM")
    point = next(p for p in entry.grid if "bounds" in p and p["bounds"] is None)
    if verdict == "absent":
        from scenarios.libraries import NotInRelease

        with pytest.raises(NotInRelease, match="refused"):
            entry.build(point)
        return
    case = entry.build(point)
    assert case.known.startswith("opendp/smartnoise-sdk#317")
    row, = plan_rows((case,), library="smartnoise-sql", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="smartnoise-sql", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == verdict and record["epsilon_lb"] > case.claim.epsilon, record


@pytest.mark.statistical
def test_a_bounded_sum_on_the_fake_is_not_refuted(monkeypatch, tmp_path):
    """The fake's Gaussian is calibrated as 0.1.1's (a valid (ε, δ) scale): the claim holds, so the
    audit refutes it with probability at most 1 − 0.95 (its guarantee); seeded."""
    catalogue = _install(monkeypatch, "options", "no noise")
    case = next(c for e in catalogue.entries() if e.name == "SUM" for c in e.cases() if "(0.0, 1.0)" in c.point)
    row, = plan_rows((case,), library="smartnoise-sql", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="smartnoise-sql", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error" and record["verdict"] == "NOT_REFUTED", record


def test_the_registry_chooses_the_catalogue_for_releases_before_1_0_only_where_they_are(monkeypatch):
    from scenarios.libraries import registry

    if importlib.util.find_spec("snsql") is not None:
        pytest.skip("snsql is installed here: the 1.0 catalogue is the one chosen")
    assert registry._older_release("smartnoise-sql") is None  # neither installed: the 1.0 catalogue says how
    _install(monkeypatch)
    assert registry._older_release("smartnoise-sql") == "scenarios.libraries.snsql_legacy"
    lib = registry.library("smartnoise-sql")
    assert lib.distribution == "opendp-smartnoise" and lib.name == "smartnoise-sql"


def test_releases_before_1_0_install_opendp_smartnoise_with_their_pins(monkeypatch, tmp_path):
    old = releases.release_environment("smartnoise-sql", "0.1.3.1")
    assert old.distribution == "opendp-smartnoise" and old.python == "python3.10"
    assert {"numpy==1.23.5", "opendp-smartnoise-core==0.2.3", "sqlalchemy<2"} <= set(old.pins)
    assert old.setup is declare_gaussian_arguments
    # named for 1.0 too: with opendp-smartnoise installed, the caller names the old distribution
    assert releases.release_environment("smartnoise-sql", "1.0.10").distribution == "smartnoise-sql"
    # a range lists the releases of both names, whichever the installed catalogue names
    listed = {"smartnoise-sql": ["1.0.10", "1.0.0"], "opendp-smartnoise": ["0.1.4.2", "0.1.1"]}
    monkeypatch.setattr(releases, "_index_versions", lambda name: listed[name])
    assert releases.available_releases("smartnoise-sql") == ["0.1.1", "0.1.4.2", "1.0.0", "1.0.10"]
    assert releases.available_releases("opendp-smartnoise") == ["0.1.1", "0.1.4.2", "1.0.0", "1.0.10"]
    # the environment installs the old name
    commands = []

    def fake_run(command, **kwargs):
        commands.append(command)
        if command[1:3] == ["-m", "venv"]:
            (Path(command[-1]) / "bin").mkdir(parents=True)
            (Path(command[-1]) / "bin" / "python").write_text("")
        return types.SimpleNamespace(returncode=0, stderr="", stdout="")

    monkeypatch.setattr("audit.sweep.releases.subprocess.run", fake_run)
    monkeypatch.setattr(releases, "_interpreter", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(releases, "declare_gaussian_arguments", lambda path: None)  # no api.py in a fake build
    python = releases.ensure_environment("smartnoise-sql", "smartnoise-sql", "0.1.1", folder=tmp_path)
    assert python.parent.parent.name == "opendp-smartnoise-0.1.1-3.10"
    assert "opendp-smartnoise==0.1.1" in commands[-1] and "smartnoise-sql==0.1.1" not in commands[-1]
    # a 1.0 release asked for under the old name (the legacy catalogue installed) installs smartnoise-sql
    python = releases.ensure_environment("smartnoise-sql", "opendp-smartnoise", "1.0.4", folder=tmp_path)
    assert python.parent.parent.name.startswith("smartnoise-sql-1.0.4-")
    assert "smartnoise-sql==1.0.4" in commands[-1] and "opendp-smartnoise==1.0.4" not in commands[-1]


def test_the_gaussian_call_is_declared_with_the_arguments_it_passes(tmp_path):
    api = tmp_path / "lib" / "python3.10" / "site-packages" / "opendp" / "smartnoise" / "core" / "api.py"
    api.parent.mkdir(parents=True)
    api.write_text(f"class LibraryWrapper:\n    def __init__(self):\n        {DECLARED}\n")
    declare_gaussian_arguments(tmp_path)
    assert FIXED in api.read_text() and DECLARED not in api.read_text()
    declare_gaussian_arguments(tmp_path)  # once only
    assert api.read_text().count("ctypes.c_bool") == 2
    api.write_text("argtypes = [ctypes.c_double]\n")
    with pytest.raises(RuntimeError, match="not the one of"):
        declare_gaussian_arguments(tmp_path)
    with pytest.raises(RuntimeError, match="no opendp-smartnoise-core"):
        declare_gaussian_arguments(tmp_path / "empty")
