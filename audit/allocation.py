"""How an audit spends its draws: ``samples`` per pair and side, split over the phases.

``samples`` is the total number of draws per neighbour pair and per side (dataset) over all
phases.  It is split, before anything is drawn, as

* *training* (only for statistics that are learned, :mod:`audit.statistics`): up to 1/16 of
  ``samples`` and at most 2¹⁸ for a 1-D output; up to 1/4 and at most 10⁶ for a vector output
  (Fisher's direction or a learned score).  ``"auto"`` on a 1-D output is not trained from fewer
  than :data:`~audit.statistics.MIN_AUTO_TRAINING` draws (it would keep the linear statistic);
  :mod:`audit.stages` then gives the draws to the other phases;
* of the rest R: the *pilot* (placing the histogram) takes R/32, at most 65,536;
  *selection* takes 25% of R less the pilot; *certification* takes the remaining 75%.

The 25% selection share follows the measurement quoted in issue 18 (20–30% beat the earlier 50%
at a fixed total); here 20% and 25% gave the same Gaussian bound within noise (0.744 and 0.742
over 10 seeds at 2·10⁶), and 50% was worse on SVT34Parallel (0.138 against 0.147).

With early stopping the engine first spends the first 1/16 of ``samples`` on the *quick look*, an
audit of its own split as above, and splits the other 15/16 for the main audit, whose selection and
certification draws arrive in segments ending at 1/4 and all of each
(:data:`audit.selection.LOOK_FRACTIONS`, :mod:`audit.stages`).

A main audit with early stopping but too small for looks (under a few hundred ``samples``)
*chooses early*: its selection draws arrive in two segments, the first
:data:`EARLY_CHOICE_SHARE` of them.  If the events chosen on the first segment are already
predicted to refute the claim (:func:`audit.selection.predicted_to_refute`), the rest of the
selection draws go to certification instead, and the failure budget moves to the refuting slot
(:meth:`audit.selection.Budget.favouring`); otherwise selection goes on.  The decision uses
selection draws only, before any certification draw, so the certification counts stay binomial
given their size and the levels, fixed given the selection draws, still sum to γ.  It was
measured on the Laplace with the wrong sensitivity at 360 total draws, the case of issue 18 where
a clear violation meets a small budget (``benchmarks/efficiency.py``).  The quick look does not
choose early: with its thousands of selection draws, Gaussians mis-calibrated by factors 4 to 1.2
stopped at the same looks with it as without, 0.01–0.05 s later (and a stop of the faulty zoo's
mis-sensitised Gaussian 0.09 s later; one-off runs of 12 seeds each, recorded in README).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import special

from .scoring import USAGE_LEVEL, choosing_points, claim_usage
from .selection import PairCounts

__all__ = ["Allocation", "allocate", "training_draws", "looks_silent", "lanes_look_silent", "reallocate", "SELECTION_SHARE",
           "PILOT_SAMPLES", "TRAINING_CAPS", "SILENT_SHARE", "SILENCE_P_VALUE", "SILENT_ONE_SIDED", "USED_SHARE", "MIN_LOOKED",
           "EARLY_CHOICE_SHARE", "MIN_EARLY_CHOICE"]

SELECTION_SHARE = 0.25
PILOT_SAMPLES = 65_536
_PILOT_SHARE = 1 / 32
#: (share of samples, cap) of the training phase for 1-D and for vector outputs.
TRAINING_CAPS = {1: (1 / 16, 1 << 18), "vector": (1 / 4, 1_000_000)}
#: Below this many certification draws there is a single look (segments would be too small).
MIN_LOOKED = 64
#: Choosing early: the share of a small main audit's selection draws after which the events are
#: chosen once and, if already predicted to refute the claim, certified on the rest of the draws.
EARLY_CHOICE_SHARE = 0.4
#: ... only for stages with at least this many selection draws in the first segment.
MIN_EARLY_CHOICE = 8
#: A pair whose first selection draws look silent keeps this share of its certification draws ...
SILENT_SHARE = 1 / 8
#: ... where "silent" means a two-sample Kolmogorov–Smirnov p-value above this ...
SILENCE_P_VALUE = 0.1
#: ... and fewer than this many draws of one side beyond the other's range.
SILENT_ONE_SIDED = 12
#: A pair whose selection draws show an event using this share of the claim is never silent.
USED_SHARE = 0.5


@dataclass(frozen=True)
class Allocation:
    """Draws per pair and side: training, pilot, and the cumulative ends of the looks' segments."""

    samples: int
    training: int
    pilot: int
    selection_ends: tuple[int, ...]
    certification_ends: tuple[int, ...]
    early_choice: int = 0  # selection draws after which events are chosen early (0: not at all)

    @property
    def selection(self) -> int:
        return self.selection_ends[-1]

    @property
    def certification(self) -> int:
        return self.certification_ends[-1]

    @property
    def looks(self) -> int:
        return len(self.certification_ends)

    def segments(self, ends: tuple[int, ...]) -> list[int]:
        return [end - start for start, end in zip((0,) + ends[:-1], ends)]

    def to_dict(self) -> dict:
        return {"samples": self.samples, "training": self.training, "pilot": self.pilot,
                "selection": self.selection, "certification": self.certification,
                "selection_looks": list(self.selection_ends),
                "certification_looks": list(self.certification_ends), "early_choice": self.early_choice}

    @property
    def early_certification(self) -> int:
        """Certification draws per side after choosing early: the planned ones and the rest of
        the selection."""
        return self.certification + self.selection - self.early_choice

    def selection_segments(self) -> tuple[int, ...]:
        """Cumulative ends of the selection segments: one per look, or the early choice's two."""
        return (self.early_choice, self.selection) if self.early_choice else self.selection_ends


