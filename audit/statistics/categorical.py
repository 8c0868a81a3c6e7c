"""The categorical statistic: each distinct output row (atom) scored by its log-likelihood ratio.

For a discrete output the Neyman–Pearson tests are the unions of atoms ranked by the likelihood
ratio Q(x)/P(x) (Lehmann & Romano, *Testing Statistical Hypotheses*, Thm 3.2.1).  The ratio is
estimated on the training phase with add-a smoothing,

    s(x) = ln((c_Q(x) + a)/(n_Q + a·m)) − ln((c_P(x) + a)/(n_P + a·m)),

m the number of atoms seen, and the certified events are {s ≥ t}: the top-ranked atom sets.  A row
never seen in training scores 0 (no evidence either way) and so still lands in a defined event.
Scores are only a ranking: an estimation error can cost power, never validity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .atoms import AtomCounts, row_keys
from .base import Statistic

__all__ = ["CategoricalStatistic", "fit_categorical", "SMOOTHING"]

#: Pseudo-count a of the smoothed log-likelihood ratio.
SMOOTHING = 1.0
#: Atoms whose rows are listed in the report (the highest and lowest ranked).
_SHOWN = 5


@dataclass(frozen=True)
class CategoricalStatistic(Statistic):
    """Score = the trained log-likelihood ratio of the output's atom (0 for unseen rows)."""

    keys: np.ndarray  # sorted uint64 atom keys
    scores: np.ndarray  # score of each atom
    rows: np.ndarray  # a representative row of each atom
    kind = "categorical"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if self.keys.size == 0:
            return np.zeros(outputs.shape[0])
        keys = row_keys(outputs)
        index = np.searchsorted(self.keys, keys)
        index = np.minimum(index, self.keys.size - 1)
        found = self.keys[index] == keys
        return np.where(found, self.scores[index], 0.0)

    def describe(self, threshold: float) -> str:
        order = np.argsort(-self.scores, kind="stable")
        ranked = int(np.count_nonzero(self.scores >= threshold))
        unseen = " and every row unseen in training" if threshold <= 0.0 else ""
        if ranked == 0:
            return f"no trained atom{unseen or ' (empty event)'} (score >= {threshold:.6g})"
        top = [self._row(i) for i in order[:min(ranked, _SHOWN)]]
        more = f", … ({ranked - _SHOWN} more)" if ranked > _SHOWN else ""
        return (f"atoms ranked 1–{ranked} of {self.keys.size}{unseen} (score >= {threshold:.6g}): "
                f"{', '.join(top)}{more}")

    def _row(self, index: int) -> str:
        row = self.rows[index]
        return "[" + " ".join(f"{v:g}" for v in row) + "]" if row.size > 1 else f"{row[0]:g}"

    def to_dict(self) -> dict:
        order = np.argsort(-self.scores, kind="stable")
        shown = [{"row": [float(v) for v in self.rows[i]], "score": float(self.scores[i])}
                 for i in order[:_SHOWN]]
        return {"kind": self.kind, "atoms": int(self.keys.size), "top_atoms": shown}


def fit_categorical(base: AtomCounts, neighbour: AtomCounts) -> CategoricalStatistic:
    """Smoothed log-likelihood ratio (neighbour over base) of every atom seen on either side."""
    keys = np.union1d(base.keys, neighbour.keys)
    rows = np.empty((keys.size, base.rows.shape[1]))
    counts = []
    for atoms in (base, neighbour):
        index = np.searchsorted(keys, atoms.keys)
        full = np.zeros(keys.size, dtype=np.float64)
        full[index] = atoms.counts
        rows[index] = atoms.rows
        counts.append(full)
    m = keys.size
    a = SMOOTHING
    scores = (np.log(counts[1] + a) - np.log(neighbour.n + a * m)) - \
             (np.log(counts[0] + a) - np.log(base.n + a * m))
    return CategoricalStatistic(keys, scores, rows)
