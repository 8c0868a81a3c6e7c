"""Choosing events on selection samples, certifying them on fresh samples.

**Events.**  For one neighbour pair, the test statistic T is binned (see :class:`Binning`); event
``j`` is {bin index of T ≥ j}.  With orientation o = 0 the event is "more likely under the neighbour
Q than under the base P" (A = Q, B = P ... written below as A and B), with o = 1 the roles swap.  A
certified event gives the point (α_hi, β_hi) = (B_hi(E), 1 − A_lo(E)): upper confidence bounds on
the errors of the test "reject B when E happens".  Complements need no separate event: the point of
(E, A, B) equals the swapped point of (Eᶜ, B, A), and every check below is symmetric.

**Confidence accounting (Bonferroni, weighted).**  Let γ = 1 − confidence.  Every number the
report prints comes from a certified event: a curve event's point is valid when its two one-sided
Clopper–Pearson bounds hold, a headline event's bound when its joint test
(:mod:`audit.joint_bounds`) does not fail.  The events to certify are fixed by the selection
samples, which are independent of the certification samples, so the union bound applies to the
tests actually used:

* the *headline* family gets 0.8γ, shared by its slots (ε at the claim's δ, δ at the claim's ε and
  μ for (ε, δ) and pure claims; μ for GDP claims), each slot being the single best event over all
  pairs, tested jointly at the budget of two bounds (an exact test of both counts at once, which
  certifies more than two separate bounds at half the level each).  The claim's own quantity (the
  first slot) gets 0.6 of the family's share and the others split the rest: for a true claim the
  δ-at-ε slot usually certifies a trivial event, so an even split wastes budget where the verdict
  is decided;
* the *curve* family gets 0.2γ, shared equally by, for every pair: one event per δ of the ε(δ) grid,
  one for δ at the claim's ε, one for μ (two bounds each) and the trade-off band (four bounds per
  point: α_lo, α_hi, β_lo, β_hi);
* a stage that *chooses early* (:mod:`audit.allocation`) and finds a slot predicted to refute the
  claim moves to :data:`FAVOURED_HEADLINE_SHARE` (0.95γ) for the headline family and
  :data:`FAVOURED_SLOT_SHARE` (0.9) of it for that slot.
  The switch is decided on selection draws, before any certification draw, so the levels are
  fixed given it and still sum to γ (:meth:`Budget.favouring`).

**Looks (early stopping).**  Selection and certification samples arrive in segments; at look l the
events are chosen on the selection samples drawn so far and certified on the certification samples
drawn so far, at levels scaled by the look's share w_l of the failure budget (Σ_l w_l = 1).  The
first look (the engine's quick look) is a whole audit on fresh samples of its own, statistic
included; the same accounting covers it.  The
audit stops at the first look that certifies a violation, or after the last.  Every look's events
are still chosen on samples independent of those that certify them, and by the union bound over
looks, families and slots the total failure probability is at most Σ_l w_l·(0.8γ + 0.2γ) = γ,
whichever look the audit stops at.  Slot and look counts are fixed in advance (not reduced when two
slots choose the same event or an audit stops early), so the accounting does not depend on the data.
Hence, with probability ≥ confidence, *every* certified point, and every bound derived from any of
them, holds at once: over all pairs, directions and quantities.

**Choosing robustly.**  The event that looks best on the selection samples is partly the luckiest
(the winner's curse).  Each candidate is therefore scored by the bound it would certify at the
certification sample size with counts predicted from the selection counts and moved half a
standard deviation against it (the sampling spread of the selection count scaled up, plus that of
the certification count).  Events resting on few samples are penalised most.  Headline candidates
are scored with Clopper–Pearson points at the level that mimics their joint test
(:func:`_joint_proxy_level`).  This only chooses the events: certification uses the certification
counts alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
from scipy import special

from .intervals import cp_lower, cp_upper
from .joint_bounds import JointTest
from .scoring import choosing_points, slot_values
from .slots import MU, TRADEOFF, Slot, curve_slots

__all__ = ["DELTA_GRID", "ALPHA_TARGETS", "Budget", "Event", "CertifiedEvent", "PairCounts",
           "select_events", "predicted_to_refute", "certify"]

#: δ values of the certified ε(δ) curve: log-spaced from 1e-10 to 0.5.
DELTA_GRID = np.geomspace(1e-10, 0.5, 40)
#: Target type-I errors of the trade-off band points.
ALPHA_TARGETS = np.unique(np.concatenate([np.geomspace(1e-6, 1e-2, 9), np.linspace(0.02, 0.98, 25)]))
HEADLINE_SHARE = 0.8
#: Share of the headline family that goes to the claim's own quantity (the first slot).
OWN_SLOT_SHARE = 0.6
#: Early stopping: where the audit looks, and each look's share of the failure budget.  The first
#: look is the quick look, a whole audit on the first 1/16 of ``samples`` (:mod:`audit.stages`); the
#: others look at 1/4 and all of the main audit's selection and certification samples.
LOOK_FRACTIONS = (1 / 16, 1 / 4, 1.0)
LOOK_SHARES = (0.025, 0.075, 0.9)
#: A budget favouring a slot predicted to refute the claim: the headline family's share of γ ...
FAVOURED_HEADLINE_SHARE = 0.95
#: ... and the favoured slot's share of the family (the other slots split the rest).  Both set once
#: (a refuted claim needs its refutation most, its curves little), not tuned.
FAVOURED_SLOT_SHARE = 0.9
#: A headline event is tested jointly at this multiple of its per-bound level (its two bounds).
JOINT_FACTOR = 2


@dataclass(frozen=True)
class Budget:
    """Per-bound Bonferroni levels of the headline and curve families (see module docstring).

    ``looks`` are the looks' shares of the failure budget; ``(1.0,)`` is an audit without early
    stopping.  The properties give the levels of the last look.
    """

    gamma: float
    headline_slots: tuple[Slot, ...]
    n_pairs: int
    looks: tuple[float, ...] = (1.0,)
    favoured: Optional[Slot] = None  # a slot predicted to refute the claim (see :meth:`favouring`)

    def favouring(self, slot: Slot) -> "Budget":
        """The budget favouring ``slot``: :data:`FAVOURED_HEADLINE_SHARE` of γ to the headline
        family and :data:`FAVOURED_SLOT_SHARE` of that to ``slot``.
        Chosen from selection draws only (:func:`predicted_to_refute`), before any certification
        draw, so the levels are fixed given the selection draws and still sum to γ: the
        union bound holds conditionally, hence unconditionally (data-driven weights from an
        independent split, Rubin, Dudoit & van der Laan, Stat. Appl. Genet. Mol. Biol. 2006)."""
        return replace(self, favoured=slot)

    @property
    def headline_share(self) -> float:
        return FAVOURED_HEADLINE_SHARE if self.favoured else HEADLINE_SHARE

    def slot_share(self, slot: Slot) -> float:
        slots = self.headline_slots
        if len(slots) == 1:
            return 1.0
        first, own = (self.favoured, FAVOURED_SLOT_SHARE) if self.favoured else (slots[0], OWN_SLOT_SHARE)
        return own if slot == first else (1.0 - own) / (len(slots) - 1)

    def headline_level_of(self, slot: Slot, look: int = -1) -> float:
        return self.gamma * self.headline_share * self.slot_share(slot) * self.looks[look] / 2

    @property
    def headline_level(self) -> float:
        """The level of the claim's own quantity at the last look."""
        return self.headline_level_of(self.headline_slots[0])

    @property
    def curve_bounds_per_pair(self) -> int:
        return 2 * (len(DELTA_GRID) + 2) + 4 * len(ALPHA_TARGETS)

    def curve_level_of(self, look: int = -1) -> float:
        return (self.gamma * (1.0 - self.headline_share) * self.looks[look]
                / (self.n_pairs * self.curve_bounds_per_pair))

    @property
    def curve_level(self) -> float:
        return self.curve_level_of()


