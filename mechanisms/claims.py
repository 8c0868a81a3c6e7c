"""Privacy claims: (ε, δ)-DP, pure ε-DP and μ-GDP, each under a neighbour relation.

A claim is a lower bound on the trade-off curve of every pair of neighbours (Dong, Roth & Su
2022): (ε, δ)-DP ⇔ T ≥ f_{ε,δ} with

    f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)},

pure ε-DP is δ = 0, and μ-GDP ⇔ T ≥ G_μ (GROUND_TRUTH §1, §3).  Every claim therefore also
implies a privacy profile δ_claim(ε') = sup_α [1 − f(α) − e^{ε'} α]; for f_{ε,δ} this is
max(δ, 1 − (1 − δ)(1 + e^{ε'})/(1 + e^ε)).  The audit engine compares certified bounds with
these curves, so a claim never needs to know which quantity contradicted it.
"""

from __future__ import annotations

import abc
import functools
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Optional

import numpy as np

from .conversions import (epsilon_grid, profile_epsilon, profile_tradeoff, rdp_to_delta,
                          zcdp_to_delta)
from .gdp import gdp_delta, gdp_epsilon, gdp_tradeoff
from .validation import check_finite_positive, check_open_unit

__all__ = ["Relation", "Claim", "approx_tradeoff", "ApproxDP", "PureDP", "GaussianDP", "ZCDP", "RenyiDP",
           "ProfileClaim", "as_relation", "claim_from_dict"]


class Relation(str, Enum):
    """Neighbour relations: add or remove one row, or replace one row (same size)."""

    ADD_REMOVE = "add-remove"
    REPLACE = "replace"

    def __str__(self) -> str:
        return self.value


def as_relation(value) -> Relation:
    """Parse a relation (exact names only), naming the parameter on failure."""
    if isinstance(value, Relation):
        return value
    if not isinstance(value, str):
        raise TypeError(f"`relation` must be 'add-remove' or 'replace', got {value!r}")
    try:
        return Relation(value)
    except ValueError:
        raise ValueError(f"`relation` must be 'add-remove' or 'replace', got {value!r}") from None


def approx_tradeoff(alpha, epsilon: float, delta: float) -> np.ndarray:
    """f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} (Kairouz et al. 2015), vectorized."""
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    e = math.exp(epsilon) if epsilon < 700 else math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        first = 1.0 - delta - np.where(alpha > 0, e * alpha, 0.0)
    second = (1.0 - delta - alpha) / e
    return np.maximum(0.0, np.maximum(first, second))


def _approx_delta_at(epsilon_prime, epsilon: float, delta: float) -> np.ndarray:
    epsilon_prime = np.asarray(epsilon_prime, dtype=np.float64)
    # 1 − (1−δ)(1 + e^{ε'})/(1 + e^ε), written with exp of differences to avoid overflow.
    ratio = np.exp(-np.logaddexp(0.0, epsilon)) * (1.0 + np.exp(np.minimum(epsilon_prime, 700.0)))
    return np.maximum(delta, 1.0 - (1.0 - delta) * ratio)


def _approx_epsilon_at(delta_prime: float, epsilon: float, delta: float) -> float:
    if delta_prime < delta:
        return math.inf
    if delta_prime >= 1.0:
        return 0.0
    # e^{ε'} = (1 − δ')(1 + e^ε)/(1 − δ) − 1
    log_value = math.log1p(-delta_prime) + np.logaddexp(0.0, epsilon) - math.log1p(-delta)
    value = math.expm1(log_value) if log_value < 700 else math.inf
    return max(0.0, math.log(value)) if value > 0 else 0.0


