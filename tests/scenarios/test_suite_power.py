"""The bundled suite's known misuses are caught at the files' own settings (issue: power).

Each file's claim is false by its exact truth; at the file's sample count the ideal test clears the
claimed curve by several standard deviations (see the file comments), so VIOLATED is expected with
high probability and the seeds are the files' own, fixed.  The honest limit case (classical
ε = 10, δ = 1e-5) is false but needs > 1e9 samples: there the report must carry the exact truth
next to a bound that stays below it.
"""

import pytest

import scenarios
from audit.spec import load_spec
from audit import Verdict, run_audit

pytestmark = pytest.mark.statistical  # every assertion is on a seeded audit's verdict or bounds

MISUSES = [path for path in scenarios.bundled_suite()
           if load_spec(path).expected == "violated" and "limit" not in path.name]


@pytest.mark.parametrize("path", MISUSES, ids=[p.stem for p in MISUSES])
def test_known_misuses_are_violated(path):
    spec = load_spec(path)
    report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=spec.samples,
                       confidence=spec.confidence, seed=spec.seed, progress=False, accuracy=False)
    assert report.verdict is Verdict.VIOLATED, report.summary()
    if report.exact_epsilon is not None:
        assert report.epsilon_lower_bound <= report.exact_epsilon
    if report.exact_mu is not None:
        assert report.mu_lower_bound <= report.exact_mu


def test_limit_case_reports_the_truth_next_to_the_bound():
    (path,) = [p for p in scenarios.bundled_suite() if "limit" in p.name]
    spec = load_spec(path)
    report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=spec.samples,
                       confidence=spec.confidence, seed=spec.seed, progress=False, accuracy=False)
    assert report.exact_epsilon == pytest.approx(10.3939, abs=1e-3)  # docs/ground-truth.md §1
    assert report.epsilon_lower_bound < report.exact_epsilon
    assert report.claim_slack > 1.0
