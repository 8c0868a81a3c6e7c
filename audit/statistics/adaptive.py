"""Adaptive bins: a piecewise-constant log-likelihood ratio that keeps rare and one-sided regions.

The binned and additive statistics estimate the log-ratio ln(q(v)/p(v)) of a 1-D value v from
training counts on *fine bins* in value order (c₀ of the base, c₁ of the neighbour).  Fine bins
are too noisy to use as they are, and fixed quantile bins merge a rare region — a tail only one
side reaches, a sentinel released with probability 10⁻³ — into the bulk, where its evidence is
lost.  The fine bins are therefore grouped *by what they say about the ratio*, top-down as in
supervised discretisation (Fayyad & Irani, "Multi-interval discretization of continuous-valued
attributes for classification learning", IJCAI 1993, with Pearson's χ² in place of entropy): a
group is cut where the 2×2 table (left/right × base/neighbour) has the largest χ², and a cut is
kept only while that χ² is significant at :data:`SPLIT_LEVEL` after a Bonferroni correction for
the cut positions searched (and the columns cut together), and Fisher's exact test of the same
table agrees (χ² is far from its distribution where a side's share predicts much less than one
draw: one base draw beside thousands of the neighbour's gives χ² ≈ 300 and an exact p ≈ 0.003).  The most significant cut is always made first.  When no cut is
significant one is made anyway (one group says nothing), at the largest χ² among the cuts that leave
at least :data:`TRIM` of the draws on either side: over all cuts, pure noise peaks at an end, on a
handful of draws.  A region that only one side
produces differs from the rest at once (a run of c draws of one side gives χ² ≈ c), so it becomes
a group of its own as soon as its evidence is significant; a region of extreme ratio likewise.  For the
binned statistic, the runs at either end that only one side reaches (:func:`one_sided_cuts`) are
groups of their own from the start, however few draws they hold: merged with the other side's bulk, a tail region of
probability 10⁻⁵ would be diluted away.
Splitting top-down rather than merging bottom-up (ChiMerge, Kerber 1992) avoids the alternating
groups that noise leaves behind when every adjacent pair is merged only while it looks alike.

The groups' log-ratios are smoothed with a pseudo-count a (:data:`SMOOTHING`):

    s_g = ln((c₁(g) + a)/(n₁ + a·G)) − ln((c₀(g) + a)/(n₀ + a·G)).

Scores only rank outputs: an estimation error can cost power, never validity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["SPLIT_LEVEL", "MAX_GROUPS", "SMOOTHING", "FINE_BINS", "Groups", "split_fine_bins", "one_sided_cuts",
           "one_sided_ends",
           "group_scores", "value_bins", "TieBreaker", "tie_breaker"]

#: Level of the χ² test (Bonferroni over the cut positions of a group) that keeps a cut.
SPLIT_LEVEL = 0.05
#: At most this many groups.
MAX_GROUPS = 64
#: A cut made without significance leaves at least this share of the group's draws on either side.
TRIM = 0.05
#: Pseudo-count of the groups' smoothed log-ratios.
SMOOTHING = 0.5
#: Fine bins of a 1-D sample of values (quantiles of the pooled values when there are more).
FINE_BINS = 4096
#: A value repeated this often (and at least FINE_BINS-th of the sample) is an atom of its own.
_ATOM_REPEATS = 8


@dataclass(frozen=True)
class Groups:
    """Fine bins grouped: ``starts`` are the first fine bin of each group (increasing, from 0);
    ``base``/``neighbour`` the groups' counts; ``significant`` whether some cut was significant
    (else the one cut was forced)."""

    starts: np.ndarray
    base: np.ndarray
    neighbour: np.ndarray
    significant: bool = True

    def of_fine(self, fine: int) -> np.ndarray:
        """The group of every fine bin 0..fine-1."""
        return np.searchsorted(self.starts, np.arange(fine), side="right") - 1


def _chi2(a0, a1, b0, b1) -> np.ndarray:
    """Pearson's χ² of the 2×2 tables [[a0, a1], [b0, b1]] (0 where a margin is empty)."""
    a0, a1, b0, b1 = (np.asarray(x, dtype=np.float64) for x in (a0, a1, b0, b1))
    rows = (a0 + a1) * (b0 + b1)
    columns = (a0 + b0) * (a1 + b1)
    total = a0 + a1 + b0 + b1
    with np.errstate(divide="ignore", invalid="ignore"):
        value = total * (a0 * b1 - a1 * b0) ** 2 / (rows * columns)
    return np.where((rows > 0) & (columns > 0), value, 0.0)


