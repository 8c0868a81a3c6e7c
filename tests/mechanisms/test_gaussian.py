"""GaussianMechanism: claim, exact truth (docs/ground-truth.md §1), sampling, accuracy (§4), bad input."""

import math
import pickle

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss
from scipy import special, stats

from mechanisms import ApproxDP, CalibrationWarning, GaussianDP, GaussianMechanism, Relation

RTOL = 1e-9  # reference values are given to 10 digits
SEED = 20240917


# -- exact truth ------------------------------------------------------------------------------------

def test_profile_reference():
    # docs/ground-truth.md §1: δ_1(1) = 0.1269367375 (μ = 1).
    mech = GaussianMechanism(sigma=1.0)
    assert float(mech.privacy_profile(1.0)) == pytest.approx(0.1269367375, rel=RTOL)
    # δ_μ(0) = 2Φ(μ/2) − 1
    assert float(mech.privacy_profile(0.0)) == pytest.approx(2 * special.ndtr(0.5) - 1, rel=1e-14)


@pytest.mark.parametrize(
    ("sigma", "delta", "expected"),
    # docs/ground-truth.md §1: (σ/Δ, δ) -> ε
    [(1.0, 1e-5, 4.3771780957), (2.0, 1e-5, 1.9930914044), (2.0, 1e-3, 1.3522762448),
     (0.5, 1e-5, 9.9972561464)],
)
def test_epsilon_reference(sigma, delta, expected):
    assert GaussianMechanism(sigma=sigma).epsilon_for_delta(delta) == pytest.approx(expected, rel=RTOL)
    # d = 4 with σ doubled has the same μ = √d/σ
    mech = GaussianMechanism(sigma=2 * sigma, d=4)
    assert mech.epsilon_for_delta(delta, relation="replace") == pytest.approx(expected, rel=RTOL)


@pytest.mark.parametrize("sigma", [0.3, 0.7, 1.0, 2.5, 8.0])
def test_profile_and_epsilon_match_dp_accounting(sigma):
    # Independent oracle: dp-accounting's GaussianPrivacyLoss (closed form, no discretisation in
    # get_delta_for_epsilon) and get_epsilon_gaussian (bisection, tol 1e-12).  dp-accounting
    # evaluates δ without log-space care, so compare with an absolute floor of 1e-15.
    mech = GaussianMechanism(sigma=sigma)
    eps = np.array([0.0, 0.05, 0.3, 1.0, 2.0, 4.0, 8.0])
    oracle = np.asarray(GaussianPrivacyLoss(sigma, sensitivity=1.0).get_delta_for_epsilon(eps))
    np.testing.assert_allclose(mech.privacy_profile(eps), oracle, rtol=RTOL, atol=1e-15)
    for delta in (1e-10, 1e-5, 1e-3, 0.05):
        expected = dp_accounting.get_epsilon_gaussian(sigma, delta)
        assert mech.epsilon_for_delta(delta) == pytest.approx(expected, rel=RTOL, abs=1e-11)


@pytest.mark.parametrize("calibration", ["analytic", "zcdp"])
@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-5), (3.0, 1e-3), (10.0, 1e-6)])
def test_valid_calibrations_hold(calibration, epsilon, delta):
    mech = GaussianMechanism(epsilon, delta, d=3, calibration=calibration)
    assert mech.epsilon_for_delta(delta) <= epsilon * (1 + RTOL)
    assert float(mech.privacy_profile(epsilon)) <= delta * (1 + RTOL)
    # the exact trade-off lies above the claimed f_{ε,δ} (up to rounding)
    alpha = np.linspace(0, 1, 1001)
    assert np.all(mech.tradeoff(alpha) >= mech.claim.tradeoff(alpha) - 1e-12)


def test_classical_at_epsilon_10_fails():
    # docs/ground-truth.md §1: classical ε = 10, δ = 1e-5 has exact ε 10.394 and true δ(10) = 2.27e-5.
    with pytest.warns(CalibrationWarning, match="ε < 1"):
        mech = GaussianMechanism(10.0, 1e-5, calibration="classical")
    assert mech.epsilon_for_delta(1e-5) == pytest.approx(10.394, abs=5e-4)
    assert float(mech.privacy_profile(10.0)) == pytest.approx(2.27e-5, abs=5e-8)


