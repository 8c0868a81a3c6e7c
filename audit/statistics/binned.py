"""The binned statistic: a smoothed histogram log-likelihood ratio of a 1-D value.

When the likelihood ratio of a 1-D output is not monotone (noise whose scale depends on the data,
mixtures), threshold events of the output are not the Neyman–Pearson tests: the best events are
two-sided or unions of intervals.  Here the value v (the output, or a fixed projection ⟨w, x⟩ of a
vector output) is cut into *adaptive* bins (:mod:`audit.statistics.adaptive`): fine bins (every
distinct value, or quantiles of the pooled training values with the often-repeated values and the
one-sided runs at either end as bins of their own) merged while neighbours do not differ
significantly in their share of neighbour draws.  A rare region that only one side produces, or
where the ratio is extreme, therefore stays a bin of its own instead of being merged into the bulk;
the runs at either end that only one side reaches are always bins of their own, scored beyond every
other bin (:func:`~audit.statistics.adaptive.one_sided_ends`): their estimated ratio is infinite.
Each bin b gets the smoothed log-ratio

    s_b = ln((c_Q(b) + a)/(n_Q + a·B)) − ln((c_P(b) + a)/(n_P + a·B)).

Within a bin a small tie-breaker η·u(v) ∈ [0, η) is added, increasing towards the neighbouring bin
of larger ratio (and, in the two unbounded end bins, with the distance beyond the last edge), with
η half the median gap between distinct bin scores: the ranking of well-separated bins is kept and
events can still cut inside a bin, which matters in the tails where small-δ events live.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .adaptive import TieBreaker, group_scores, one_sided_ends, split_fine_bins, tie_breaker, value_bins
from .base import Statistic
from .linear import LinearStatistic

__all__ = ["BinnedStatistic", "fit_binned"]


@dataclass(frozen=True)
class BinnedStatistic(Statistic):
    """Score = bin log-ratio + within-bin tie-breaker, of the value ``projection(outputs)``."""

    edges: np.ndarray  # inner edges, increasing; bin b is [edges[b-1], edges[b])
    scores: np.ndarray  # len(edges) + 1 bin scores
    tie: TieBreaker
    projection: Optional[LinearStatistic] = None
    kind = "binned"

    def value(self, outputs: np.ndarray) -> np.ndarray:
        return outputs[:, 0] if self.projection is None else self.projection(outputs)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        v = self.value(outputs)
        b = np.searchsorted(self.edges, v, side="right")
        return self.scores[b] + self.tie(v, self.edges, b)

    def describe(self, threshold: float) -> str:
        bins = np.flatnonzero(self.scores + self.tie.eta > threshold)
        what = "output" if self.projection is None else "<w, output>"
        if bins.size == 0:
            return f"empty event (binned score >= {threshold:.6g})"
        full = np.flatnonzero(self.scores >= threshold)
        return (f"{what} in {bins.size} of {self.scores.size} adaptive bins "
                f"({full.size} whole; binned log-ratio score >= {threshold:.6g})")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "bins": int(self.scores.size),
                "edges": [float(e) for e in self.edges], "scores": [float(s) for s in self.scores],
                "projection": None if self.projection is None else self.projection.to_list()}


def fit_binned(base_values: np.ndarray, neighbour_values: np.ndarray,
               projection: Optional[LinearStatistic] = None) -> BinnedStatistic:
    """Adaptive bins of the pooled values; smoothed log-ratio (neighbour over base) per bin."""
    fine_edges, c0, c1 = value_bins(base_values, neighbour_values)
    groups = split_fine_bins(c0, c1, one_sided=True)
    edges = fine_edges[groups.starts[1:] - 1]
    scores = one_sided_ends(groups, group_scores(groups, base_values.size, neighbour_values.size))
    # End bins: the squash 1 − exp(−d/scale) resolves distances of the order of the spread.
    pooled = np.concatenate([base_values, neighbour_values])
    q25, q75 = np.quantile(pooled, [0.25, 0.75])
    spread = float(q75 - q25) / 1.35 or _std(pooled) or 1.0
    return BinnedStatistic(edges, scores, tie_breaker(scores, spread), projection)


def _std(values: np.ndarray) -> float:
    """The standard deviation, also of values so large that their squares overflow (a 1e300
    sentinel): then that of the values scaled by a power of two (exact), scaled back."""
    with np.errstate(over="ignore", invalid="ignore"):
        spread = float(np.std(values))
    if math.isfinite(spread):
        return spread
    _, exponent = np.frexp(float(np.max(np.abs(values))))
    return math.ldexp(float(np.std(np.ldexp(values, -exponent))), int(exponent))
