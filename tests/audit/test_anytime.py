"""Anytime audits through run_audit (audit/anytime.py): decisions, bounds, reproducibility, resuming.

Seeded audits whose verdict is asserted rely on the engine's guarantee (a claim that holds is
VIOLATED with probability ≤ 0.05 at any stopping time) or on a violation far beyond what the draws
need: the mis-sensitised Laplace (true ε 2, claim 1) is refuted by a median of about 200 draws over
200 seeds (benchmarks/anytime.py), so a budget of 20,000 leaves no realistic way to miss it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import scenarios
from audit import AuditSettings, Verdict, run_audit
from audit.anytime import PILOT, RELEARN, plan_anytime
from audit.cli import main
from audit.settings import ANYTIME_SAMPLES
from mechanisms import GaussianDP, GaussianMechanism, LaplaceMechanism, PureDP

pytestmark = pytest.mark.statistical

SEED = 20261126
WORST = [scenarios.counting(1).pairs[0]]
BROKEN = LaplaceMechanism(epsilon=1.0, sensitivity=0.5)  # scale 1/2 on a count: true ε = 2


def _report(report):
    return report.to_dict(include_runtime=False)


def test_a_clear_violation_is_refuted_with_few_draws_and_bounds_below_the_truth():
    report = run_audit(BROKEN, WORST, claim=PureDP(1.0), samples=20_000, anytime=True, seed=SEED,
                       progress=False, accuracy=False)
    looks = report.draws["looks"]
    assert report.verdict is Verdict.VIOLATED and looks["anytime"]["stopped"] == "violation"
    assert report.draws["per_side"] < 2_000  # stopped long before the budget
    assert 1.0 < report.epsilon_lower_bound <= 2.0 and report.mu_lower_bound >= 0.0
    (violation,) = [v for v in report.violations if v.slot.key == "epsilon@0.0"] or report.violations[:1]
    assert violation.bound > violation.claimed
    assert {e["family"] for e in report.evidence} == {"anytime"} and report.runtime["mode"] == "anytime"


def test_samples_none_is_an_anytime_audit_with_the_default_budget():
    settings = AuditSettings(samples=None)
    assert settings.sequential and settings.budget == ANYTIME_SAMPLES
    report = run_audit(BROKEN, WORST, claim=PureDP(1.0), samples=None, seed=SEED, progress=False, accuracy=False)
    assert report.samples == ANYTIME_SAMPLES and report.verdict is Verdict.VIOLATED


def test_a_claim_that_holds_stops_without_refutation_and_bounds_hold():
    report = run_audit(LaplaceMechanism(1.0), WORST, claim=PureDP(1.0), samples=40_000, anytime=True, seed=SEED,
                       progress=False, accuracy=False)
    assert report.verdict is Verdict.NOT_REFUTED
    assert report.draws["looks"]["anytime"]["stopped"] in ("futility", "budget")
    assert report.epsilon_lower_bound <= 1.0 and report.delta_lower_bound <= 0.0 + 1e-12


def test_a_gdp_claim_is_refuted_through_mu():
    # The analytic Gaussian (ε = 1, δ = 1e-5) calibrated for sensitivity 1/10 on a count: μ ≈ 2.7.
    mechanism = GaussianMechanism(1.0, 1e-5, sensitivity=0.1)
    report = run_audit(mechanism, scenarios.counting(1), claim=GaussianDP(0.5), samples=20_000, anytime=True,
                       seed=SEED, progress=False, accuracy=False)
    assert report.verdict is Verdict.VIOLATED and report.violations[0].slot.key == "mu"
    assert 0.5 < report.mu_lower_bound <= report.exact_mu


def test_the_report_does_not_depend_on_workers_or_backend():
    kwargs = dict(claim=PureDP(1.0), samples=20_000, anytime=True, seed=SEED, progress=False, accuracy=False)
    one = run_audit(BROKEN, scenarios.counting(1), n_jobs=1, **kwargs)
    two = run_audit(BROKEN, scenarios.counting(1), n_jobs=2, **kwargs)
    threads = run_audit(BROKEN, scenarios.counting(1), n_jobs=2, backend="threading", **kwargs)
    assert _report(one) == _report(two) == _report(threads)


def test_an_interrupted_anytime_audit_resumes_to_the_same_report(tmp_path, interrupt_chunks):
    path = tmp_path / "anytime.npz"
    kwargs = dict(claim=PureDP(1.0), samples=20_000, anytime=True, seed=SEED, progress=False, accuracy=False,
                  n_jobs=1)
    reference = run_audit(LaplaceMechanism(1.0), WORST, **kwargs)
    assert reference.draws["looks"]["look"] > 4
    with interrupt_chunks(2 * 4 + 1):  # four rounds (one chunk per side), then one chunk into the fifth
        with pytest.raises(KeyboardInterrupt):
            run_audit(LaplaceMechanism(1.0), WORST, checkpoint=path, **kwargs)
    assert path.exists()
    resumed = run_audit(LaplaceMechanism(1.0), WORST, checkpoint=path, **kwargs)
    assert _report(resumed) == _report(reference)


def test_the_plan_and_a_budget_too_small_for_it():
    (epoch,) = plan_anytime(10_000, 1, "auto").epochs  # nothing to learn: one epoch
    assert epoch.training == 0 and epoch.pilot == PILOT and epoch.ends[-1] == 10_000 - PILOT
    steps = np.diff((0,) + epoch.ends)
    assert steps.min() >= 1 and all(b >= a for a, b in zip(steps[:-2], steps[1:-1]))
    # A learned statistic is learned again on RELEARN times the draws, up to the fixed design's training.
    plan = plan_anytime(2_000_000, 4, "auto")
    trainings = [e.training for e in plan.epochs]
    assert trainings[0] == 1024 and all(b == RELEARN * a for a, b in zip(trainings[:-1], trainings[1:]))
    assert all(e.ends[-1] == RELEARN * e.training for e in plan.epochs[:-1])
    assert sum(e.draws for e in plan.epochs) == 2_000_000
    with pytest.raises(ValueError, match="too small for an anytime audit"):
        run_audit(BROKEN, WORST, claim=PureDP(1.0), samples=20, anytime=True, seed=SEED, progress=False)


def test_claims_that_hold_are_rarely_refuted_under_continuous_monitoring():
    # 20 seeded anytime audits of the exactly 1-DP Laplace, each monitored after every round up to
    # its budget: false alarms are Binomial(20, p), p ≤ 0.05; more than the 0.999 quantile refutes it.
    # (benchmarks/validity.py --anytime measures the rate itself, on five mechanisms.)
    violated = sum(run_audit(LaplaceMechanism(1.0), WORST, claim=PureDP(1.0), samples=2_000, anytime=True, seed=seed,
                             progress=False, accuracy=False).verdict is Verdict.VIOLATED for seed in range(20))
    assert violated <= stats.binom.ppf(0.999, 20, 0.05)


BROKEN_FILE = """
name = "broken-laplace"
expected = "violated"

[mechanism]
name = "laplace"
epsilon = 1.0
sensitivity = 0.5

[claim]
type = "pure-dp"
epsilon = 1.0

[scenario]
kind = "counting"
d = 1

[audit]
samples = 20_000
seed = 20261126
anytime = {anytime}
"""


def test_scenario_files_and_the_command_line_run_anytime_audits(tmp_path, capsys):
    path = tmp_path / "broken.toml"
    path.write_text(BROKEN_FILE.format(anytime="true"))
    assert main(["run", str(path), "--out", str(tmp_path / "file"), "--no-plots", "--no-progress"]) == 1
    path.write_text(BROKEN_FILE.format(anytime="false"))
    assert main(["run", str(path), "--anytime", "--out", str(tmp_path / "flag"), "--no-plots", "--no-progress"]) == 1
    capsys.readouterr()
    for out in ("file", "flag"):
        (entry,) = json.loads((tmp_path / out / "report.json").read_text())["audits"]
        assert entry["report"]["runtime"]["mode"] == "anytime" and entry["report"]["verdict"] == "VIOLATED"
    with pytest.raises(TypeError, match="`anytime` must be True or False"):
        AuditSettings(anytime="yes")
