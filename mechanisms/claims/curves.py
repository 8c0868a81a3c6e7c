"""Claims stated as a curve: ρ-zCDP, Rényi DP at given orders, and a privacy profile δ(ε).

Each is known through its implied privacy profile δ_c(ε) (:mod:`mechanisms.conversions`), from
which its ε(δ) and a trade-off curve on or below the one it implies follow.  Reports state their
headline ε at ``reference_delta`` (default 1e-5, as for GDP claims).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import numpy as np

from ..validation import check_finite_positive, check_open_unit
from ..conversions import epsilon_grid, profile_epsilon, profile_tradeoff, rdp_to_delta, zcdp_to_delta
from .base import Claim, Relation, _check_keys, _number_or_numbers, as_relation

__all__ = ["DEFAULT_REFERENCE_DELTA", "ZCDP", "RenyiDP", "ProfileClaim"]

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

    kind = "zcdp"
    config_keys = ("rho", "reference_delta")
    required_keys = ("rho",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_finite_positive("rho", self.rho))
        object.__setattr__(self, "relation", as_relation(self.relation))
        object.__setattr__(self, "reference_delta", _reference_delta(self.reference_delta))

    def delta_at(self, epsilon) -> np.ndarray:
        return zcdp_to_delta(np.maximum(np.asarray(epsilon, dtype=np.float64), 0.0), self.rho)

    @property
    def label(self) -> str:
        return f"{self.rho:g}-zCDP"

    def to_dict(self) -> dict:
        return {"type": self.kind, "rho": self.rho, "relation": self.relation.value,
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

    kind = "rdp"
    config_keys = ("orders", "epsilons", "reference_delta")
    required_keys = ("orders", "epsilons")

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

    @property
    def label(self) -> str:
        if len(self.orders) == 1:
            return f"({self.orders[0]:g}, {self.epsilons[0]:g})-RDP"
        return f"RDP at {len(self.orders)} orders"

    def to_dict(self) -> dict:
        return {"type": self.kind, "orders": list(self.orders), "epsilons": list(self.epsilons),
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
    :meth:`from_table`.  The report states the headline ε at ``reference_delta``.  Its scenario-file
    table gives ``epsilons`` and ``deltas``, or ``callable = "module:attribute"`` naming a δ(ε)
    function or a dp-accounting ``DpEvent``.
    """

    profile: Callable[[np.ndarray], Any]
    relation: Relation = Relation.ADD_REMOVE
    reference_delta: float = DEFAULT_REFERENCE_DELTA
    label: str = "privacy profile"
    source: Optional[dict] = field(default=None, compare=False, repr=False)
    #: Optional δ ↦ inf{ε : δ(ε) ≤ δ} of the same profile (e.g. an accountant's own inverse),
    #: used by :meth:`epsilon_at` instead of bisection.
    inverse: Optional[Callable[[float], float]] = field(default=None, compare=False, repr=False)

    kind = "profile"
    config_keys = ("epsilons", "deltas", "callable", "reference_delta", "label")

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

    @classmethod
    def from_config(cls, table: Mapping[str, Any], relation: Any, *,
                    load_object: Optional[Callable[[str, str], Any]] = None) -> "ProfileClaim":
        """``epsilons`` and ``deltas`` of a table, or ``callable = "module:attribute"`` naming a
        δ(ε) function or a dp-accounting ``DpEvent`` (imported with ``load_object``); both take an
        optional ``reference_delta`` (and a table an optional ``label``)."""
        _check_keys(cls, table)
        options = {}
        if "reference_delta" in table:
            options["reference_delta"] = _number_or_numbers("reference_delta", table["reference_delta"])
        if "callable" in table:
            if "epsilons" in table or "deltas" in table:
                raise ValueError(f"`callable` cannot be given together with `epsilons`/`deltas`, "
                                 f"got {table['callable']!r}")
            if load_object is None:
                raise ValueError(f"`callable` names code to import, which only a scenario file may do, "
                                 f"got {table['callable']!r}")
            target = load_object("callable", table["callable"])
            if type(target).__module__.startswith("dp_accounting"):
                return cls.from_dp_event(target, relation, **options)
            return cls(target, relation, label=f"profile {table['callable']}", **options)
        for key in ("epsilons", "deltas"):
            if key not in table:
                raise ValueError(f"`{key}` is missing (required by a profile claim)")
        if "label" in table:
            options["label"] = table["label"]
        return cls.from_table(_number_or_numbers("epsilons", table["epsilons"]),
                              _number_or_numbers("deltas", table["deltas"]), relation, **options)

    def to_dict(self) -> dict:
        """Type, label, relation and the profile tabulated (a table claim's own rows, else 200 ε),
        enough to rebuild a conservative step-function claim with :func:`claim_from_dict`."""
        if self.source is not None and "deltas" in self.source:
            return {"type": self.kind, "label": self.label, "relation": self.relation.value,
                    "reference_delta": self.reference_delta, **self.source}
        upper = min(self.epsilon_at(TRADEOFF_GRID_DELTA), TRADEOFF_GRID_MAX_EPSILON)
        upper = upper if math.isfinite(upper) and upper > 0 else TRADEOFF_GRID_MAX_EPSILON
        grid = np.linspace(0.0, upper, _TABLE_POINTS)
        return {"type": self.kind, "label": self.label, "relation": self.relation.value,
                "reference_delta": self.reference_delta, "source": self.source,
                "epsilons": grid.tolist(), "deltas": self.delta_at(grid).tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ProfileClaim":
        """A profile claim's dict comes back as its tabulated step function (what the table implies)."""
        return cls.from_table(data["epsilons"], data["deltas"], data.get("relation", "add-remove"),
                              reference_delta=data.get("reference_delta", DEFAULT_REFERENCE_DELTA),
                              label=data.get("label", "privacy profile"))
