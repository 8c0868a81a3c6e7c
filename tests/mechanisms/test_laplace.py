"""LaplaceMechanism: exact truth (docs/ground-truth.md §2), sampling, accuracy (§4), bad input."""

import math
import pickle

import numpy as np
import pytest
from dp_accounting.pld.privacy_loss_mechanism import LaplacePrivacyLoss
from scipy import stats

from mechanisms import LaplaceMechanism, PureDP

SEED = 77031


def grid_sup_gap(g: np.ndarray) -> tuple[int, float]:
    """(i, gap) for a concave g sampled on a uniform grid: i = argmax and sup g − g[i] ≤ gap.

    The true maximiser lies within one cell of grid point i, and concave g lies below the
    extension of the secant of the next cell out; so on the side of i it lies on, g exceeds g[i]
    by at most g[i] − g[i∓1] (the secant rise over one cell).  At an end point, only the interior
    side exists and the secant is the one from the next two points.
    """
    i = int(np.argmax(g))
    if i == 0:
        return i, max(g[1] - g[2], 0.0)
    if i == len(g) - 1:
        return i, max(g[-2] - g[-3], 0.0)
    return i, max(g[i] - g[i - 1], g[i] - g[i + 1])


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0, 8.0])
def test_profile_matches_dp_accounting(epsilon):
    # Oracle: dp-accounting LaplacePrivacyLoss(parameter=b, sensitivity=Δ), closed form.
    mech = LaplaceMechanism(epsilon)
    eps = np.array([0.0, 0.01, 0.2, 0.5, 0.9, 1.0, 2.0, 5.0, 9.0]) * epsilon
    oracle = np.asarray(LaplacePrivacyLoss(mech.scale, sensitivity=1.0).get_delta_for_epsilon(eps))
    np.testing.assert_allclose(mech.privacy_profile(eps), oracle, rtol=1e-9, atol=1e-15)


def test_profile_closed_form_and_inverse():
    # docs/ground-truth.md §2: δ(ε') = max(0, 1 − e^{(ε'−ε₀)/2}), ε(δ) = max(0, ε₀ + 2 ln(1 − δ)).
    mech = LaplaceMechanism(2.0)
    assert float(mech.privacy_profile(0.0)) == pytest.approx(1 - math.exp(-1.0), rel=1e-14)
    assert float(mech.privacy_profile(1.0)) == pytest.approx(1 - math.exp(-0.5), rel=1e-14)
    assert float(mech.privacy_profile(2.0)) == 0.0 and float(mech.privacy_profile(7.0)) == 0.0
    assert mech.epsilon_for_delta(0.0) == 2.0  # the pure ε
    assert mech.epsilon_for_delta(0.9) == 0.0  # δ ≥ δ(0) = 1 − e^{−1}
    for delta in (1e-9, 1e-3, 0.1, 0.5):
        eps = mech.epsilon_for_delta(delta)
        assert eps == pytest.approx(2.0 + 2 * math.log1p(-delta), rel=1e-14)
        assert float(mech.privacy_profile(eps)) == pytest.approx(delta, rel=1e-7)


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 4.0])
def test_tradeoff_matches_optimal_tests(epsilon):
    # T(α) = F(F⁻¹(1−α) − 1) for Lap(0, b) against Lap(1, b) (Neyman–Pearson; MLR).
    mech = LaplaceMechanism(epsilon)
    noise = stats.laplace(scale=mech.scale)
    alpha = np.concatenate([[0.0], np.geomspace(1e-8, 0.999, 300), [1.0]])
    with np.errstate(divide="ignore"):
        expected = noise.cdf(noise.isf(alpha) - 1.0)
    np.testing.assert_allclose(mech.tradeoff(alpha), expected, rtol=1e-9, atol=1e-15)
    # and δ(ε') = sup_α [1 − T(α) − e^{ε'} α] (docs/ground-truth.md §3), checked on a fine α grid.
    # T is convex, so g(α) = 1 − T(α) − e^{ε'} α is concave: the grid maximum is ≤ the true sup
    # and falls short of it by at most grid_sup_gap; 1e-12 allows for rounding of the O(1)
    # values of T and δ (both computed to ~1e-15).
    fine = np.linspace(0, 1, 200_001)
    for eps_prime in (0.0, 0.3 * epsilon, 0.8 * epsilon):
        g = 1 - mech.tradeoff(fine) - math.exp(eps_prime) * fine
        i, gap = grid_sup_gap(g)
        shortfall = float(mech.privacy_profile(eps_prime)) - g[i]
        assert -1e-12 <= shortfall <= gap + 1e-12, eps_prime


