"""The coordinates statistic: the one coordinate of a vector release that tells the sides apart.

A library's model or query releases a vector of dozens of numbers (parameters, shapes, counts of
non-finite values, a noisy objective), of which a bug usually touches one: a coefficient released
without noise whenever a noisy offset is clipped to 0, a size that grows when a new label
appears.  Fisher's discriminant needs many training draws to find one coordinate among dozens, and
an exact repeated value (an atom) among continuous ones is not a threshold of any projection.
This statistic looks at each coordinate j alone, in two views:

- its **value**: the binned log-likelihood ratio of x_j (:mod:`.binned`), whose quantile bins
  give an atom that holds a share of the draws a bin of its own;
- its **low-order bits**: the categorical log-likelihood ratio (:mod:`.categorical`) of the
  ``LOW_BITS`` least significant bits of x_j's IEEE-754 pattern.  Which doubles a noisy value can
  take depends on how it was computed (Mironov, CCS 2012; Jin et al., "Are we there yet? Timing
  and floating-point attacks on differential privacy systems", IEEE S&P 2022), and no smooth
  function of the value sees it; unlike the classifier statistic's bit features, this needs no
  scikit-learn and looks at every coordinate of a wide output;
- its **grain**: the exponent g of the largest power of two 2^g that divides x_j (x_j is a whole
  multiple of 2^g and no coarser one), a categorical view too.  A value computed as v + noise in
  floating point is rounded to the grid of its larger operand: 1 + Lap(1) is a multiple of 2^-53
  wherever it lands, while Lap(1) alone falls between those points about a third of the time.
  Which grid a released value lies on is then a perfect event, which neither the value nor a
  fixed number of low bits shows (Mironov 2012).

Every (coordinate, view) candidate is fitted on the first half of the training rows and scored on
the second half by how much of the claim its threshold events use there
(:func:`audit.scoring.statistic_usage`, the quantity ``"auto"`` ranks by; the Fisher projection
competes too); the winner is refitted on all training rows and frozen.  Only training
draws are used, so the certified events stay independent of what chose them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..scoring import statistic_usage
from .atoms import count_atoms
from .base import Statistic
from .binned import fit_binned
from .categorical import fit_categorical
from .linear import LinearStatistic, combine_moments, chunk_moments, lda_statistic
from .registry import FitContext, register_statistic

__all__ = ["CoordinateStatistic", "fit_coordinates", "grain", "LOW_BITS"]

#: Least significant bits of a coordinate's IEEE-754 pattern the bits view reads (2**LOW_BITS atoms).
LOW_BITS = 10
_MIN_HALF = 8


def _low_bits(column: np.ndarray) -> np.ndarray:
    words = (np.ascontiguousarray(column, dtype=np.float64) + 0.0).view(np.uint64)
    return (words & np.uint64((1 << LOW_BITS) - 1)).astype(np.float64).reshape(-1, 1)


#: Atoms of the grain view: 0 for x = 0, g + _GRAIN_OFFSET for a finite x ≠ 0 (g ≥ −1074), and
#: the last for a non-finite x.
_GRAIN_OFFSET = 1075
_GRAIN_ATOMS = 2 * _GRAIN_OFFSET + 2


def grain(column: np.ndarray) -> np.ndarray:
    """The exponent g of the largest power of two dividing each value (module docstring), as
    floats; ``-inf`` for 0 and ``nan`` for a non-finite value.

    x = m·2^e with 0.5 ≤ |m| < 1 (:func:`numpy.frexp`, exact, subnormals included); M = |m|·2^53 is
    the integer significand and t its trailing zero bits, so x = ±(M / 2^t)·2^(e − 53 + t) with an
    odd integer M / 2^t: g = e − 53 + t.
    """
    x = np.ascontiguousarray(column, dtype=np.float64).ravel()
    out = np.full(x.shape, np.nan)
    finite = np.isfinite(x)
    out[finite & (x == 0)] = -np.inf
    nonzero = finite & (x != 0)
    mantissa, exponent = np.frexp(x[nonzero])
    significand = (np.abs(mantissa) * 2.0 ** 53).astype(np.uint64)
    lowest = significand & (~significand + np.uint64(1))
    out[nonzero] = exponent - 53 + np.log2(lowest.astype(np.float64))
    return out


def _grain_atoms(column: np.ndarray) -> np.ndarray:
    g = grain(column)
    atoms = np.where(np.isnan(g), _GRAIN_ATOMS - 1, np.where(np.isinf(g), 0, g + _GRAIN_OFFSET))
    return atoms.astype(np.float64).reshape(-1, 1)


@dataclass(frozen=True)
class CoordinateStatistic(Statistic):
    """Score = ``inner`` applied to coordinate ``index`` (``view="value"``) or to its low bits
    (``view="bits"``)."""

    index: int
    view: str
    inner: Statistic
    kind = "coordinates"

    def _column(self, outputs: np.ndarray) -> np.ndarray:
        column = outputs[:, self.index]
        if self.view == "grain":
            return _grain_atoms(column)
        return _low_bits(column) if self.view == "bits" else column.reshape(-1, 1)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return self.inner(self._column(outputs))

    def describe(self, threshold: float) -> str:
        what = {"value": f"output[{self.index}]", "bits": f"low {LOW_BITS} bits of output[{self.index}]",
                "grain": f"grain (largest power of two dividing) of output[{self.index}]"}[self.view]
        return f"{what}: {self.inner.describe(threshold)}"

    def to_dict(self) -> dict:
        """Its record; a bits or grain view also lists every trained atom with its score,
        ``atom_scores`` = [[atom, score], ...] ranked by score (stable), so that an event {T ≥ t}
        can be restated exactly (the atoms scoring ≥ t, and every unseen atom when t ≤ 0).  An atom
        is the low-bit pattern (an integer) or the grain g (−inf for 0, nan for a non-finite value)."""
        record = {"kind": self.kind, "coordinate": self.index, "view": self.view, "inner": self.inner.to_dict()}
        scores, rows = getattr(self.inner, "scores", None), getattr(self.inner, "rows", None)
        if self.view != "value" and scores is not None and rows is not None:
            order = np.argsort(-np.asarray(scores), kind="stable")
            codes = np.asarray(rows, dtype=np.float64)[order, 0]
            atoms = _grain_of_atom(codes) if self.view == "grain" else codes
            record["atom_scores"] = [[float(a) if self.view == "grain" else int(a), float(scores[i])]
                                     for a, i in zip(atoms, order)]
        return record


def _grain_of_atom(codes: np.ndarray) -> np.ndarray:
    """The grain g of each atom code of :func:`_grain_atoms` (−inf for the code of 0, nan for the
    code of a non-finite value)."""
    codes = np.asarray(codes, dtype=np.float64)
    return np.where(codes == 0, -np.inf, np.where(codes == _GRAIN_ATOMS - 1, np.nan, codes - _GRAIN_OFFSET))


def _fit_view(base: np.ndarray, neighbour: np.ndarray, index: int, view: str) -> Optional[Statistic]:
    if view == "value":
        return fit_binned(base[:, index], neighbour[:, index])
    read, limit = (_grain_atoms, _GRAIN_ATOMS) if view == "grain" else (_low_bits, 1 << LOW_BITS)
    atoms0, atoms1 = count_atoms(read(base[:, index]), limit), count_atoms(read(neighbour[:, index]), limit)
    if atoms0 is None or atoms1 is None:
        return None
    return fit_categorical(atoms0, atoms1)


def _views(column: np.ndarray) -> tuple[str, ...]:
    if np.all(column == column[0]):
        return ()
    distinct = np.unique(column).size
    # Low bits say something only about values that are not few and not small integers.
    bits = distinct > 16 and not np.all(column == np.round(column))
    return ("value", "bits", "grain") if bits else ("value",)


def fit_coordinates(base: np.ndarray, neighbour: np.ndarray, claim) -> tuple[Statistic, dict]:
    """The best (coordinate, view) on held-out halves of the training rows (module docstring)."""
    half0, half1 = base.shape[0] // 2, neighbour.shape[0] // 2
    if min(half0, half1) < _MIN_HALF:
        moments = [combine_moments([chunk_moments(rows)]) for rows in (base, neighbour)]
        return lda_statistic(*moments), {"coordinates_choice": "fisher (too few training rows)"}
    fit0, test0, fit1, test1 = base[:half0], base[half0:], neighbour[:half1], neighbour[half1:]
    pooled = np.concatenate([fit0, fit1])
    candidates: dict[tuple, Statistic] = {}
    if base.shape[1] > 1:
        moments = [combine_moments([chunk_moments(rows)]) for rows in (fit0, fit1)]
        candidates[("fisher", -1)] = lda_statistic(*moments)
    for index in range(base.shape[1]):
        for view in _views(pooled[:, index]):
            inner = _fit_view(fit0, fit1, index, view)
            if inner is not None:
                candidates[(view, index)] = CoordinateStatistic(index, view, inner)
    if not candidates:
        return LinearStatistic(np.ones(base.shape[1]) / np.sqrt(base.shape[1])) if base.shape[1] > 1 else \
            LinearStatistic(), {"coordinates_choice": "none (every coordinate is constant)"}
    with np.errstate(over="ignore", invalid="ignore"):  # a projection of huge outputs may overflow
        scores = {key: statistic_usage(claim, stat(test0), stat(test1)).value for key, stat in candidates.items()}
    best = max(scores, key=lambda key: (scores[key], -abs(key[1])))
    view, index = best
    if view == "fisher":
        moments = [combine_moments([chunk_moments(rows)]) for rows in (base, neighbour)]
        chosen: Statistic = lda_statistic(*moments)
    else:
        chosen = CoordinateStatistic(index, view, _fit_view(base, neighbour, index, view))
    top = sorted(scores.items(), key=lambda item: -item[1])[:5]
    return chosen, {"coordinates_choice": f"{view} of output[{index}]" if view != "fisher" else "fisher",
                    "held_out_usage": {f"{v}[{i}]": float(s) for (v, i), s in top}}


def _fit(base, neighbour, context: FitContext):
    return fit_coordinates(base.rows, neighbour.rows, context.claim)


register_statistic("coordinates", _fit, raw_rows=True, moments=lambda output_dim: False,
                   summary="the one coordinate of a vector output (its value, its low-order bits or its grain) that "
                           "separates the sides best on held-out training draws")