def _best_cut(cum0: np.ndarray, cum1: np.ndarray, start: int, end: int,
              family: int = 1) -> tuple[float, int, float, float, int]:
    """Over the cuts of fine bins [start, end): the largest χ², where, and its critical value; and
    the largest χ² over the *trimmed* cuts (at least :data:`TRIM` of the group's draws on either
    side) and where (-1 when there is none)."""
    if end - start < 2:
        return -1.0, -1, np.inf, -1.0, -1
    cuts = np.arange(start + 1, end)
    left0, left1 = cum0[cuts] - cum0[start], cum1[cuts] - cum1[start]
    right0, right1 = cum0[end] - cum0[cuts], cum1[end] - cum1[cuts]
    chi = _chi2(left0, left1, right0, right1)
    best = int(np.argmax(chi))
    total = float(cum0[end] - cum0[start] + cum1[end] - cum1[start])
    left = left0 + left1
    trimmed = np.flatnonzero((left >= TRIM * total) & (total - left >= TRIM * total))
    middle = int(trimmed[np.argmax(chi[trimmed])]) if trimmed.size else -1
    level = SPLIT_LEVEL / (cuts.size * family)
    critical = float(stats.chi2.isf(level, 1))
    if chi[best] >= critical and not _exactly_significant(left0[best], left1[best], right0[best], right1[best], level):
        critical = np.inf  # χ² far out of its range of validity (a draw where about 0.001 are expected)
    return (float(chi[best]), int(cuts[best]), critical,
            float(chi[middle]) if middle >= 0 else -1.0, int(cuts[middle]) if middle >= 0 else -1)


def _exactly_significant(a0: float, a1: float, b0: float, b1: float, level: float) -> bool:
    """Whether Fisher's exact test of the 2×2 table [[a0, a1], [b0, b1]] rejects at ``level``
    (two-sided).  Pearson's χ² approximates it only when no expected count is much below 1: a single
    draw of one side where its share predicts 0.003 gives χ² ≈ 300 but an exact p-value near 0.003."""
    table = np.array([[a0, a1], [b0, b1]], dtype=np.int64)
    return bool(stats.fisher_exact(table).pvalue <= level)


def split_fine_bins(base: np.ndarray, neighbour: np.ndarray, *, max_groups: int = MAX_GROUPS,
                    family: int = 1, one_sided: bool = False) -> Groups:
    """Group adjacent fine bins (counts ``base``, ``neighbour`` in value order) top-down (module
    docstring): at most ``max_groups`` groups, at least two when there are two fine bins.
    ``family``: the number of such groupings made together (the columns of one statistic), by which
    the Bonferroni correction of each cut is multiplied.  ``one_sided``: the runs at either end that
    only one side reaches are groups of their own from the start (:func:`one_sided_cuts`; the binned
    statistic's rule, which ranks them first; a sum of column scores would only add their noise)."""
    c0 = np.asarray(base, dtype=np.int64)
    c1 = np.asarray(neighbour, dtype=np.int64)
    cum0 = np.concatenate([[0], np.cumsum(c0)])
    cum1 = np.concatenate([[0], np.cumsum(c1)])
    groups = {0: (c0.size, *_best_cut(cum0, cum1, 0, c0.size, family))}  # start -> (end, χ², cut, critical, χ²_trim, cut_trim)
    significant = False
    forced = one_sided_cuts(c0, c1) if one_sided else []
    for cut in forced:  # never merged into the other side's bulk
        start = max(g for g in groups if g < cut)
        end, critical = groups[start][0], groups[start][3]
        chi = _chi2(cum0[cut] - cum0[start], cum1[cut] - cum1[start], cum0[end] - cum0[cut], cum1[end] - cum1[cut])
        significant = significant or bool(chi >= critical)
        groups[start] = (cut, *_best_cut(cum0, cum1, start, cut, family))
        groups[cut] = (end, *_best_cut(cum0, cum1, cut, end, family))
    while len(groups) < max_groups:
        start = max(groups, key=lambda g: (groups[g][1] - groups[g][3], -g))
        end, chi, cut, critical, _, _ = groups[start]
        if cut < 0 or chi <= 0.0 or chi < critical:
            if len(groups) > 1 + len(forced):
                break
            # Nothing is significant: one forced cut of the bulk, among the trimmed ones (the largest
            # χ² over all cuts of pure noise sits at an end, on a handful of draws).
            start = max(groups, key=lambda g: cum0[groups[g][0]] - cum0[g] + cum1[groups[g][0]] - cum1[g])
            end, chi, cut = groups[start][0], groups[start][4], groups[start][5]
            if cut < 0 or chi <= 0.0:
                break
        else:
            significant = True
        groups[start] = (cut, *_best_cut(cum0, cum1, start, cut, family))
        groups[cut] = (end, *_best_cut(cum0, cum1, cut, end, family))
    starts = np.array(sorted(groups), dtype=np.int64)
    ends = np.array([groups[s][0] for s in starts], dtype=np.int64)
    return Groups(starts, cum0[ends] - cum0[starts], cum1[ends] - cum1[starts], significant)