class Claim(abc.ABC):
    """What the audit engine needs from a claim, whatever privacy notion states it.

    Attributes every claim has: ``relation`` (:class:`Relation`), ``epsilon`` and ``delta`` (the
    headline (ε, δ) point the report states: δ = ``reference_delta``, ε = ``epsilon_at(δ)``) and
    ``reference_delta``.  Methods: :meth:`tradeoff` (the claimed lower bound on every neighbour
    pair's trade-off curve, symmetric f = f⁻¹), :meth:`delta_at` (implied profile),
    :meth:`epsilon_at` (implied ε(δ)) and :meth:`to_dict`.  A certified point strictly below
    ``tradeoff`` refutes the claim.
    """

    relation: "Relation"

    @abc.abstractmethod
    def tradeoff(self, alpha) -> np.ndarray:
        """Claimed lower bound on every neighbour pair's trade-off curve."""

    @abc.abstractmethod
    def delta_at(self, epsilon) -> np.ndarray:
        """The largest δ the claim allows at ε' (its implied privacy profile)."""

    @abc.abstractmethod
    def epsilon_at(self, delta: float) -> float:
        """The largest ε the claim allows at δ'."""

    @abc.abstractmethod
    def to_dict(self) -> dict:
        """JSON-able description; :func:`claim_from_dict` inverts it."""


@dataclass(frozen=True)
class ApproxDP(Claim):
    """(ε, δ)-differential privacy under ``relation`` (Dwork & Roth 2014, Def. 2.4)."""

    epsilon: float
    delta: float
    relation: Relation = Relation.ADD_REMOVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_finite_positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        object.__setattr__(self, "relation", as_relation(self.relation))

    def tradeoff(self, alpha) -> np.ndarray:
        """The claimed lower bound f_{ε,δ}(α) on every neighbour pair's trade-off curve."""
        return approx_tradeoff(alpha, self.epsilon, self.delta)

    def delta_at(self, epsilon) -> np.ndarray:
        """The largest δ the claim allows at ε' (its implied privacy profile)."""
        return _approx_delta_at(epsilon, self.epsilon, self.delta)

    def epsilon_at(self, delta: float) -> float:
        """The largest ε the claim allows at δ' (``inf`` for δ' < δ)."""
        return _approx_epsilon_at(delta, self.epsilon, self.delta)

    @property
    def reference_delta(self) -> float:
        """The δ at which reports state their headline ε bound."""
        return self.delta

    def __str__(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "approx-dp", "epsilon": self.epsilon, "delta": self.delta,
                "relation": self.relation.value}


@dataclass(frozen=True)
class PureDP(Claim):
    """Pure ε-differential privacy under ``relation`` (δ = 0)."""

    epsilon: float
    relation: Relation = Relation.ADD_REMOVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_finite_positive("epsilon", self.epsilon))
        object.__setattr__(self, "relation", as_relation(self.relation))

    @property
    def delta(self) -> float:
        return 0.0

    def tradeoff(self, alpha) -> np.ndarray:
        """f_{ε,0}(α) = max{0, 1 − e^ε α, e^{−ε}(1 − α)}."""
        return approx_tradeoff(alpha, self.epsilon, 0.0)

    def delta_at(self, epsilon) -> np.ndarray:
        return _approx_delta_at(epsilon, self.epsilon, 0.0)

    def epsilon_at(self, delta: float) -> float:
        return _approx_epsilon_at(delta, self.epsilon, 0.0)

    @property
    def reference_delta(self) -> float:
        return 0.0

    def __str__(self) -> str:
        return f"{self.epsilon:g}-DP [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "pure-dp", "epsilon": self.epsilon, "relation": self.relation.value}