@dataclass(frozen=True)
class PairCounts:
    """Histogram counts of T for both datasets of one pair, and the samples per side."""

    base: np.ndarray
    neighbour: np.ndarray
    n: int

    def tails(self) -> tuple[np.ndarray, np.ndarray]:
        """countA[o, j-1], countB[o, j-1]: samples with bin index ≥ j, j = 1..bins+1."""
        up_base = np.cumsum(self.base[::-1])[::-1][1:]
        up_neighbour = np.cumsum(self.neighbour[::-1])[::-1][1:]
        return np.stack([up_neighbour, up_base]), np.stack([up_base, up_neighbour])


@dataclass(frozen=True)
class Event:
    """An event chosen on selection samples, to be certified at ``level``."""

    pair: int
    orientation: int  # 0: more likely under the neighbour, 1: under the base
    index: int  # bin index j ≥ 1; the event is {bin(T) ≥ j}
    family: str  # "headline" or "curve"
    slot: Slot  # what it was chosen for: ε at a δ, δ at an ε, μ or the trade-off band
    level: float
    band: bool = False  # trade-off band point: also certify α_lo and β_lo
    lane: int = 0  # which of the pair's statistics (audit.statistics.lanes) counts it; 0: the primary


@dataclass(frozen=True)
class CertifiedEvent:
    """An event with its certification counts and what they certify (the raw evidence).

    A curve-family event certifies the point (α_hi, β_hi).  A headline event is tested jointly
    (:mod:`audit.joint_bounds`) at twice its per-bound level, the budget of its slot's two bounds:
    it certifies ``bound``, a lower bound on its slot's quantity (NaN when only ``refutes`` was
    needed), and whether it refutes the claim; its α_hi and β_hi are NaN (no point is certified).
    """

    event: Event
    threshold: float
    count_a: int  # samples in the event from the side it is more likely under
    count_b: int  # samples in the event from the other side
    n: int
    alpha_hi: float
    beta_hi: float
    alpha_lo: float = float("nan")
    beta_lo: float = float("nan")
    bound: float = float("nan")
    refutes: bool = False

    @property
    def joint(self) -> bool:
        return self.event.family == "headline"

    @property
    def alpha(self) -> float:
        return self.count_b / self.n

    @property
    def beta(self) -> float:
        return 1.0 - self.count_a / self.n

    def to_dict(self, labels) -> dict:
        more_likely = "neighbour" if self.event.orientation == 0 else "base"
        result = {
            "pair": labels[self.event.pair], "slot": self.event.slot.key, "family": self.event.family,
            "event": f"T >= {self.threshold:.9g}", "more_likely_under": more_likely,
            "count_more_likely": self.count_a, "count_other": self.count_b, "n": self.n,
            "threshold": float(self.threshold)}
        if self.event.lane:
            result["lane"] = self.event.lane
        if self.joint:
            return dict(result, test="joint", level=JOINT_FACTOR * self.event.level,
                        bound=self.bound, refutes=self.refutes)
        return dict(result, test="clopper-pearson", level=self.event.level,
                    alpha_hi=self.alpha_hi, beta_hi=self.beta_hi)


