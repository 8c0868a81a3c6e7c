"""Neighbour families that find implementation bugs, for datasets of rows and for query values.

Worst-case sensitivity pairs find a wrong noise scale.  Implementation bugs hide elsewhere, so a
catalogue entry's scenario also holds pairs that

- change the data's *shape*: a single record against two, a label or category that appears only in
  the neighbour (a label set read from the private data), a group that becomes empty;
- put values *at and beyond* the declared bounds (a library that promises to clip must clip
  before it computes anything else);
- use *huge and tiny magnitudes* (overflow to inf, subnormals, a sensitivity computed in floating
  point that rounds to 0).

Each function returns labelled pairs ``(D, D', label)`` for :func:`scenarios.from_pairs` (rows,
checked to be neighbours) or :func:`scenarios.custom` (values the catalogue vouches for).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from mechanisms.claims import Relation, as_relation

__all__ = ["row_pairs", "value_pairs", "HUGE", "TINY"]

#: A magnitude near the top of float64 (sums of two overflow to inf).
HUGE = 1e300
#: A subnormal magnitude.
TINY = 5e-324


def _rows(rows: Any) -> np.ndarray:
    array = np.asarray(rows, dtype=np.float64)
    return array.reshape(-1, 1) if array.ndim == 1 else array


def row_pairs(base: Any, extra: Sequence[tuple[Any, str]], relation: Any) -> list[tuple]:
    """Pairs that differ from ``base`` in one row, one per ``(row, label)`` of ``extra``.

    Under add-remove the neighbour is ``base`` with the row added; under replace it is ``base``
    with its *last* row replaced by the row (so order ``base`` with the row to be replaced last).

    Parameters
    ----------
    base : array_like, shape (n, d)
    extra : sequence of (row, label)
        The rows to add or substitute, e.g. a corner of the bounds, a row beyond them, a row with
        a new label.
    relation : {"add-remove", "replace"}
    """
    base = _rows(base)
    relation = as_relation(relation)
    pairs = []
    for row, label in extra:
        row = np.asarray(row, dtype=np.float64).reshape(1, -1)
        if relation is Relation.ADD_REMOVE:
            neighbour = np.concatenate([base, row])
        else:
            if base.shape[0] == 0:
                raise ValueError("`base` must hold a row to replace under the replace relation")
            neighbour = np.concatenate([base[:-1], row])
        pairs.append((base, neighbour, label))
    return pairs


def value_pairs(values: Sequence[tuple[float, float, str]], sensitivity: float) -> list[tuple]:
    """Pairs of query answers ``(v, v′)`` with ``|v − v′| ≤ sensitivity``, as one-element inputs.

    The answers a noise primitive randomises are not datasets of rows: the library promises its
    claim for any two answers within the declared sensitivity, which this function checks
    (to 1e-12 relative) before the catalogue vouches for the pairs.
    """
    pairs = []
    for value, other, label in values:
        if abs(other - value) > sensitivity * (1 + 1e-12):
            raise ValueError(f"pair {label!r}: |{other!r} - {value!r}| exceeds the sensitivity {sensitivity!r}")
        pairs.append((np.array([value], dtype=np.float64), np.array([other], dtype=np.float64), label))
    return pairs
