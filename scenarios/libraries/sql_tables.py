"""The neighbouring tables of the SmartNoise SQL catalogues (:mod:`.snsql` for ``smartnoise-sql``
from 1.0, :mod:`.snsql_legacy` for the ``opendp-smartnoise`` releases before it), shared so that a
grid point of either names the same pairs in a range of releases.

A table is an array of rows ``[person id, x, g]``: g = 0, 1, 2 stands for the group "a", "b", "c".
Row i has person id i, so adding a row adds a person with one row (row- and user-level privacy
with ``max_ids = 1`` see the same pairs).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from mechanisms.claims import Relation

from .families import HUGE, row_pairs

__all__ = ["table_rows", "table_pairs", "person_pairs"]


def table_rows(pairs_of_values: Iterable[tuple[float, float]]) -> list[list[float]]:
    """Rows ``[i, x, g]`` of the values ``(x, g)``, person id i the row's index."""
    return [[float(i), x, float(g)] for i, (x, g) in enumerate(pairs_of_values)]


def table_pairs(lo: float, hi: float, *, grouped: bool) -> list[tuple]:
    """Add-remove pairs of one row (x, g): at the upper bound, at the lower, beyond the upper
    (clamped), at 1e300, in a new group c (grouped queries); one row against two."""
    size = 40 if grouped else 6  # censoring keeps a group only well above its threshold
    base = np.array(table_rows([(lo if i % 2 else hi, float(i % 2)) for i in range(size)]))
    n = float(size)
    extra = [([n, hi, 0.0], "add a row at upper"), ([n, lo, 0.0], "add a row at lower"),
             ([n, hi + 10 * (hi - lo), 0.0], "add a row beyond upper (clamped)"), ([n, HUGE, 0.0], "add a row at 1e300")]
    if grouped:
        extra.append(([n, hi, 2.0], "add a row in new group c"))
    pairs = row_pairs(base, extra, Relation.ADD_REMOVE)
    pairs.append((np.array([[0.0, lo, 0.0]]), np.array([[0.0, lo, 0.0], [1.0, hi, 0.0]]), "one row vs two"))
    return pairs


def person_pairs(lo: float, hi: float) -> list[tuple]:
    """A person with three rows added (``max_ids = 1``: the reader must keep one), and one with one
    row; vouched for: the datasets differ in every row of one person id."""
    base = np.array(table_rows([(lo if i % 2 else hi, 0.0) for i in range(6)]))
    person = np.array([[6.0, hi, 0.0]] * 3)
    return [(base, np.concatenate([base, person]), "add a person with 3 rows at upper"),
            (base, np.concatenate([base, person[:1]]), "add a person with 1 row at upper")]
