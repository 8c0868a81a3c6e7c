"""The accuracy audit: valid claims pass, too much noise and out-of-bound errors fail."""

import numpy as np
import pytest

from audit import Verdict, run_accuracy_audit
from mechanisms import (CorrelatedGaussianMechanism, GaussianMechanism, LaplaceMechanism,
                        TruncatedLaplaceMechanism)

SEED = 20261121
DATA_1D = np.array([[1.0], [0.0], [1.0]])


@pytest.mark.statistical
@pytest.mark.parametrize("mechanism,data", [
    (GaussianMechanism(epsilon=1.0, delta=1e-5), DATA_1D),
    (LaplaceMechanism(epsilon=0.5), DATA_1D),
    (TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5), DATA_1D),
    (CorrelatedGaussianMechanism(mu=1.0, d=25), np.eye(25)[:7]),
], ids=["gaussian", "laplace", "truncated-laplace", "correlated-d25"])
def test_valid_accuracy_claims_pass(mechanism, data):
    # Each check fails for a correct claim with probability ≤ its Bonferroni share of 5%.
    report = run_accuracy_audit(mechanism, data, samples=200_000, seed=SEED, progress=False)
    assert report.verdict is Verdict.NOT_REFUTED, report.violations
    query = report.columns[0]
    assert query.claimed_variance in query.variance
    # error_bound(α) is exact for these mechanisms, so the true exceedance rate is α = 0.05; the
    # reported interval is a Clopper–Pearson interval at the audit's per-test Bonferroni level.
    assert 0.05 in query.exceedance


class _TooNoisy:
    """A Gaussian mechanism whose noise is 20% larger than the accuracy it claims."""

    def __init__(self):
        self.inner = GaussianMechanism(epsilon=1.0, delta=1e-5)
        self.name = "too-noisy Gaussian"

    def __call__(self, dataset, size, rng):
        truth = self.inner.true_answer(dataset)
        return truth + 1.2 * (self.inner(dataset, size, rng) - truth)

    def __getattr__(self, attr):
        return getattr(self.inner, attr)


@pytest.mark.statistical
def test_twenty_percent_too_much_noise_fails():
    # Exceedance becomes P(|Z| > 1.96/1.2) = 10.2% instead of 5%, and the variance 1.44×: both
    # are many standard errors away at 200k samples.
    report = run_accuracy_audit(_TooNoisy(), DATA_1D, samples=200_000, seed=SEED, progress=False)
    assert report.verdict is Verdict.VIOLATED
    assert any("variance" in v for v in report.violations)
    assert any("P(|error|" in v for v in report.violations)


def test_error_beyond_the_worst_case_bound_is_a_certain_violation():
    mech = TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5)

    class Leaky:
        name = "leaky truncated Laplace"
        true_answer = staticmethod(mech.true_answer)
        error_bound = staticmethod(mech.error_bound)
        noise_variance = staticmethod(mech.noise_variance)
        worst_case_error = staticmethod(mech.worst_case_error)

        def __call__(self, dataset, size, rng):
            out = mech(dataset, size, rng)
            out[0, 0] = mech.true_answer(dataset)[0] + 2 * mech.bound
            return out

    report = run_accuracy_audit(Leaky(), DATA_1D, samples=10_000, seed=SEED, progress=False)
    assert report.verdict is Verdict.VIOLATED
    assert any("worst-case bound" in v for v in report.violations)


@pytest.mark.statistical
def test_user_callable_with_true_answer():
    def noisy(dataset, size, rng):
        return np.asarray(dataset).sum(axis=0) + rng.normal(size=(size, 1))

    report = run_accuracy_audit(noisy, DATA_1D, true_answer=[2.0], samples=50_000, seed=SEED, progress=False)
    assert report.columns[0].variance.low < 1.0 < report.columns[0].variance.high
    with pytest.raises(ValueError, match="true_answer"):
        run_accuracy_audit(noisy, DATA_1D, samples=1000, progress=False)


@pytest.mark.parametrize("kwargs,match", [({"alpha": 0.0}, "alpha"), ({"samples": 1}, "samples"),
                                          ({"confidence": 2}, "confidence"), ({"seed": -3}, "seed")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_accuracy_audit(GaussianMechanism(epsilon=1.0, delta=1e-5), DATA_1D, progress=False, **kwargs)