def one_sided_cuts(base: np.ndarray, neighbour: np.ndarray) -> list[int]:
    """Cut positions (fine-bin indices) that set apart the runs of fine bins at either end that only
    one side reaches: the bottom run ends where the other side first has a draw, the top run starts
    after its last (nothing where an end is mixed or the run would be everything)."""
    c0, c1 = np.asarray(base), np.asarray(neighbour)
    occupied = np.flatnonzero((c0 > 0) | (c1 > 0))
    if occupied.size == 0:
        return []
    cuts = []
    for side, other in ((c0, c1), (c1, c0)):
        reached = np.flatnonzero(other > 0)
        if reached.size == 0:
            continue
        if side[:reached[0]].sum() > 0:  # draws of `side` below everything `other` reaches
            cuts.append(int(reached[0]))
        if side[reached[-1] + 1:].sum() > 0:  # ... and above
            cuts.append(int(reached[-1]) + 1)
    return sorted({cut for cut in cuts if 0 < cut < c0.size})


def one_sided_ends(groups: "Groups", scores: np.ndarray) -> np.ndarray:
    """``scores`` with each end group that only one side reaches moved beyond every other score,
    on that side's end (above for the neighbour, below for the base), by the median gap between
    distinct scores: the likelihood ratio of a region the other side never reaches is infinite as
    far as the draws tell, so it is ranked first, however few draws hold it."""
    scores = np.array(scores, dtype=np.float64)
    if scores.size < 2:
        return scores
    gaps = np.diff(np.unique(scores))
    gap = float(np.median(gaps)) if gaps.size else 1.0
    inner = scores[1:-1] if scores.size > 2 else scores
    top, bottom = float(np.max(inner)), float(np.min(inner))
    for end in (0, scores.size - 1):
        if groups.base[end] == 0 and groups.neighbour[end] > 0:
            scores[end] = max(scores[end], top + gap)
        elif groups.neighbour[end] == 0 and groups.base[end] > 0:
            scores[end] = min(scores[end], bottom - gap)
    return scores


def group_scores(groups: Groups, n_base: float, n_neighbour: float, smoothing: float = SMOOTHING) -> np.ndarray:
    """The smoothed log-ratio s_g of every group (module docstring)."""
    size = groups.starts.size
    return (np.log(groups.neighbour + smoothing) - np.log(n_neighbour + smoothing * size)) - \
           (np.log(groups.base + smoothing) - np.log(n_base + smoothing * size))