#: Standard deviations by which a candidate's predicted counts are moved against it (chosen by
#: measurement: 0, ½, 1 and 2 were compared on the analytic Gaussian and SVT34Parallel).
WINNERS_CURSE_SDS = 0.5
_SPREAD_FLOOR = 2


def _predicted(count_a: np.ndarray, count_b: np.ndarray, n: int, n_certify: int, sds: float = WINNERS_CURSE_SDS):
    """Certification counts predicted from selection counts, half a standard deviation against
    the event: ratio r = n_certify/n, k ↦ r·k ∓ ½√(r²·k' + r·k') with k' = max(k, 2) (Poisson
    approximations of the spread of the scaled selection count and of the certification count),
    clipped to [0, n_certify].  The floor k' ≥ 2 keeps a count of 0 or 1 from predicting no spread:
    at small budgets the luckiest events are those with no draw on the other side (measured on
    the mis-sensitised Laplace at 360 total draws, worst pair: detection 0.82, 0.90, 0.93, 0.93 for
    floors 0, 1, 2, 4; no change on the analytic Gaussian at 2·10⁶)."""
    r = n_certify / n
    floor_a, floor_b = np.maximum(count_a, _SPREAD_FLOOR), np.maximum(count_b, _SPREAD_FLOOR)
    spread_a = sds * np.sqrt(r * r * floor_a + r * floor_a)
    spread_b = sds * np.sqrt(r * r * floor_b + r * floor_b)
    a = np.clip(np.floor(r * count_a - spread_a), 0, n_certify).astype(np.int64)
    b = np.clip(np.ceil(r * count_b + spread_b), 0, n_certify).astype(np.int64)
    return a, b