def test_declared_sensitivity_is_used_for_claim_not_truth():
    # d = 4: the true l2 sensitivity is √4 = 2; declaring Δ = 1 halves σ and breaks the claim.
    honest = GaussianMechanism(1.0, 1e-5, d=4)
    faulty = GaussianMechanism(1.0, 1e-5, d=4, sensitivity=1.0)
    assert honest.sensitivity == 2.0 and faulty.sensitivity == 1.0
    assert faulty.sigma == pytest.approx(honest.sigma / 2, rel=1e-12)
    assert faulty.exact_mu() == pytest.approx(2.0 / faulty.sigma, rel=1e-15)
    assert honest.epsilon_for_delta(1e-5) == pytest.approx(1.0, rel=RTOL)
    assert faulty.epsilon_for_delta(1e-5) > 2.0
    assert "Δ=1" in faulty.name


@pytest.mark.parametrize("relation", ["add-remove", "replace"])
def test_exact_mu_both_relations(relation):
    mech = GaussianMechanism(sigma=3.0, d=9, relation=relation)
    assert mech.exact_mu() == mech.exact_mu("add-remove") == mech.exact_mu(Relation.REPLACE) == 1.0
    assert mech.claim == GaussianDP(1.0, relation)


def test_claims():
    assert GaussianMechanism(1.0, 1e-5).claim == ApproxDP(1.0, 1e-5)
    assert GaussianMechanism(sigma=2.0, d=4, sensitivity=1.0).claim == GaussianDP(0.5)
    # explicit σ with an (ε, δ) claim: auditing an arbitrary claimed σ
    mech = GaussianMechanism(2.0, 1e-5, sigma=1.0, relation="replace")
    assert mech.claim == ApproxDP(2.0, 1e-5, "replace")
    assert mech.calibration == "explicit" and mech.sigma == 1.0


# -- warnings -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("calibration", "epsilon", "match"),
                         [("classical", 1.0, "ε < 1"), ("classical", 5.0, "Theorem A.1"),
                          ("lecture", 1.5, "ε ≤ 1"), ("lecture", 10.0, "Wu")])
def test_calibration_warning(calibration, epsilon, match):
    with pytest.warns(CalibrationWarning, match=match):
        GaussianMechanism(epsilon, 1e-5, calibration=calibration)


@pytest.mark.parametrize(("calibration", "epsilon"),
                         [("classical", 0.99), ("lecture", 1.0), ("analytic", 50.0), ("zcdp", 50.0)])
def test_no_warning_in_proven_range(calibration, epsilon):
    GaussianMechanism(epsilon, 1e-5, calibration=calibration)  # pytest turns warnings into errors


def test_calibration_warning_is_typed():
    assert issubclass(CalibrationWarning, UserWarning)


# -- sampling -------------------------------------------------------------------------------------------

@pytest.mark.statistical
def test_sampling_moments_and_ks():
    mech = GaussianMechanism(sigma=1.7, d=3)
    data = np.array([[0.0, 0.5, 1.0], [1.0, 1.0, 0.25]])
    n = 200_000
    out = mech(data, n, np.random.default_rng(SEED))
    assert out.shape == (n, 3) and out.dtype == np.float64
    noise = out - data.sum(axis=0)
    # CLT: the sample mean has standard error σ/√n and the sample variance σ²√(2/(n−1))
    # (normal data); 5 standard errors fail by chance with probability < 1e-6 per coordinate.
    assert np.all(np.abs(noise.mean(axis=0)) < 5 * 1.7 / math.sqrt(n))
    assert np.all(np.abs(noise.var(axis=0, ddof=1) - 1.7**2) < 5 * 1.7**2 * math.sqrt(2 / (n - 1)))
    for column in noise.T:  # KS against the exact marginal N(0, σ²); reject only at p < 1e-3
        assert stats.kstest(column, stats.norm(scale=1.7).cdf).pvalue > 1e-3


def test_sampling_deterministic_and_one_draw():
    mech = GaussianMechanism(1.0, 1e-5, d=2)
    a = mech(np.zeros((0, 2)), 5, np.random.default_rng(SEED))
    b = mech(np.zeros((0, 2)), 5, np.random.default_rng(SEED))
    np.testing.assert_array_equal(a, b)
    # vectorised: exactly one standard_normal((size, d)) call
    expected = mech.sigma * np.random.default_rng(SEED).standard_normal((5, 2))
    np.testing.assert_array_equal(a, expected)


