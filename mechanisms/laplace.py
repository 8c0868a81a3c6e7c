"""The Laplace mechanism on column sums, with its exact privacy (d = 1) and accuracy.

M(X) = Σ_rows X + (Lap(b))^d with b = Δ/ε for a dataset X of rows in [0, 1]^d (Dwork & Roth
2014, Theorem 3.6).  The true l1 sensitivity of the column sums is d under both neighbour
relations (the all-ones row against nothing, resp. against the all-zeros row).

Exact privacy of the worst pair, a shift by Δ_true = d with ε₀ = Δ_true/b, for d = 1
(docs/ground-truth.md §2):

- profile δ(ε') = max(0, 1 − e^{(ε' − ε₀)/2}), inverse ε(δ) = max(0, ε₀ + 2 ln(1 − δ));
- trade-off T(α) = 1 − e^{ε₀}α for α < e^{−ε₀}/2, e^{−ε₀}/(4α) for e^{−ε₀}/2 ≤ α ≤ ½,
  e^{−ε₀}(1 − α) for α > ½.

For d > 1 the worst pair is the d-fold composition of 1-D losses with ε₁ = 1/b each.  Its pure
ε is still exact: the loss never exceeds dε₁ = ε₀ and equals it with probability 2^{−d} > 0, so
ε(0) = ε₀ and δ(ε') = 0 for ε' ≥ ε₀.  Elsewhere no closed form is implemented and the exact
methods raise ``NotImplementedError`` (truth unknown) rather than return an approximation.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from .base import ReferenceMechanism
from .claims import PureDP, as_relation
from .parameters import FrozenParameters
from .validation import check_dataset, check_finite_positive, check_int, check_open_unit

__all__ = ["LaplaceMechanism", "laplace_max_error"]


def laplace_max_error(scale: float, alpha: float, k: int = 1) -> float:
    """Exact t with P(max_{i≤k} |Y_i| > t) = α for k independent Y_i ~ Lap(scale).

    P(max |Y_i| ≤ t) = (1 − e^{−t/b})^k = 1 − α gives t = −b ln(1 − (1 − α)^{1/k}), written
    with q = −expm1(log1p(−α)/k) for precision; k = 1 gives b ln(1/α) (docs/ground-truth.md §4).
    """
    q = -math.expm1(math.log1p(-alpha) / k)
    return -scale * math.log(q)


def _check_epsilons(epsilon: Any) -> np.ndarray:
    epsilon = np.asarray(epsilon, dtype=np.float64)
    if np.isnan(epsilon).any() or np.any(epsilon < 0):
        bad = float(epsilon[np.isnan(epsilon) | (epsilon < 0)].ravel()[0])
        raise ValueError(f"`epsilon` must be >= 0, got {bad!r}")
    return epsilon


def _check_delta_closed(delta: Any) -> float:
    """δ in [0, 1): δ = 0 asks for the pure ε."""
    if delta == 0:
        return 0.0
    return check_open_unit("delta", delta)


class LaplaceMechanism(FrozenParameters, ReferenceMechanism):
    """Column sums of an (n, d) dataset in [0, 1]^d plus i.i.d. Laplace noise of scale Δ/ε.

    Parameters
    ----------
    epsilon : float
        The claimed pure ε > 0.
    d : int, default 1
        Row dimension = number of queries.
    sensitivity : float, optional
        The l1 sensitivity Δ used for calibration and the claim; default d, the true l1
        sensitivity of column sums of rows in [0, 1]^d.  Declaring less makes the claim wrong;
        the exact truth always uses d.
    relation : {"add-remove", "replace"}, default "add-remove"

    Attributes
    ----------
    scale : float
        b = Δ/ε.
    claim : PureDP
        PureDP(ε, relation).

    References
    ----------
    Dwork & Roth (2014), Theorem 3.6; docs/ground-truth.md §2 for the exact profile and trade-off.
    """

    epsilon: float
    sensitivity: float
    scale: float

    def __init__(self, epsilon: float, d: int = 1, sensitivity: Optional[float] = None,
                 relation: Any = "add-remove") -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.d = check_int("d", d)
        self.sensitivity = check_finite_positive(
            "sensitivity", float(self.d) if sensitivity is None else sensitivity)
        self.relation = as_relation(relation)
        self.scale = self.sensitivity / self.epsilon
        self.claim = PureDP(self.epsilon, self.relation)
        self._freeze(epsilon=self.epsilon, d=self.d, sensitivity=self.sensitivity,
                     relation=self.relation.value)

    # -- sampling -------------------------------------------------------------------------------
    def true_answer(self, dataset: Any) -> np.ndarray:
        """Column sums, shape ``(d,)``."""
        return check_dataset(dataset, self.d).sum(axis=0)

    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return data.sum(axis=0) + rng.laplace(0.0, self.scale, (size, self.d))

    # -- exact privacy ----------------------------------------------------------------------------
    @property
    def exact_epsilon0(self) -> float:
        """ε₀ = Δ_true/b with the true l1 sensitivity Δ_true = d: the exact pure ε."""
        return self.d / self.scale

    def pair_epsilon(self, base: Any, neighbour: Any) -> float:
        """Exact pure ε of one pair of datasets: i.i.d. Laplace noise of scale b around f(D) and f(D′)
        has largest privacy loss ‖f(D) − f(D′)‖₁/b (Dwork & Roth 2014, Theorem 3.6;
        :meth:`exact_epsilon0` is its largest value)."""
        shift = self.true_answer(neighbour) - self.true_answer(base)
        return float(np.abs(shift).sum()) / self.scale

    def _unknown(self, what: str) -> NotImplementedError:
        return NotImplementedError(
            f"exact {what} of {self.name} is not implemented for d = {self.d} > 1: the worst pair "
            "is a d-fold composition of Laplace losses with no closed form here (only its pure "
            f"ε = {self.exact_epsilon0:g} is exact); truth unknown")

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """δ(ε') = max(0, 1 − e^{(ε' − ε₀)/2}) (docs/ground-truth.md §2), vectorized in ε' ≥ 0.

        For d > 1 only δ(ε') = 0 for ε' ≥ ε₀ is known; smaller ε' raise ``NotImplementedError``.
        """
        self._relation(relation)
        eps0 = self.exact_epsilon0
        epsilon = _check_epsilons(epsilon)
        if self.d != 1:
            if np.any(epsilon < eps0):
                raise self._unknown("privacy profile below the pure ε")
            return np.zeros_like(epsilon)
        return np.maximum(0.0, -np.expm1((epsilon - eps0) / 2.0)) + 0.0  # + 0.0: no −0.0

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """ε(δ) = max(0, ε₀ + 2 ln(1 − δ)); δ = 0 gives ε₀ (exact for every d)."""
        self._relation(relation)
        delta = _check_delta_closed(delta)
        if delta == 0.0:
            return self.exact_epsilon0
        if self.d != 1:
            raise self._unknown("ε(δ) for δ > 0")
        return max(0.0, self.exact_epsilon0 + 2.0 * math.log1p(-delta))

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """T(α) of Lap(0, b) against Lap(1, b) (docs/ground-truth.md §2), vectorized; d = 1 only."""
        self._relation(relation)
        if self.d != 1:
            raise self._unknown("trade-off curve")
        eps0 = self.exact_epsilon0
        alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
        with np.errstate(divide="ignore"):
            log_alpha = np.log(alpha)
        # Each branch is evaluated in log space and capped at 0 outside its own range, so
        # huge ε₀ neither overflows nor divides by zero.
        first = -np.expm1(np.minimum(log_alpha + eps0, 0.0))               # 1 − e^{ε₀}α
        middle = np.exp(np.minimum(-eps0 - math.log(4.0) - log_alpha, 0.0))  # e^{−ε₀}/(4α)
        last = math.exp(-eps0) * (1.0 - alpha)                              # e^{−ε₀}(1 − α)
        return np.where(log_alpha < -eps0 - math.log(2.0), first,
                        np.where(alpha <= 0.5, middle, last))

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_pdf(self, x) -> np.ndarray:
        """Density e^{−|x|/b}/(2b) of each query's noise (used by the accuracy figure)."""
        x = np.asarray(x, dtype=np.float64)
        return np.exp(-np.abs(x) / self.scale) / (2.0 * self.scale)

    def noise_variance(self) -> np.ndarray:
        """2b² per column."""
        return np.full(self.d, 2.0 * self.scale**2)

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Exact t = −b ln(1 − (1 − α)^{1/k}) for the max over k independent queries."""
        return laplace_max_error(self.scale, check_open_unit("alpha", alpha), check_int("k", k))

    # -- presentation -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        parts = [f"ε={self.epsilon:g}", f"d={self.d}"]
        if not math.isclose(self.sensitivity, self.d, rel_tol=1e-12):
            parts.append(f"Δ={self.sensitivity:g}")
        if self.relation.value != "add-remove":
            parts.append(str(self.relation))
        return f"Laplace({', '.join(parts)})"
