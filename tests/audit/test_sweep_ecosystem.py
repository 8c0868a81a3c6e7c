"""The catalogues of python-dp, pipeline-dp, smartnoise-sql, smartnoise-synth and dpmm on numpy fakes of
their APIs (``sweep_fake_libraries.py``): CI installs none of these libraries.

The deterministic tests build every case on the fake, release once on both datasets of every pair
(no call raises where the real library does not, every vector has the width the case declares), and
check coverage: every public name of the fake is audited or left out with a reason.  SmartNoise
SQL's gray-box replay computes a query's rewrite once and leaves the reader as it found it.

The statistical tests plan one row alone, at the small budget and sweep confidence 0.95, on the
fakes' seeded generator:

- a BoundedSum that forgets to clamp, on the pairs that add a unit at 1e300 or at 11 (bounds [0, 1]):
  the sum moves by 1e300 or by 11 against Laplace noise of scale 1/ε = 1 (ε ≥ 11 against a claimed
  1), far beyond what the small budget needs; with clamping the
  claim holds (Laplace noise of scale Δ/ε on a sum of sensitivity Δ, ground truth §2) and is
  refuted with probability at most 0.05;
- the covariance that clips and then uses the raw data (smartnoise-sdk#622): the outlier (50, 50)
  among 100 points moves cov(x, x) from 0.085 to about 24.6 against noise of scale 0.06, again a
  perfectly separating event; the fixed release is refuted with probability at most 0.05;
- MWEM fitted with categories read from the data: a category that only the neighbour holds appears
  in its synthetic table and never in the other's (an event of probability 0 on one side);
- dpmm's three pipelines, whose generated columns carry the domain imputed from the data, at the
  default budget of a pipeline row (100 draws a side): the new category is in the domain on every
  draw of one dataset and on none of the other's, a perfectly separating event, and 100 draws are
  above :func:`audit.sweep.plan.refutable_samples` for (1, 1e-5)-DP at each of three rows.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import sweep_fake_libraries as fakes  # noqa: E402
from fake_modules import forget  # noqa: E402

from audit.sweep.graybox import graybox_row  # noqa: E402
from audit.sweep.plan import plan_rows, refutable_samples  # noqa: E402
from audit.sweep.repro import script_definitions  # noqa: E402
from audit.sweep.rows import audit_row  # noqa: E402

LIBRARIES = ("pydp", "pipeline-dp", "smartnoise-sql", "smartnoise-synth", "dpmm")


def _library(monkeypatch, name: str):
    fakes.install(monkeypatch, name)
    from scenarios.libraries import library

    return library(name)


def test_forget_restores_what_was_there_and_removes_what_the_test_added():
    # A key present before the test (a real module, or None: an import blocked) gets its value back;
    # one absent before is absent after, whatever the test put there (a catalogue built on a fake).
    mapping = {"present": "module", "blocked": None}
    with pytest.MonkeyPatch.context() as patch:
        for key in ("present", "blocked", "absent"):
            forget(patch, mapping, key)
        assert mapping == {}
        mapping.update(present="fake", blocked="fake", absent="fake")
    assert mapping == {"present": "module", "blocked": None}
    with pytest.MonkeyPatch.context() as patch:
        forget(patch, mapping, "absent")  # nothing imported during the test: nothing to remove
    assert mapping == {"present": "module", "blocked": None}


@pytest.mark.parametrize("name", LIBRARIES)
def test_every_case_releases_on_the_fake_with_its_declared_width(monkeypatch, name):
    lib = _library(monkeypatch, name)
    entries = lib.entries()
    cases = [case for entry in entries for case in entry.cases()]
    assert cases and len({case.key for case in cases}) == len(cases)
    for case in cases:
        for pair in case.scenario.pairs:
            if pair.base.shape[0] == 0:  # the fakes, like pipeline-dp, may refuse an empty collection
                continue
            out = case.mechanism(pair.base, 2, np.random.default_rng(0))
            assert out.shape == (2, case.mechanism.output_dim) and np.isfinite(out).all(), case.key
            assert not out[:, -1].any(), f"{case.key} raised on {pair.label}"
            # The release function a script carries gives the same width when called alone.
            assert len(case.release(pair.neighbor, np.random.RandomState(0), **case.release_params)) == \
                case.mechanism.output_dim - 1
    coverage = lib.coverage(entries)
    assert coverage.unaccounted == (), coverage.unaccounted
    assert all(reason for reason in coverage.excluded.values())


@pytest.mark.parametrize("name", LIBRARIES)
def test_a_scripts_definitions_release_as_the_catalogue_does(monkeypatch, numpy_global_seed, name):
    """A reproduction script carries the library's header, its helpers' and its release function's
    source: executed alone, they must release what the catalogue's function releases (a name the
    header does not import would fail only when the script draws, counted there as a refusal)."""
    lib = _library(monkeypatch, name)
    for case in (case for entry in lib.entries() for case in entry.cases()):
        namespace = {"__name__": "reproduction"}
        exec(compile(script_definitions(lib.script_header, lib.helpers, case.release), case.key, "exec"), namespace)
        pair = next(p for p in case.scenario.pairs if p.neighbor.shape[0])
        np.random.seed(0)
        ours = case.release(pair.neighbor, np.random.RandomState(0), **case.release_params)
        np.random.seed(0)
        theirs = namespace[case.release.__name__](pair.neighbor, np.random.RandomState(0), **case.release_params)
        assert len(theirs) == len(ours), case.key


def test_smartnoise_sql_replays_one_rewrite_per_query_and_restores_the_reader(monkeypatch):
    lib = _library(monkeypatch, "smartnoise-sql")
    snsql_catalogue = importlib.import_module("scenarios.libraries.snsql")
    reader_class = sys.modules["snsql.sql.private_reader"].PrivateReader
    case = next(c for e in lib.entries() for c in e.cases() if c.entry == "several")
    before = reader_class.rewrites
    pair = case.scenario.pairs[0]
    case.mechanism(pair.base, 5, np.random.default_rng(0))
    case.mechanism(pair.neighbor, 5, np.random.default_rng(0))
    assert reader_class.rewrites - before == 1  # ten releases on two readers, one rewrite
    reader = snsql_catalogue.reader_for(pair.base, case.release_params["epsilon"], case.release_params["delta"],
                                        case.release_params["table"])
    assert "_rewrite_ast" not in vars(reader)


@pytest.mark.statistical
@pytest.mark.parametrize("clamp, verdict", [(False, "VIOLATED"), (True, "NOT_REFUTED")])
def test_pydp_bounded_sum_without_clamping_is_refuted(monkeypatch, tmp_path, clamp, verdict):
    lib = _library(monkeypatch, "pydp")
    fakes.FLAGS["clamp"] = clamp
    case = next(c for e in lib.entries() if e.name == "laplacian.BoundedSum" for c in e.cases())
    row, = plan_rows((case,), library="pydp", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="pydp", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == verdict, record
    if not clamp:
        assert record["witness"]["pair"] in ("add a unit at 1e300", "add a unit beyond upper (clamped)")


@pytest.mark.statistical
@pytest.mark.parametrize("clip_total, verdict", [(True, "VIOLATED"), (False, "NOT_REFUTED")])
def test_pipeline_dp_vector_sum_clipped_as_a_total_is_refuted(monkeypatch, tmp_path, clip_total, verdict):
    # A total of −M that one unit beyond the bound turns into +M moves by 2M against noise of scale
    # M/ε: the claim ε = 1 holds at ε = 2 at best, which the small budget refutes; clipped per unit
    # (the fix of OpenMined/PipelineDP#551) the claim is exact and a sweep at 95% refutes it with
    # probability at most 5%.
    lib = _library(monkeypatch, "pipeline-dp")
    fakes.FLAGS["clip_total"] = clip_total
    case = next(c for e in lib.entries() if e.name == "aggregate.VECTOR_SUM" for c in e.cases()
                if c.params["vector_max_norm"] == 1.0)
    row, = plan_rows((case,), library="pipeline-dp", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="pipeline-dp", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == verdict and "#551" in record["known"], record


@pytest.mark.statistical
@pytest.mark.parametrize("raw, verdict", [(True, "VIOLATED"), (False, "NOT_REFUTED")])
def test_covariance_of_the_raw_data_is_refuted_and_the_fixed_release_is_not(monkeypatch, tmp_path, raw, verdict):
    lib = _library(monkeypatch, "smartnoise-synth")
    fakes.FLAGS["raw"] = raw
    case = next(c for e in lib.entries() if e.name == "models.DPcovariance" for c in e.cases())
    row, = plan_rows((case,), library="smartnoise-synth", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="smartnoise-synth", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == verdict and "#622" in record["known"], record


@pytest.mark.statistical
def test_mwem_with_categories_read_from_the_data_is_refuted(monkeypatch, tmp_path):
    lib = _library(monkeypatch, "smartnoise-synth")
    case = next(c for e in lib.entries() if e.name == "synthesizers.mwem" for c in e.cases()
                if not c.params.get("public_domain"))
    row, = plan_rows((case,), library="smartnoise-synth", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="smartnoise-synth", version=None, out=tmp_path, checkpoints=False)
    assert record["verdict"] == "VIOLATED" and record["witness"]["pair"].startswith("add a record with a new"), record


@pytest.mark.statistical
def test_mwem_with_a_transformer_fitted_on_the_public_domain_is_not_refuted(monkeypatch, tmp_path):
    # The fake samples uniformly over the categories its transformer was fitted on: fitted on the
    # public domain, both datasets give the same law, so the claim holds exactly and a row at 95%
    # is refuted with probability at most 5%.  Fitted on the data instead (TableTransformer.create
    # only types the columns, so a transformer passed unfitted is fitted on the data, as the catalogue's
    # was until it called fit on the domain), the new category appears only with its record.
    lib = _library(monkeypatch, "smartnoise-synth")
    for case in (c for e in lib.entries() if e.name == "synthesizers.mwem" for c in e.cases()
                 if c.params.get("public_domain") and not c.params.get("relation")):
        row, = plan_rows((case,), library="smartnoise-synth", budget="small", confidence=0.95, seed=2026)
        record = audit_row(row, library="smartnoise-synth", version=None, out=tmp_path, checkpoints=False)
        assert record["verdict"] == "NOT_REFUTED", record


def test_mst_aim_and_gan_rows_are_graybox_rows_drawing_what_their_event_rate_needs(monkeypatch):
    lib = _library(monkeypatch, "smartnoise-synth")
    cases = tuple(c for e in lib.entries() for c in e.cases())
    rows = plan_rows(cases, library="smartnoise-synth", budget="default", confidence=0.95, seed=2026)
    graybox = [r for r in rows if r.case.graybox]
    assert {r.case.entry for r in graybox} == {f"synthesizers.{n}" for n in ("mst", "aim", "dpctgan", "dpgan")}
    assert len(graybox) == 8 and all(r.case.release_params["rows"] == 200 and r.refutable for r in graybox)
    for row in graybox:
        perfect = refutable_samples(row.case.claim, row.confidence)
        if row.case.entry in ("synthesizers.mst", "synthesizers.aim"):
            rate = 0.25 if row.case.entry == "synthesizers.mst" else 0.35  # measured (scenarios/libraries/snsynth.py)
            assert row.case.event_rate == rate and row.case.claim.delta == 1e-9
            assert row.samples == refutable_samples(row.case.claim, row.confidence, rate) > perfect
        else:  # the GANs' new category is a perfect event; one epoch of one batch keeps a fit near 0.1 s
            assert row.case.event_rate == 1.0 and row.samples == perfect and row.case.claim.delta == 1e-5
            assert row.case.release_params["epochs"] == 1 and row.case.release_params["batch_size"] == 8


@pytest.fixture
def numpy_global_seed():
    """numpy's global generator seeded for the test (the MST fake draws from it), then restored."""
    state = np.random.get_state()
    np.random.seed(2026)
    yield
    np.random.set_state(state)


