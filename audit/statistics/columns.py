"""Per-column summaries of training outputs: what the additive and flag-and-value statistics learn from.

Each output column is summarised on fixed, data-independent *fine bins*, so that the summaries of
separate chunks merge exactly (in any worker, in a fixed order) and their size does not grow with
the number of draws:

* an **integer** value |v| ≤ 2³¹ (a flag, a sentinel such as −1, a count) is an *atom* of its own;
* any other value falls into the fine bin of its IEEE-754 pattern truncated to the sign, the
  exponent and the top :data:`MANTISSA_BITS` bits of the mantissa: bins of relative width
  2⁻⁶ ≈ 1.6% (log-spaced, so a tail value far out is never lumped with the bulk).

The *pattern* of an output row replaces every non-integer value by :data:`CONTINUOUS` (½, which is
no integer): it keeps the ⊤/⊥ flags, the sentinels and which columns released a value.  The
training chunks count the distinct patterns (:mod:`audit.statistics.atoms`), and the columns' fine
bins give each column's value distribution.  A bin key is the value's bit pattern mapped to an
unsigned integer that increases with the value (negative values' bits inverted, positive ones'
sign bit set), with its low ``52 − MANTISSA_BITS`` bits cleared: keys sort like the values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .atoms import AtomCounts, count_atoms

__all__ = ["MANTISSA_BITS", "CONTINUOUS", "INTEGER_LIMIT", "ColumnCounts", "ordered_keys", "bin_keys",
           "is_atom", "pattern_codes", "count_columns", "merge_columns", "count_patterns", "PATTERN_ATOMS"]

#: Mantissa bits kept by a fine bin: relative width 2⁻⁶.
MANTISSA_BITS = 6
_SHIFT = np.uint64(52 - MANTISSA_BITS)
_SIGN = np.uint64(1 << 63)
#: Integers up to this magnitude are atoms of their own.
INTEGER_LIMIT = float(1 << 31)
#: The pattern code of a value that is not an atom.
CONTINUOUS = 0.5
#: Distinct atoms per column kept exactly (more: the column's integers are binned like any value).
COLUMN_ATOMS = 4096
#: Distinct patterns counted (more: no pattern summary).
PATTERN_ATOMS = 1 << 14


def ordered_keys(values: np.ndarray) -> np.ndarray:
    """uint64 keys that sort like the float64 ``values`` (−0.0 is +0.0)."""
    bits = (np.ascontiguousarray(values, dtype=np.float64) + 0.0).view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | _SIGN)


def bin_keys(values: np.ndarray) -> np.ndarray:
    """The fine-bin key of every value: its ordered key with the low mantissa bits cleared."""
    return (ordered_keys(values) >> _SHIFT) << _SHIFT


def bin_edges(keys: np.ndarray) -> np.ndarray:
    """The smallest value of each fine bin (the inverse of :func:`bin_keys` at its lower end)."""
    keys = np.asarray(keys, dtype=np.uint64)
    positive = (keys & _SIGN).astype(bool)
    # A negative bin [key, key + width) in key order holds values whose bits are ~key ... ~(key + width − 1):
    # its smallest value has the largest magnitude, the bits ~key.
    bits = np.where(positive, keys & ~_SIGN, ~keys)
    return bits.view(np.float64)


def is_atom(values: np.ndarray) -> np.ndarray:
    """Whether each value is an integer of magnitude at most 2³¹ (an atom of its own)."""
    return (np.abs(values) <= INTEGER_LIMIT) & (values == np.round(values))


def pattern_codes(outputs: np.ndarray) -> np.ndarray:
    """The rows' patterns: atoms kept, every other value replaced by :data:`CONTINUOUS`."""
    return np.where(is_atom(outputs), outputs, CONTINUOUS) + 0.0


@dataclass(frozen=True)
class ColumnCounts:
    """One column's counts on its fine bins: atoms (sorted values) and binned values (sorted keys).

    ``binned_atoms`` says the column had more than :data:`COLUMN_ATOMS` distinct integers somewhere,
    so that all its integers are counted in bins (the same rule in every chunk after merging)."""

    atom_values: np.ndarray
    atom_counts: np.ndarray
    keys: np.ndarray
    key_counts: np.ndarray
    binned_atoms: bool = False

    @property
    def total(self) -> int:
        return int(self.atom_counts.sum() + self.key_counts.sum())


