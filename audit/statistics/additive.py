"""The additive and flag-and-value statistics: sums of per-column (and per-block) log-ratio estimates.

**Additive.**  When the k output columns are independent under both datasets (parallel compositions:
20 Laplace copies, a noisy histogram, bits of a randomized response), the log-likelihood ratio is a
sum, ln q(x)/p(x) = Σ_j ln(q_j(x_j)/p_j(x_j)), so the Neyman–Pearson tests threshold

    T(x) = Σ_j ĝ_j(x_j),

with ĝ_j each column's log-ratio, estimated on the training draws: the column's fine-bin counts
(:mod:`audit.statistics.columns`, every training draw but the raw rows) grouped adaptively
(:mod:`audit.statistics.adaptive`), so that a rare or one-sided region of a column stays a group of
its own.  Columns too weak to be cut significantly on their own (copies of one mechanism run in
parallel) share one shape learned from all of them pooled in rank space.  No single linear score
does this where the ratio saturates: for a Laplace shift the
column's log-ratio is a clamp, and the sum of the columns weights the bulk, not the tails that
carry the loss.  The score is exact for independent columns with exact ĝ_j and a ranking device
otherwise; any fixed T gives valid events.

**Flag-and-value.**  Sparse-vector variants release ⊤/⊥ flags and, with each ⊤, a value
(SVT3, NumericalSVT, SVT34Parallel).  Their likelihood ratio is that of the *pattern* (flags,
sentinels, which columns released a value; :func:`~audit.statistics.columns.pattern_codes`) times
the conditional densities of the released values.  The statistic scores the pattern
categorically — per *block* of dependent pattern columns, since independent mechanisms run side by
side multiply their pattern probabilities — and adds each column's log-ratio of its released
(non-integer) values, estimated conditionally on release:

    T(x) = Σ_blocks ŝ_b(pattern_b(x)) + Σ_j ĝ_j(x_j | released).

Blocks are the connected components of the pattern columns whose pooled training correlation
exceeds :data:`BLOCK_CORRELATION` (and four standard errors).  A pattern never seen in training
scores 0.  Both statistics are estimates on training draws only and are frozen before selection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from .adaptive import TieBreaker, group_scores, split_fine_bins, tie_breaker
from .atoms import AtomCounts
from .base import Statistic
from .columns import ColumnCounts, bin_edges, is_atom, ordered_keys, pattern_codes

__all__ = ["ColumnScore", "PatternBlock", "AdditiveStatistic", "FlagValueStatistic", "fit_additive",
           "fit_flag_value", "BLOCK_CORRELATION"]

#: Pattern columns whose pooled correlation exceeds this (and 4 standard errors) share a block.
BLOCK_CORRELATION = 0.01
#: Pseudo-count of a block's smoothed pattern log-ratios (as the categorical statistic's).
_PATTERN_SMOOTHING = 1.0


@dataclass(frozen=True)
class ColumnScore:
    """One column's estimated log-ratio as a step function of the value: ``scores[i]`` on
    [edges[i−1], edges[i]) (a value between trained bins takes the score of the bin below it, or of
    the first), plus a tie-breaker within each step (:class:`~audit.statistics.adaptive.TieBreaker`:
    the more extreme values of a step first, so that events can reach into a tail the training
    draws could not cut finely), with the exact scores of the few atoms the steps do not give
    (``atom_values``)."""

    column: int
    edges: np.ndarray
    scores: np.ndarray
    tie: TieBreaker
    atom_values: np.ndarray
    atom_scores: np.ndarray
    atoms_in_pattern: bool = False  # flag-and-value: atoms are scored by the pattern, not here

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        values = outputs[:, self.column]
        step = np.searchsorted(self.edges, values, side="right")
        scores = self.scores[step] + self.tie(values, self.edges, step)
        if self.atoms_in_pattern:
            return np.where(is_atom(values), 0.0, scores)
        if self.atom_values.size:
            position = np.minimum(np.searchsorted(self.atom_values, values), self.atom_values.size - 1)
            scores = np.where(self.atom_values[position] == values, self.atom_scores[position], scores)
        return scores

    @property
    def spread(self) -> float:
        scores = np.concatenate([self.scores, self.atom_scores])
        return float(scores.max() - scores.min()) if scores.size else 0.0

    @property
    def groups(self) -> int:
        return int(self.scores.size)


@dataclass(frozen=True)
class PatternBlock:
    """A block of dependent pattern columns and the smoothed log-ratio of each of its sub-patterns.
    A sub-pattern is keyed by the mixed-radix number of its codes' positions in each column's
    sorted codes (``codes``); a code never seen in training makes the sub-pattern unseen (score 0)."""

    columns: tuple[int, ...]
    codes: tuple[np.ndarray, ...]
    keys: np.ndarray  # sorted mixed-radix keys of the trained sub-patterns
    scores: np.ndarray

    def key(self, patterns: np.ndarray) -> np.ndarray:
        """Mixed-radix keys of the rows' sub-patterns (−1 where a code is unseen)."""
        key = np.zeros(patterns.shape[0], dtype=np.int64)
        unseen = np.zeros(patterns.shape[0], dtype=bool)
        for column, codes in zip(self.columns, self.codes):
            values = patterns[:, column]
            position = np.minimum(np.searchsorted(codes, values), codes.size - 1)
            unseen |= codes[position] != values
            key = key * codes.size + position
        return np.where(unseen, -1, key)

    def __call__(self, patterns: np.ndarray) -> np.ndarray:
        keys = self.key(patterns)
        index = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        return np.where(self.keys[index] == keys, self.scores[index], 0.0)


