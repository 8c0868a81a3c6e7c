"""Scoring events for choosing: how much of a claim an event, a statistic or a pair appears to use.

Choosing (events in :mod:`audit.selection`, the ``"auto"`` statistic in
:mod:`audit.statistics.fit`, pairs in :mod:`audit.search`) scores threshold events {T ≥ t} of a
1-D statistic T the way the audit will certify them.  An event with ``count_a`` of ``n_a`` draws
on the side it is more likely under and ``count_b`` of ``n_b`` on the other gives the pessimistic
point

    (α_hi, β_hi) = (B_hi(count_b), 1 − A_lo(count_a)),

one-sided Clopper–Pearson bounds at a fixed level (Clopper & Pearson 1934), and a slot's quantity
is its functional at that point (ε, δ or μ; docs/ground-truth.md §3, :mod:`audit.bounds`).
Pessimistic points rather than point estimates keep a rare event (an output never seen on one
side) from scoring infinite on a handful of draws.  Every event is scored in both orientations:
0, more likely under the neighbour (A = neighbour, B = base), and 1, more likely under the base.

Nothing here is certified: the numbers only choose what the audit certifies on fresh draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any, Optional

import numpy as np

from .intervals import cp_for_choosing, cp_lower, cp_upper
from .joint_bounds import slot_quantity
from .slots import Quantity, Slot, headline_slots

__all__ = ["choosing_points", "Spacing", "ThresholdEvents", "threshold_events", "slot_values",
           "ClaimUsage", "claim_usage"]

#: Draws per side up to which :func:`choosing_points` with ``exact=True`` tabulates the exact
#: bounds of every count once per process (per threshold they were 75% of a search candidate's time).
_TABLE_LIMIT = 200_000


@lru_cache(maxsize=4)
def _cp_table(n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    counts = np.arange(n + 1)
    return cp_upper(counts, n, level), cp_lower(counts, n, level)


def _exact_upper(k: np.ndarray, n: int, level: float) -> np.ndarray:
    return _cp_table(n, level)[0][k] if n <= _TABLE_LIMIT else cp_upper(k, n, level)


def _exact_lower(k: np.ndarray, n: int, level: float) -> np.ndarray:
    return _cp_table(n, level)[1][k] if n <= _TABLE_LIMIT else cp_lower(k, n, level)


def choosing_points(count_a, n_a: int, count_b, n_b: int, level: float, *,
                    exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(α_hi, β_hi) = (B_hi(count_b), 1 − A_lo(count_a)) for arrays of counts: ``count_a`` of
    ``n_a`` draws on the side the events are more likely under, ``count_b`` of ``n_b`` on the other.

    The one-sided Clopper–Pearson bounds at ``level`` are interpolated between exact ones
    (:func:`~audit.intervals.cp_for_choosing`, within 1e-4 of them relative to min(b, 1 − b)), or
    exact with ``exact=True`` (tabulated per ``n`` up to 200,000 draws)."""
    if exact:
        return _exact_upper(count_b, n_b, level), 1.0 - _exact_lower(count_a, n_a, level)
    return cp_for_choosing(cp_upper, count_b, n_b, level), 1.0 - cp_for_choosing(cp_lower, count_a, n_a, level)


class Spacing(Enum):
    """Which thresholds stand for the distinct values of T when there are more than ``limit``."""

    #: ``limit`` distinct values at evenly spaced ranks, plus each side's smallest and largest
    #: value and the distinct value just above each (the events that separate the sides
    #: completely); the pair search's rule.
    RANKS = "ranks"
    #: ``limit`` quantiles of the distinct values (``np.quantile``'s linear rule), which need not
    #: be values of T; the ``"auto"`` statistic's rule.
    QUANTILES = "quantiles"


