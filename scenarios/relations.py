"""Neighbour relations on datasets of rows.

A dataset is an ``(n, d)`` array: n rows (one per individual) of d numbers; ``n = 0`` is
allowed (shape ``(0, d)``).  Datasets are **multisets** of rows, so the order of the rows never
matters.  Two relations are supported (Dwork & Roth 2014, §2.3; docs/ground-truth.md §5):

- ``"add-remove"``: one dataset is the other plus one row, i.e. the sizes differ by one and the
  multiset difference is a single row on the larger side;
- ``"replace"``: same size n ≥ 1, and the multisets differ in exactly one row on each side.

Identical datasets are neighbours under neither relation.  A one-dimensional array is read as a
single column (n rows, d = 1), the same convention as :func:`mechanisms.validation.check_dataset`.

The comparison is vectorized: the rows of both datasets are sorted lexicographically together
(:func:`numpy.lexsort`) and counted per distinct row, so the cost is O(d (n + n') log(n + n'))
with no Python loop over rows.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from mechanisms.claims import Relation, as_relation

__all__ = ["as_rows", "multiset_difference", "row_difference", "neighbor_mismatch", "is_neighbor"]


def as_rows(dataset: Any, *, name: str = "dataset") -> np.ndarray:
    """Return ``dataset`` as a float64 ``(n, d)`` array of rows (a 1-D array is one column).

    Parameters
    ----------
    dataset : array_like
        The rows.
    name : str
        The parameter name used in error messages.

    Raises
    ------
    TypeError
        If the values are not numeric.
    ValueError
        If the array is not one- or two-dimensional, or contains NaN.
    """
    try:
        array = np.asarray(dataset, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"`{name}` must be a numeric (n, d) array of rows, got {type(dataset).__name__}"
        ) from exc
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2:
        raise ValueError(f"`{name}` must be an (n, d) array of rows, got shape {array.shape}")
    if np.isnan(array).any():
        raise ValueError(f"`{name}` contains NaN, which cannot be compared as a row value")
    return array


def _excess_counts(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``a`` ∪ ``b`` and, per distinct row, (count in a) − (count in b).

    Rows are sorted lexicographically with :func:`numpy.lexsort` (last key = first column) and
    a new distinct row starts wherever a sorted row differs from its predecessor.
    """
    # Adding 0.0 turns -0.0 into +0.0 so that equal values also sort together.
    stacked = np.concatenate([a, b]) + 0.0
    order = np.lexsort(stacked.T[::-1])
    ordered = stacked[order]
    starts = np.empty(len(ordered), dtype=bool)
    starts[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=starts[1:])
    group = np.cumsum(starts) - 1
    sign = np.where(order < a.shape[0], 1, -1)
    return ordered[starts], np.bincount(group, weights=sign).astype(np.int64)


def multiset_difference(dataset: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
    """Rows only in ``dataset`` and rows only in ``other``, as multisets (with multiplicity).

    Parameters
    ----------
    dataset, other : array_like, shape (n, d) and (n', d)
        Datasets of rows, compared exactly (``-0.0`` equals ``0.0``).

    Returns
    -------
    removed, added : ndarray, shape (k, d) and (k', d)
        The rows of ``dataset`` not matched in ``other`` and vice versa, in lexicographic order.

    Raises
    ------
    ValueError
        If the datasets have different numbers of columns.
    """
    a = as_rows(dataset, name="D")
    b = as_rows(other, name="D_prime")
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"datasets must have the same number of columns, got shapes {a.shape} and {b.shape}"
        )
    if a.shape[0] == 0 or b.shape[0] == 0:
        return a.copy(), b.copy()
    distinct, excess = _excess_counts(a, b)
    return (np.repeat(distinct, np.maximum(excess, 0), axis=0),
            np.repeat(distinct, np.maximum(-excess, 0), axis=0))


def row_difference(dataset: Any, other: Any) -> tuple[int, int]:
    """Sizes of the multiset differences: (rows only in ``dataset``, rows only in ``other``).

    Parameters
    ----------
    dataset, other : array_like, shape (n, d) and (n', d)
        Datasets of rows.

    Examples
    --------
    >>> row_difference([[0, 1], [1, 1]], [[1, 1], [0, 0], [0, 1]])
    (0, 1)
    """
    removed, added = multiset_difference(dataset, other)
    return removed.shape[0], added.shape[0]


def neighbor_mismatch(dataset: Any, other: Any, relation: Any) -> Optional[str]:
    """``None`` if the datasets are neighbours under ``relation``, else the reason they are not.

    Parameters
    ----------
    dataset, other : array_like, shape (n, d) and (n', d)
        Datasets of rows; rows of different widths are never neighbours.
    relation : {"add-remove", "replace"} or mechanisms.Relation

    Returns
    -------
    str or None
        A short phrase for error messages, e.g. ``"sizes 3 and 5 do not differ by one"``.
    """
    relation = as_relation(relation)
    a = as_rows(dataset, name="D")
    b = as_rows(other, name="D_prime")
    n, n_prime = a.shape[0], b.shape[0]
    if a.shape[1] != b.shape[1]:
        return f"rows have different widths ({a.shape[1]} and {b.shape[1]} columns)"
    if relation is Relation.ADD_REMOVE:
        if abs(n - n_prime) != 1:
            return f"sizes {n} and {n_prime} do not differ by one"
        removed, added = row_difference(a, b)
        if (removed, added) in ((1, 0), (0, 1)):
            return None
        return (f"the larger dataset is not the smaller plus one row ({removed} rows only in "
                f"D, {added} only in D')")
    if n != n_prime:
        return f"sizes {n} and {n_prime} differ (replacement keeps the size)"
    removed, added = row_difference(a, b)
    if removed == 1:
        return None
    if removed == 0:
        return "the datasets are identical (as multisets of rows)"
    return f"{removed} rows differ on each side, not exactly one"


def is_neighbor(dataset: Any, other: Any, relation: Any) -> bool:
    """Whether ``dataset`` and ``other`` are neighbours under ``relation``.

    Parameters
    ----------
    dataset, other : array_like, shape (n, d) and (n', d)
        Datasets of rows; ``n = 0`` is allowed.  Row order is irrelevant.
    relation : {"add-remove", "replace"} or mechanisms.Relation
        The neighbour relation (parsed with :func:`mechanisms.claims.as_relation`).

    Returns
    -------
    bool
        ``True`` iff one is the other plus one row (add-remove), or both have the same size
        n ≥ 1 and differ in exactly one row on each side (replace).  Identical datasets are
        never neighbours.

    Raises
    ------
    TypeError, ValueError
        If ``relation`` is not a known relation or a dataset is not a numeric 1-D/2-D array.

    References
    ----------
    C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, §2.3.
    """
    return neighbor_mismatch(dataset, other, relation) is None
