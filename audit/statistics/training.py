"""The training phase: what each chunk keeps of its outputs for fitting a statistic.

A training chunk is reduced in the worker to at most three summaries, each bounded in size
whatever the number of samples: the moments (count, mean, scatter) for Fisher's discriminant, the
atom counts of a discrete output (None once a chunk has more than ``atom_limit`` distinct rows),
and the first ``rows_per_chunk`` raw rows, a fixed sample for the binned and classifier statistics
and for the held-out comparison of ``"auto"``.  The chunk's samples are fresh (their own seed keys),
so nothing learned here is reused to certify.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .atoms import AtomCounts, count_atoms, merge_atoms
from .linear import chunk_moments, combine_moments

__all__ = ["TrainingPlan", "TrainingChunk", "TrainingData"]


@dataclass(frozen=True)
class TrainingChunk:
    n: int
    moments: Optional[tuple]
    atoms: Optional[AtomCounts]
    rows: np.ndarray

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        arrays = {f"{prefix}_n": np.array(self.n), f"{prefix}_rows": self.rows}
        if self.moments is not None:
            arrays.update({f"{prefix}_mean": self.moments[1], f"{prefix}_scatter": self.moments[2]})
        if self.atoms is not None:
            arrays.update({f"{prefix}_keys": self.atoms.keys, f"{prefix}_counts": self.atoms.counts,
                           f"{prefix}_atomrows": self.atoms.rows})
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict, prefix: str) -> "TrainingChunk":
        n = int(arrays[f"{prefix}_n"])
        moments = None
        if f"{prefix}_mean" in arrays:
            moments = (n, arrays[f"{prefix}_mean"], arrays[f"{prefix}_scatter"])
        atoms = None
        if f"{prefix}_keys" in arrays:
            atoms = AtomCounts(arrays[f"{prefix}_keys"], arrays[f"{prefix}_counts"],
                               arrays[f"{prefix}_atomrows"], n)
        return cls(n, moments, atoms, arrays[f"{prefix}_rows"])


@dataclass(frozen=True)
class TrainingPlan:
    """What a training chunk keeps: moments, atoms (up to ``atom_limit`` distinct rows), raw rows."""

    moments: bool
    atom_limit: int
    rows_per_chunk: int

    def reduce(self, outputs: np.ndarray) -> TrainingChunk:
        moments = chunk_moments(outputs) if self.moments else None
        atoms = count_atoms(outputs, self.atom_limit) if self.atom_limit > 0 else None
        rows = outputs[:self.rows_per_chunk].copy()
        return TrainingChunk(int(outputs.shape[0]), moments, atoms, rows)


@dataclass(frozen=True)
class TrainingData:
    """Everything one side of one pair contributed to training, folded in chunk order."""

    n: int
    moments: Optional[tuple]
    atoms: Optional[AtomCounts]
    rows: np.ndarray

    @classmethod
    def fold(cls, chunks: list[TrainingChunk], plan: TrainingPlan) -> "TrainingData":
        moments = combine_moments(c.moments for c in chunks) if plan.moments else None
        atoms = merge_atoms((c.atoms for c in chunks), plan.atom_limit) if plan.atom_limit > 0 else None
        rows = np.concatenate([c.rows for c in chunks])
        return cls(sum(c.n for c in chunks), moments, atoms, rows)