def _unique(values: np.ndarray, counts: Optional[np.ndarray] = None) -> tuple[np.ndarray, np.ndarray]:
    if counts is None:
        unique, found = np.unique(values, return_counts=True)
        return unique, found.astype(np.int64)
    unique, inverse = np.unique(values, return_inverse=True)
    return unique, np.bincount(inverse.ravel(), weights=counts, minlength=unique.size).astype(np.int64)


def _column(values: np.ndarray) -> ColumnCounts:
    atom = is_atom(values)
    atom_values, atom_counts = _unique(values[atom] + 0.0)
    keys, key_counts = _unique(bin_keys(values[~atom]))
    if atom_values.size > COLUMN_ATOMS:
        return _binned(ColumnCounts(atom_values, atom_counts, keys, key_counts))
    return ColumnCounts(atom_values, atom_counts, keys, key_counts)


def _binned(column: ColumnCounts) -> ColumnCounts:
    """The column with its atoms counted in their fine bins."""
    keys, counts = _unique(np.concatenate([column.keys, bin_keys(column.atom_values)]),
                           np.concatenate([column.key_counts, column.atom_counts]))
    return ColumnCounts(np.zeros(0), np.zeros(0, dtype=np.int64), keys, counts, True)


def count_columns(outputs: np.ndarray) -> tuple[ColumnCounts, ...]:
    """The fine-bin counts of every column of a (n, k) chunk."""
    return tuple(_column(outputs[:, j]) for j in range(outputs.shape[1]))


def merge_columns(parts) -> Optional[tuple[ColumnCounts, ...]]:
    """Merge the column counts of chunks (in the given, fixed order); None if there are none."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    merged = []
    for columns in zip(*parts):
        binned = any(c.binned_atoms for c in columns)
        atom_values, atom_counts = _unique(np.concatenate([c.atom_values for c in columns]),
                                           np.concatenate([c.atom_counts for c in columns]))
        keys, key_counts = _unique(np.concatenate([c.keys for c in columns]),
                                   np.concatenate([c.key_counts for c in columns]))
        column = ColumnCounts(atom_values, atom_counts, keys, key_counts)
        merged.append(_binned(column) if binned or atom_values.size > COLUMN_ATOMS else column)
    return tuple(merged)


def count_patterns(outputs: np.ndarray) -> Optional[AtomCounts]:
    """The distinct patterns of a chunk (:func:`pattern_codes`), None beyond :data:`PATTERN_ATOMS`."""
    return count_atoms(pattern_codes(outputs), PATTERN_ATOMS)


def columns_to_arrays(columns: tuple[ColumnCounts, ...], prefix: str) -> dict[str, np.ndarray]:
    """Flat arrays of a chunk's column counts (for checkpoints): per column its four arrays' lengths."""
    sizes = np.array([[c.atom_values.size, c.keys.size, int(c.binned_atoms)] for c in columns], dtype=np.int64)
    return {f"{prefix}_colsizes": sizes.reshape(-1, 3),
            f"{prefix}_colatoms": np.concatenate([c.atom_values for c in columns]),
            f"{prefix}_colatomcounts": np.concatenate([c.atom_counts for c in columns]),
            f"{prefix}_colkeys": np.concatenate([c.keys for c in columns]).astype(np.uint64),
            f"{prefix}_colkeycounts": np.concatenate([c.key_counts for c in columns])}


def columns_from_arrays(arrays: dict, prefix: str) -> Optional[tuple[ColumnCounts, ...]]:
    """The inverse of :func:`columns_to_arrays` (None if the chunk kept no column counts)."""
    if f"{prefix}_colsizes" not in arrays:
        return None
    sizes = np.asarray(arrays[f"{prefix}_colsizes"]).reshape(-1, 3)
    atoms = np.split(arrays[f"{prefix}_colatoms"], np.cumsum(sizes[:, 0])[:-1])
    atom_counts = np.split(arrays[f"{prefix}_colatomcounts"], np.cumsum(sizes[:, 0])[:-1])
    keys = np.split(arrays[f"{prefix}_colkeys"].astype(np.uint64), np.cumsum(sizes[:, 1])[:-1])
    key_counts = np.split(arrays[f"{prefix}_colkeycounts"], np.cumsum(sizes[:, 1])[:-1])
    return tuple(ColumnCounts(a, ac, k, kc, bool(b)) for a, ac, k, kc, b
                 in zip(atoms, atom_counts, keys, key_counts, sizes[:, 2]))
