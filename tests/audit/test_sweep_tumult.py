"""The Tumult Analytics catalogue on a numpy fake of its API (``sweep_fake_tumult.py``): CI installs
neither Tumult nor Spark.

The deterministic tests build every case on the fake, release once on both datasets of every pair
through the plain query and through the batched evaluation over copies (same widths, no call
raises), check coverage, and check that :class:`Batches` serves each draw once, evaluates the
whole case in one ``Session.evaluate`` until a dataset runs short, and charges an evaluation that
raises (the fake variance's overflow on 1e300, as in tmlt.analytics 0.21) to the dataset whose own
evaluation raises, not to the others evaluated with it.

The statistical tests plan one row alone at the small budget and sweep confidence 0.95 on the fake's
seeded generator: a sum that forgets to clamp, on the pairs that add a row at 1e300 or beyond high
(bounds [0, 1]), moves by 1e300 or 10 against Laplace noise of scale 1/ε = 1 — a perfectly or
nearly perfectly separating event; with clamping the claim holds (Laplace noise of scale Δ/ε on a
sum of sensitivity Δ = max(|low|, |high|)) and is refuted with probability at most 0.05.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import sweep_fake_tumult as fake  # noqa: E402

from audit.sweep.plan import plan_rows  # noqa: E402
from audit.sweep.rows import audit_row  # noqa: E402


@pytest.fixture
def lib(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    fake.install(monkeypatch)
    from scenarios.libraries import library

    return library("tumult")


def test_every_case_releases_on_the_fake_plainly_and_batched_with_its_declared_width(lib):
    entries = lib.entries()
    cases = [case for entry in entries for case in entry.cases()]
    assert len({case.key for case in cases}) == len(cases) > 20
    for case in cases:
        case.mechanism.batch.per_call = 5  # the fill size is a cost knob only
        width = case.mechanism.output_dim - 1
        for pair in case.scenario.pairs:
            plain = case.release(pair.neighbor, np.random.RandomState(0), **case.release_params)
            assert len(plain) == width, case.key
            out = case.mechanism(pair.base, 3, np.random.default_rng(0))
            assert out.shape == (3, width + 1) and np.isfinite(out).all(), case.key
            assert not out[:, -1].any(), f"{case.key} raised on {pair.label}"
    coverage = lib.coverage(entries)
    assert coverage.unaccounted == (), coverage.unaccounted
    assert coverage.fraction >= 0.5


def test_batches_evaluate_a_case_once_and_serve_each_draw_once(lib):
    case = next(c for e in lib.entries() if e.name == "sum" for c in e.cases())
    batches = case.mechanism.batch
    batches.per_call = 50
    pairs = case.scenario.pairs
    before = fake.EVALUATIONS[0]
    first = case.mechanism(pairs[0].base, 40, np.random.default_rng(0))
    again = case.mechanism(pairs[0].base, 40, np.random.default_rng(0))
    for pair in pairs:
        case.mechanism(pair.neighbor, 50, np.random.default_rng(0))
    # One evaluation filled every dataset: the base 50 draws per pair it occurs in, each neighbour 50.
    assert fake.EVALUATIONS[0] - before == 1
    # Draws are not reused: the second call got other draws than the first (continuous noise).
    assert not np.isin(again[:, 0], first[:, 0]).any()
    case.mechanism(pairs[1].neighbor, 10, np.random.default_rng(0))  # that dataset's pool is spent
    assert fake.EVALUATIONS[0] - before == 2


def test_an_evaluation_that_raises_is_charged_to_the_datasets_whose_own_evaluation_raises(lib):
    fake.FLAGS["overflow"] = True
    case = next(c for e in lib.entries() if e.name == "variance" for c in e.cases())
    case.mechanism.batch.per_call = 5
    huge = next(p for p in case.scenario.pairs if p.label == "add a row at 1e300")
    base = case.mechanism(huge.base, 5, np.random.default_rng(0))
    neighbour = case.mechanism(huge.neighbor, 5, np.random.default_rng(0))
    assert not base[:, -1].any() and neighbour[:, -1].all()
    with pytest.raises(RuntimeError, match="raised"):  # the script's release raises too
        case.release(huge.neighbor, None, **case.release_params)


def test_grouped_release_marks_each_key_of_the_keyset(lib):
    catalogue = sys.modules["scenarios.libraries.tumult"]
    case = next(c for e in lib.entries() if e.name == "groupby.count" for c in e.cases()
                if c.release_params["keys"] == ("a", "b"))
    data = np.array([[0.0, 0.0], [1.0, 2.0]])  # one row in a, one in c (which the KeySet leaves out)
    out = catalogue.release(data, None, **case.release_params)
    assert out[0] == 1.0 and out[2] == 1.0 and len(out) == 5 and out[-1] == 0.0  # a, b, then non-finite count


@pytest.mark.statistical
@pytest.mark.parametrize("clamp, verdict", [(False, "VIOLATED"), (True, "NOT_REFUTED")])
def test_sum_without_clamping_is_refuted_and_the_clamped_sum_is_not(lib, tmp_path, clamp, verdict):
    fake.FLAGS["clamp"] = clamp
    case = next(c for e in lib.entries() if e.name == "sum" for c in e.cases()
                if c.params["bounds"] == (0.0, 1.0) and c.params["budget"] == ("pure", 1.0) and "max_rows" not in c.params)
    case.mechanism.batch.per_call = 600  # the fill size is a cost knob only (the small budget draws 500)
    row, = plan_rows((case,), library="tumult", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="tumult", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == verdict, (record.get("witness"), record.get("statistic"), record.get("epsilon_lb"))
    if not clamp:
        assert record["witness"]["pair"] in ("add a row at 1e300", "add a row beyond high (clamped)")