@dataclass(frozen=True)
class GaussianDP(Claim):
    """μ-Gaussian differential privacy under ``relation`` (Dong, Roth & Su 2022): T ≥ G_μ.

    Reports state the headline ε bound of a GDP claim at ``reference_delta`` = 1e-5.
    """

    mu: float
    relation: Relation = Relation.ADD_REMOVE

    reference_delta = 1e-5

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_finite_positive("mu", self.mu))
        object.__setattr__(self, "relation", as_relation(self.relation))

    @property
    def epsilon(self) -> float:
        """The ε this claim implies at ``reference_delta``."""
        return gdp_epsilon(self.reference_delta, self.mu)

    @property
    def delta(self) -> float:
        return self.reference_delta

    def tradeoff(self, alpha) -> np.ndarray:
        return gdp_tradeoff(alpha, self.mu)

    def delta_at(self, epsilon) -> np.ndarray:
        return gdp_delta(np.maximum(np.asarray(epsilon, dtype=np.float64), 0.0), self.mu)

    def epsilon_at(self, delta: float) -> float:
        if delta <= 0:
            return math.inf
        if delta >= 1:
            return 0.0
        return gdp_epsilon(delta, self.mu)

    def __str__(self) -> str:
        return f"{self.mu:g}-GDP [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "gdp", "mu": self.mu, "relation": self.relation.value}


#: Headline δ of claims stated as a curve (zCDP, Rényi DP, privacy profiles), as for GDP.
DEFAULT_REFERENCE_DELTA = 1e-5
#: The trade-off grid of a profile-based claim reaches ε(TRADEOFF_GRID_DELTA) (capped at
#: TRADEOFF_GRID_MAX_EPSILON): beyond it e^ε α terms matter only for α below ~1e-12.
TRADEOFF_GRID_DELTA = 1e-12
TRADEOFF_GRID_MAX_EPSILON = 60.0


class _ProfileBased(Claim):
    """A claim known through its implied privacy profile δ_c(ε); everything else follows from it.

    * ``epsilon_at(δ')`` = inf{ε : δ_c(ε) ≤ δ'}, rounded up (:func:`~mechanisms.conversions.profile_epsilon`);
    * ``tradeoff(α)`` = sup over a grid of ε of f_{ε, δ_c(ε)}(α), which lies on or *below* the curve
      the profile implies (:func:`~mechanisms.conversions.profile_tradeoff`): the grid errs toward
      the claim, so a violation is only declared where the claim itself is contradicted.
    """

    reference_delta: float

    @functools.cached_property
    def epsilon(self) -> float:
        """The ε this claim implies at ``reference_delta`` (computed once)."""
        return self.epsilon_at(self.reference_delta)

    @property
    def delta(self) -> float:
        return self.reference_delta

    def epsilon_at(self, delta: float) -> float:
        if delta <= 0:
            return math.inf
        return profile_epsilon(float(delta), self.delta_at, 1.0)

    @functools.cached_property
    def _grid(self) -> tuple[np.ndarray, np.ndarray]:
        upper = min(self.epsilon_at(TRADEOFF_GRID_DELTA), TRADEOFF_GRID_MAX_EPSILON)
        epsilons = epsilon_grid(upper if math.isfinite(upper) else TRADEOFF_GRID_MAX_EPSILON)
        return epsilons, np.asarray(self.delta_at(epsilons), dtype=np.float64)

    def tradeoff(self, alpha) -> np.ndarray:
        """sup over the ε grid of f_{ε, δ_c(ε)}(α): a lower bound on the implied curve (see class)."""
        return profile_tradeoff(alpha, *self._grid)


def _reference_delta(value: Any) -> float:
    return check_open_unit("reference_delta", value)


@dataclass(frozen=True)
class ZCDP(_ProfileBased):
    """ρ-zero-concentrated DP (Bun & Steinke 2016): D_α(M(D)‖M(D')) ≤ ρα for all α > 1.

    Checked through its (ε, δ) profile δ(ε) = inf_α exp((α − 1)(αρ − ε))(1 − 1/α)^{α−1}/α
    (Canonne, Kamath & Steinke 2020, Proposition 12), minimised over a fixed grid of orders
    (valid for every order; the grid can only make δ larger, toward the claim).
    """

    rho: float
    relation: Relation = Relation.ADD_REMOVE
    reference_delta: float = DEFAULT_REFERENCE_DELTA

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_finite_positive("rho", self.rho))
        object.__setattr__(self, "relation", as_relation(self.relation))
        object.__setattr__(self, "reference_delta", _reference_delta(self.reference_delta))

    def delta_at(self, epsilon) -> np.ndarray:
        return zcdp_to_delta(np.maximum(np.asarray(epsilon, dtype=np.float64), 0.0), self.rho)

    def __str__(self) -> str:
        return f"{self.rho:g}-zCDP [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "zcdp", "rho": self.rho, "relation": self.relation.value,
                "reference_delta": self.reference_delta}