def test_claim_holds_and_tradeoff_above_claim():
    mech = LaplaceMechanism(1.5, relation="replace")
    assert mech.claim == PureDP(1.5, "replace")
    alpha = np.linspace(0, 1, 1001)
    assert np.all(mech.tradeoff(alpha) >= mech.claim.tradeoff(alpha) - 1e-12)
    assert mech.epsilon_for_delta(0.0, relation="add-remove") == pytest.approx(1.5, rel=1e-15)


def test_declared_sensitivity_is_used_for_claim_not_truth():
    # Declaring Δ = 0.5 for a sum of rows in [0, 1] halves the scale: exact pure ε doubles.
    mech = LaplaceMechanism(1.0, sensitivity=0.5)
    assert mech.scale == 0.5
    assert mech.epsilon_for_delta(0.0) == pytest.approx(2.0, rel=1e-15)
    assert "Δ=0.5" in mech.name


def test_d_above_one_pure_epsilon_exact_rest_unknown():
    mech = LaplaceMechanism(1.0, d=3)
    assert mech.scale == 3.0 and mech.exact_epsilon0 == pytest.approx(1.0, rel=1e-15)
    # the loss never exceeds d/b and reaches it with probability 2^{-d}: pure ε = d/b exactly
    assert mech.epsilon_for_delta(0.0) == pytest.approx(1.0, rel=1e-15)
    np.testing.assert_array_equal(mech.privacy_profile([1.0, 2.0]), 0.0)
    for call in (lambda: mech.privacy_profile([0.5, 2.0]), lambda: mech.epsilon_for_delta(1e-5),
                 lambda: mech.tradeoff(0.1)):
        with pytest.raises(NotImplementedError, match="d = 3 > 1.*truth unknown"):
            call()
    # declaring Δ = 1 for d = 4 (true l1 sensitivity 4): the exact pure ε is 4ε
    faulty = LaplaceMechanism(0.5, d=4, sensitivity=1.0)
    assert faulty.epsilon_for_delta(0.0) == pytest.approx(2.0, rel=1e-15)


def test_huge_epsilon_is_finite():
    mech = LaplaceMechanism(1000.0)
    out = mech.tradeoff([0.0, 1e-300, 0.5, 1.0])
    assert np.all(np.isfinite(out)) and out[0] == 1.0 and out[-1] == 0.0
    assert float(mech.privacy_profile(0.0)) == 1.0


# -- sampling -------------------------------------------------------------------------------------------

