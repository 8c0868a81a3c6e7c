"""The Gaussian mechanism on column sums, with four calibrations and its exact privacy.

M(X) = Σ_rows X + N(0, σ² I_d) for a dataset X of rows in [0, 1]^d.  Adding, removing or
replacing one row moves the column sums by at most √d in l2 (the all-ones row against nothing,
resp. against the all-zeros row), so the worst pair of neighbours has trade-off curve exactly
G_μ with μ = √d/σ under both relations (Dong, Roth & Su 2022).  Its privacy profile and ε(δ)
follow from :mod:`mechanisms.gdp` (Balle & Wang 2018, Theorem 8).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Optional

import numpy as np
from scipy import special

from .base import GaussianShapedMechanism
from .calibration import CALIBRATIONS, calibrate_sigma, outside_proven_range
from .claims import ApproxDP, GaussianDP, Relation, as_relation
from .parameters import FrozenParameters
from .validation import check_choice, check_dataset, check_finite_positive, check_int, check_open_unit

__all__ = ["CalibrationWarning", "GaussianMechanism", "gaussian_max_error"]

#: ``calibration`` value recorded when σ is given explicitly.
EXPLICIT = "explicit"


class CalibrationWarning(UserWarning):
    """A calibration is used outside the range of ε its source proves it for."""


def _check_alpha(alpha: Any) -> float:
    return check_open_unit("alpha", alpha)


def gaussian_max_error(sigma: float, alpha: float, k: int = 1) -> float:
    """Exact a with P(max_{i≤k} |Z_i| > a) = α for k independent Z_i ~ N(0, σ²).

    P(max |Z_i| ≤ a) = (1 − 2Φ(−a/σ))^k = 1 − α gives a = σ√2·erfinv((1 − α)^{1/k}); it is
    evaluated as −σ Φ⁻¹(q/2) with q = 1 − (1 − α)^{1/k} = −expm1(log1p(−α)/k), which keeps
    full precision for small α and large k.  For k = 1 this is σ Φ⁻¹(1 − α/2)
    (docs/ground-truth.md §4; the accuracy note's Theorem 1).
    """
    q = -math.expm1(math.log1p(-alpha) / k)
    return float(-sigma * special.ndtri(q / 2.0))


class GaussianMechanism(FrozenParameters, GaussianShapedMechanism):
    """Column sums of an (n, d) dataset in [0, 1]^d plus N(0, σ² I_d).

    σ is either calibrated to (ε, δ) for the l2 sensitivity ``sensitivity`` by one of the
    calibrations of :mod:`mechanisms.calibration`, or given explicitly with ``sigma=``.

    Parameters
    ----------
    epsilon, delta : float, optional
        The (ε, δ) to calibrate to and to claim; required unless ``sigma`` is given.  With
        ``sigma`` they are optional (both or neither) and only set the claim.
    d : int, default 1
        Row dimension = number of queries.
    sensitivity : float, optional
        The l2 sensitivity Δ used for calibration and the claim; default √d, the true l2
        sensitivity of column sums of rows in [0, 1]^d.  Declaring less (e.g. 1 with d = 4)
        makes the claim wrong: the exact truth always uses √d.
    calibration : {"analytic", "classical", "lecture", "zcdp"}, default "analytic"
        See :mod:`mechanisms.calibration`.  "classical" with ε ≥ 1 and "lecture" with ε > 1
        are allowed (auditing that misuse is a use case) but warn :class:`CalibrationWarning`.
        Must be left at its default when ``sigma`` is given; it is then recorded as
        ``"explicit"``.
    sigma : float, optional
        Explicit noise standard deviation.
    relation : {"add-remove", "replace"}, default "add-remove"
        Neighbour relation of the claim.

    Attributes
    ----------
    sigma, epsilon, delta, d, sensitivity, calibration, relation
        The effective values (σ calibrated, Δ defaulted).
    claim : ApproxDP or GaussianDP
        ApproxDP(ε, δ) when ε, δ are given, else GaussianDP(Δ/σ).

    Notes
    -----
    Exact privacy: the worst pair has T = G_μ with μ = √d/σ under either relation
    (``exact_mu``); hence δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (docs/ground-truth.md §1).

    References
    ----------
    Dwork & Roth (2014), Theorem A.1; Balle & Wang (2018), Algorithm 1 and Theorem 8;
    Dong, Roth & Su (2022), "Gaussian differential privacy"; Wu, lecture notes eq. (29).
    """

    epsilon: Optional[float]
    delta: Optional[float]
    sensitivity: float
    calibration: str
    sigma: float

    def __init__(
        self,
        epsilon: Optional[float] = None,
        delta: Optional[float] = None,
        d: int = 1,
        sensitivity: Optional[float] = None,
        calibration: str = "analytic",
        sigma: Optional[float] = None,
        relation: Any = "add-remove",
    ) -> None:
        self.d = check_int("d", d)
        self.relation = as_relation(relation)
        self.sensitivity = check_finite_positive(
            "sensitivity", math.sqrt(self.d) if sensitivity is None else sensitivity)
        if sigma is None:
            self.calibration = check_choice("calibration", calibration, CALIBRATIONS)
            for name, value in (("epsilon", epsilon), ("delta", delta)):
                if value is None:
                    raise ValueError(f"`{name}` is required unless `sigma` is given, got None")
        else:
            if calibration not in ("analytic", EXPLICIT):
                raise ValueError(f"`calibration` cannot be combined with an explicit `sigma`, "
                                 f"got calibration={calibration!r}")
            self.calibration = EXPLICIT
            if (epsilon is None) != (delta is None):
                missing = "epsilon" if epsilon is None else "delta"
                raise ValueError(f"with `sigma`, give both `epsilon` and `delta` or neither; "
                                 f"`{missing}` is None")
        self.epsilon = None if epsilon is None else check_finite_positive("epsilon", epsilon)
        self.delta = None if delta is None else check_open_unit("delta", delta)
        if sigma is None:
            reason = outside_proven_range(self.calibration, self.epsilon)
            if reason is not None:
                warnings.warn(
                    f"{self.calibration} calibration at epsilon={self.epsilon:g}: {reason}; "
                    "the claim may not hold (the exact truth decides)",
                    CalibrationWarning, stacklevel=2)
            self.sigma = calibrate_sigma(self.calibration, self.epsilon, self.delta, self.sensitivity)
        else:
            self.sigma = check_finite_positive("sigma", sigma)
        if self.epsilon is not None:
            self.claim = ApproxDP(self.epsilon, self.delta, self.relation)
        else:
            self.claim = GaussianDP(self.sensitivity / self.sigma, self.relation)
        params: dict[str, Any] = {"epsilon": self.epsilon, "delta": self.delta, "d": self.d,
                                  "sensitivity": self.sensitivity}
        if sigma is None:
            params["calibration"] = self.calibration
        else:
            params["sigma"] = self.sigma
        params["relation"] = self.relation.value
        self._freeze(**params)

    # -- sampling -------------------------------------------------------------------------------
    def true_answer(self, dataset: Any) -> np.ndarray:
        """Column sums f(X) = Σ_rows X, shape ``(d,)``."""
        return check_dataset(dataset, self.d).sum(axis=0)

    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return data.sum(axis=0) + self.sigma * rng.standard_normal((size, self.d))

    # -- exact privacy ----------------------------------------------------------------------------
    def exact_mu(self, relation: Any = None) -> float:
        """μ = √d/σ: the true l2 sensitivity of column sums is √d under both relations."""
        self._relation(relation)
        return math.sqrt(self.d) / self.sigma

    def pair_mu(self, base: Any, neighbour: Any) -> float:
        """Exact μ of one pair of datasets: the outputs are N(f(D), σ²I) and N(f(D′), σ²I), whose
        trade-off curve is G_μ with μ = ‖f(D) − f(D′)‖₂/σ (Dong, Roth & Su 2022, "Gaussian
        differential privacy", JRSS-B, the Gaussian shift; :meth:`exact_mu` is its largest value)."""
        shift = self.true_answer(neighbour) - self.true_answer(base)
        return float(np.linalg.norm(shift)) / self.sigma

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_variance(self) -> np.ndarray:
        """σ² for each of the d columns."""
        return np.full(self.d, self.sigma**2)

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Exact a = σ√2·erfinv((1 − α)^{1/k}) with P(max over k queries |error| > a) = α.

        For k = 1 and the classical σ this is the accuracy note's
        a = (2Δ/ε)√(ln(1.25/δ))·erfinv(1 − α).
        """
        return gaussian_max_error(self.sigma, _check_alpha(alpha), check_int("k", k))

    # -- presentation -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        parts = []
        if self.epsilon is not None:
            parts += [f"ε={self.epsilon:g}", f"δ={self.delta:g}"]
        if self.calibration == EXPLICIT:
            parts.append(f"σ={self.sigma:g}")
        parts.append(f"d={self.d}")
        if not math.isclose(self.sensitivity, math.sqrt(self.d), rel_tol=1e-12):
            parts.append(f"Δ={self.sensitivity:g}")
        if self.relation is not Relation.ADD_REMOVE:
            parts.append(str(self.relation))
        return f"Gaussian[{self.calibration}]({', '.join(parts)})"
