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

A claim stated as a curve (ρ-zCDP, Rényi DP, a privacy profile: :func:`states_curve`) bounds
ε at every δ, so its usage also takes the largest ε/ε_claim(δ) over the δ grid of the reported
ε(δ) curve (:data:`PROFILE_DELTAS`): a mechanism can exceed such a claim away from its headline δ.

:func:`statistic_usage` is the score that ranks pairs (the search): the claim usage of a
statistic's threshold events on draws that did not fit it.  :func:`held_out_usage` is the same
score without the winner's curse, which ranks candidate statistics (``"auto"``): each quantity's
event is chosen on one half of the held-out draws and its usage measured on the other half, as the
audit itself chooses and certifies.  :func:`separation` ranks statistics whose signal is too weak
for any event to show a use of the claim on those draws: the standardised mean difference, with
the standard error of the difference between two statistics.

Nothing here is certified: the numbers only choose what the audit certifies on fresh draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
import math
from functools import lru_cache
from typing import Any, Optional

import numpy as np

from .intervals import cp_for_choosing, cp_lower, cp_upper
from .joint_bounds import slot_quantity
from .slots import Quantity, Slot, headline_slots

__all__ = ["choosing_points", "Spacing", "ThresholdEvents", "threshold_events", "slot_values",
           "ClaimUsage", "claim_usage", "states_curve", "PROFILE_DELTAS", "USAGE_LEVEL", "USAGE_THRESHOLDS",
           "statistic_usage", "held_out_usage", "UsageInterval", "Separation", "separation"]