def test_true_answer_and_variance():
    mech = GaussianMechanism(sigma=2.0, d=2)
    np.testing.assert_array_equal(mech.true_answer([[0.5, 1.0], [0.25, 0.0]]), [0.75, 1.0])
    np.testing.assert_array_equal(mech.true_answer(np.zeros((0, 2))), [0.0, 0.0])
    np.testing.assert_array_equal(mech.noise_variance(), [4.0, 4.0])
    assert mech.output_dim == 2 and mech.query_columns == (0, 1)
    assert mech.worst_case_error() is None


# -- accuracy -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("epsilon", "delta", "alpha"),
                         [(0.1, 1e-5, 0.05), (0.5, 1e-6, 0.01), (0.9, 0.01, 0.3)])
def test_error_bound_classical_matches_note(epsilon, delta, alpha):
    # Gaussian mechanism accuracy note, Theorem 1: a = (2Δ/ε)√(ln(1.25/δ))·erfinv(1 − α).
    mech = GaussianMechanism(epsilon, delta, d=4, calibration="classical")
    expected = 2 * 2.0 / epsilon * math.sqrt(math.log(1.25 / delta)) * special.erfinv(1 - alpha)
    assert mech.error_bound(alpha) == pytest.approx(expected, rel=1e-12)


def test_error_bound_reference():
    # docs/ground-truth.md §4: σ = 2, α = 0.05: 3.91993; k = 10: 5.59925 exact (6 significant digits).
    mech = GaussianMechanism(sigma=2.0)
    assert mech.error_bound(0.05) == pytest.approx(3.91993, abs=5e-6)
    assert mech.error_bound(0.05, k=10) == pytest.approx(5.59925, abs=5e-6)
    union = 2.0 * special.ndtri(1 - 0.05 / 20)  # the union bound σΦ⁻¹(1 − α/(2k)) = 5.61407
    assert union == pytest.approx(5.61407, abs=5e-6)
    assert mech.error_bound(0.05, k=10) < union


@pytest.mark.parametrize("k", [1, 2, 10, 1000])
@pytest.mark.parametrize("alpha", [1e-12, 1e-3, 0.05, 0.5])
def test_error_bound_is_exact(k, alpha):
    # P(max of k |N(0, σ²)| ≤ a) = (2Φ(a/σ) − 1)^k must equal 1 − α; also the erfinv form.
    sigma = 1.3
    a = GaussianMechanism(sigma=sigma).error_bound(alpha, k=k)
    # The deficit 1 − coverage is computed as −expm1(k·log1p(−2Φ(−a/σ))) so that α = 1e-12 is
    # not lost to cancellation in 1 − coverage; abs=0 because pytest.approx's default abs=1e-12
    # would make the α = 1e-12 case pass for any a.
    deficit = -math.expm1(k * math.log1p(-2 * special.ndtr(-a / sigma)))
    assert deficit == pytest.approx(alpha, rel=1e-9, abs=0)
    if alpha >= 1e-3:  # erfinv((1−α)^{1/k}) loses precision when (1−α)^{1/k} ≈ 1
        assert a == pytest.approx(sigma * math.sqrt(2) * special.erfinv((1 - alpha) ** (1 / k)), rel=1e-9)