def _candidates(count_a: np.ndarray, count_b: np.ndarray):
    """The thresholds worth scoring: per orientation (row), the first of every run of thresholds
    with equal predicted counts (empty bins repeat their neighbour's counts, and equal counts score
    equally, so the first maximiser is the same as over all thresholds).  Returns the candidates'
    orientations, threshold indices (0-based) and counts, orientation 0 first."""
    orientations, indices = [], []
    for orientation in range(count_a.shape[0]):
        change = (np.diff(count_a[orientation]) != 0) | (np.diff(count_b[orientation]) != 0)
        index = np.concatenate([[0], np.flatnonzero(change) + 1])
        orientations.append(np.full(index.size, orientation))
        indices.append(index)
    orientation, index = np.concatenate(orientations), np.concatenate(indices)
    return orientation, index, count_a[orientation, index], count_b[orientation, index]


def _joint_proxy_level(level: float) -> float:
    """The per-side Clopper–Pearson level that stands in for a headline event's joint test when
    choosing it.  The joint test at 2·level has a margin of about z·√(s_A² + s_B²), z = Φ⁻¹(1 − 2·level);
    with equal spreads s_A = s_B that is what two one-sided bounds at z/√2 each give.  (Measured on
    the analytic Gaussian at 2·10⁶ draws, 8 seeds: mean ε_lb/ε 0.820 against 0.807 when choosing at
    the Bonferroni level.)"""
    return float(special.ndtr(special.ndtri(JOINT_FACTOR * level) / np.sqrt(2.0)))