@dataclass(frozen=True)
class AdditiveStatistic(Statistic):
    """T(x) = Σ_j ĝ_j(x_j) (module docstring)."""

    columns: tuple[ColumnScore, ...]
    kind = "additive"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        total = np.zeros(outputs.shape[0])
        for column in self.columns:
            total += column(outputs)
        return total

    def describe(self, threshold: float) -> str:
        return f"sum of {len(self.columns)} per-column log-ratio estimates >= {threshold:.6g}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "columns": [c.column for c in self.columns],
                "groups": [c.groups for c in self.columns], "tables": [_table(c) for c in self.columns]}


def _table(column: ColumnScore) -> dict:
    """One column's score as plain lists (floats round-trip through JSON exactly), all a script
    needs to evaluate it (:func:`audit.sweep.repro_additive.additive_scores`)."""
    return {"column": int(column.column), "edges": [float(v) for v in column.edges],
            "scores": [float(v) for v in column.scores], "rising": [int(v) for v in column.tie.rising],
            "scale": float(column.tie.scale), "eta": float(column.tie.eta),
            "atom_values": [float(v) for v in column.atom_values],
            "atom_scores": [float(v) for v in column.atom_scores], "atoms_in_pattern": bool(column.atoms_in_pattern)}


@dataclass(frozen=True)
class FlagValueStatistic(AdditiveStatistic):
    """T(x) = Σ_b ŝ_b(pattern_b(x)) + Σ_j ĝ_j(x_j | released) (module docstring)."""

    blocks: tuple[PatternBlock, ...] = ()
    kind = "flag-value"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        total = super().__call__(outputs)
        if self.blocks:
            patterns = pattern_codes(outputs)
            for block in self.blocks:
                total += block(patterns)
        return total

    def describe(self, threshold: float) -> str:
        sizes = ", ".join(str(len(b.columns)) for b in self.blocks) or "none"
        return (f"pattern score (blocks of {sizes} columns) + {len(self.columns)} released-value "
                f"log-ratios >= {threshold:.6g}")

    def to_dict(self) -> dict:
        return dict(super().to_dict(), blocks=[list(b.columns) for b in self.blocks],
                    patterns=[int(b.keys.size) for b in self.blocks])


@dataclass(frozen=True)
class _Fine:
    """One column's fine bins in value order: atoms first in their place, then binned values."""

    column: int
    atom_values: np.ndarray
    keys: np.ndarray
    order: np.ndarray  # position in value order of each fine bin (atoms, then keys)
    base: np.ndarray  # counts in value order
    neighbour: np.ndarray
    n_base: float
    n_neighbour: float
    values_only: bool


def _fine(column: int, base: ColumnCounts, neighbour: ColumnCounts, n_base: int, n_neighbour: int,
          values_only: bool) -> Optional[_Fine]:
    """One column's fine bins (atoms and binned values) in value order, with both sides' counts.
    ``values_only``: only the binned values, conditionally on being released (flag-and-value)."""
    atom_values = np.zeros(0) if values_only else np.union1d(base.atom_values, neighbour.atom_values)
    keys = np.union1d(base.keys, neighbour.keys).astype(np.uint64)
    if atom_values.size + keys.size == 0:
        return None

    def counts(side: ColumnCounts) -> np.ndarray:
        atoms = np.zeros(atom_values.size, dtype=np.int64)
        if atom_values.size and side.atom_values.size:
            atoms[np.searchsorted(atom_values, side.atom_values)] = side.atom_counts
        binned = np.zeros(keys.size, dtype=np.int64)
        if side.keys.size:
            binned[np.searchsorted(keys, side.keys)] = side.key_counts
        return np.concatenate([atoms, binned])

    c0, c1 = counts(base), counts(neighbour)
    order = np.argsort(np.concatenate([ordered_keys(atom_values), keys]), kind="stable")
    if values_only:
        n_base, n_neighbour = int(c0.sum()), int(c1.sum())
        if min(n_base, n_neighbour) == 0:
            return None
    return _Fine(column, atom_values, keys, order, c0[order], c1[order], n_base, n_neighbour, values_only)


