"""TruncatedLaplaceMechanism: docs/ground-truth.md §2 and §4, quadrature, sampling, bad input."""

import math
import pickle

import numpy as np
import pytest
from scipy import integrate, stats

from mechanisms import ApproxDP, LaplaceMechanism, TruncatedLaplaceMechanism
from mechanisms.truncated_laplace import geng_bound

RTOL = 1e-9  # reference values are given to 10 digits


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


SEED = 5150


def density(mech, y):
    """p(y) = e^{−|y|/λ}/(2λ(1 − r)) on [−τ, τ] (Geng et al. 2020; Wu eq. (14))."""
    lam, tau = mech.scale, mech.bound
    r = math.exp(-tau / lam)
    return math.exp(-abs(y) / lam) / (2 * lam * (1 - r)) if abs(y) <= tau else 0.0


def hockey_stick_quad(mech, eps):
    """∫ (p(y) − e^ε p(y − 1))₊ dy by adaptive quadrature, breaking at every kink."""
    tau, lam = mech.bound, mech.scale
    lo, hi = -tau, 1 + tau
    kinks = sorted({p for p in (0.0, 1.0, tau, 1 - tau, (1 - lam * eps) / 2) if lo < p < hi})
    grid = [lo, *kinks, hi]
    total = 0.0
    for a, b in zip(grid[:-1], grid[1:]):
        value, _ = integrate.quad(lambda y: max(density(mech, y) - math.exp(eps) * density(mech, y - 1), 0.0),
                                  a, b, epsabs=1e-15, epsrel=1e-12, limit=200)
        total += value
    return total


# -- reference values -------------------------------------------------------------------------------

def test_reference_epsilon_1():
    # docs/ground-truth.md §2, Δ = 1, ε = 1, δ = 1e-5
    mech = TruncatedLaplaceMechanism(1.0, 1e-5)
    assert mech.bound == pytest.approx(11.3611, abs=5e-5)  # τ given to 6 significant digits
    assert mech.scale == 1.0
    profile = mech.privacy_profile([0.0, 0.5, 0.99, 1.0, 1.5, 30.0])
    np.testing.assert_allclose(profile, [0.39347392009, 0.22120556699, 4.997421450e-3, 1e-5, 1e-5, 1e-5],
                               rtol=RTOL)
    assert mech.delta_infinity == pytest.approx(1e-5, rel=RTOL, abs=0)  # abs=0: 1e-12 would swamp rel


def test_reference_epsilon_2():
    # docs/ground-truth.md §2, Δ = 1, ε = 2, δ = 0.05
    mech = TruncatedLaplaceMechanism(2.0, 0.05)
    assert mech.bound == pytest.approx(2.0864, abs=5e-5)
    np.testing.assert_allclose(mech.privacy_profile([0.0, 1.0]), [0.64201436081, 0.41307490072], rtol=RTOL)


def test_reference_accuracy():
    # docs/ground-truth.md §4: ε = 1, δ = 1e-5, Δ = 1: Var = 1.99823, t_0.05 = 2.99551 (6 digits).
    mech = TruncatedLaplaceMechanism(1.0, 1e-5)
    assert mech.noise_variance()[0] == pytest.approx(1.99823, abs=5e-6)
    assert mech.error_bound(0.05) == pytest.approx(2.99551, abs=5e-6)
    assert mech.worst_case_error() == mech.bound


def test_geng_bound_formula_and_large_epsilon():
    assert geng_bound(1.0, 1e-5, 2.0) == pytest.approx(2.0 * math.log(1 + (math.e - 1) / 2e-5), rel=1e-14)
    # ε = 800 would overflow e^ε; the bound is then (Δ/ε)(ε − ln 2δ) to double precision
    assert geng_bound(800.0, 1e-5) == pytest.approx((800 - math.log(2e-5)) / 800, rel=1e-14)


# -- exact privacy against quadrature --------------------------------------------------------------