def select_events(selection: list[PairCounts], claim, budget: Budget, n_certify,
                  look: int = -1, *, headline: bool = True, curves: bool = True,
                  slots: Optional[tuple[Slot, ...]] = None,
                  curve_pairs: Optional[list[int]] = None,
                  alternates: Optional[set[int]] = None) -> list[Event]:
    """Choose the events to certify at ``look``, from the selection samples only.

    Candidates are scored at each pair's certification size ``n_certify`` (one number for all
    pairs, or one per pair) with predicted, pessimistic counts (the winner's-curse correction of
    the module docstring), their (α_hi, β_hi) interpolated (:func:`audit.scoring.choosing_points`;
    :func:`certify` is exact).  ``headline``/``curves`` pick the families (an early look needs the
    curves only if it stops the audit); ``slots`` restricts the headline family to those slots.
    ``curve_pairs``: the entries of ``selection`` that get curve events (default all); the headline
    family chooses over every entry (several statistics of one pair, :mod:`audit.statistics.lanes`,
    are entries of their own: the budget's ``n_pairs`` counts ``curve_pairs``).  ``alternates``: the
    entries of alternate lanes; when there are any, a headline slot certifies every *contender*
    (:func:`_contenders`), each at its share of the slot's level."""
    events: list[Event] = []
    sizes = list(n_certify) if np.ndim(n_certify) else [int(n_certify)] * len(selection)
    alternates = alternates or set()
    primaries = sorted(set(range(len(selection))) - alternates)  # each pair's lanes follow its primary
    owners = [max(p for p in primaries if p <= entry) for entry in range(len(selection))] if primaries else []
    candidates = [_candidates(*_predicted(*counts.tails(), counts.n, size))
                  for counts, size in zip(selection, sizes)]
    points: dict = {}  # (pair, level) -> (α_hi, β_hi): slots of equal level share them
    # Headline: for each slot, the best event over all pairs (and, with lanes, every contender).
    for slot in (budget.headline_slots if slots is None else slots) if headline else ():
        level = budget.headline_level_of(slot, look)
        proxy = _joint_proxy_level(level)
        bests = []
        for pair, (orientation, index, count_a, count_b) in enumerate(candidates):
            if (pair, proxy) not in points:
                points[pair, proxy] = choosing_points(count_a, sizes[pair], count_b, sizes[pair], proxy)
            scores = slot_values(slot, *points[pair, proxy])
            i = int(np.argmax(scores))
            bests.append((float(scores[i]), pair, int(orientation[i]), int(index[i]) + 1))
        chosen = _contenders(bests, selection, sizes, slot, proxy, owners) if alternates else \
            [_widest_of_the_best(bests, selection)]
        for _, pair, orientation, index in chosen:
            events.append(Event(pair, orientation, index, "headline", slot, level / len(chosen)))
    if not curves:
        return events
    # Curves: per pair, one event per δ of the grid, δ at the claim's ε, μ, and the band.
    level, point_slots = budget.curve_level_of(look), curve_slots(claim, DELTA_GRID)
    for pair, ((orientations, index, count_a, count_b), counts) in enumerate(zip(candidates, selection)):
        if curve_pairs is not None and pair not in curve_pairs:
            continue
        alpha_hi, beta_hi = choosing_points(count_a, sizes[pair], count_b, sizes[pair], level)
        for slot in point_slots:
            i = int(np.argmax(slot_values(slot, alpha_hi, beta_hi)))
            events.append(Event(pair, int(orientations[i]), int(index[i]) + 1, "curve", slot, level))
        orientation = int(orientations[int(np.argmax(slot_values(MU, alpha_hi, beta_hi)))])
        alpha_hat = counts.tails()[1][orientation] / counts.n  # non-increasing in j
        chosen = set()
        for target in ALPHA_TARGETS:
            j = int(np.argmin(np.abs(alpha_hat - target)))
            if j not in chosen:
                chosen.add(j)
                events.append(Event(pair, orientation, j + 1, "curve", TRADEOFF, level, band=True))
    return events


#: With several statistics per pair (lanes), a headline slot certifies each entry whose best event
#: is not clearly behind the best one (:func:`_contenders`), at most this many, each at an equal share
#: of the slot's level.
MAX_CONTENDERS = 3
#: ... "clearly behind": its best event's value with its predicted counts moved this many standard
#: deviations in its favour (:func:`_predicted` with ``-CONTENDER_SDS``) stays below the best
#: event's value with its counts moved as many against it.
CONTENDER_SDS = 1.0
#: Entries' best headline events within this share of the best predicted value count as tied
#: (:func:`_widest_of_the_best`).
NEAR_TIE = 0.01


def _empty_run(counts: PairCounts, index: int) -> tuple[int, int]:
    """The thresholds j' ≥ ``index`` whose events {bin ≥ j'} hold the same selection draws as
    {bin ≥ index}: up to the first bin at or above ``index`` that holds a draw of either side.
    Returns (the middle of that run, its length in bins)."""
    occupied = np.flatnonzero(counts.base[index:] + counts.neighbour[index:])
    last = index + (int(occupied[0]) if occupied.size else counts.base.size - 1 - index)
    return (index + last) // 2, last - index


