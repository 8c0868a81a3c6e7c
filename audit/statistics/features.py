"""Feature maps for the classifier statistic: values, sentinel flags and float bit patterns.

* ``values``: the output columns themselves;
* sentinel flags: for each column, a 0/1 feature per value that makes up at least
  :data:`SENTINEL_SHARE` of the training outputs (e.g. a ⊥ code, a clamp bound, an exact 0);
* ``bits``: the 64-bit IEEE-754 pattern of every column, one 0/1 feature per bit.  Floating-point
  implementations of noise leak through their low-order bits (Mironov, CCS 2012: the set of
  reachable doubles and the rounding of ``x + noise`` depend on x), and a bit pattern exposes
  what no smooth function of the value can.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FeatureMap", "fit_feature_map", "FEATURE_SETS"]

FEATURE_SETS = ("values", "values+bits")
SENTINEL_SHARE = 0.01
_MAX_SENTINELS = 8
_SHIFTS = np.arange(64, dtype=np.uint64)


@dataclass(frozen=True)
class FeatureMap:
    """outputs (n, k) → features (n, f), fixed after training."""

    bits: bool
    sentinels: tuple  # per column, a tuple of sentinel values

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        parts = [outputs]
        for column, values in enumerate(self.sentinels):
            if values:
                parts.append((outputs[:, column, None] == np.asarray(values)[None, :]).astype(np.float64))
        if self.bits:
            words = (np.ascontiguousarray(outputs) + 0.0).view(np.uint64)
            for column in range(outputs.shape[1]):
                parts.append(((words[:, column, None] >> _SHIFTS) & np.uint64(1)).astype(np.float64))
        return np.concatenate(parts, axis=1)

    @property
    def description(self) -> str:
        flags = sum(len(v) for v in self.sentinels)
        return ("values" + (" + 64-bit patterns" if self.bits else "")
                + (f" + {flags} sentinel flags" if flags else ""))


def fit_feature_map(training: np.ndarray, features: str) -> FeatureMap:
    """Choose sentinel values on the training outputs; ``features`` is one of FEATURE_SETS."""
    if features not in FEATURE_SETS:
        raise ValueError(f"`features` must be one of {FEATURE_SETS}, got {features!r}")
    sentinels = []
    for column in range(training.shape[1]):
        values, counts = np.unique(training[:, column], return_counts=True)
        frequent = values[counts >= SENTINEL_SHARE * training.shape[0]]
        order = np.argsort(-counts[counts >= SENTINEL_SHARE * training.shape[0]], kind="stable")
        sentinels.append(tuple(float(v) for v in frequent[order][:_MAX_SENTINELS]))
    return FeatureMap(bits=features == "values+bits", sentinels=tuple(sentinels))
