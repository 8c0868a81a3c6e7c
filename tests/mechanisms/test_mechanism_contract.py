"""One contract every public reference mechanism must satisfy (docs/style.md §8)."""

import math

import numpy as np
import pytest

from mechanisms import (REFERENCE_MECHANISMS, ZCDP, ApproxDP, Composition, CorrelatedGaussianMechanism,
                        DiscreteGaussianMechanism, DiscreteLaplaceMechanism, ExponentialMechanism, GaussianDP,
                        GaussianMechanism, GroupedCorrelatedGaussianMechanism, LaplaceMechanism, PoissonSubsampledGaussian, ProfileClaim,
                        PureDP, RandomizedResponse,
                        TruncatedLaplaceMechanism)

CASES = {
    "gaussian-analytic": GaussianMechanism(epsilon=1.0, delta=1e-5, d=3),
    "gaussian-zcdp": GaussianMechanism(epsilon=2.0, delta=1e-6, calibration="zcdp"),
    "gaussian-sigma": GaussianMechanism(sigma=2.0),
    "laplace": LaplaceMechanism(epsilon=0.5),
    "truncated-laplace": TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5),
    "correlated": CorrelatedGaussianMechanism(mu=1.0, d=9),
    "correlated-c": CorrelatedGaussianMechanism(mu=1.0, d=9, c=3.0),
    "correlated-known-n": CorrelatedGaussianMechanism(mu=1.0, d=9, n_known=4),
    "grouped": GroupedCorrelatedGaussianMechanism(mu=1.0, groups=3, d=2),
    "grouped-replace": GroupedCorrelatedGaussianMechanism(mu=1.0, groups=3, d=2, relation="replace"),
    "composition": Composition(GaussianMechanism(epsilon=0.5, delta=1e-6), 4),
    "discrete-gaussian": DiscreteGaussianMechanism(sigma=2.0),
    "discrete-gaussian-approx": DiscreteGaussianMechanism(sigma=3.742, epsilon=1.0, delta=1e-5),
    "discrete-laplace": DiscreteLaplaceMechanism(epsilon=0.5),
    "randomized-response": RandomizedResponse(epsilon=1.0, k=4),
    "exponential": ExponentialMechanism(epsilon=1.0),
    "subsampled-gaussian": PoissonSubsampledGaussian(noise_multiplier=1.0, sampling_probability=0.3),
    "subsampled-gaussian-composed": PoissonSubsampledGaussian(1.0, 0.1, steps=4, epsilon=3.0, delta=1e-5,
                                                              relation="replace"),
}


def test_every_reference_mechanism_is_covered():
    for cls in REFERENCE_MECHANISMS.values():
        assert any(isinstance(m, cls) for m in CASES.values()), cls
    # A report names the mechanism it audited: no two of these mechanisms may share a name.
    assert len({m.name for m in CASES.values()}) == len(CASES)


def _dataset(mechanism, n=4):
    width = mechanism.row_dim
    data = np.zeros((n, width))
    data[0, :] = 1.0 if not isinstance(mechanism, GroupedCorrelatedGaussianMechanism) else 0.0
    if isinstance(mechanism, GroupedCorrelatedGaussianMechanism):
        data[0, : mechanism.d] = 1.0
    return data


@pytest.mark.parametrize("name", CASES)
def test_output_shape_dtype_and_determinism(name):
    mechanism = CASES[name]
    data = _dataset(mechanism)
    first = mechanism(data, 1000, np.random.default_rng(5))
    again = mechanism(data, 1000, np.random.default_rng(5))
    assert first.dtype == np.float64
    assert first.shape == (1000, mechanism.output_dim) == (1000, len(mechanism.true_answer(data)))
    assert np.array_equal(first, again)
    assert not np.array_equal(first, mechanism(data, 1000, np.random.default_rng(6)))


@pytest.mark.parametrize("name", CASES)
def test_claim_is_consistent_with_exact_truth(name):
    mechanism = CASES[name]
    claim = mechanism.claim
    assert isinstance(claim, (ApproxDP, PureDP, GaussianDP, ZCDP, ProfileClaim))
    if isinstance(claim, (ZCDP, ProfileClaim)):  # the claim's implied profile must dominate the exact one
        epsilons = np.linspace(0.0, 5.0, 26)
        assert np.all(mechanism.privacy_profile(epsilons) <= claim.delta_at(epsilons) * (1 + 1e-9))
    elif isinstance(claim, GaussianDP):
        assert mechanism.exact_mu() <= claim.mu * (1 + 1e-9)
    elif isinstance(claim, ApproxDP):
        assert mechanism.epsilon_for_delta(claim.delta) <= claim.epsilon * (1 + 1e-9)
        # Tight calibrations (analytic Gaussian, truncated Laplace) meet δ exactly up to rounding
        # (seen: 3e-14 relative), so the same 1e-9 relative slack as for ε.
        assert float(mechanism.privacy_profile(claim.epsilon)) <= claim.delta * (1 + 1e-9)
    else:
        assert float(mechanism.privacy_profile(claim.epsilon)) <= 1e-12


@pytest.mark.parametrize("name", CASES)
def test_accuracy_declarations(name):
    mechanism = CASES[name]
    if not hasattr(mechanism, "noise_variance"):  # categorical output: no additive error to claim
        pytest.skip(f"{name} declares no accuracy claim")
    variance = np.asarray(mechanism.noise_variance())
    assert variance.shape == (mechanism.output_dim,) and np.all(variance > 0)
    one, many = mechanism.error_bound(0.05), mechanism.error_bound(0.05, k=len(mechanism.query_columns))
    assert 0 < one <= many and math.isfinite(many)


@pytest.mark.parametrize("name", CASES)
def test_bad_datasets_and_sizes(name):
    mechanism = CASES[name]
    rng = np.random.default_rng(0)
    good = _dataset(mechanism)
    with pytest.raises(ValueError, match="shape"):
        mechanism(np.zeros((3, mechanism.row_dim + 1)), 10, rng)
    outside = good.copy()
    outside[1, 0] = 1.5
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        mechanism(outside, 10, rng)
    with_nan = good.copy()
    with_nan[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mechanism(with_nan, 10, rng)
    with pytest.raises(ValueError, match="size"):
        mechanism(good, 0, rng)