def _widest_of_the_best(bests: list[tuple], selection: list[PairCounts]) -> tuple:
    """The headline event among the entries' best (score, entry, orientation, index), at the middle
    of its run of empty bins.

    Every threshold in a run of bins that hold no selection draw has the same selection counts, and
    the candidates stand for each run by its first threshold: right above the last draw below it,
    often a draw of the side the event must exclude.  Its certification draws then spill into the
    event; the middle of the empty run keeps a margin on both sides (the maximum-margin rule), for
    the same selection counts.  Among the entries whose best events score within :data:`NEAR_TIE` of
    the best (exact ties for a score ≤ 0) the widest run, relative to the span of the entry's
    occupied bins, wins: the selection draws cannot tell such events apart, but a region only one
    side reaches, which a statistic scores apart from the other side's bulk, lies beyond a wide
    empty run, and certification draws of the side it excludes do not spill into it.

    This is intended for the pairs of a multi-pair audit without lanes too, where it decides which
    pair's event is certified: of two pairs whose best events score within 1% of each other (a
    difference the selection draws do not resolve), the one beyond the wider empty run is certified,
    not the one 1% ahead.  It is chosen on the selection draws alone and the slot keeps its whole
    level, so the bound is valid whichever wins.  With lanes (:func:`_contenders`) it is reached
    only when no event scores above 0, where only exact ties count."""
    top = max(b[0] for b in bests)
    cut = top - NEAR_TIE * abs(top) if top > 0 else top

    def widened(best) -> tuple:
        score, entry, orientation, index = best
        middle, run = _empty_run(selection[entry], index)
        occupied = np.flatnonzero(selection[entry].base + selection[entry].neighbour)
        span = int(occupied[-1] - occupied[0]) + 1 if occupied.size else 1
        return run / span, (score, entry, orientation, middle)

    tied = [widened(b) for b in bests if b[0] >= cut]
    return max(tied, key=lambda t: (t[0], t[1][0]))[1]


def _event_value(slot: Slot, counts: PairCounts, orientation: int, index: int, size: int, proxy: float,
                 sds: float) -> float:
    """The value of ``slot`` that one event {bin ≥ index} is predicted to certify on ``size`` draws,
    its selection counts moved ``sds`` standard deviations against it (in its favour if negative)."""
    tail_a, tail_b = counts.tails()
    count_a, count_b = _predicted(tail_a[orientation, index - 1:index], tail_b[orientation, index - 1:index],
                                  counts.n, size, sds)
    return float(slot_values(slot, *choosing_points(count_a, size, count_b, size, proxy))[0])


def _contenders(bests: list[tuple], selection: list[PairCounts], sizes: list[int], slot: Slot,
                proxy: float, owners: list[int]) -> list[tuple]:
    """The headline events to certify for one slot when the entries are several statistics' lanes:
    every entry's best event (score, entry, orientation, index) that is not clearly behind the best
    one, at most :data:`MAX_CONTENDERS` by score, each at the middle of its run of empty bins.

    The selection draws cannot rank events they barely resolve: a region that only one side
    reaches with probability 10⁻⁵ holds a few dozen selection draws, and two statistics' events
    there, one pure and one holding a little of the other side's mass, score alike (46 against 1
    and 47 against 1 draws, certified 270 against 19 and 224 against 1 on 1.37·10⁷ draws).
    Choosing one of them, by its score or by a margin favouring the primary statistic, certifies
    the weaker one about half the time.  The contenders are fixed by the selection draws alone and
    each is certified at 1/k of the slot's level (k contenders), so by the union bound the slot
    still fails with probability at most its level (data-dependent weights from an independent
    split: Rubin, Dudoit & van der Laan, Stat. Appl. Genet. Mol. Biol. 2006); the report keeps the
    largest certified bound.  "Clearly behind": an optimistic value (counts moved
    :data:`CONTENDER_SDS` standard deviations in its favour) below the best's pessimistic one.  A
    slot whose best score is ≤ 0 certifies one event (:func:`_widest_of_the_best`).  Two lanes of
    one pair (``owners``: each entry's primary) whose events hold the same selection draws on both
    sides count once: they are most likely the same region, seen through two statistics."""
    top = max(bests, key=lambda b: b[0])
    if top[0] <= 0:
        return [_widest_of_the_best(bests, selection)]
    floor = _event_value(slot, selection[top[1]], top[2], top[3], sizes[top[1]], proxy, CONTENDER_SDS)
    ahead = sorted((b for b in bests if b is top or (b[0] > 0 and _event_value(
        slot, selection[b[1]], b[2], b[3], sizes[b[1]], proxy, -CONTENDER_SDS) >= floor)),
        key=lambda b: -b[0])
    chosen, seen = [], set()
    for score, entry, orientation, index in ahead:
        tail_a, tail_b = selection[entry].tails()
        held = (owners[entry], int(tail_a[orientation, index - 1]), int(tail_b[orientation, index - 1]))
        if held not in seen and len(chosen) < MAX_CONTENDERS:
            seen.add(held)
            chosen.append((score, entry, orientation, _empty_run(selection[entry], index)[0]))
    return chosen


