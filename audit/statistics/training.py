"""The training phase: what each chunk keeps of its outputs for fitting a statistic.

A training chunk is reduced in the worker to summaries, each bounded in size whatever the number
of samples: its first ``rows_per_chunk`` raw rows (a fixed sample for the binned and classifier
statistics and for ``"auto"``'s held-out comparison), and, of the *other* rows, the moments (count,
mean, scatter) for Fisher's discriminant, the atom counts of a discrete output (None once a chunk
has more than ``atom_limit`` distinct rows), and the per-column fine-bin counts and pattern counts
of :mod:`audit.statistics.columns` (the additive and flag-and-value statistics).  The raw rows are
left out of the summaries so that ``"auto"`` can score candidates fitted on the summaries on rows
they never saw; :meth:`TrainingData.with_rows` folds them back in for the final fit.  The chunk's
samples are fresh (their own seed keys), so nothing learned here is reused to certify.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from .atoms import AtomCounts, count_atoms, merge_atoms
from .columns import (ColumnCounts, columns_from_arrays, columns_to_arrays, count_columns, count_patterns,
                      merge_columns, PATTERN_ATOMS)
from .linear import Moments, chunk_moments, combine_moments

__all__ = ["TrainingPlan", "TrainingChunk", "TrainingData"]


@dataclass(frozen=True)
class TrainingChunk:
    n: int
    moments: Optional[tuple]
    atoms: Optional[AtomCounts]
    rows: np.ndarray
    columns: Optional[tuple[ColumnCounts, ...]] = None
    patterns: Optional[AtomCounts] = None
    summarised: bool = False  # whether the summaries were kept (patterns may still be None)

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        arrays = {f"{prefix}_n": np.array(self.n), f"{prefix}_rows": self.rows}
        if self.moments is not None:
            arrays.update({f"{prefix}_mcount": np.array(self.moments[0]), f"{prefix}_mean": self.moments[1],
                           f"{prefix}_scatter": self.moments[2]})
            if len(self.moments) > 3 and self.moments[3] is not None:  # scaled columns (huge outputs)
                arrays[f"{prefix}_mexponents"] = self.moments[3]
        for name, atoms in (("", self.atoms), ("pattern", self.patterns)):
            if atoms is not None:
                arrays.update({f"{prefix}_{name}keys": atoms.keys, f"{prefix}_{name}counts": atoms.counts,
                               f"{prefix}_{name}atomrows": atoms.rows, f"{prefix}_{name}atomn": np.array(atoms.n)})
        if self.columns is not None:
            arrays.update(columns_to_arrays(self.columns, prefix))
        arrays[f"{prefix}_summarised"] = np.array(self.summarised)
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict, prefix: str) -> "TrainingChunk":
        n = int(arrays[f"{prefix}_n"])
        moments = None
        if f"{prefix}_mean" in arrays:
            moments = Moments(int(arrays[f"{prefix}_mcount"]), arrays[f"{prefix}_mean"], arrays[f"{prefix}_scatter"],
                              arrays.get(f"{prefix}_mexponents"))

        def atoms(name):
            if f"{prefix}_{name}keys" not in arrays:
                return None
            return AtomCounts(arrays[f"{prefix}_{name}keys"], arrays[f"{prefix}_{name}counts"],
                              arrays[f"{prefix}_{name}atomrows"], int(arrays[f"{prefix}_{name}atomn"]))

        return cls(n, moments, atoms(""), arrays[f"{prefix}_rows"], columns_from_arrays(arrays, prefix),
                   atoms("pattern"), bool(arrays.get(f"{prefix}_summarised", False)))


@dataclass(frozen=True)
class TrainingPlan:
    """What a training chunk keeps: raw rows, and of the other rows moments, atoms (up to
    ``atom_limit`` distinct rows), column and pattern counts."""

    moments: bool
    atom_limit: int
    rows_per_chunk: int
    columns: bool = False

    def reduce(self, outputs: np.ndarray) -> TrainingChunk:
        rows = outputs[:self.rows_per_chunk].copy()
        rest = outputs[self.rows_per_chunk:]
        moments = chunk_moments(rest) if self.moments and rest.shape[0] else None
        atoms = count_atoms(rest, self.atom_limit) if self.atom_limit > 0 else None
        columns = count_columns(rest) if self.columns else None
        patterns = count_patterns(rest) if self.columns else None
        return TrainingChunk(int(outputs.shape[0]), moments, atoms, rows, columns, patterns, True)


@dataclass(frozen=True)
class TrainingData:
    """Everything one side of one pair contributed to training, folded in chunk order: the
    summaries of the rows that are not kept raw, and the raw ``rows``."""

    n: int
    moments: Optional[tuple]
    atoms: Optional[AtomCounts]
    rows: np.ndarray
    columns: Optional[tuple[ColumnCounts, ...]] = None
    patterns: Optional[AtomCounts] = None
    plan: Optional[TrainingPlan] = None

    @classmethod
    def fold(cls, chunks: list[TrainingChunk], plan: TrainingPlan) -> "TrainingData":
        parts = [c.moments for c in chunks if c.moments is not None]
        moments = combine_moments(parts) if plan.moments and parts else None
        atoms = merge_atoms((c.atoms for c in chunks), plan.atom_limit) if plan.atom_limit > 0 else None
        columns = merge_columns(c.columns for c in chunks) if plan.columns else None
        patterns = merge_atoms((c.patterns for c in chunks), PATTERN_ATOMS) if plan.columns else None
        rows = np.concatenate([c.rows for c in chunks])
        return cls(sum(c.n for c in chunks), moments, atoms, rows, columns, patterns, plan)

    @property
    def summarised(self) -> int:
        """Rows in the summaries (all but the raw rows)."""
        return self.n - self.rows.shape[0]

    def with_rows(self, rows: Optional[np.ndarray] = None) -> "TrainingData":
        """The summaries of the summarised rows and of ``rows`` (default: the raw rows) together,
        for fitting on everything; the raw rows stay as they are."""
        extra = self.rows if rows is None else rows
        plan = self.plan
        if plan is None or extra.shape[0] == 0:
            return self
        moments = self.moments
        if plan.moments:
            parts = [m for m in (self.moments, chunk_moments(extra)) if m is not None]
            moments = combine_moments(parts)
        atoms = merge_atoms([self.atoms, count_atoms(extra, plan.atom_limit)], plan.atom_limit) \
            if plan.atom_limit > 0 else None
        columns, patterns = self.columns, self.patterns
        if plan.columns:
            columns = merge_columns([self.columns, count_columns(extra)])
            patterns = merge_atoms([self.patterns, count_patterns(extra)], PATTERN_ATOMS)
        return replace(self, moments=moments, atoms=atoms, columns=columns, patterns=patterns)
