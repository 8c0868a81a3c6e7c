"""Atoms: the distinct output rows of a discrete mechanism, keyed by a 64-bit hash of the row.

A row of k float64 values is keyed by its bit pattern (−0.0 is first mapped to +0.0, so equal
values are one atom).  For k = 1 the key *is* the bit pattern, so distinct values never share a
key.  For k > 1 each column's word is mixed by the splitmix64 finaliser (Steele, Lea & Flood
2014) and folded into the running key, which is mixed again; two distinct rows share a key with
probability about 2⁻⁶⁴ per pair of rows (a multiply–xor fold alone is not enough: products only
carry bits upwards, and rows of small integers differ only in their high bits).  A shared key would only merge two atoms into one event, which can weaken the
test but never invalidates a bound: any fixed map from outputs to scores gives valid events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["row_keys", "AtomCounts", "count_atoms", "merge_atoms"]

_PRIME = np.uint64(0x100000001B3)
_OFFSET = np.uint64(0xCBF29CE484222325)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _finalise(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (bijective on 64-bit words), in place."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


def row_keys(outputs: np.ndarray) -> np.ndarray:
    """A uint64 key per row of a (n, k) float64 array (a loop over the k columns only)."""
    values = np.ascontiguousarray(outputs, dtype=np.float64) + 0.0  # −0.0 → +0.0
    bits = values.view(np.uint64)
    if bits.shape[1] == 1:
        return bits[:, 0].copy()
    with np.errstate(over="ignore"):
        h = np.full(bits.shape[0], _OFFSET, dtype=np.uint64)
        for column in range(bits.shape[1]):
            word = bits[:, column] + _GOLDEN * np.uint64(column + 1)
            h ^= _finalise(word)
            h = _finalise(h * _PRIME)
        return h


@dataclass(frozen=True)
class AtomCounts:
    """Sorted distinct keys, their counts, one representative row each, out of ``n`` rows."""

    keys: np.ndarray
    counts: np.ndarray
    rows: np.ndarray
    n: int


def count_atoms(outputs: np.ndarray, limit: int) -> Optional[AtomCounts]:
    """The atoms of one chunk, or None when it has more than ``limit`` distinct rows.

    A continuous output is recognised cheaply first: if the first column of the first rows alone
    takes more than ``limit`` distinct values, the rows cannot be fewer (no hashing needed)."""
    prefix = outputs[:4 * limit + 1, 0]
    if prefix.size > limit and np.unique(prefix).size > limit:
        return None
    keys = row_keys(outputs)
    unique, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if unique.size > limit:
        return None
    return AtomCounts(unique, counts.astype(np.int64), outputs[first].copy(), int(outputs.shape[0]))


def merge_atoms(parts, limit: int) -> Optional[AtomCounts]:
    """Merge chunk atoms (in the given, fixed order); None if any part or the union overflows."""
    parts = list(parts)
    if not parts or any(p is None for p in parts):
        return None
    keys = np.concatenate([p.keys for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    rows = np.concatenate([p.rows for p in parts])
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if unique.size > limit:
        return None
    total = np.bincount(inverse.ravel(), weights=counts, minlength=unique.size).astype(np.int64)
    return AtomCounts(unique, total, rows[first], int(sum(p.n for p in parts)))
