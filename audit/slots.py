"""Slots: which quantity an event is chosen and certified for, and where it is evaluated.

Every chosen event serves one *slot* (:mod:`audit.selection`): a privacy quantity at a fixed
point of the claim's profile,

* ε at δ: the smallest ε such that the pair is (ε, δ)-indistinguishable;
* δ at ε: the smallest δ such that it is (ε, δ)-indistinguishable;
* μ: the smallest μ such that its trade-off curve lies above G_μ (μ-GDP, Dong, Roth & Su 2022,
  "Gaussian differential privacy", JRSS-B);
* the trade-off band: points (α, β) of the curve itself, compared with the whole claimed curve.

Each is a functional of a certified point (α_hi, β_hi) (docs/ground-truth.md §3;
:mod:`audit.bounds`).  A :class:`Slot` is the typed name of one; its :attr:`~Slot.key` (for
example ``"epsilon@1e-05"``) is the stable string of reports and their evidence, and
:meth:`Slot.parse` the only place that reads one back.

The *headline* slots of a claim (:func:`headline_slots`) are the quantities its verdict turns on:
ε at the claim's δ, δ at its ε and μ for (ε, δ), pure and profile claims; μ alone for a μ-GDP
claim.  The *curve* slots (:func:`curve_slots`) are those of the reported ε(δ) curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from numbers import Real
from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["Quantity", "Slot", "MU", "TRADEOFF", "states_mu", "headline_slots", "curve_slots"]


class Quantity(Enum):
    """The quantity of a slot; its value is the first part of the slot's key."""

    EPSILON = "epsilon"  # ε at a δ
    DELTA = "delta"  # δ at an ε
    MU = "mu"  # μ of Gaussian DP
    TRADEOFF = "tradeoff"  # the trade-off band

    @property
    def symbol(self) -> str:
        return _SYMBOLS[self]


_SYMBOLS = {Quantity.EPSILON: "ε", Quantity.DELTA: "δ", Quantity.MU: "μ", Quantity.TRADEOFF: "trade-off band"}
#: The quantities evaluated at a point of the claim's profile, and the symbol of that point.
_EVALUATED_AT = {Quantity.EPSILON: Quantity.DELTA, Quantity.DELTA: Quantity.EPSILON}