@pytest.mark.parametrize("bound", [0.3, 0.5, 0.6, 0.8, 0.95, 1.0, 1.5, 3.0, None])
def test_profile_matches_quadrature(bound):
    # Includes τ < Δ = 1 (general half-line supremum) and τ ≤ ½ (supports disjoint: δ ≡ 1).
    mech = TruncatedLaplaceMechanism(1.2, 1e-3, bound=bound)
    for eps in (0.0, 0.2, 0.6, 1.0, 1.2, 2.0, 5.0):
        expected = hockey_stick_quad(mech, eps)
        assert float(mech.privacy_profile(eps)) == pytest.approx(expected, rel=1e-8, abs=1e-13)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.3, 1e-6), (1.0, 1e-5), (2.0, 0.05), (5.0, 0.3)])
def test_closed_form_equals_halfline_supremum(epsilon, delta):
    mech = TruncatedLaplaceMechanism(epsilon, delta)
    eps = np.linspace(0, 2 * epsilon, 41)
    np.testing.assert_allclose(mech._closed_form(eps), mech._halfline_sup(eps), rtol=1e-9, atol=1e-15)
    # the calibration makes δ(ε') = δ for every ε' ≥ ε (Geng et al.)
    np.testing.assert_allclose(mech.privacy_profile(eps[eps >= epsilon]), delta, rtol=1e-9)


def test_large_bound_gives_laplace():
    # r → 0: the truncated Laplace profile tends to the Laplace one (r = e^{−60} ≈ 1e-26).
    mech = TruncatedLaplaceMechanism(1.0, 0.1, bound=60.0)
    eps = np.linspace(0, 1.5, 16)
    np.testing.assert_allclose(mech.privacy_profile(eps), LaplaceMechanism(1.0).privacy_profile(eps),
                               rtol=1e-12, atol=1e-25)


# -- ε(δ) and trade-off ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bound", [0.7, 1.0, 2.0, None])
def test_epsilon_for_delta_inverts_profile(bound):
    mech = TruncatedLaplaceMechanism(1.0, 1e-4, bound=bound)
    delta_inf = mech.delta_infinity
    assert mech.epsilon_for_delta(delta_inf * 0.99) == math.inf
    assert mech.epsilon_for_delta(0.0) == math.inf
    assert mech.epsilon_for_delta(0.999) == 0.0
    for delta in np.geomspace(delta_inf * 1.001, float(mech.privacy_profile(0.0)) * 0.999, 12):
        eps = mech.epsilon_for_delta(delta)
        assert 0.0 < eps < math.inf
        assert float(mech.privacy_profile(eps)) == pytest.approx(delta, rel=1e-8)


def test_calibrated_claim_holds_and_is_tight():
    mech = TruncatedLaplaceMechanism(1.0, 1e-5)
    assert mech.claim == ApproxDP(1.0, 1e-5)
    assert mech.epsilon_for_delta(1e-5) == pytest.approx(1.0, rel=RTOL)
    assert mech.epsilon_for_delta(1e-5 * (1 - 1e-9)) == math.inf  # the flat tail δ_∞ = δ


def test_half_geng_bound_violates_claim():
    # The faulty zoo: τ half of Geng's bound; the claim stays (ε, δ) and the truth shows δ_∞ > δ.
    tau = geng_bound(1.0, 1e-5) / 2
    mech = TruncatedLaplaceMechanism(1.0, 1e-5, bound=tau)
    assert mech.claim == ApproxDP(1.0, 1e-5)
    assert mech.delta_infinity > 100 * 1e-5
    assert mech.epsilon_for_delta(1e-5) == math.inf
    assert float(mech.privacy_profile(1.0)) > 1e-5


def test_disjoint_supports():
    mech = TruncatedLaplaceMechanism(1.0, 1e-5, bound=0.4)  # [−0.4, 0.4] vs [0.6, 1.4]
    np.testing.assert_array_equal(mech.privacy_profile([0.0, 3.0, 100.0]), 1.0)
    assert mech.epsilon_for_delta(0.5) == math.inf
    np.testing.assert_array_equal(mech.tradeoff([0.0, 0.3, 1.0]), 0.0)