def training_draws(samples: int, output_dim: int, learned: bool) -> int:
    """Training draws per side: 0 when the statistic is not learned."""
    if not learned:
        return 0
    share, cap = TRAINING_CAPS[1] if output_dim == 1 else TRAINING_CAPS["vector"]
    return min(cap, max(1, int(samples * share)))


def allocate(samples: int, training: int, fractions: Sequence[float] = (1.0,),
             early_choice: bool = False) -> Allocation:
    """Split ``samples`` (which includes ``training``) over pilot, selection and certification, the
    last two in segments ending at ``fractions`` of each (a single segment when either has fewer
    than :data:`MIN_LOOKED` draws).  With ``early_choice``, a single-look allocation chooses early
    after :data:`EARLY_CHOICE_SHARE` of its selection draws (if that is at least
    :data:`MIN_EARLY_CHOICE`)."""
    rest = samples - training
    if rest < 3:
        raise ValueError(f"`samples`={samples} is too small: it leaves {rest} draws per side after "
                         "training, and pilot, selection and certification need at least one each")
    pilot = min(PILOT_SAMPLES, max(1, int(rest * _PILOT_SHARE)))
    selection = max(1, int(round(SELECTION_SHARE * rest)) - pilot)
    certification = rest - pilot - selection
    if len(fractions) > 1 and min(selection, certification) >= MIN_LOOKED:
        return Allocation(samples, training, pilot, _ends(selection, fractions), _ends(certification, fractions))
    first = int(round(EARLY_CHOICE_SHARE * selection)) if early_choice else 0
    first = first if MIN_EARLY_CHOICE <= first < selection else 0
    return Allocation(samples, training, pilot, (selection,), (certification,), first)


def _ends(total: int, fractions: Sequence[float]) -> tuple[int, ...]:
    """Cumulative segment ends at ``fractions`` of ``total`` (distinct for totals ≥ MIN_LOOKED)."""
    return tuple(int(round(f * total)) for f in fractions)


def looks_silent(counts: PairCounts, claim=None) -> bool:
    """Whether a pair's two sides look alike on its selection draws: the two-sample
    Kolmogorov–Smirnov distance D of the binned statistic has asymptotic p-value
    Q(D·√(n/2)) > :data:`SILENCE_P_VALUE` (Kolmogorov's limit law for two samples of size n; ties
    from binning or discrete outputs only make it larger, i.e. "silent" more readily), *and* neither
    side reaches beyond the other's range with :data:`SILENT_ONE_SIDED` draws or more, *and* (given
    the ``claim``) no threshold event uses :data:`USED_SHARE` of the claim or more at the
    pessimistic points events are chosen by (:func:`audit.scoring.claim_usage`).  The last two
    conditions keep a rare region that only one side produces (a released value of probability
    10⁻³, a key released with probability 0.012 on one dataset only) from being silenced: it moves
    the distribution too little for the KS test, yet it is the whole violation.  Under identical
    sides a run of k draws of one side beyond the other's range has probability about 2^(1−k), and
    an event whose pessimistic point uses half of a claim needs about 3e^ε/2 more draws on one side
    than the other's Clopper–Pearson upper end allows."""
    n = counts.n
    if n < 1:
        return True
    if max(_one_sided_end(counts.base, counts.neighbour), _one_sided_end(counts.neighbour, counts.base)) \
            >= SILENT_ONE_SIDED:
        return False
    if claim is not None and _claim_share(counts, claim) >= USED_SHARE:
        return False
    distance = float(np.abs(np.cumsum(counts.base) - np.cumsum(counts.neighbour)).max()) / n
    return float(special.kolmogorov(distance * np.sqrt(n / 2.0))) > SILENCE_P_VALUE


