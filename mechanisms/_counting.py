"""The counting query of the discrete and categorical reference mechanisms.

Lattice-valued mechanisms need an integer query: they answer the count c(X) = Σ_i x_i of a
dataset of rows x_i ∈ {0, 1} (one column).  Adding, removing or replacing a row changes the
count by at most 1, so every neighbour pair of either relation is a pair of counts (c, c + 1) or
identical counts (GROUND_TRUTH §3: the privacy profile is the supremum over those pairs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import check_dataset

__all__ = ["count"]


def count(dataset: Any) -> int:
    """c(X) = Σ x_i for an (n, 1) dataset of 0/1 entries; other values raise ``ValueError``."""
    data = check_dataset(dataset, 1)
    if data.size and not np.all((data == 0.0) | (data == 1.0)):
        bad = data[(data != 0.0) & (data != 1.0)][0]
        raise ValueError(f"`dataset` must hold 0/1 entries (a counting query), got {bad!r}")
    return int(data.sum())
