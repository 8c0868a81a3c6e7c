"""Noise calibrations of the Gaussian mechanism: (ε, δ, Δ) → σ.

Four calibrations are offered (docs/ground-truth.md §1).  Whatever the calibration, the exact privacy
of the resulting mechanism is the μ-GDP profile with μ = Δ/σ (:mod:`mechanisms.gdp`); the
calibrations differ only in how much noise they add for a requested (ε, δ):

``analytic``
    Balle & Wang (2018), "Improving the Gaussian mechanism for differential privacy",
    Algorithm 1: the smallest σ with δ_{Δ/σ}(ε) ≤ δ.  Exact for every ε > 0.
``classical``
    σ = Δ √(2 ln(1.25/δ)) / ε, Dwork & Roth (2014), Theorem A.1.  Proven only for ε < 1; for
    large ε it can under-noise (it fails at ε = 10, δ = 1e-5: exact ε 10.394).
``lecture``
    σ = Δ √(2 ln(2/δ)) / ε, Wu's lecture notes on approximate DP, eq. (17) and (29),
    Theorems 2.1 and 2.4.  Proven only for ε ≤ 1; fails from ε ≈ 9.39 at δ = 1e-5.
``zcdp``
    σ² = Δ²/ρ with ρ the root of ε = ρ/2 + √(2ρ ln(1/δ)) (Gaussian noise lecture slides).
    Always valid and conservative; the slides' ρ equals μ², twice Bun & Steinke's ρ.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy import optimize, special

from .validation import check_choice, check_finite_positive, check_open_unit

__all__ = [
    "CALIBRATIONS",
    "PROVEN_RANGE",
    "analytic_sigma",
    "classical_sigma",
    "lecture_sigma",
    "zcdp_rho",
    "zcdp_sigma",
    "calibrate_sigma",
    "outside_proven_range",
]

#: Names accepted by :func:`calibrate_sigma` and ``GaussianMechanism(calibration=...)``.
CALIBRATIONS: tuple[str, ...] = ("analytic", "classical", "lecture", "zcdp")

#: Calibrations whose source proves them only for small ε: name -> (largest ε, whether that ε
#: itself is included, the theorem).  Outside that range the calibration may still hold (the
#: exact truth decides), but nothing proves it.
PROVEN_RANGE: dict[str, tuple[float, bool, str]] = {
    "classical": (1.0, False, "Dwork & Roth (2014) Theorem A.1 proves it only for ε < 1"),
    "lecture": (1.0, True, "Wu's lecture notes Theorems 2.1/2.4 prove it only for ε ≤ 1"),
}


def _validate(epsilon: float, delta: float, sensitivity: float) -> tuple[float, float, float]:
    return (
        check_finite_positive("epsilon", epsilon),
        check_open_unit("delta", delta),
        check_finite_positive("sensitivity", sensitivity),
    )


# -- analytic (Balle & Wang 2018, Algorithm 1) ---------------------------------------------------

def _log_b_minus(s: float, epsilon: float) -> float:
    """log B⁻(u) with u = s², B⁻(u) = Φ(−√(εu)) − e^ε Φ(−√(ε(u+2))) (BW18 Algorithm 1).

    Evaluated as logΦ(a) + log1p(−exp(ε + logΦ(b) − logΦ(a))) so that δ down to ~1e-300 keeps
    full relative precision (the same trick as :func:`mechanisms.gdp.gdp_delta`).
    """
    log_a = special.log_ndtr(-math.sqrt(epsilon) * s)
    log_b = special.log_ndtr(-math.sqrt(epsilon * (s * s + 2.0)))
    log_ratio = min(epsilon + log_b - log_a, 0.0)
    with np.errstate(divide="ignore"):
        return float(log_a + np.log1p(-np.exp(log_ratio)))


def _log_one_minus_b_plus(s: float, epsilon: float) -> float:
    """log(1 − B⁺(v)) with v = s², B⁺(v) = Φ(√(εv)) − e^ε Φ(−√(ε(v+2))).

    1 − B⁺ = Φ(−√(εv)) + e^ε Φ(−√(ε(v+2))) is a sum of two positive terms, so its logarithm
    is accurate even when δ is close to 1.
    """
    return float(np.logaddexp(special.log_ndtr(-math.sqrt(epsilon) * s),
                              epsilon + special.log_ndtr(-math.sqrt(epsilon * (s * s + 2.0)))))


def _root(func: Callable[[float], float], upper: float) -> float:
    """Root of an increasing ``func`` on [0, ∞) with func(0) ≤ 0, bracket grown from ``upper``."""
    if func(0.0) >= 0.0:  # δ = δ₀ up to rounding: the root is s = 0
        return 0.0
    while func(upper) < 0.0:  # the initial bracket is provably enough; guard against rounding
        upper *= 2.0
    return optimize.brentq(func, 0.0, upper, xtol=1e-300, rtol=1e-15, maxiter=1000)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The analytic Gaussian mechanism's σ (Balle & Wang 2018, Algorithm 1).

    With δ₀ = Φ(0) − e^ε Φ(−√(2ε)):

    - if δ ≥ δ₀, solve B⁺(v) = Φ(√(εv)) − e^ε Φ(−√(ε(v+2))) = δ and set a = √(1+v/2) − √(v/2);
    - otherwise solve B⁻(u) = Φ(−√(εu)) − e^ε Φ(−√(ε(u+2))) = δ and set a = √(1+u/2) + √(u/2);
    - σ = a Δ / √(2ε).

    Both B⁺ and B⁻ equal the Gaussian privacy profile δ_μ(ε) at μ = √(2ε)/a, so σ is the
    smallest noise with δ_{Δ/σ}(ε) ≤ δ.  The roots are found in the variable s = √v (√u) by
    Brent's method on log(1 − B⁺) = log(1 − δ), resp. log B⁻ = log δ, which keeps full
    precision for δ near 1 and for δ down to ~1e-300.  The bracket uses the Gaussian tail
    bound Φ(−x) ≤ e^{−x²/2}: B⁻(u) ≤ e^{−εu/2} and 1 − B⁺(v) ≤ 1.5 e^{−εv/2}.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float, default 1.0
        l2 sensitivity Δ > 0.

    Returns
    -------
    float
        σ.  Reference (docs/ground-truth.md §1): (ε, δ) = (1, 1e-5) → σ/Δ = 3.7306316348.

    References
    ----------
    B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising", ICML 2018, Algorithm 1 and Theorem 8.
    """
    epsilon, delta, sensitivity = _validate(epsilon, delta, sensitivity)
    log_delta0 = _log_b_minus(0.0, epsilon)  # B⁻(0) = B⁺(0) = δ₀
    if math.log(delta) >= log_delta0:
        target = math.log1p(-delta)
        upper = math.sqrt(2.0 * math.log(1.5 / (1.0 - delta)) / epsilon)
        s = _root(lambda x: target - _log_one_minus_b_plus(x, epsilon), upper)
        a = math.sqrt(1.0 + s * s / 2.0) - s / math.sqrt(2.0)
    else:
        target = math.log(delta)
        upper = math.sqrt(2.0 * math.log(1.0 / delta) / epsilon)
        s = _root(lambda x: target - _log_b_minus(x, epsilon), upper)
        a = math.sqrt(1.0 + s * s / 2.0) + s / math.sqrt(2.0)
    return a * sensitivity / math.sqrt(2.0 * epsilon)