@pytest.mark.statistical
def test_sampling_moments_and_ks():
    mech = LaplaceMechanism(0.8, d=2)  # b = 2.5
    b, n = mech.scale, 200_000
    data = np.array([[1.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    out = mech(data, n, np.random.default_rng(SEED))
    assert out.shape == (n, 2) and out.dtype == np.float64
    noise = out - data.sum(axis=0)
    # CLT: mean s.e. √(2b²/n); variance s.e. √((μ₄ − σ⁴)/n) with μ₄ = 24b⁴, σ⁴ = 4b⁴;
    # 5 standard errors: false failure probability < 1e-6 per check.
    assert np.all(np.abs(noise.mean(axis=0)) < 5 * math.sqrt(2 * b * b / n))
    assert np.all(np.abs(noise.var(axis=0) - 2 * b * b) < 5 * math.sqrt(20 * b**4 / n))
    for column in noise.T:  # KS against Lap(0, b); reject only at p < 1e-3
        assert stats.kstest(column, stats.laplace(scale=b).cdf).pvalue > 1e-3


def test_sampling_deterministic():
    mech = LaplaceMechanism(1.0)
    a = mech([[0.3]], 4, np.random.default_rng(SEED))
    np.testing.assert_array_equal(a, mech([[0.3]], 4, np.random.default_rng(SEED)))
    np.testing.assert_array_equal(a, 0.3 + np.random.default_rng(SEED).laplace(0.0, 1.0, (4, 1)))


# -- accuracy -----------------------------------------------------------------------------------------

def test_variance_and_true_answer():
    mech = LaplaceMechanism(0.5, d=3)
    np.testing.assert_allclose(mech.noise_variance(), [2 * 36.0] * 3, rtol=1e-15)
    np.testing.assert_array_equal(mech.true_answer(np.ones((4, 3))), [4.0, 4.0, 4.0])


@pytest.mark.parametrize("k", [1, 3, 50])
@pytest.mark.parametrize("alpha", [1e-9, 0.01, 0.05, 0.5])
def test_error_bound_is_exact(k, alpha):
    # docs/ground-truth.md §4: k queries exact −b ln(1 − (1−α)^{1/k}); k = 1 gives b ln(1/α);
    # the union bound b ln(k/α) is never smaller.
    mech = LaplaceMechanism(2.0)  # b = 0.5
    t = mech.error_bound(alpha, k=k)
    # P(max |Y_i| ≤ t) = (1 − e^{−t/b})^k; its deficit 1 − (1 − e^{−t/b})^k is computed as
    # −expm1(k·log1p(−e^{−t/b})), free of cancellation even at α = 1e-9.  t is a closed form
    # (accurate to a few ulps) and the deficit's condition number |d ln deficit / d ln t| ≈ t/b
    # ≤ ln(k/α) ≤ 25 here, so the deficit is within ~1e-14 relative of α: rel=1e-12 leaves a
    # 100-fold margin.  abs=0: pytest.approx's default abs=1e-12 must not cover α = 1e-9.
    deficit = -math.expm1(k * math.log1p(-math.exp(-t / 0.5)))
    assert deficit == pytest.approx(alpha, rel=1e-12, abs=0)
    if k == 1:
        assert t == pytest.approx(0.5 * math.log(1 / alpha), rel=1e-14)
    assert t <= 0.5 * math.log(k / alpha) * (1 + 1e-14)


# -- bad input ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, r"`epsilon`.*got 0\.0"),
        ({"epsilon": -1.0}, ValueError, r"`epsilon`.*got -1\.0"),
        ({"epsilon": math.inf}, ValueError, r"`epsilon`.*got inf"),
        ({"epsilon": math.nan}, ValueError, r"`epsilon` must not be NaN"),
        ({"epsilon": None}, TypeError, r"`epsilon`.*got None"),
        ({"d": 0}, ValueError, r"`d` must be an integer >= 1, got 0"),
        ({"d": 1.0}, TypeError, r"`d` must be an integer, got 1\.0"),
        ({"sensitivity": -2.0}, ValueError, r"`sensitivity`.*got -2\.0"),
        ({"relation": "Replace"}, ValueError, r"`relation`.*got 'Replace'"),
    ],
)
def test_bad_constructor_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        LaplaceMechanism(**{"epsilon": 1.0, **kwargs})


def test_bad_method_input():
    mech = LaplaceMechanism(1.0)
    with pytest.raises(ValueError, match=r"`epsilon` must be >= 0, got -0\.5"):
        mech.privacy_profile([0.1, -0.5])
    with pytest.raises(ValueError, match=r"`delta` must be in \(0, 1\), got 1\.0"):
        mech.epsilon_for_delta(1.0)
    with pytest.raises(ValueError, match=r"`alpha`.*got 1\.5"):
        mech.error_bound(1.5)
    with pytest.raises(ValueError, match=r"`relation`"):
        mech.tradeoff(0.1, relation="neighbour")
    with pytest.raises(ValueError, match=r"values must lie in \[0, 1\]"):
        mech([[2.0]], 1, np.random.default_rng(0))


def test_value_semantics():
    mech = LaplaceMechanism(1.0, d=2)
    assert mech.name == "Laplace(ε=1, d=2)"
    assert pickle.loads(pickle.dumps(mech)) == mech
    with pytest.raises(AttributeError, match="immutable"):
        mech.scale = 3.0