#: The δ grid of a curve claim's usage: the grid of the reported ε(δ) curve (audit.selection.DELTA_GRID).
PROFILE_DELTAS = np.geomspace(1e-10, 0.5, 40)
#: One-sided Clopper–Pearson level of the pessimistic points that rank candidates (a ranking device:
#: the certified bounds come from the audit's own draws and levels).
USAGE_LEVEL = 0.05
#: Thresholds tried per statistic when it has more distinct values (Spacing.RANKS keeps the extremes).
USAGE_THRESHOLDS = 2048

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
    them reaches: ε/ε_claim, δ/δ_claim, μ/μ_claim, and for a curve claim also the largest
    ε(δ)/ε_claim(δ) over :data:`PROFILE_DELTAS` (``profile``; NaN for other claims).  A value above
    1 suggests a violation.
    """

    value: float
    estimates: tuple[float, ...]
    profile: float = math.nan


def _claims_own(slot: Slot, claim: Any) -> Optional[float]:
    """The claim's own value of a headline slot's quantity at its headline point (ε_claim,
    δ_claim, μ_claim); None where a fraction of it says nothing: δ of a pure claim (δ_claim = 0;
    its ε at δ = 0 says the same), μ of a claim that states no μ, and any quantity a claim states
    as 0 (a user's claim type whose headline ε is 0)."""
    if slot.quantity is Quantity.EPSILON:
        own = claim.epsilon
    elif slot.quantity is Quantity.DELTA:
        own = claim.delta
    else:
        own = slot.allowed_by(claim)
    return own if own is not None and own > 0 else None


def states_curve(claim: Any) -> bool:
    """Whether ``claim`` bounds ε below its reference δ — a whole curve (zCDP, Rényi DP, a privacy
    profile) rather than one (ε, δ) point (for which ε(δ) = ∞ below δ) or pure DP (reference δ 0);
    μ-GDP claims state μ instead (:func:`audit.slots.states_mu`)."""
    if claim.gaussian_mu is not None or not claim.reference_delta > 0:
        return False
    return math.isfinite(claim.epsilon_at(claim.reference_delta / 10.0))


def _claimed_profile(claim: Any) -> tuple[np.ndarray, np.ndarray]:
    """The δ of :data:`PROFILE_DELTAS` where the claim allows a finite, positive ε, and that ε."""
    try:
        return _cached_profile(claim)
    except TypeError:  # an unhashable claim (a profile given by an unhashable callable)
        return _claimed_profile_uncached(claim)


@lru_cache(maxsize=16)
def _cached_profile(claim: Any) -> tuple[np.ndarray, np.ndarray]:
    return _claimed_profile_uncached(claim)


def _claimed_profile_uncached(claim: Any) -> tuple[np.ndarray, np.ndarray]:
    allowed = np.array([claim.epsilon_at(float(d)) for d in PROFILE_DELTAS])
    keep = np.isfinite(allowed) & (allowed > 0)
    return PROFILE_DELTAS[keep], allowed[keep]


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
    profile = math.nan
    if states_curve(claim):
        deltas, allowed = _claimed_profile(claim)
        if deltas.size:
            profile = max(float(slot_values(Slot.epsilon_at(float(d)), alpha_hi, beta_hi).max()) / a
                          for d, a in zip(deltas, allowed))
            fractions.append(profile)
    return ClaimUsage(max(fractions) if fractions else math.nan, tuple(estimates), profile)


def statistic_usage(claim: Any, base_scores: np.ndarray, neighbour_scores: np.ndarray, *,
                    level: float = USAGE_LEVEL, limit: int = USAGE_THRESHOLDS, exact: bool = True) -> ClaimUsage:
    """How much of ``claim`` a statistic's threshold events use, from its scores on draws of both
    datasets that did not fit it: every event {T ≥ t} (at most ``limit`` thresholds,
    :attr:`Spacing.RANKS`, which keeps the events that separate the sides completely) in both
    orientations, at one-sided Clopper–Pearson points at ``level`` (:func:`claim_usage`; exact, or
    interpolated within 10⁻⁴ with ``exact=False``, :func:`choosing_points`)."""
    events = threshold_events(base_scores, neighbour_scores, limit=limit, spacing=Spacing.RANKS)
    return claim_usage(claim, events.points(level, exact=exact))


def _quantity_slots(claim: Any) -> list[tuple[Slot, Optional[float], bool]]:
    """(slot, the claim's value of it, whether it is a profile point) for every quantity a usage
    fraction is taken of: the headline slots with a claimed value, and a curve claim's ε(δ) grid."""
    slots = [(slot, _claims_own(slot, claim), False) for slot in headline_slots(claim)]
    if states_curve(claim):
        deltas, allowed = _claimed_profile(claim)
        slots += [(Slot.epsilon_at(float(d)), float(a), True) for d, a in zip(deltas, allowed)]
    return slots


@dataclass(frozen=True)
class UsageInterval:
    """How much of a claim a statistic uses, from held-out draws (:func:`held_out_usage`): the
    largest fraction at the pessimistic points (``lower``) and at the optimistic ones (``upper``),
    and the pessimistic value of each headline quantity (``estimates``, as in :class:`ClaimUsage`)."""

    lower: float
    upper: float
    estimates: tuple[float, ...]


def held_out_usage(claim: Any, base_scores: np.ndarray, neighbour_scores: np.ndarray, *,
                   level: float = USAGE_LEVEL, limit: int = USAGE_THRESHOLDS) -> UsageInterval:
    """:func:`statistic_usage` without the winner's curse, as an interval.  Each side's scores are
    split in halves (first and second, in the given order); for every quantity (:func:`claim_usage`)
    the event {T ≥ t} and orientation that use most of it on the first halves are chosen at
    pessimistic points at ``level``, and that one event is measured on the second halves: at its
    pessimistic points (α_hi, β_hi) and its optimistic ones (α_lo, β_lo) = (B_lo, 1 − A_hi), one-sided
    Clopper–Pearson bounds at ``level``.  Every quantity decreases in α and β, so with probability
    about 1 − 2·``level`` per quantity the event's true usage lies between ``lower`` and ``upper``;
    a statistic with no real signal has ``lower`` ≤ 0 except with probability about ``level`` per
    quantity, however many thresholds it has."""
    base_scores, neighbour_scores = np.asarray(base_scores), np.asarray(neighbour_scores)
    h0, h1 = base_scores.size // 2, neighbour_scores.size // 2
    first = threshold_events(base_scores[:h0], neighbour_scores[:h1], limit=limit, spacing=Spacing.RANKS)
    alpha, beta = first.points(level)
    second_base, second_neighbour = np.sort(base_scores[h0:]), np.sort(neighbour_scores[h1:])
    n0, n1 = second_base.size, second_neighbour.size
    estimates, lower, upper = [], [], []
    for slot, own, on_profile in _quantity_slots(claim):
        values = slot_values(slot, alpha, beta)
        orientation, index = np.unravel_index(int(np.argmax(values)), values.shape)
        t = first.thresholds[index]
        count0 = n0 - int(np.searchsorted(second_base, t, side="left"))
        count1 = n1 - int(np.searchsorted(second_neighbour, t, side="left"))
        # Orientation 0: more likely under the neighbour (A = neighbour, B = base); 1: the reverse.
        (count_a, n_a), (count_b, n_b) = ((count1, n1), (count0, n0)) if orientation == 0 else ((count0, n0), (count1, n1))
        pessimistic = slot_values(slot, np.array([cp_upper(count_b, n_b, level)]),
                                  np.array([1.0 - cp_lower(count_a, n_a, level)]))[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            optimistic = slot_values(slot, np.array([cp_lower(count_b, n_b, level)]),
                                     np.array([1.0 - cp_upper(count_a, n_a, level)]))[0]
        if not on_profile:
            estimates.append(float(pessimistic))
        if own is not None:
            lower.append(float(pessimistic) / own)
            upper.append(float(optimistic) / own if not np.isnan(optimistic) else math.inf)
    return UsageInterval(max(lower), max(upper), tuple(estimates))


@dataclass(frozen=True)
class Separation:
    """The standardised mean difference d = (mean_Q T − mean_P T)/s of a statistic (s² the mean of
    the two sides' variances), and the standard error of its difference from another's."""

    value: float
    standard_error: float


def separation(base_scores: np.ndarray, neighbour_scores: np.ndarray,
               reference: Optional[tuple[np.ndarray, np.ndarray]] = None) -> Separation:
    """d of a statistic on draws of both sides; with ``reference`` (another statistic's scores on
    the same draws) the standard error is that of the paired difference d − d_reference.

    In the limit of weak signals the power of the threshold tests of T is a function of d alone
    (T approximately normal under both datasets with equal spread; Le Cam's local asymptotics),
    which is why it ranks statistics where no event yet shows a use of the claim.  The paired
    standard error treats each side's standardised difference z_T − z_R as i.i.d. over its draws:
    SE² = Var_P(z_T − z_R)/n_P + Var_Q(z_T − z_R)/n_Q."""
    def standardised(t0, t1):
        spread = math.sqrt(0.5 * (float(np.var(t0)) + float(np.var(t1))))
        if not spread > 0:
            return None
        return t0 / spread, t1 / spread

    own = standardised(np.asarray(base_scores, dtype=np.float64), np.asarray(neighbour_scores, dtype=np.float64))
    if own is None:
        return Separation(0.0, math.inf)
    value = float(np.mean(own[1]) - np.mean(own[0]))
    if reference is None:
        return Separation(value, math.sqrt(1.0 / own[0].size + 1.0 / own[1].size))
    other = standardised(*(np.asarray(r, dtype=np.float64) for r in reference))
    if other is None:
        return Separation(value, math.sqrt(1.0 / own[0].size + 1.0 / own[1].size))
    d0, d1 = own[0] - other[0], own[1] - other[1]
    return Separation(value, math.sqrt(float(np.var(d0)) / d0.size + float(np.var(d1)) / d1.size))