def _float_tuple(name: str, values: Any) -> tuple[float, ...]:
    array = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"`{name}` must be a non-empty sequence of numbers, got {values!r}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"`{name}` must be finite, got {values!r}")
    return tuple(float(v) for v in array)


@dataclass(frozen=True)
class RenyiDP(_ProfileBased):
    """(α_i, ε_i)-Rényi DP for each given order (Mironov 2017), e.g. an RDP accountant's output.

    Checked through δ(ε) = min_i exp((α_i − 1)(ε_i − ε))(1 − 1/α_i)^{α_i−1}/α_i (Balle et al.
    2020, Theorem 21; the same bound as Canonne, Kamath & Steinke 2020, Proposition 12), valid
    for each order separately, hence for the minimum.
    """

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]
    relation: Relation = Relation.ADD_REMOVE
    reference_delta: float = DEFAULT_REFERENCE_DELTA

    def __post_init__(self) -> None:
        orders = _float_tuple("orders", self.orders)
        epsilons = _float_tuple("epsilons", self.epsilons)
        if len(orders) != len(epsilons):
            raise ValueError(f"`epsilons` must have one value per order ({len(orders)}), got "
                             f"{len(epsilons)} values")
        if min(orders) <= 1.0:
            raise ValueError(f"`orders` must all be > 1, got {min(orders)!r}")
        if min(epsilons) < 0.0:
            raise ValueError(f"`epsilons` must all be >= 0, got {min(epsilons)!r}")
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "epsilons", epsilons)
        object.__setattr__(self, "relation", as_relation(self.relation))
        object.__setattr__(self, "reference_delta", _reference_delta(self.reference_delta))

    def delta_at(self, epsilon) -> np.ndarray:
        epsilon = np.maximum(np.asarray(epsilon, dtype=np.float64), 0.0)
        return rdp_to_delta(epsilon, self.orders, self.epsilons)

    def __str__(self) -> str:
        if len(self.orders) == 1:
            return f"({self.orders[0]:g}, {self.epsilons[0]:g})-RDP [{self.relation}]"
        return f"RDP at {len(self.orders)} orders [{self.relation}]"

    def to_dict(self) -> dict:
        return {"type": "rdp", "orders": list(self.orders), "epsilons": list(self.epsilons),
                "relation": self.relation.value, "reference_delta": self.reference_delta}


#: Points of the tabulated profile :meth:`ProfileClaim.to_dict` stores.
_TABLE_POINTS = 200


def _step_profile(epsilons: tuple[float, ...], deltas: tuple[float, ...]) -> Callable:
    """δ(ε) = min{δ_i : ε_i ≤ ε} (1 below the first ε_i): implied by the table, since
    (ε_i, δ_i)-DP implies (ε, δ_i)-DP for every ε ≥ ε_i."""
    grid = np.asarray(epsilons)
    running = np.minimum.accumulate(np.asarray(deltas))

    def profile(epsilon):
        index = np.searchsorted(grid, np.asarray(epsilon, dtype=np.float64), side="right") - 1
        return np.where(index >= 0, running[np.maximum(index, 0)], 1.0)

    return profile