def _score(fine: _Fine, scores_in_order: np.ndarray) -> Optional[ColumnScore]:
    """The column's :class:`ColumnScore` from a score per fine bin in value order."""
    starts = np.concatenate([fine.atom_values, bin_edges(fine.keys)])[fine.order]  # each fine bin's lowest value
    change = np.concatenate([[True], np.diff(scores_in_order) != 0])
    edges, scores = starts[change][1:], scores_in_order[change]
    atom_values, atom_scores = np.zeros(0), np.zeros(0)
    if fine.atom_values.size and not fine.values_only:
        atom_scores = np.empty(fine.order.size)
        atom_scores[fine.order] = scores_in_order
        atom_scores = atom_scores[:fine.atom_values.size]
        stepped = scores[np.searchsorted(edges, fine.atom_values, side="right")]
        wrong = stepped != atom_scores  # an atom sharing its lowest value with a binned fine bin
        atom_values, atom_scores = fine.atom_values[wrong], atom_scores[wrong]
    total = fine.base + fine.neighbour
    quartiles = starts[np.minimum(np.searchsorted(np.cumsum(total), np.array([0.25, 0.75]) * total.sum()),
                                  total.size - 1)]
    spread = float(quartiles[1] - quartiles[0]) / 1.35
    column = ColumnScore(fine.column, edges, scores, tie_breaker(scores, spread), atom_values, atom_scores,
                         atoms_in_pattern=fine.values_only)
    return column if column.spread > 0 else None


#: Rank bins of the pooled shape of the columns too weak to be split on their own.
_RANK_BINS = 1024


def _pooled_weak(weak: list[_Fine]) -> list[Optional[ColumnScore]]:
    """Scores of the columns whose own cuts are not significant, from one shape learned on all of
    them pooled in rank space: each column's fine-bin counts are spread over a common grid of ranks
    (its pooled CDF, both sides together), oriented so that the neighbour tends to the higher ranks,
    summed over the columns and grouped (:func:`~audit.statistics.adaptive.split_fine_bins`).  Each
    column's fine bin then takes the score of the group of its middle rank, with the column's
    orientation.  Exchangeable columns — copies of one mechanism in parallel, each too weak to place
    a cut on its own — share their evidence this way; a column with structure of its own keeps its
    own cuts.

    Orientation: a column's z_j is its standardised rank-sum difference (neighbour minus base; the
    rank of a draw has variance 1/12).  If the z_j are consistent with one common direction
    (Cochran's Q = Σ(z_j − z̄)² within the 0.99 quantile of χ² on m − 1 degrees of freedom) every
    column takes the sign of Σ z_j, which is right far more often than each column's own sign at
    weak signals; otherwise each column takes its own."""
    grid = np.linspace(0.0, 1.0, _RANK_BINS + 1)
    layout = []
    for fine in weak:
        total = fine.base + fine.neighbour
        ends = np.concatenate([[0.0], np.cumsum(total) / max(total.sum(), 1)])
        middle = 0.5 * (ends[:-1] + ends[1:])
        n0, n1 = max(fine.base.sum(), 1), max(fine.neighbour.sum(), 1)
        gap = (middle @ fine.neighbour) / n1 - (middle @ fine.base) / n0
        z = gap / np.sqrt((1.0 / n0 + 1.0 / n1) / 12.0)
        layout.append((fine, ends, middle, z))
    z = np.array([entry[3] for entry in layout])
    common = z.size > 1 and float(np.sum((z - z.mean()) ** 2)) <= stats.chi2.ppf(0.99, z.size - 1)
    signs = np.where(np.sum(z) >= 0, 1.0, -1.0) * np.ones(z.size) if common else np.where(z >= 0, 1.0, -1.0)
    pooled0, pooled1 = np.zeros(_RANK_BINS), np.zeros(_RANK_BINS)
    n0 = n1 = 0.0
    for (fine, ends, _, _), sign in zip(layout, signs):
        spread = [np.diff(np.interp(grid, ends, np.concatenate([[0.0], np.cumsum(c)])))
                  for c in (fine.base, fine.neighbour)]
        totals = [fine.n_base, fine.n_neighbour]
        if sign < 0:  # as seen from the other side: the neighbour at higher ranks
            spread, totals = spread[::-1], totals[::-1]
        pooled0 += spread[0]
        pooled1 += spread[1]
        n0 += totals[0]
        n1 += totals[1]
    groups = split_fine_bins(np.round(pooled0).astype(np.int64), np.round(pooled1).astype(np.int64))
    shape = group_scores(groups, n0, n1)
    result = []
    for (fine, _, middle, _), sign in zip(layout, signs):
        group = np.searchsorted(groups.starts, np.minimum((middle * _RANK_BINS).astype(np.int64), _RANK_BINS - 1),
                                side="right") - 1
        result.append(_score(fine, sign * shape[group]))
    return result


