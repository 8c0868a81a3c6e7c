"""The coordinates statistic: the one informative coordinate of a wide release, by value or by bits.

The synthetic releases below have eight coordinates of identical N(0, 1) noise on both sides and one
that differs: an exact 0 that appears on half the base draws and never on the neighbour's (a
coefficient released without noise whenever a noisy offset is clipped), or values whose low 10 bits
are all 0 on the base side (rounded to a grid of 2⁻⁴²) and uniform on the neighbour's.  In both the
informative coordinate separates the sides with probability 1/2 and 1 − 2⁻¹⁰ respectively, while an
uninformative one has held-out separation near 0, so the choice is not a close call: with 2,000
training rows per side the held-out Clopper–Pearson scores differ by far more than their spread.
"""

from __future__ import annotations

import numpy as np
import pytest

import scenarios
from audit import run_audit
from audit.statistics import CoordinateStatistic
from audit.statistics.coordinates import fit_coordinates
from mechanisms.claims import PureDP

pytestmark = pytest.mark.statistical


def _atom(rows: int, rng, base: bool) -> np.ndarray:
    out = rng.standard_normal((rows, 9))
    if base:
        out[rng.random(rows) < 0.5, 5] = 0.0
    return out


def _rounded(rows: int, rng, base: bool) -> np.ndarray:
    out = rng.standard_normal((rows, 9))
    if base:
        out[:, 3] = np.round(out[:, 3] * 2.0**42) / 2.0**42  # low 10 bits of the pattern are 0
    return out


@pytest.mark.parametrize("make, index, views", [(_atom, 5, ("value", "bits", "grain")),
                                                (_rounded, 3, ("bits", "grain"))])
def test_the_informative_coordinate_and_view_are_chosen(make, index, views):
    # An exact 0 is isolated by any view (its bit pattern is all zeros, its grain -inf); a rounding
    # to 2^-42 by the bits and by the grain (2^-42 divides every rounded value, about 2^-10 of the others).
    rng = np.random.default_rng(7)
    statistic, notes = fit_coordinates(make(2000, rng, True), make(2000, rng, False), PureDP(1.0))
    assert isinstance(statistic, CoordinateStatistic)
    assert statistic.index == index and statistic.view in views, notes


class _Release:
    """A nine-coordinate release whose coordinate 5 is exactly 0 on half the draws of D only."""

    claim = PureDP(1.0)

    def __call__(self, dataset, size, rng):
        return _atom(size, rng, float(np.sum(dataset)) == 0.0)


def test_an_audit_with_it_refutes_the_atom_and_names_the_coordinate():
    report = run_audit(_Release(), scenarios.custom([([0.0], [1.0])], "replace"), claim=PureDP(1.0, "replace"),
                       samples=4_000, seed=3, statistic="coordinates", n_jobs=1, progress=False, accuracy=False)
    assert str(report.verdict) == "VIOLATED"
    assert report.statistic["pairs"][0]["coordinate"] == 5