@pytest.mark.statistical
@pytest.mark.parametrize("public_domain, verdict", [(False, "VIOLATED"), (True, "NOT_REFUTED")])
def test_the_graybox_mst_row_is_replayed_and_refuted_only_with_categories_from_the_data(
        monkeypatch, tmp_path, numpy_global_seed, public_domain, verdict):
    # With categories from the data the new category is in the 200 synthetic rows with probability
    # 1 − (3/4)^200 on D′ and 0 on D: far beyond (1, 1e-9) at the row's draws.  With the public
    # domain both sides sample the same law, so the row at 95% is refuted with probability ≤ 5%.
    lib = _library(monkeypatch, "smartnoise-synth")
    case = next(c for e in lib.entries() if e.name == "synthesizers.mst" for c in e.cases()
                if bool(c.params.get("public_domain")) == public_domain)
    row, = plan_rows((case,), library="smartnoise-synth", budget="default", confidence=0.95, seed=2026)
    record = graybox_row(row, library="smartnoise-synth", version=None, out=tmp_path, checkpoints=False)
    assert record["graybox"]["replays"] == 2 and not record["graybox"]["unreplayable"], record["graybox"]
    assert record["verdict"] == verdict, record


@pytest.mark.statistical
def test_dpmm_domain_imputed_from_the_data_is_refuted_in_every_pipeline_at_the_default_budget(monkeypatch, tmp_path):
    lib = _library(monkeypatch, "dpmm")
    cases = tuple(c for e in lib.entries() for c in e.cases())
    assert [c.entry for c in cases] == [f"pipelines.{p}" for p in ("PrivBayesPipeline", "MSTPipeline", "AIMPipeline")]
    rows = plan_rows(cases, library="dpmm", budget="default", confidence=0.95, seed=2026)
    for row in rows:
        assert row.refutable and row.samples == 100 and row.case.release_params["n_iters"] == 100
        record = audit_row(row, library="dpmm", version=None, out=tmp_path, checkpoints=False)
        assert record["verdict"] == "VIOLATED", record
    assert not lib.coverage(lib.entries()).unaccounted


@pytest.mark.parametrize("name", LIBRARIES)
def test_every_entry_is_in_the_installed_release_its_fake_mimics(monkeypatch, name):
    """A sweep plans an entry only if :func:`missing_api` finds one of its names.  Entries named by
    labels under an importable package (``snsql.COUNT``, an SQL aggregate) must carry a name that
    resolves, or every row of the current release is reported "not in this release"."""
    from scenarios.libraries import missing_api

    lib = _library(monkeypatch, name)
    absent = {entry.name: missing_api(entry.api) for entry in lib.entries()}
    assert not {k: v for k, v in absent.items() if v}, absent