def _columns(fines: list[_Fine]) -> tuple[ColumnScore, ...]:
    """Every column's scores: its own groups where a cut is significant, the pooled shape of the
    weak columns otherwise (:func:`_pooled_weak`; a single weak column keeps its own forced cut)."""
    own, weak = {}, []
    for fine in fines:
        groups = split_fine_bins(fine.base, fine.neighbour, family=len(fines))
        if groups.significant or len(fines) == 1:
            own[fine.column] = _score(fine, group_scores(groups, fine.n_base, fine.n_neighbour)
                                      [groups.of_fine(fine.order.size)])
        else:
            weak.append((fine, groups))
    if len(weak) == 1:
        fine, groups = weak[0]
        own[fine.column] = _score(fine, group_scores(groups, fine.n_base, fine.n_neighbour)[groups.of_fine(fine.order.size)])
    elif weak:
        own.update({f.column: score for (f, _), score in zip(weak, _pooled_weak([f for f, _ in weak]))})
    return tuple(own[c] for c in sorted(own) if own[c] is not None)


def fit_additive(base_columns: tuple[ColumnCounts, ...], neighbour_columns: tuple[ColumnCounts, ...],
                 n_base: int, n_neighbour: int) -> AdditiveStatistic:
    """Σ_j ĝ_j from both sides' column counts over ``n_base``/``n_neighbour`` training rows."""
    fines = [_fine(j, b, q, n_base, n_neighbour, values_only=False)
             for j, (b, q) in enumerate(zip(base_columns, neighbour_columns))]
    return AdditiveStatistic(_columns([f for f in fines if f is not None]))


def _blocks(base: AtomCounts, neighbour: AtomCounts, exclude: set[int]) -> tuple[PatternBlock, ...]:
    """Blocks of dependent pattern columns and their sub-patterns' smoothed log-ratios."""
    keys = np.union1d(base.keys, neighbour.keys)
    rows = np.empty((keys.size, base.rows.shape[1]))
    counts = []
    for atoms in (base, neighbour):
        index = np.searchsorted(keys, atoms.keys)
        full = np.zeros(keys.size)
        full[index] = atoms.counts
        rows[index] = atoms.rows
        counts.append(full)
    weight = counts[0] + counts[1]
    total = weight.sum()
    active = [j for j in range(rows.shape[1]) if j not in exclude and np.ptp(rows[:, j]) > 0]
    if not active or total <= 0:
        return ()
    x = rows[:, active]
    mean = weight @ x / total
    centred = x - mean
    scatter = (centred * weight[:, None]).T @ centred
    scale = np.sqrt(np.maximum(np.diag(scatter), 1e-300))
    correlation = np.abs(scatter / np.outer(scale, scale))
    linked = correlation > max(BLOCK_CORRELATION, 4.0 / np.sqrt(total))
    count, label = connected_components(csr_matrix(linked), directed=False)
    blocks = []
    for b in range(count):
        columns = tuple(active[i] for i in np.flatnonzero(label == b))
        codes = tuple(np.unique(rows[:, j]) for j in columns)
        if np.prod([float(c.size) for c in codes]) >= 2.0 ** 62:  # mixed-radix keys would overflow
            continue
        block = PatternBlock(columns, codes, np.zeros(0, dtype=np.int64), np.zeros(0))
        sub, inverse = np.unique(block.key(rows), return_inverse=True)
        if sub.size < 2:
            continue
        c0 = np.bincount(inverse.ravel(), weights=counts[0], minlength=sub.size)
        c1 = np.bincount(inverse.ravel(), weights=counts[1], minlength=sub.size)
        a, m = _PATTERN_SMOOTHING, sub.size
        scores = (np.log(c1 + a) - np.log(neighbour.n + a * m)) - (np.log(c0 + a) - np.log(base.n + a * m))
        blocks.append(PatternBlock(columns, codes, sub, scores))
    return tuple(blocks)


def fit_flag_value(base_columns: tuple[ColumnCounts, ...], neighbour_columns: tuple[ColumnCounts, ...],
                   base_patterns: AtomCounts, neighbour_patterns: AtomCounts) -> FlagValueStatistic:
    """Pattern blocks from both sides' pattern counts, and the released values' log-ratios."""
    binned = {j for j, (b, q) in enumerate(zip(base_columns, neighbour_columns)) if b.binned_atoms or q.binned_atoms}
    blocks = _blocks(base_patterns, neighbour_patterns, binned)
    fines = [_fine(j, b, q, b.total, q.total, values_only=j not in binned)
             for j, (b, q) in enumerate(zip(base_columns, neighbour_columns))]
    return FlagValueStatistic(_columns([f for f in fines if f is not None]), blocks)