@dataclass(frozen=True)
class ThresholdEvents:
    """Threshold events {T ≥ t} of a 1-D statistic on a sample of each dataset of a pair:
    per threshold, how many base and neighbour draws fall into the event."""

    thresholds: np.ndarray
    base: np.ndarray
    neighbour: np.ndarray
    n_base: int
    n_neighbour: int

    def points(self, level: float, *, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(α_hi, β_hi) of every event in both orientations (:func:`choosing_points`), each of
        shape (2, thresholds): row 0 for the events as more likely under the neighbour, row 1
        under the base."""
        alpha_0, beta_0 = choosing_points(self.neighbour, self.n_neighbour, self.base, self.n_base, level, exact=exact)
        alpha_1, beta_1 = choosing_points(self.base, self.n_base, self.neighbour, self.n_neighbour, level, exact=exact)
        return np.stack([alpha_0, alpha_1]), np.stack([beta_0, beta_1])


def threshold_events(base_scores: np.ndarray, neighbour_scores: np.ndarray, *, limit: int,
                     spacing: Spacing) -> ThresholdEvents:
    """The threshold events of a statistic's values on the draws of the base and the neighbour.

    The thresholds are the distinct values of both samples pooled, or about ``limit`` of them
    chosen by ``spacing`` when there are more.  The smallest value's event holds for every draw (it scores
    0 whatever the claim) and is kept, so a constant statistic still has one event.
    """
    base, neighbour = np.sort(base_scores), np.sort(neighbour_scores)
    pooled = np.concatenate([base, neighbour])
    pooled.sort(kind="stable")  # two sorted runs: merged in linear time
    pooled = pooled[np.concatenate([[True], pooled[1:] != pooled[:-1]])]
    if pooled.size > limit and spacing is Spacing.RANKS:
        grid = pooled[np.linspace(0, pooled.size - 1, limit).astype(np.int64)]
        extremes = np.array([base[-1], neighbour[-1], base[0], neighbour[0]])
        after = np.searchsorted(pooled, extremes, side="right")
        pooled = np.unique(np.concatenate([grid, extremes, pooled[after[after < pooled.size]]]))
    elif pooled.size > limit:
        pooled = np.unique(np.interp(np.linspace(0.0, pooled.size - 1, limit), np.arange(pooled.size), pooled))
    return ThresholdEvents(pooled, base.size - np.searchsorted(base, pooled, side="left"),
                           neighbour.size - np.searchsorted(neighbour, pooled, side="left"),
                           base.size, neighbour.size)


def slot_values(slot: Slot, alpha_hi, beta_hi) -> np.ndarray:
    """The value of ``slot``'s quantity at the points (α_hi, β_hi): ε at its δ, δ at its ε or μ
    (:func:`audit.joint_bounds.slot_quantity`; docs/ground-truth.md §3)."""
    return slot_quantity(slot).value(alpha_hi, beta_hi)


@dataclass(frozen=True)
class ClaimUsage:
    """How much of a claim the best events use (estimates, never certified).

    ``estimates[i]`` is the largest value over the events of the quantity of
    ``audit.slots.headline_slots(claim)[i]``; ``value`` the largest fraction of the claim any of
    them reaches: ε/ε_claim, δ/δ_claim, μ/μ_claim.  A value above 1 suggests a violation.
    """

    value: float
    estimates: tuple[float, ...]


def _claims_own(slot: Slot, claim: Any) -> Optional[float]:
    """The claim's own value of a headline slot's quantity at its headline point (ε_claim,
    δ_claim, μ_claim); None where a fraction of it says nothing: δ of a pure claim (δ_claim = 0;
    its ε at δ = 0 says the same) and μ of a claim that states no μ."""
    if slot.quantity is Quantity.EPSILON:
        return claim.epsilon
    if slot.quantity is Quantity.DELTA:
        return claim.delta if claim.delta > 0 else None
    return slot.allowed_by(claim)


def claim_usage(claim: Any, points: tuple[np.ndarray, np.ndarray]) -> ClaimUsage:
    """The largest fraction of ``claim`` one of the events at ``points`` = (α_hi, β_hi) uses,
    over the claim's headline slots (:func:`audit.slots.headline_slots`): each slot's quantity is
    maximised over the events and divided by the claim's own value of it."""
    alpha_hi, beta_hi = points
    estimates, fractions = [], []
    for slot in headline_slots(claim):
        estimate = float(slot_values(slot, alpha_hi, beta_hi).max())
        own = _claims_own(slot, claim)
        if own is not None:
            fractions.append(estimate / own)
        estimates.append(estimate)
    return ClaimUsage(max(fractions), tuple(estimates))