# -- bad input ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, r"`epsilon`.*got 0\.0"),
        ({"epsilon": -2.0}, ValueError, r"`epsilon`.*got -2\.0"),
        ({"epsilon": math.inf}, ValueError, r"`epsilon`.*got inf"),
        ({"epsilon": math.nan}, ValueError, r"`epsilon` must not be NaN"),
        ({"epsilon": "1"}, TypeError, r"`epsilon`.*got '1'"),
        ({"epsilon": None}, ValueError, r"`epsilon` is required unless `sigma` is given"),
        ({"delta": 0.0}, ValueError, r"`delta` must be in \(0, 1\), got 0\.0"),
        ({"delta": 1.0}, ValueError, r"`delta` must be in \(0, 1\), got 1\.0"),
        ({"delta": -0.1}, ValueError, r"`delta`.*got -0\.1"),
        ({"delta": None}, ValueError, r"`delta` is required"),
        ({"d": 0}, ValueError, r"`d` must be an integer >= 1, got 0"),
        ({"d": 2.5}, TypeError, r"`d` must be an integer, got 2\.5"),
        ({"d": True}, TypeError, r"`d` must be an integer, got True"),
        ({"sensitivity": -1.0}, ValueError, r"`sensitivity`.*got -1\.0"),
        ({"sensitivity": 0.0}, ValueError, r"`sensitivity`.*got 0\.0"),
        ({"calibration": "Classical"}, ValueError, r"`calibration` must be one of .*got 'Classical'"),
        ({"calibration": "explicit"}, ValueError, r"`calibration`.*got 'explicit'"),
        ({"calibration": None}, TypeError, r"`calibration`"),
        ({"relation": "add"}, ValueError, r"`relation` must be 'add-remove' or 'replace', got 'add'"),
        ({"relation": 1}, TypeError, r"`relation`.*got 1"),
    ],
)
def test_bad_constructor_input(kwargs, error, match):
    args = {"epsilon": 0.5, "delta": 1e-5, **kwargs}
    with pytest.raises(error, match=match):
        GaussianMechanism(**args)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"sigma": 0.0}, ValueError, r"`sigma`.*got 0\.0"),
        ({"sigma": -1.0}, ValueError, r"`sigma`.*got -1\.0"),
        ({"sigma": math.nan}, ValueError, r"`sigma` must not be NaN"),
        ({"sigma": 1.0, "calibration": "classical"}, ValueError, r"`calibration` cannot be combined"),
        ({"sigma": 1.0, "epsilon": 1.0}, ValueError, r"`delta` is None"),
        ({"sigma": 1.0, "delta": 1e-5}, ValueError, r"`epsilon` is None"),
    ],
)
def test_bad_sigma_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        GaussianMechanism(**kwargs)


def test_bad_method_input():
    mech = GaussianMechanism(sigma=1.0, d=2)
    with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\), got 0\.0"):
        mech.error_bound(0.0)
    with pytest.raises(ValueError, match=r"`alpha`.*got 1\.0"):
        mech.error_bound(1.0)
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1, got 0"):
        mech.error_bound(0.05, k=0)
    with pytest.raises(TypeError, match=r"`k` must be an integer, got 1\.5"):
        mech.error_bound(0.05, k=1.5)
    with pytest.raises(ValueError, match=r"`relation`.*got 'swap'"):
        mech.exact_mu("swap")
    with pytest.raises(ValueError, match=r"`epsilon` must be >= 0"):
        mech.privacy_profile(-1.0)
    with pytest.raises(ValueError, match=r"`delta` must be in \(0, 1\)"):
        mech.epsilon_for_delta(0.0)


@pytest.mark.parametrize(
    ("dataset", "size", "error", "match"),
    [
        (np.zeros((3, 3)), 1, ValueError, r"shape \(n, 2\), got shape \(3, 3\)"),
        (np.full((2, 2), 1.5), 1, ValueError, r"values must lie in \[0, 1\]"),
        (np.array([[np.nan, 0.0]]), 1, ValueError, "NaN"),
        (np.zeros((1, 2)), 0, ValueError, r"`size` must be an integer >= 1, got 0"),
        (np.zeros((1, 2)), 2.0, TypeError, r"`size` must be an integer, got 2\.0"),
    ],
)
def test_bad_sampling_input(dataset, size, error, match):
    with pytest.raises(error, match=match):
        GaussianMechanism(sigma=1.0, d=2)(dataset, size, np.random.default_rng(0))


def test_bad_rng():
    with pytest.raises(TypeError, match="`rng` must be a numpy.random.Generator"):
        GaussianMechanism(sigma=1.0)(np.zeros((1, 1)), 1, 0)


# -- value semantics ------------------------------------------------------------------------------------

def test_immutable_equal_picklable_and_named():
    with pytest.warns(CalibrationWarning):
        mech = GaussianMechanism(10, 1e-5, calibration="classical")
    assert mech.name == "Gaussian[classical](ε=10, δ=1e-05, d=1)"
    assert GaussianMechanism(sigma=2.0, d=4).name == "Gaussian[explicit](σ=2, d=4)"
    with pytest.raises(AttributeError, match="immutable"):
        mech.sigma = 1.0
    assert pickle.loads(pickle.dumps(mech)) == mech
    assert hash(GaussianMechanism(1, 1e-5)) == hash(GaussianMechanism(1.0, 1e-5, d=1))
    assert GaussianMechanism(1, 1e-5) != GaussianMechanism(1, 1e-5, calibration="zcdp")
    same = eval(repr(GaussianMechanism(sigma=2.0, d=3)), {"GaussianMechanism": GaussianMechanism})
    assert same == GaussianMechanism(sigma=2.0, d=3)