@dataclass(frozen=True)
class ProfileClaim(_ProfileBased):
    """A privacy profile claim: (ε, δ(ε))-DP for every ε ≥ 0, for a given function δ(ε).

    ``profile`` maps an array of ε ≥ 0 to δ ∈ [0, 1] (a scalar function is applied element by
    element).  Build one from an accountant with :meth:`from_dp_event` or from a table with
    :meth:`from_table`.  The report states the headline ε at ``reference_delta``.
    """

    profile: Callable[[np.ndarray], Any]
    relation: Relation = Relation.ADD_REMOVE
    reference_delta: float = DEFAULT_REFERENCE_DELTA
    label: str = "privacy profile"
    source: Optional[dict] = field(default=None, compare=False, repr=False)
    #: Optional δ ↦ inf{ε : δ(ε) ≤ δ} of the same profile (e.g. an accountant's own inverse),
    #: used by :meth:`epsilon_at` instead of bisection.
    inverse: Optional[Callable[[float], float]] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.profile):
            raise TypeError(f"`profile` must be a callable epsilon -> delta, got {self.profile!r}")
        object.__setattr__(self, "relation", as_relation(self.relation))
        object.__setattr__(self, "reference_delta", _reference_delta(self.reference_delta))
        probe = self._evaluate(np.array([0.0, 1.0, 10.0]))
        if probe.shape != (3,) or np.isnan(probe).any() or probe.min() < 0 or probe.max() > 1:
            raise ValueError(f"`profile` must return deltas in [0, 1], got {probe!r} at epsilon = 0, 1, 10")

    def epsilon_at(self, delta: float) -> float:
        if self.inverse is None or delta <= 0 or delta >= 1:
            return super().epsilon_at(delta)
        return max(0.0, float(self.inverse(float(delta))))

    def delta_at(self, epsilon) -> np.ndarray:
        return np.clip(self._evaluate(np.maximum(np.asarray(epsilon, dtype=np.float64), 0.0)), 0.0, 1.0)

    def _evaluate(self, epsilon: np.ndarray) -> np.ndarray:
        try:
            values = np.asarray(self.profile(epsilon), dtype=np.float64)
            if values.shape != epsilon.shape:
                raise ValueError
        except (TypeError, ValueError):  # a scalar function
            values = np.array([float(self.profile(float(e))) for e in epsilon.ravel()]).reshape(epsilon.shape)
        return values

    @classmethod
    def from_table(cls, epsilons, deltas, relation: Any = "add-remove", *,
                   reference_delta: float = DEFAULT_REFERENCE_DELTA, label: str = "tabulated profile"):
        """A claim stating (ε_i, δ_i)-DP for each row; between rows the step function
        :func:`_step_profile` (what the rows imply, nothing more)."""
        epsilons = _float_tuple("epsilons", epsilons)
        deltas = _float_tuple("deltas", deltas)
        if len(epsilons) != len(deltas):
            raise ValueError(f"`deltas` must have one value per epsilon ({len(epsilons)}), got {len(deltas)}")
        if min(epsilons) < 0 or np.any(np.diff(epsilons) <= 0):
            raise ValueError(f"`epsilons` must be >= 0 and strictly increasing, got {list(epsilons)!r}")
        if min(deltas) < 0 or max(deltas) > 1:
            raise ValueError(f"`deltas` must lie in [0, 1], got {list(deltas)!r}")
        source = {"epsilons": list(epsilons), "deltas": list(deltas)}
        return cls(_step_profile(epsilons, deltas), relation, reference_delta, label, source)

    @classmethod
    def from_dp_event(cls, event: Any, relation: Any = "add-remove", *,
                      reference_delta: float = DEFAULT_REFERENCE_DELTA,
                      value_discretization_interval: float = 1e-4):
        """The profile dp-accounting's PLD accountant computes for ``event`` (a ``DpEvent``).

        The accountant's estimate is pessimistic (an upper bound on the event's true δ(ε)), so
        the claim is at most as strong as the event's exact privacy.
        """
        try:
            import dp_accounting
            from dp_accounting.pld import pld_privacy_accountant
        except ImportError as exc:  # pragma: no cover - dp-accounting is in the test extra
            raise ImportError("ProfileClaim.from_dp_event needs dp-accounting "
                              "(pip install 'dpaudit[accounting]')") from exc
        if not isinstance(event, dp_accounting.DpEvent):
            raise TypeError(f"`event` must be a dp_accounting.DpEvent, got {event!r}")
        relation = as_relation(relation)
        neighbours = (dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
                      if relation is Relation.ADD_REMOVE else dp_accounting.NeighboringRelation.REPLACE_ONE)
        accountant = pld_privacy_accountant.PLDAccountant(
            neighbours, value_discretization_interval=check_finite_positive(
                "value_discretization_interval", value_discretization_interval))
        if not accountant.supports(event):
            raise ValueError(f"`event` is not supported by dp-accounting's PLD accountant under "
                             f"{relation.value}, got {event!r}")
        accountant.compose(event)
        # The composed PLD evaluates a whole array in one call (~0.3 ms per ε instead of ~9 ms per
        # get_delta call); dp-accounting 0.6 keeps it in the private `_pld`, so fall back if absent.
        pld = getattr(accountant, "_pld", None)

        def profile(epsilon):
            flat = np.ravel(np.asarray(epsilon, dtype=np.float64))
            if pld is not None:
                values = np.asarray(pld.get_delta_for_epsilon(flat.tolist()), dtype=np.float64)
            else:
                values = np.array([accountant.get_delta(float(e)) for e in flat])
            return values.reshape(np.shape(epsilon))

        return cls(profile, relation, reference_delta, f"PLD profile of {event}", {"dp_event": str(event)},
                   inverse=accountant.get_epsilon)

    def __str__(self) -> str:
        return f"{self.label} [{self.relation}]"

    def to_dict(self) -> dict:
        """Type, label, relation and the profile tabulated (a table claim's own rows, else 200 ε),
        enough to rebuild a conservative step-function claim with :func:`claim_from_dict`."""
        if self.source is not None and "deltas" in self.source:
            return {"type": "profile", "label": self.label, "relation": self.relation.value,
                    "reference_delta": self.reference_delta, **self.source}
        upper = min(self.epsilon_at(TRADEOFF_GRID_DELTA), TRADEOFF_GRID_MAX_EPSILON)
        upper = upper if math.isfinite(upper) and upper > 0 else TRADEOFF_GRID_MAX_EPSILON
        grid = np.linspace(0.0, upper, _TABLE_POINTS)
        return {"type": "profile", "label": self.label, "relation": self.relation.value,
                "reference_delta": self.reference_delta, "source": self.source,
                "epsilons": grid.tolist(), "deltas": self.delta_at(grid).tolist()}


def claim_from_dict(data: dict) -> Claim:
    """Inverse of ``Claim.to_dict`` (a profile claim comes back as its tabulated step function)."""
    kind = data.get("type")
    relation = data.get("relation", "add-remove")
    reference = data.get("reference_delta", DEFAULT_REFERENCE_DELTA)
    if kind == "approx-dp":
        return ApproxDP(data["epsilon"], data["delta"], relation)
    if kind == "pure-dp":
        return PureDP(data["epsilon"], relation)
    if kind == "gdp":
        return GaussianDP(data["mu"], relation)
    if kind == "zcdp":
        return ZCDP(data["rho"], relation, reference)
    if kind == "rdp":
        return RenyiDP(data["orders"], data["epsilons"], relation, reference)
    if kind == "profile":
        return ProfileClaim.from_table(data["epsilons"], data["deltas"], relation,
                                       reference_delta=reference, label=data.get("label", "privacy profile"))
    raise ValueError(f"claim `type` must be 'approx-dp', 'pure-dp', 'gdp', 'zcdp', 'rdp' or "
                     f"'profile', got {kind!r}")
