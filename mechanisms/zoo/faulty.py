"""Faulty mechanisms: documented mistakes whose exact privacy is known, to test audit setups.

The registry that pairs each with its worst-case neighbouring datasets,
``scenarios.faulty_cases.FAULTY_MECHANISMS``, lives in :mod:`scenarios` (layers reach down only).

Each mechanism here is a mistake an author could plausibly make.  The mechanism
carries the claim its author would state (the *wrong* claim) and, from the reference mechanisms it
is built on, the exact truth, which contradicts the claim.  An auditor that reports NOT_REFUTED on
one of them with enough samples has lost power; the study in ``benchmarks/validity.py`` measures how
many samples each needs.

============================== =================================================================
name                           mistake (claim → exact truth)
============================== =================================================================
gaussian-sensitivity           σ calibrated to l2 sensitivity 1 instead of √d (d = 4):
                               (1, 1e-5)-DP claimed, exact ε(1e-5) = 2.155, μ = 2/σ = 0.536
gaussian-classical-large-eps   classical σ = Δ√(2 ln(1.25/δ))/ε used at ε = 7, δ = 0.1:
                               (7, 0.1)-DP claimed, exact ε(0.1) = 8.016
correlated-half-size-noise     Lebeda's Algorithm 1 releasing ñ = n + η instead of n + 2η:
                               μ-GDP claimed, exact 2μ (any d, any C)
correlated-replace             Algorithm 1 (proved for add/remove) claimed under replacement:
                               μ-GDP claimed, exact 2μ·√(√d/(√d + 1)) (1.633μ at d = 4)
truncated-laplace-half-bound   Geng's truncated Laplace with τ half the required bound:
                               (1, 1e-5)-DP claimed, exact δ(ε') ≥ δ_∞ = 2.94e-3 for all ε',
                               so ε(1e-5) = ∞
laplace-per-query              Laplace on k queries with scale 1/ε (per-query sensitivity)
                               instead of k/ε (l1 sensitivity of the vector): ε-DP claimed,
                               exact pure ε = kε
============================== =================================================================

References
----------
Balle & Wang (2018), Theorem 8 and the classical bound's failure at large ε (docs/ground-truth.md §1);
Dwork & Roth (2014), Theorem A.1 (classical calibration, proved for ε < 1) and Theorem 3.6
(Laplace, l1 sensitivity); Geng, Ding, Guo & Kumar (AISTATS 2020) and Wu's lecture notes §1.2
(truncated Laplace); Lebeda, "Better Gaussian Mechanism using Correlated Noise", Algorithm 1 and
Lemma 3.4 (docs/ground-truth.md §5); Dong, Roth & Su (2022) for μ of a Gaussian pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
from scipy import optimize

from ..correlated import CorrelatedGaussianMechanism
from ..laplace import LaplaceMechanism, _check_delta_closed, _check_epsilons

__all__ = [
    "HalfSizeNoiseCorrelatedGaussian",
    "PerQueryLaplaceMechanism",
    "exact_truth",
    "laplace_product_profile",
]


# -- Lebeda's Algorithm 1 with the size released as n + η ------------------------------------------
@dataclass(frozen=True, repr=False)
class HalfSizeNoiseCorrelatedGaussian(CorrelatedGaussianMechanism):
    """Lebeda's Algorithm 1 with the noisy size released as ñ = n + η instead of n + 2η.

    The counts are those of Algorithm 1 (x̃ = f(X) + η·1 + z, η ~ N(0, a), z ~ N(0, b·I_d), a and b
    of Lemma 3.5), and the claim is still ``GaussianDP(mu, relation)``, but the size column carries
    η with half the weight the privacy proof needs.

    Exact privacy.  The output is Gaussian with covariance Σ (a + b on the count diagonal, a
    elsewhere among the counts, a between a count and ñ, a for ñ) and mean (f, n), so a pair has
    trade-off curve G_m with m² = Δᵀ Σ⁻¹ Δ (Mahalanobis norm of the mean shift Δ).  The bijection
    (x̃, ñ) ↦ (x̃ − ñ·1, ñ) = (f − n·1 + z, n + η) decorrelates the noise, so

        m² = ‖Δf − Δn·1‖²/b + Δn²/a.

    - add/remove (Δn = ±1, ±Δf ∈ [0, 1]^d): maximal for the all-zeros row (‖Δf − 1‖² = d), so
      μ_eff² = d/b + 1/a = 4μ²(d/(d + C²) + C²/(d + C²)) = 4μ²: **μ_eff = 2μ** for every d and C;
    - replacement (Δn = 0, Δf ∈ [−1, 1]^d): μ_rep² = d/b, as for Algorithm 1.

    ``tests/mechanisms/test_faulty.py`` checks μ_eff against the Mahalanobis norm over every corner row.
    """

    fault = "Algorithm 1 releases ñ = n + η instead of n + 2η: the size leaks twice as much"

    def __post_init__(self) -> None:
        if self.n_known is not None:
            raise ValueError(f"the half-size-noise fault needs the released size column; "
                             f"`n_known` must be None, got {self.n_known!r}")
        super().__post_init__()

    @property
    def name(self) -> str:
        return "CorrelatedGaussian[alg1, ñ = n + η]" + super().name.partition("]")[2]

    def __repr__(self) -> str:
        return (f"HalfSizeNoiseCorrelatedGaussian(mu={self.mu!r}, d={self.d!r}, c={self.c!r}, "
                f"relation={self.relation.value!r})")

    def output_covariance(self) -> np.ndarray:
        """a·11ᵀ + b·I on the counts; a between a count and ñ = n + η; a for ñ."""
        cov = super().output_covariance()
        d, a = self.d, self.eta_variance
        cov[:d, d] = cov[d, :d] = a
        cov[d, d] = a
        return cov

    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        out = super()._sample(data, size, rng)  # last column n + 2η
        n = float(data.shape[0])
        out[:, self.d] = n + 0.5 * (out[:, self.d] - n)  # the fault: n + η
        return out

    def exact_mu(self, relation: Any = None) -> float:
        """2μ under add/remove (√(d/b + 1/a)); √(d/b) under replacement (class docstring)."""
        relation = self._relation(relation)
        a, b, d = self.eta_variance, self.z_variance, self.d
        if relation.value == "replace":
            return math.sqrt(d / b)
        return math.sqrt(d / b + 1.0 / a)


# -- Laplace on k queries calibrated to a per-query sensitivity ------------------------------------
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(24)
#: Largest k for which the Irwin–Hall alternating sum below keeps ~1e-10 accuracy.
MAX_EXACT_QUERIES = 10


def _irwin_hall_piece(v: np.ndarray, m: int, piece: int) -> np.ndarray:
    """Irwin–Hall density of a sum of m Uniform(0, 1) at v ∈ [piece, piece + 1]:
    Σ_{r ≤ piece} (−1)^r C(m, r) (v − r)^{m−1} / (m − 1)!."""
    total = np.zeros_like(v)
    for r in range(piece + 1):
        total += (-1) ** r * math.comb(m, r) * (v - r) ** (m - 1)
    return total / math.factorial(m - 1)


def laplace_product_profile(epsilon: Any, eps0: float, k: int) -> np.ndarray:
    """Exact hockey-stick δ(ε') of Lap(0, b)^k against Lap(1, b)^k, ε₀ = 1/b (vectorized in ε').

    The privacy loss of one coordinate, L = (|y − 1| − |y|)/b under P = Lap(0, b), is a mixture:
    an atom at +ε₀ (mass ½, y ≤ 0), an atom at −ε₀ (mass e^{−ε₀}/2, y ≥ 1) and, for y ∈ (0, 1),
    the density e^{−ε₀/2} e^{L/2}/4 on (−ε₀, ε₀).  For j, l, m coordinates in each part
    (multinomial weight), the sum is S = (j − l)ε₀ + U with U the sum of m continuous parts, whose
    density is (e^{−ε₀/2}/4)^m e^{u/2} h_m(u), h_m the m-fold convolution of 1_(−ε₀, ε₀); writing
    u = ε₀(2V − m), V is Irwin–Hall(m).  Then δ(ε') = E_P[(1 − e^{ε' − S})₊] is a finite sum of
    integrals of e^{u/2} − e^{ε' − sh} e^{−u/2} against a piecewise polynomial, each evaluated by
    24-point Gauss–Legendre on the pieces where the integrand is positive (exact up to rounding
    for ε₀ of order 1; relative accuracy ~1e-12).  Symmetric in P and Q (reflect y ↦ 1 − y).
    """
    epsilon = _check_epsilons(epsilon)
    flat = np.atleast_1d(epsilon).astype(np.float64).ravel()
    p_plus, p_minus = 0.5, 0.5 * math.exp(-eps0)
    kappa = eps0 * math.exp(-eps0 / 2.0) / 2.0
    delta = np.zeros_like(flat)
    for m in range(k + 1):
        for j in range(k - m + 1):
            l_count = k - m - j
            weight = (math.factorial(k) / (math.factorial(j) * math.factorial(l_count) * math.factorial(m))
                      * p_plus**j * p_minus**l_count)
            shift = (j - l_count) * eps0
            if m == 0:  # an atom at S = shift
                delta += weight * np.maximum(0.0, -np.expm1(flat - shift))
                continue
            v_star = ((flat - shift) / eps0 + m) / 2.0  # the integrand is positive for v > v*
            for piece in range(m):
                low = np.clip(v_star, piece, piece + 1.0)[:, None]
                half = (piece + 1.0 - low) / 2.0
                v = low + half * (_GL_NODES + 1.0)
                u = eps0 * (2.0 * v - m)
                integrand = np.exp(u / 2.0) * -np.expm1(flat[:, None] - shift - u)
                values = _irwin_hall_piece(v, m, piece) * np.maximum(integrand, 0.0)
                delta += weight * kappa**m * (half[:, 0] * (values @ _GL_WEIGHTS))
    return np.clip(delta, 0.0, 1.0).reshape(np.shape(epsilon))


class PerQueryLaplaceMechanism(LaplaceMechanism):
    """Laplace noise on k = d column sums calibrated to the per-query sensitivity 1.

    The author reads "each count has sensitivity 1" and uses scale b = 1/ε per coordinate, while
    the l1 sensitivity of the whole vector is k (an all-ones row moves every count).  The claim is
    ε-DP; the worst pair shifts all k coordinates by 1, the k-fold composition of the 1-D Laplace
    pair, so the **exact pure ε is k·ε₀** with ε₀ = 1/b (Dwork & Roth 2014, Theorem 3.6 needs
    b = k/ε).  Its privacy profile is :func:`laplace_product_profile` (exact for k ≤ 10).

    Parameters are those of :class:`~mechanisms.laplace.LaplaceMechanism` with ``sensitivity``
    defaulting to 1 (the fault) instead of d.
    """

    fault = "Laplace scale 1/ε per query: per-query sensitivity used instead of the l1 sensitivity k"

    def __init__(self, epsilon: float, d: int = 2, sensitivity: Optional[float] = 1.0,
                 relation: Any = "add-remove") -> None:
        super().__init__(epsilon, d=d, sensitivity=sensitivity, relation=relation)

    @property
    def per_query_epsilon(self) -> float:
        """ε₀ = 1/b: the privacy loss bound of one coordinate."""
        return 1.0 / self.scale

    def _require_exact(self, relation: Any) -> float:
        self._relation(relation)
        if self.d > MAX_EXACT_QUERIES:
            raise NotImplementedError(
                f"exact profile of {self.name} implemented for d <= {MAX_EXACT_QUERIES}, got "
                f"d = {self.d} (its pure ε is exactly {self.exact_epsilon0:g}); truth unknown")
        return self.per_query_epsilon

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """Exact δ(ε') of the worst pair (all-ones row), :func:`laplace_product_profile`."""
        eps0 = self._require_exact(relation)
        return laplace_product_profile(epsilon, eps0, self.d)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """Smallest ε' with δ(ε') ≤ δ: k·ε₀ for δ = 0, else Brent's method on log δ(ε')."""
        eps0 = self._require_exact(relation)
        delta = _check_delta_closed(delta)
        top = self.d * eps0
        if delta == 0.0:
            return top
        if delta >= float(self.privacy_profile(0.0)):
            return 0.0
        target = math.log(delta)

        def excess(eps: float) -> float:
            value = float(laplace_product_profile(eps, eps0, self.d))
            return (math.log(value) if value > 0 else -math.inf) - target

        return optimize.brentq(excess, 0.0, top, xtol=1e-13, rtol=1e-14, maxiter=500)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """Not implemented for d > 1 (the profile is exact); the 1-D curve for d = 1."""
        if self.d == 1:
            return super().tradeoff(alpha, relation)
        raise NotImplementedError(f"exact trade-off curve of {self.name} is not implemented "
                                  "(the privacy profile is exact)")

    @property
    def name(self) -> str:
        return f"Laplace[per-query Δ](ε={self.epsilon:g}, k={self.d})"


def _optional(method: Callable[..., Any], *args: Any) -> Optional[float]:
    try:
        return float(np.asarray(method(*args)))
    except NotImplementedError:
        return None


def exact_truth(mechanism: Any) -> dict[str, Any]:
    """Claim next to exact truth: exact ε at the claim's δ, exact δ at its ε, exact μ.

    Keys: ``claim`` (str), ``claimed_epsilon``, ``reference_delta``, ``exact_epsilon``,
    ``exact_delta``, ``claimed_mu`` and ``exact_mu`` (``None`` where not applicable or unknown).
    """
    claim, relation = mechanism.claim, mechanism.claim.relation
    exact_mu = getattr(mechanism, "exact_mu", None)
    return {
        "claim": str(claim),
        "claimed_epsilon": float(claim.epsilon),
        "reference_delta": float(claim.reference_delta),
        "exact_epsilon": _optional(lambda: mechanism.epsilon_for_delta(claim.reference_delta,
                                                                       relation=relation)),
        "exact_delta": _optional(lambda: mechanism.privacy_profile(claim.epsilon, relation=relation)),
        "claimed_mu": claim.gaussian_mu,
        "exact_mu": None if exact_mu is None else float(exact_mu(relation)),
    }