def predicted_to_refute(selection: list[PairCounts], claim, budget: Budget, n_certify: int,
                        alternates: Optional[set[int]] = None) -> Optional[Slot]:
    """The first headline slot whose event, chosen on ``selection`` at the budget favouring it
    (:meth:`Budget.favouring`), would refute the claim with ``n_certify`` certification draws per
    side, its counts predicted as pessimistically as for choosing (:func:`_predicted`; with
    ``alternates``, any of the slot's contenders at its share of the level, as in
    :func:`select_events`); None if none would.  Decides *choosing early* (:mod:`audit.allocation`)
    from selection draws alone."""
    for slot in budget.headline_slots:
        claimed = slot.allowed_by(claim)
        if claimed is None or not np.isfinite(claimed):
            continue
        for event in select_events(selection, claim, budget.favouring(slot), n_certify, curves=False,
                                   slots=(slot,), alternates=alternates):
            count_a, count_b = (tail[event.orientation, event.index - 1] for tail in selection[event.pair].tails())
            count_a, count_b = _predicted(np.array([count_a]), np.array([count_b]), selection[event.pair].n,
                                          n_certify)
            if JointTest(slot, int(count_a[0]), int(count_b[0]), n_certify,
                         JOINT_FACTOR * event.level).rejects(claimed):
                return slot
    return None


def certify(events: list[Event], certification: list[PairCounts], binnings, claim, *,
            bounds: bool = True, joint_tests: Optional[dict] = None) -> list[CertifiedEvent]:
    """Count each chosen event on the certification samples and certify it: curve events by two
    Clopper–Pearson bounds at their level, headline events by the joint test at twice theirs
    (``bounds=False`` skips the joint lower bounds where only the verdict is needed).

    ``joint_tests`` keeps the joint tests built, by slot, counts and level, for a later call on the
    same look (a stopping look certifies its headline events again with their bounds, and two slots
    often choose the same event); one look's, never another audit's."""
    joint_tests = {} if joint_tests is None else joint_tests
    tails = [counts.tails() for counts in certification]
    result = []
    for event in events:
        count_a_all, count_b_all = tails[event.pair]
        n = certification[event.pair].n
        count_a = int(count_a_all[event.orientation, event.index - 1])
        count_b = int(count_b_all[event.orientation, event.index - 1])
        threshold = binnings[event.pair].edge(event.index)
        if event.family == "headline":
            claimed = event.slot.allowed_by(claim)
            testable = claimed is not None and bool(np.isfinite(claimed))
            if not (testable or bounds):  # e.g. μ at an early look of an (ε, δ) claim: nothing to test
                result.append(CertifiedEvent(event, threshold, count_a, count_b, n, math.nan, math.nan))
                continue
            key = (event.slot, count_a, count_b, n, JOINT_FACTOR * event.level)
            if key not in joint_tests:
                joint_tests[key] = JointTest(*key)
            test = joint_tests[key]
            refutes = testable and test.rejects(claimed)
            result.append(CertifiedEvent(event, threshold, count_a, count_b, n, math.nan, math.nan,
                                         bound=test.lower_bound() if bounds else math.nan,
                                         refutes=bool(refutes)))
            continue
        alpha_hi = float(cp_upper(count_b, n, event.level))
        beta_hi = 1.0 - float(cp_lower(count_a, n, event.level))
        extra = {}
        if event.band:
            extra = {"alpha_lo": float(cp_lower(count_b, n, event.level)),
                     "beta_lo": 1.0 - float(cp_upper(count_a, n, event.level))}
        result.append(CertifiedEvent(event, threshold, count_a, count_b, n, alpha_hi, beta_hi, **extra))
    return result