def lanes_look_silent(lanes: Sequence[PairCounts], claim=None) -> bool:
    """Whether a pair whose statistic has several lanes (``lanes[0]`` its primary's counts, the
    others its alternates', :mod:`audit.statistics.lanes`) looks silent: its primary lane passes
    :func:`looks_silent` and no alternate shows a region only one side reaches or an event that uses
    :data:`USED_SHARE` of the claim.

    The Kolmogorov–Smirnov part is asked of the primary alone.  Asked of every lane, a pair with
    identical sides would look silent only when all k tests passed, with probability about
    (1 − :data:`SILENCE_P_VALUE`)^k instead of 1 − :data:`SILENCE_P_VALUE`, and keep all its
    certification draws far more often than under a single statistic (measured on the analytic
    Gaussian's pair that adds an all-zeros row, whose sides are identical: the binned lane's test
    failed on two of four seeds where the linear lane's passed, and those audits certified on half
    the draws the linear statistic alone certified on).  An alternate lane exists to see a rare
    region the primary misses; the two guards, asked of every lane, keep such a region from being
    silenced.  Decided from selection draws alone, like :func:`looks_silent`."""
    primary, *alternates = lanes
    if not looks_silent(primary, claim):
        return False
    return not any(max(_one_sided_end(c.base, c.neighbour), _one_sided_end(c.neighbour, c.base)) >= SILENT_ONE_SIDED
                   or (claim is not None and _claim_share(c, claim) >= USED_SHARE) for c in alternates if c.n >= 1)


def _claim_share(counts: PairCounts, claim) -> float:
    """The largest share of ``claim`` a threshold event {bin ≥ j} uses on the pair's selection
    counts, in either orientation, at one-sided Clopper–Pearson points at :data:`USAGE_LEVEL`."""
    count_a, count_b = counts.tails()
    alpha_hi, beta_hi = choosing_points(count_a, counts.n, count_b, counts.n, USAGE_LEVEL)
    return claim_usage(claim, (alpha_hi, beta_hi)).value


def _one_sided_end(side: np.ndarray, other: np.ndarray) -> int:
    """Draws of ``side`` in bins above the highest or below the lowest bin ``other`` occupies."""
    occupied = np.flatnonzero(other)
    if occupied.size == 0:
        return int(side.sum())
    return int(side[occupied[-1] + 1:].sum() + side[:occupied[0]].sum())


def reallocate(ends: tuple[int, ...], silent: Sequence[bool]) -> list[tuple[int, ...]]:
    """Certification segment ends per pair: a silent pair keeps :data:`SILENT_SHARE` of its draws
    and the others share what it gives up equally, the total unchanged (or a few draws fewer from
    rounding).  Nothing moves when no pair or every pair is silent.

    Decided from selection draws only, before any certification draw is made, so certification
    counts stay binomial given their (now pair-specific) sizes and every bound keeps its level:
    this is issue 18's "draws spent where the evidence is"."""
    pairs, quiet = len(silent), int(sum(silent))
    if quiet in (0, pairs):
        return [ends] * pairs
    total = ends[-1]
    # With looks, a silent pair keeps enough for every look to have a few draws.
    kept = max(min(total, MIN_LOOKED) if len(ends) > 1 else 1, int(total * SILENT_SHARE))
    extra = (total - kept) * quiet // (pairs - quiet)
    sizes = [kept if is_silent else total + extra for is_silent in silent]
    fractions = tuple(end / total for end in ends)
    return [_ends(size, fractions) if len(ends) > 1 else (size,) for size in sizes]