# -- closed-form calibrations --------------------------------------------------------------------

def classical_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ √(2 ln(1.25/δ)) / ε (Dwork & Roth 2014, Theorem A.1; proven for ε < 1 only)."""
    epsilon, delta, sensitivity = _validate(epsilon, delta, sensitivity)
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def lecture_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ √(2 ln(2/δ)) / ε (Wu, lecture notes eq. (17) and (29); proven for ε ≤ 1 only)."""
    epsilon, delta, sensitivity = _validate(epsilon, delta, sensitivity)
    return sensitivity * math.sqrt(2.0 * math.log(2.0 / delta)) / epsilon


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The ρ with ε = ρ/2 + √(2ρ ln(1/δ)) (Gaussian noise lecture slides).

    The equation is a quadratic in s = √ρ: s²/2 + s√(2L) − ε = 0 with L = ln(1/δ), whose
    positive root s = 2ε / (√(2L) + √(2L + 2ε)) is written without cancellation.
    """
    epsilon = check_finite_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    two_l = 2.0 * math.log(1.0 / delta)
    s = 2.0 * epsilon / (math.sqrt(two_l) + math.sqrt(two_l + 2.0 * epsilon))
    return s * s


def zcdp_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ/√ρ with ρ from :func:`zcdp_rho` (lecture slides: Z ~ N(0, Δ²/ρ · I))."""
    epsilon, delta, sensitivity = _validate(epsilon, delta, sensitivity)
    return sensitivity / math.sqrt(zcdp_rho(epsilon, delta))


_CALIBRATORS: dict[str, Callable[[float, float, float], float]] = {
    "analytic": analytic_sigma,
    "classical": classical_sigma,
    "lecture": lecture_sigma,
    "zcdp": zcdp_sigma,
}


def calibrate_sigma(calibration: str, epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ of the named calibration (one of :data:`CALIBRATIONS`) for (ε, δ) and l2 sensitivity Δ."""
    calibration = check_choice("calibration", calibration, CALIBRATIONS)
    return _CALIBRATORS[calibration](epsilon, delta, sensitivity)


def outside_proven_range(calibration: str, epsilon: float) -> str | None:
    """The reason ``calibration`` is unproven at ``epsilon``, or ``None`` when it is proven."""
    if calibration not in PROVEN_RANGE:
        return None
    limit, inclusive, reason = PROVEN_RANGE[calibration]
    proven = epsilon <= limit if inclusive else epsilon < limit
    return None if proven else reason