def value_bins(base_values: np.ndarray, neighbour_values: np.ndarray,
               fine: int = FINE_BINS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fine bins of a 1-D sample: inner edges (bin b is [edges[b−1], edges[b])) and both sides'
    counts.  Every distinct value is a bin when there are at most ``fine`` of them; otherwise
    quantiles of the pooled values, with three kinds of edges added so that nothing rare is lumped
    with the bulk: the values repeated often (atoms, [v, v⁺)), and the runs at either end that only
    one side reaches."""
    v0 = np.sort(np.asarray(base_values, dtype=np.float64))
    v1 = np.sort(np.asarray(neighbour_values, dtype=np.float64))
    pooled = np.concatenate([v0, v1])
    side = np.concatenate([np.zeros(v0.size, dtype=np.int8), np.ones(v1.size, dtype=np.int8)])
    order = np.argsort(pooled, kind="stable")
    pooled, side = pooled[order], side[order]
    distinct, repeats = np.unique(pooled, return_counts=True)
    if distinct.size <= fine:
        edges = distinct[1:]
    else:
        cuts = np.quantile(pooled, np.linspace(0.0, 1.0, fine + 1)[1:-1])
        atoms = distinct[repeats >= max(_ATOM_REPEATS, pooled.size // fine)]
        extremes = _one_sided_ends(pooled, side)
        edges = np.unique(np.concatenate([cuts, atoms, np.nextafter(atoms, np.inf), extremes]))
        edges = edges[(edges > pooled[0]) & (edges <= pooled[-1])]
    counts = [np.bincount(np.searchsorted(edges, v, side="right"), minlength=edges.size + 1) for v in (v0, v1)]
    return edges, counts[0], counts[1]


def _one_sided_ends(pooled: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Edges that cut off the runs at the bottom and at the top of the sorted pooled values that
    only one side reaches (nothing when both ends are mixed)."""
    edges = []
    changes = np.flatnonzero(side[1:] != side[:-1])
    if changes.size:
        bottom_end = changes[0] + 1  # first index of the other side
        top_start = changes[-1] + 1  # first index of the last run
        if pooled[bottom_end] > pooled[bottom_end - 1]:
            edges.append(pooled[bottom_end])
        if pooled[top_start] > pooled[top_start - 1]:
            edges.append(pooled[top_start])
    return np.asarray(edges, dtype=np.float64)


@dataclass(frozen=True)
class TieBreaker:
    """A small score η·u(v) ∈ [0, η) added within each step of a step function (steps [edges[b−1],
    edges[b])), increasing towards the neighbouring step of larger score (``rising``), so that
    events can still cut inside a step, in its more extreme part first.  u is the position from
    the step's left edge, exactly linear inside a finite step and 1 − exp(−d/``scale``) in the two
    unbounded end steps (d: the distance beyond the last edge), which resolves the tails where
    small-δ events live.  η is half the median gap between distinct step scores, so the ranking of
    well-separated steps is kept."""

    rising: np.ndarray  # +1 if u increases with v in the step, else −1
    scale: float
    eta: float

    def __call__(self, values: np.ndarray, edges: np.ndarray, step: np.ndarray) -> np.ndarray:
        left = np.concatenate([[-np.inf], edges])[step]
        right = np.concatenate([edges, [np.inf]])[step]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            from_left = np.where(np.isfinite(left), values - left, np.inf)
            from_right = np.where(np.isfinite(right), right - values, np.inf)
            up = np.asarray(from_left / (from_left + from_right))  # writable for 0-d values too
            # the exponentials only where a distance is infinite (the end steps): computing them
            # for every value cost a third of an additive lane's scoring time
            ends = ~(np.isfinite(from_left) & np.isfinite(from_right))
            if ends.any():
                beyond, below = from_left[ends], from_right[ends]
                up[ends] = np.where(np.isfinite(beyond), 1.0 - np.exp(-beyond / self.scale),
                                    np.exp(-below / self.scale))
        position = np.where(self.rising[step] > 0, up, 1.0 - up)
        return self.eta * np.clip(np.nan_to_num(position, nan=0.5), 0.0, 0.999)


def tie_breaker(scores: np.ndarray, spread: float) -> TieBreaker:
    """The :class:`TieBreaker` of a step function with these step scores, on values of this spread."""
    padded = np.concatenate([[scores[0]], scores, [scores[-1]]])
    rising = np.where(padded[2:] >= padded[:-2], 1, -1).astype(np.int8)
    gaps = np.diff(np.unique(scores))
    eta = 0.5 * float(np.median(gaps)) if gaps.size else 1.0
    return TieBreaker(rising, float(spread) if spread > 0 else 1.0, eta)
