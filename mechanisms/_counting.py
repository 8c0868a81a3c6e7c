"""The counting query of the discrete and categorical reference mechanisms.

Lattice-valued mechanisms need an integer query: they answer the count c(X) = Σ_i x_i of a
dataset of rows x_i ∈ {0, 1} (one column).  Adding, removing or replacing a row changes the
count by at most 1, so every neighbour pair of either relation is a pair of counts (c, c + 1) or
identical counts (docs/ground-truth.md §3: the privacy profile is the supremum over those pairs).
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from .base import ReferenceMechanism
from .claims import as_relation
from .parameters import FrozenParameters
from .validation import check_dataset, check_size

__all__ = ["count", "CountCategoryMechanism", "CountNoiseMechanism"]


def count(dataset: Any) -> int:
    """c(X) = Σ x_i for an (n, 1) dataset of 0/1 entries; other values raise ``ValueError``."""
    data = check_dataset(dataset, 1)
    if data.size and not np.all((data == 0.0) | (data == 1.0)):
        bad = data[(data != 0.0) & (data != 1.0)][0]
        raise ValueError(f"`dataset` must hold 0/1 entries (a counting query), got {bad!r}")
    return int(data.sum())


class CountCategoryMechanism:
    """Shared door of the categorical mechanisms on a count (randomized response, exponential
    mechanism): validation, the one-column output and the relation argument of the exact methods.

    Subclasses set ``relation`` and ``claim`` and implement ``_draw(c, size, rng)`` returning the
    ``size`` chosen outcome indices for count c.  They declare no additive accuracy claim (their
    output is a category, not an estimate with an error).
    """

    d = 1
    row_dim = 1
    output_dim = 1
    query_columns = (0,)

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        c = count(dataset)
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        return self._draw(c, size, rng).astype(np.float64).reshape(size, 1)

    def _draw(self, c: int, size: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def _relation(self, relation: Any):
        return self.relation if relation is None else as_relation(relation)



class CountNoiseMechanism(FrozenParameters, ReferenceMechanism):
    """Shared sampling of the lattice mechanisms: c(X) + integer noise, one float64 column.

    Subclasses implement ``_noise(size, rng)`` (int64 draws) and the exact-truth methods.
    """

    d = 1

    def true_answer(self, dataset: Any) -> np.ndarray:
        return np.array([float(count(dataset))])

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        count(dataset)  # 0/1 rows only
        return super().__call__(dataset, size, rng)

    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        noise = self._noise(size, rng)
        return (data.sum() + noise).astype(np.float64).reshape(size, 1)  # exact below 2^53

    @abc.abstractmethod
    def _noise(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` int64 noise draws."""