@dataclass(frozen=True)
class Slot:
    """A quantity and where it is evaluated: ``at`` is the δ of ε at δ, the ε of δ at ε, and
    None for μ and the trade-off band.

    Frozen and hashable; two slots are equal exactly when their keys are.  Build one with
    :meth:`epsilon_at`, :meth:`delta_at`, :data:`MU`, :data:`TRADEOFF` or :meth:`parse`.
    """

    quantity: Quantity
    at: Optional[float] = None

    def __post_init__(self) -> None:
        if not isinstance(self.quantity, Quantity):
            raise TypeError(f"`quantity` must be an audit.slots.Quantity, got {self.quantity!r}")
        if self.quantity not in _EVALUATED_AT:
            if self.at is not None:
                raise ValueError(f"`at` must be None for the {self.quantity.value} slot, got {self.at!r}")
            return
        at = self.at
        if isinstance(at, bool) or not isinstance(at, Real):
            raise TypeError(f"`at` must be a number for the {self.quantity.value} slot, got {at!r}")
        at = float(at) + 0.0  # a plain float; -0.0 becomes 0.0, so equal slots have equal keys
        if math.isnan(at) or at < 0.0 or (self.quantity is Quantity.EPSILON and at > 1.0):
            where = "a δ in [0, 1]" if self.quantity is Quantity.EPSILON else "an ε >= 0"
            raise ValueError(f"`at` must be {where} for the {self.quantity.value} slot, got {self.at!r}")
        object.__setattr__(self, "at", at)

    @classmethod
    def epsilon_at(cls, delta: float) -> "Slot":
        """The slot of ε at δ = ``delta``."""
        return cls(Quantity.EPSILON, delta)

    @classmethod
    def delta_at(cls, epsilon: float) -> "Slot":
        """The slot of δ at ε = ``epsilon``."""
        return cls(Quantity.DELTA, epsilon)

    @property
    def key(self) -> str:
        """The stable string of reports: ``"epsilon@<δ>"``, ``"delta@<ε>"`` (the
        number as Python's shortest round-tripping ``repr`` of a float, e.g. ``"epsilon@1e-05"``),
        ``"mu"`` or ``"tradeoff"``."""
        if self.at is None:
            return self.quantity.value
        return f"{self.quantity.value}@{self.at!r}"

    @classmethod
    def parse(cls, key: str) -> "Slot":
        """The slot whose :attr:`key` is ``key`` (from a saved report); ``Slot.parse(s.key) == s``."""
        if not isinstance(key, str):
            raise TypeError(f"`key` must be a slot key string, got {key!r}")
        name, separator, at = key.partition("@")
        try:
            quantity = Quantity(name)
            if (quantity in _EVALUATED_AT) != bool(separator):
                raise ValueError(key)
            return cls(quantity, float(at)) if separator else cls(quantity)
        except (TypeError, ValueError):
            raise ValueError(f"`key` must be 'epsilon@<delta>', 'delta@<epsilon>', 'mu' or 'tradeoff', "
                             f"got {key!r}") from None

    @property
    def label(self) -> str:
        """The slot for people, its point rounded to 4 significant digits: "ε at δ = 1e-05",
        "δ at ε = 0.0897", "μ", "trade-off band"."""
        if self.at is None:
            return self.quantity.symbol
        return f"{self.quantity.symbol} at {_EVALUATED_AT[self.quantity].symbol} = {self.at:.4g}"

    @property
    def headline(self) -> bool:
        """Whether the slot is a single quantity a headline event can certify (not the band)."""
        return self.quantity is not Quantity.TRADEOFF

    def allowed_by(self, claim: Any) -> Optional[float]:
        """The largest value of the slot's quantity ``claim`` allows; None where no single value
        is claimed (μ of a claim that states none: μ cannot refute an (ε, δ) claim; the band,
        compared with the whole claimed curve).

        If the claim holds, every event's quantity is at most this: the mechanism is then
        (ε(δ), δ)-DP and (ε, δ(ε))-DP for the claim's own profile, and μ-GDP for a μ-GDP claim."""
        if self.quantity is Quantity.EPSILON:
            return float(claim.epsilon_at(self.at))
        if self.quantity is Quantity.DELTA:
            return float(np.asarray(claim.delta_at(self.at)))
        if self.quantity is Quantity.MU and states_mu(claim):
            return float(claim.gaussian_mu)
        return None

    def __str__(self) -> str:
        return self.key


#: The μ slot and the trade-off band's slot (neither is evaluated anywhere in particular).
MU = Slot(Quantity.MU)
TRADEOFF = Slot(Quantity.TRADEOFF)


def states_mu(claim: Any) -> bool:
    """Whether ``claim`` states a μ (a μ-GDP claim, :attr:`mechanisms.claims.Claim.gaussian_mu`):
    then μ is its only headline slot and the only slot with a claimed value that is not derived
    from its privacy profile."""
    return claim.gaussian_mu is not None


def headline_slots(claim: Any) -> tuple[Slot, ...]:
    """The quantities a claim's verdict turns on, the claim's own first: μ for a μ-GDP claim;
    otherwise ε at its δ, δ at its ε, and μ."""
    if states_mu(claim):
        return (MU,)
    return (Slot.epsilon_at(claim.reference_delta), Slot.delta_at(claim.epsilon), MU)


def curve_slots(claim: Any, deltas: Sequence[float]) -> tuple[Slot, ...]:
    """The point slots of a pair's curves: ε at each δ of ``deltas`` (the ε(δ) curve), δ at the
    claim's ε, and μ (the trade-off band is :data:`TRADEOFF`)."""
    return tuple(Slot.epsilon_at(delta) for delta in deltas) + (Slot.delta_at(claim.epsilon), MU)
