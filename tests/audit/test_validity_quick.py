"""A quick validity and power study (benchmarks/validity.py) so that a regression fails CI.

**Validity bound.**  The engine reports a claim that holds as VIOLATED with probability at most
γ = 1 − confidence = 0.05 per audit, and all its certified lower bounds hold simultaneously with
probability ≥ 0.95 (audit/selection.py).  With R independent seeded audits the number of false
alarms (and the number of runs with some bound above the exact value) is stochastically below
Binomial(R, γ); we assert it is ≤ the upper 1e-3 quantile of Binomial(R, γ), so a correct engine
fails this check with probability ≤ 1e-3 per count (and, being seeded, the test is deterministic).

**Power.**  Faulty mechanisms are only required to be detected where the truth makes detection
essentially certain: :func:`ideal_mu_margin` shows that at the sample count used the best
threshold's certified μ exceeds the claimed μ by ≥ 6 standard deviations (CLT), i.e. a miss has
probability < 1e-9 per run up to the small loss of learning the direction and threshold.
"""

from __future__ import annotations

import json
import math

import pytest
from scipy import special, stats

from audit.intervals import cp_upper
from audit.selection import Budget
from audit.slots import headline_slots
from benchmarks.validity import REFERENCE_CASES, run_study
from scenarios.faulty_cases import FAULTY_MECHANISMS

SEED = 20261121
GAMMA = 0.05  # 1 − confidence: the per-audit false-alarm (and bound-failure) probability allowed
QUICK_RUNS = 20
QUICK_SAMPLES = 4_000
CORRECT = ["gaussian-analytic", "truncated-laplace"]  # tight claims: the hardest for validity
FAULTY = ["correlated-half-size-noise", "correlated-replace"]
POWER_RUNS = 6
POWER_SAMPLES = 4_000


def binomial_allowance(runs: int, gamma: float = GAMMA, tail: float = 1e-3) -> int:
    """The smallest c with P(Binomial(runs, gamma) > c) ≤ tail."""
    return int(stats.binom.ppf(1.0 - tail, runs, gamma))


def ideal_mu_margin(exact_mu: float, claimed_mu: float, samples: int, level: float) -> float:
    """(expected certified μ − claimed μ) / its standard deviation, for the ideal test.

    For two unit Gaussians μ apart, the threshold half-way has α = β = Φ(−μ/2).  At the mean
    counts nα the engine certifies α_hi = β_hi = CP_upper(nα, n, level) and μ_lb = −2Φ⁻¹(α_hi).
    By the delta method each of the two independent counts moves −Φ⁻¹(α̂) with standard
    deviation √(α(1 − α)/n)/φ(Φ⁻¹(α)).
    """
    alpha = float(special.ndtr(-exact_mu / 2))
    alpha_hi = float(cp_upper(round(samples * alpha), samples, level))
    expected = -2.0 * float(special.ndtri(alpha_hi))
    density = math.exp(-special.ndtri(alpha) ** 2 / 2) / math.sqrt(2 * math.pi)
    sd = math.sqrt(2 * alpha * (1 - alpha) / samples) / density
    return (expected - claimed_mu) / sd


@pytest.fixture(scope="module")
def quick_study():
    return run_study(cases=CORRECT, faulty=FAULTY, runs=QUICK_RUNS, samples=QUICK_SAMPLES,
                     power_runs=POWER_RUNS, default_samples=POWER_SAMPLES, grid_runs=POWER_RUNS,
                     grid_start=POWER_SAMPLES, seed=SEED, n_jobs=2, progress=False)


def test_binomial_allowance_is_the_stated_quantile():
    c = binomial_allowance(QUICK_RUNS)
    assert stats.binom.sf(c, QUICK_RUNS, GAMMA) <= 1e-3 < stats.binom.sf(c - 1, QUICK_RUNS, GAMMA)


@pytest.mark.statistical
def test_false_alarms_within_binomial_bound(quick_study):
    allowance = binomial_allowance(QUICK_RUNS)  # 5 of 20 at γ = 0.05, tail 1e-3
    assert [row.case for row in quick_study.validity] == CORRECT
    for row in quick_study.validity:
        assert row.false_violated["runs"] == QUICK_RUNS
        assert row.false_violated["count"] <= allowance, row


@pytest.mark.statistical
def test_certified_bounds_cover_the_truth(quick_study):
    # All bounds hold simultaneously with probability ≥ 0.95, so each bound's misses are at most
    # Binomial(R, γ) too: the same allowance applies to the count of runs above the truth.
    allowance = binomial_allowance(QUICK_RUNS)
    for row in quick_study.validity:
        for coverage in (row.coverage_epsilon, row.coverage_delta, row.coverage_mu):
            if coverage is not None:
                assert round((1.0 - coverage) * QUICK_RUNS) <= allowance, row


@pytest.mark.parametrize("name", FAULTY)
def test_detection_is_essentially_certain_here(name):
    mechanism, scenario = FAULTY_MECHANISMS[name]()
    level = Budget(GAMMA, headline_slots(mechanism.claim), len(scenario.pairs)).headline_level
    assert ideal_mu_margin(mechanism.exact_mu(), mechanism.claim.mu, POWER_SAMPLES, level) >= 6.0


@pytest.mark.statistical
def test_faulty_mechanisms_are_detected(quick_study):
    assert [row.case for row in quick_study.power] == FAULTY
    for row in quick_study.power:
        assert row.detection_default["count"] == POWER_RUNS, row
        assert row.min_samples_detected == POWER_SAMPLES


def test_table_renders(quick_study):
    table = quick_study.to_markdown()
    for row in quick_study.validity + quick_study.power:
        assert row.mechanism in table
    data = json.loads(quick_study.to_json())  # strict JSON: non-finite values as strings
    assert data["parameters"]["runs"] == QUICK_RUNS
    assert len(data["validity"][0]["runs"]) == QUICK_RUNS


def test_bad_case_names_are_refused():
    with pytest.raises(ValueError, match="cases"):
        run_study(cases=["no-such-mechanism"], faulty=[], progress=False)


@pytest.mark.statistical
@pytest.mark.slow
def test_full_validity_all_mechanisms():
    """Every reference mechanism 100 times at 20,000 samples; every faulty one 20 times at 512,000."""
    runs = 100
    study = run_study(runs=runs, samples=20_000, power_runs=20, default_samples=512_000,
                      grid_runs=20, grid_start=512_000, seed=SEED + 1, n_jobs=2, progress=False)
    allowance = binomial_allowance(runs)  # 13 of 100
    assert len(study.validity) == len(REFERENCE_CASES)
    for row in study.validity:
        assert row.false_violated["count"] <= allowance, row
    for row in study.power:
        # At 512,000 samples the hardest case (classical σ at ε = 7, δ = 0.1) has its ideal
        # certified point 3.2 standard deviations below f_{7, 0.1} (per-run miss ≤ 1e-3 by the
        # CLT, up to selection losses); the others are far easier.  With a per-run detection
        # rate ≥ 0.95, 20 runs give ≥ 16 detections except with probability < 0.016.
        assert row.detection_default["count"] >= 16, row