@pytest.mark.parametrize("bound", [0.8, 1.0, 4.0, None])
def test_tradeoff(bound):
    mech = TruncatedLaplaceMechanism(1.0, 1e-3, bound=bound)
    delta_inf = mech.delta_infinity
    # T(0) = 1 − δ_∞ (outputs beyond τ − 1 reject with no type-I error); T = 0 for α ≥ 1 − δ_∞.
    assert float(mech.tradeoff(0.0)) == pytest.approx(1 - delta_inf, rel=1e-12)
    assert float(mech.tradeoff(1 - delta_inf * 0.999)) == 0.0
    assert float(mech.tradeoff(1.0)) == 0.0
    alpha = np.linspace(0, 1, 100_001)
    curve = mech.tradeoff(alpha)
    assert np.all(np.diff(curve) <= 1e-15)  # non-increasing
    # δ(ε') = sup_α [1 − T(α) − e^{ε'} α] (docs/ground-truth.md §3), on a fine α grid.  T is convex,
    # so g(α) = 1 − T(α) − e^{ε'} α is concave: the grid maximum is ≤ the true sup and falls
    # short of it by at most grid_sup_gap; 1e-12 allows for rounding of the O(1) values of T
    # and δ (both computed to ~1e-15).
    for eps_prime in (0.0, 0.4, 1.0, 3.0):
        g = 1 - curve - math.exp(eps_prime) * alpha
        i, gap = grid_sup_gap(g)
        shortfall = float(mech.privacy_profile(eps_prime)) - g[i]
        assert -1e-12 <= shortfall <= gap + 1e-12, eps_prime
    if bound is None:  # the calibrated mechanism's curve lies above the claim f_{ε,δ}
        assert np.all(curve >= mech.claim.tradeoff(alpha) - 1e-12)


# -- sampling -------------------------------------------------------------------------------------------

def test_quantile_inverts_cdf():
    mech = TruncatedLaplaceMechanism(2.0, 0.05)
    u = np.linspace(0, 1, 1001)
    np.testing.assert_allclose(mech.cdf(mech.quantile(u)), u, atol=1e-13)
    assert mech.quantile(0.0) == pytest.approx(-mech.bound, rel=1e-14)
    assert mech.quantile(1.0) == pytest.approx(mech.bound, rel=1e-14)


@pytest.mark.statistical
@pytest.mark.parametrize(("epsilon", "delta"), [(2.0, 0.05), (0.5, 0.2)])
def test_sampling_moments_and_ks(epsilon, delta):
    mech = TruncatedLaplaceMechanism(epsilon, delta)
    n = 200_000
    out = mech([[0.25], [1.0]], n, np.random.default_rng(SEED))
    assert out.shape == (n, 1) and out.dtype == np.float64
    noise = out[:, 0] - 1.25
    assert np.max(np.abs(noise)) <= mech.bound  # bounded noise
    var = mech.noise_variance()[0]
    fourth = 2 * integrate.quad(lambda y: y**4 * density(mech, y), 0, mech.bound, epsabs=1e-13)[0]
    # CLT: 5 standard errors (√(Var/n) for the mean, √((E Y⁴ − Var²)/n) for the variance);
    # a false failure has probability < 1e-6 per check.
    assert abs(noise.mean()) < 5 * math.sqrt(var / n)
    assert abs(noise.var() - var) < 5 * math.sqrt((fourth - var**2) / n)
    assert abs(np.abs(noise).mean() - mech.mean_absolute_error()) < 5 * math.sqrt(var / n)
    assert stats.kstest(noise, mech.cdf).pvalue > 1e-3  # exact marginal; reject only at p < 1e-3


