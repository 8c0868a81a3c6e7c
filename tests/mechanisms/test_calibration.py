"""Gaussian noise calibrations against docs/ground-truth.md §1 and dp-accounting."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import optimize

from mechanisms.calibration import (
    CALIBRATIONS,
    analytic_sigma,
    calibrate_sigma,
    classical_sigma,
    lecture_sigma,
    outside_proven_range,
    zcdp_rho,
    zcdp_sigma,
)
from mechanisms.gdp import gdp_delta, gdp_epsilon

RTOL = 1e-9  # reference values are given to 10 digits


@pytest.mark.parametrize(
    ("epsilon", "delta", "expected"),
    [
        # docs/ground-truth.md §1, analytic calibration reference (ε, δ) -> σ/Δ
        (1.0, 1e-5, 3.7306316348),
        (0.1, 1e-5, 30.749566132),
        (4.0, 1e-6, 1.1935185872),
        (1.0, 0.3, 0.6902305800),  # δ ≥ δ₀: the B⁺ branch
    ],
)
def test_analytic_reference_values(epsilon, delta, expected):
    assert analytic_sigma(epsilon, delta) == pytest.approx(expected, rel=RTOL)
    assert analytic_sigma(epsilon, delta, sensitivity=3.0) == pytest.approx(3 * expected, rel=RTOL)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-5, 1e-3, 0.05, 0.3, 0.7])
def test_analytic_matches_dp_accounting(epsilon, delta):
    # Independent oracle: dp_accounting.get_sigma_gaussian (bisection to tol 1e-12).
    oracle = dp_accounting.get_sigma_gaussian(epsilon, delta)
    assert analytic_sigma(epsilon, delta) == pytest.approx(oracle, rel=RTOL)


@pytest.mark.parametrize("epsilon", [1e-3, 0.3, 1.0, 8.0, 100.0])
@pytest.mark.parametrize("delta", [1e-100, 1e-20, 1e-6, 0.2, 0.999])
def test_analytic_is_exact(epsilon, delta):
    # Balle & Wang 2018, Theorem 8: the analytic σ makes δ_{Δ/σ}(ε) equal to δ.
    sigma = analytic_sigma(epsilon, delta, sensitivity=2.0)
    # Tolerance from conditioning: a relative error η in σ moves δ by κ·η relative, with
    # κ = |d ln δ / d ln σ| (central difference; κ ≈ 0.01 at δ = 0.999, up to ≈ 543 at
    # δ = 1e-100).  Budget η = 1e-10: brentq solves for √u to rtol 1e-15 and the measured σ
    # error against a 60-digit mpmath root is ≤ 1.2e-11; the rest of the budget covers
    # gdp_delta's own rounding, which is largest at ε = 1e-3, δ = 1e-100 (≈ 3e-8 relative,
    # from the cancellation in 1 − e^ε Φ(b)/Φ(a), i.e. 0.6·κ·1e-10).  abs=0: the default
    # abs=1e-12 would make the δ = 1e-20 and 1e-100 cases pass for any σ.
    h = 1e-6
    log_up = math.log(float(gdp_delta(epsilon, 2.0 / (sigma * (1 + h)))))
    log_down = math.log(float(gdp_delta(epsilon, 2.0 / (sigma * (1 - h)))))
    kappa = abs(log_up - log_down) / (math.log1p(h) - math.log1p(-h))
    assert kappa <= 550  # so the tolerance is never looser than 5.5e-8 relative
    assert float(gdp_delta(epsilon, 2.0 / sigma)) == pytest.approx(delta, rel=1e-10 * kappa, abs=0)


def test_closed_form_calibrations():
    # Dwork & Roth Thm A.1; Wu lecture eq. (17); lecture slides ε = ρ/2 + √(2ρ ln 1/δ).
    eps, delta, sens = 0.5, 1e-5, 2.0
    assert classical_sigma(eps, delta, sens) == pytest.approx(sens * math.sqrt(2 * math.log(1.25 / delta)) / eps, rel=1e-15)
    assert lecture_sigma(eps, delta, sens) == pytest.approx(sens * math.sqrt(2 * math.log(2 / delta)) / eps, rel=1e-15)
    rho = zcdp_rho(eps, delta)
    assert rho / 2 + math.sqrt(2 * rho * math.log(1 / delta)) == pytest.approx(eps, rel=1e-14)
    assert zcdp_sigma(eps, delta, sens) == pytest.approx(sens / math.sqrt(rho), rel=1e-15)


def test_zcdp_reference():
    # docs/ground-truth.md §1: ρ = 1, δ = 1e-5 -> claimed ε 5.2985, exact ε 4.3771780957 (μ = √ρ = 1).
    claimed = 0.5 + math.sqrt(2 * math.log(1e5))
    assert claimed == pytest.approx(5.2985, abs=5e-5)
    assert zcdp_rho(claimed, 1e-5) == pytest.approx(1.0, rel=1e-14)
    assert gdp_epsilon(1e-5, 1.0 / zcdp_sigma(claimed, 1e-5)) == pytest.approx(4.3771780957, rel=RTOL)


@pytest.mark.parametrize(
    ("claimed", "exact"),
    # docs/ground-truth.md §1: classical calibration true ε at δ = 1e-5 (given to 3-4 significant digits)
    [(1.0, 0.751), (2.0, 1.610), (5.0, 4.54), (10.0, 10.394)],
)
def test_classical_true_epsilon(claimed, exact):
    mu = 1.0 / classical_sigma(claimed, 1e-5)
    assert gdp_epsilon(1e-5, mu) == pytest.approx(exact, abs=5e-3 if exact == 4.54 else 5e-4)


@pytest.mark.parametrize(
    ("calibration", "delta", "breaks_at"),
    [
        # docs/ground-truth.md §1 validity table (thresholds given to 2 decimals)
        ("classical", 1e-5, 8.42), ("classical", 1e-2, 6.77), ("classical", 0.1, 5.74),
        ("lecture", 1e-5, 9.39), ("lecture", 1e-2, 7.91), ("lecture", 0.1, 7.09),
    ],
)
def test_validity_thresholds(calibration, delta, breaks_at):
    def excess(epsilon):  # exact ε(δ) − claimed ε: ≤ 0 while the calibration holds
        mu = 1.0 / calibrate_sigma(calibration, epsilon, delta)
        return gdp_epsilon(delta, mu) - epsilon

    # Holds below the threshold and breaks above it; the crossing, found by Brent's method, must
    # round to the 2-decimal reference, i.e. lie within 5e-3 of it.
    assert excess(breaks_at - 0.5) < 0 < excess(breaks_at + 0.5)
    threshold = optimize.brentq(excess, breaks_at - 0.5, breaks_at + 0.5, xtol=1e-12)
    assert threshold == pytest.approx(breaks_at, abs=5e-3)


@pytest.mark.parametrize("calibration", CALIBRATIONS)
def test_calibrations_hold_for_small_epsilon(calibration):
    # Every calibration is proven for ε < 1 (zcdp and analytic everywhere).
    for epsilon in (0.1, 0.5, 0.99):
        for delta in (1e-9, 1e-5, 0.1):
            mu = 1.0 / calibrate_sigma(calibration, epsilon, delta)
            assert gdp_epsilon(delta, mu) <= epsilon * (1 + 1e-9)


def test_proven_ranges():
    assert outside_proven_range("classical", 0.999) is None
    assert "ε < 1" in outside_proven_range("classical", 1.0)
    assert outside_proven_range("lecture", 1.0) is None
    assert "ε ≤ 1" in outside_proven_range("lecture", 1.01)
    assert outside_proven_range("analytic", 50.0) is None
    assert outside_proven_range("zcdp", 50.0) is None


@pytest.mark.parametrize("func", [analytic_sigma, classical_sigma, lecture_sigma, zcdp_sigma])
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, r"`epsilon` must be a finite number > 0, got 0\.0"),
        ({"epsilon": -1.0}, ValueError, r"`epsilon`.*got -1\.0"),
        ({"epsilon": math.inf}, ValueError, r"`epsilon`.*got inf"),
        ({"epsilon": math.nan}, ValueError, r"`epsilon` must not be NaN"),
        ({"epsilon": "1"}, TypeError, r"`epsilon` must be a real number, got '1'"),
        ({"delta": 0.0}, ValueError, r"`delta` must be in \(0, 1\), got 0\.0"),
        ({"delta": 1.0}, ValueError, r"`delta` must be in \(0, 1\), got 1\.0"),
        ({"delta": 1.5}, ValueError, r"`delta` must be in \(0, 1\), got 1\.5"),
        ({"sensitivity": -1.0}, ValueError, r"`sensitivity`.*got -1\.0"),
        ({"sensitivity": 0.0}, ValueError, r"`sensitivity`.*got 0\.0"),
    ],
)
def test_bad_input(func, kwargs, error, match):
    args = {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        func(**args)


@pytest.mark.parametrize("name", ["Analytic", "anal", "gauss", ""])
def test_unknown_calibration(name):
    with pytest.raises(ValueError, match=rf"`calibration` must be one of .*got '{name}'"):
        calibrate_sigma(name, 1.0, 1e-5)
    with pytest.raises(TypeError, match="`calibration`"):
        calibrate_sigma(None, 1.0, 1e-5)


def test_calibrate_sigma_dispatch():
    for name, func in zip(CALIBRATIONS, (analytic_sigma, classical_sigma, lecture_sigma, zcdp_sigma)):
        assert calibrate_sigma(name, 0.7, 1e-4, 1.5) == func(0.7, 1e-4, 1.5)


def test_analytic_monotone_in_epsilon_and_delta():
    sigmas = [analytic_sigma(e, 1e-5) for e in np.geomspace(0.01, 100, 40)]
    assert np.all(np.diff(sigmas) < 0)
    sigmas = [analytic_sigma(1.0, d) for d in np.geomspace(1e-50, 0.99, 40)]
    assert np.all(np.diff(sigmas) < 0)
