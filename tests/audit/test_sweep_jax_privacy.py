"""The jax-privacy catalogue on a numpy fake of JAX and JAX Privacy (``sweep_fake_jax.py``): CI installs
neither.

The deterministic tests build every case on the fake and release on both datasets of every pair,
through the vectorized path and through the per-call release a reproduction script carries (the
same width, no call raising, finite values), and check coverage: every public name of the fake is
audited or left out with a reason.  They also check the vectorized path's law against the per-call
release on one case: the noisy gradient of the DP-SGD step is N(s, (σΔ)²) on both paths, with s the
clipped sum, so their sample means over n draws each differ by less than 5·σΔ·√(2/n) except with
probability below 1e-6 (Gaussian tail).

The statistical tests plan one row alone at the small budget (20,000 draws a side) and sweep
confidence 0.95, on seeded fakes:

- a step that sums the raw gradients (no clipping): the canary at 100× the clip norm moves the sum
  by 100 against noise of standard deviation σΔ = 1, a μ of 100 against the claimed μ = 1; with
  clipping, the release is the Gaussian mechanism of sensitivity Δ and noise σΔ (μ = 1/σ, ground
  truth §2) up to float32 rounding, so, audited on values (statistic "auto", which does not read bit
  patterns), a VIOLATED verdict has probability at most 0.05;
- the dense privatizer updated past its 4 rows reads its last row again (jax-privacy 2.0.0,
  google-deepmind/jax_privacy#338): steps 4 and 5 carry the same noise, so their difference is 0 on
  one dataset and −C on the other on every draw, a perfectly separating event.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import sweep_fake_jax as fake  # noqa: E402

from audit.sweep.plan import plan_rows  # noqa: E402
from audit.sweep.rows import audit_row  # noqa: E402

pytest.importorskip("dp_accounting")  # the catalogue's claims come from dp-accounting (the test extra)


def _library(monkeypatch):
    fake.install(monkeypatch)
    from scenarios.libraries import library

    return library("jax-privacy")


def test_every_case_releases_on_the_fake_with_its_declared_width(monkeypatch):
    lib = _library(monkeypatch)
    entries = lib.entries()
    cases = [case for entry in entries for case in entry.cases()]
    assert len(cases) == len({case.key for case in cases}) >= 20
    for case in cases:
        for pair in case.scenario.pairs:
            for data in (pair.base, pair.neighbor):
                out = case.mechanism(data, 3, np.random.default_rng(0))
                assert out.shape == (3, case.mechanism.output_dim) and np.isfinite(out).all(), case.key
                one = case.release(data, np.random.RandomState(0), **case.release_params)
                assert np.shape(one) == (case.mechanism.output_dim - 1,), case.key
    coverage = lib.coverage(entries)
    assert coverage.unaccounted == (), coverage.unaccounted
    assert "jax_privacy.keras_api" in coverage.excluded


@pytest.mark.statistical
def test_the_vectorized_step_has_the_law_of_the_per_call_release(monkeypatch):
    lib = _library(monkeypatch)
    case = next(c for e in lib.entries() for c in e.cases() if c.point == "noise_multiplier=1.0, l2_clip_norm=0.2")
    pair = case.scenario.pairs[0]
    n = 2000
    batch = case.mechanism(pair.neighbor, n, np.random.default_rng(1))[:, :-1]
    state = np.random.RandomState(2)
    single = np.array([case.release(pair.neighbor, state, **case.release_params) for _ in range(n)])
    scale = 1.0 * 0.2  # σ·Δ: the noise's standard deviation
    # The clipped sum: three rows (0.1, 0) and the canary (−20, 0) clipped to (−0.2, 0).
    assert np.allclose(batch.mean(axis=0), [0.1, 0.0], atol=5 * scale * np.sqrt(1 / n))
    assert np.all(np.abs(batch.mean(axis=0) - single.mean(axis=0)) < 5 * scale * np.sqrt(2 / n))
    assert np.all(np.abs(batch.std(axis=0) / scale - 1) < 0.1)  # sd of a sample sd ≈ 1/√(2n) = 0.016


@pytest.mark.statistical
@pytest.mark.parametrize("path", ["train", "stream", "plan"])
def test_each_vectorized_path_has_the_law_of_the_per_call_release(monkeypatch, path):
    """``train_batch``, ``stream_batch`` and ``plan_batch`` against the per-call ``train``, ``stream``
    and ``plan`` that a reproduction script runs, on every case of the path, on the neighbour of its
    first pair: per released coordinate, 2,000 draws of each path and a two-sample
    Kolmogorov–Smirnov test (any difference of the law, not only of mean or scale).  Both paths
    release continuous values (Gaussian noise), so under a common law each p-value is uniform (SciPy's
    exact or asymptotic Kolmogorov distribution); the test fails if any is below 10⁻⁴ / m (m the
    coordinates tested), so a correct path fails it with probability at most 10⁻⁴ (Bonferroni).
    The sample means are also compared within 5 standard errors of their difference, √((s₁² + s₂²)/n)
    (CLT; a two-sided normal tail of 6·10⁻⁷ a coordinate)."""
    from scipy import stats

    lib = _library(monkeypatch)
    cases = [c for e in lib.entries() for c in e.cases() if c.release.__name__ == path]
    assert cases and all(c.cost == "batch" for c in cases)
    n, pvalues = 2000, []
    for k, case in enumerate(cases):
        data = case.scenario.pairs[0].neighbor
        batch = case.mechanism(data, n, np.random.default_rng(100 + k))[:, :-1]  # the last column: raised
        state = np.random.RandomState(200 + k)
        single = np.array([case.release(data, state, **case.release_params) for _ in range(n)])
        assert batch.shape == single.shape, case.key
        se = np.sqrt((batch.var(axis=0, ddof=1) + single.var(axis=0, ddof=1)) / n)
        assert np.all(np.abs(batch.mean(axis=0) - single.mean(axis=0)) < 5 * se), case.key
        pvalues += [(stats.ks_2samp(batch[:, j], single[:, j]).pvalue, case.key, j) for j in range(batch.shape[1])]
    worst = min(pvalues)
    assert worst[0] >= 1e-4 / len(pvalues), worst


@pytest.mark.statistical
@pytest.mark.parametrize("clip, verdict", [(False, "VIOLATED"), (True, "NOT_REFUTED")])
def test_a_step_without_clipping_is_refuted_and_the_clipped_one_is_not(monkeypatch, tmp_path, clip, verdict):
    lib = _library(monkeypatch)
    fake.FLAGS["clip"] = clip
    case = next(c for e in lib.entries() for c in e.cases() if c.point == "noise_multiplier=1.0, l2_clip_norm=1.0")
    # Values only ("auto"): the fake adds float32 noise, whose bit patterns the row's own "coordinates"
    # statistic reads; this test is about clipping, whose failure shows in the values.
    row, = plan_rows((case,), library="jax-privacy", budget="small", confidence=0.95, seed=2026, statistic="auto")
    record = audit_row(row, library="jax-privacy", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == verdict, record


@pytest.mark.statistical
def test_the_dense_privatizer_past_its_rows_is_refuted(monkeypatch, tmp_path):
    lib = _library(monkeypatch)
    case = next(c for e in lib.entries() for c in e.cases() if "extra_steps" in c.point)
    row, = plan_rows((case,), library="jax-privacy", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="jax-privacy", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == "VIOLATED" and "#338" in record["known"], record


def test_an_entry_the_release_lacks_is_not_in_this_release(monkeypatch):
    from scenarios.libraries import NotInRelease

    fake.install(monkeypatch)
    monkeypatch.delattr(sys.modules["jax_privacy.noise_addition"], "matrix_factorization_privatizer")
    from scenarios.libraries import library

    entry = next(e for e in library("jax-privacy").entries() if e.name == "matrix_factorization_privatizer")
    with pytest.raises(NotInRelease, match="matrix_factorization_privatizer"):
        entry.cases()