def test_sampling_deterministic():
    mech = TruncatedLaplaceMechanism(1.0, 1e-5)
    a = mech(np.zeros(3), 6, np.random.default_rng(SEED))
    np.testing.assert_array_equal(a, mech(np.zeros(3), 6, np.random.default_rng(SEED)))
    np.testing.assert_array_equal(a, mech.quantile(np.random.default_rng(SEED).random((6, 1))))


# -- accuracy -----------------------------------------------------------------------------------------

def test_moments_match_quadrature():
    # docs/ground-truth.md §4 closed forms for Var and E|Y| against quadrature of the density.
    for mech in (TruncatedLaplaceMechanism(1.0, 1e-5), TruncatedLaplaceMechanism(2.0, 0.05, bound=0.7)):
        var = 2 * integrate.quad(lambda y: y * y * density(mech, y), 0, mech.bound, epsabs=1e-14)[0]
        mae = 2 * integrate.quad(lambda y: y * density(mech, y), 0, mech.bound, epsabs=1e-14)[0]
        assert mech.noise_variance()[0] == pytest.approx(var, rel=1e-9)
        assert mech.mean_absolute_error() == pytest.approx(mae, rel=1e-9)


@pytest.mark.parametrize("k", [1, 4, 100])
@pytest.mark.parametrize("alpha", [1e-8, 0.05, 0.5])
def test_error_bound_is_exact(k, alpha):
    mech = TruncatedLaplaceMechanism(1.0, 0.01)
    t = mech.error_bound(alpha, k=k)
    assert 0 < t <= mech.bound
    tail = 2 * (1 - float(mech.cdf(t)))  # P(|Y| > t)
    assert 1 - (1 - tail) ** k == pytest.approx(alpha, rel=1e-6)


# -- bad input ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, r"`epsilon`.*got 0\.0"),
        ({"epsilon": math.inf}, ValueError, r"`epsilon`.*got inf"),
        ({"epsilon": "2"}, TypeError, r"`epsilon`.*got '2'"),
        ({"delta": 0.0}, ValueError, r"`delta` must be in \(0, 1\), got 0\.0"),
        ({"delta": 1.0}, ValueError, r"`delta`.*got 1\.0"),
        ({"delta": math.nan}, ValueError, r"`delta` must not be NaN"),
        ({"sensitivity": -1.0}, ValueError, r"`sensitivity`.*got -1\.0"),
        ({"bound": 0.0}, ValueError, r"`bound`.*got 0\.0"),
        ({"bound": -3.0}, ValueError, r"`bound`.*got -3\.0"),
        ({"bound": math.inf}, ValueError, r"`bound`.*got inf"),
        ({"relation": "add_remove"}, ValueError, r"`relation`.*got 'add_remove'"),
    ],
)
def test_bad_constructor_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        TruncatedLaplaceMechanism(**{"epsilon": 1.0, "delta": 1e-5, **kwargs})


def test_bad_method_and_sampling_input():
    mech = TruncatedLaplaceMechanism(1.0, 1e-5)
    with pytest.raises(ValueError, match=r"`epsilon` must be >= 0"):
        mech.privacy_profile(-0.1)
    with pytest.raises(ValueError, match=r"`delta`.*got 1\.5"):
        mech.epsilon_for_delta(1.5)
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1, got 0"):
        mech.error_bound(0.05, k=0)
    with pytest.raises(ValueError, match=r"shape \(n, 1\), got shape \(2, 2\)"):
        mech(np.zeros((2, 2)), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="`size`"):
        mech(np.zeros(2), -1, np.random.default_rng(0))


def test_value_semantics():
    mech = TruncatedLaplaceMechanism(1.0, 1e-5, bound=5.0)
    assert mech.name == "TruncatedLaplace(ε=1, δ=1e-05, τ=5)"
    assert pickle.loads(pickle.dumps(mech)) == mech
    assert mech != TruncatedLaplaceMechanism(1.0, 1e-5)
    with pytest.raises(AttributeError, match="immutable"):
        mech.bound = 1.0
