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

__all__ = ["FeatureMap", "LinearFeatures", "fit_feature_map", "FEATURE_SETS"]

FEATURE_SETS = ("values", "values+bits")
SENTINEL_SHARE = 0.01
_MAX_SENTINELS = 8


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
        if self.bits:  # bit i of column j's word at position 64·j + i (little-endian bytes, LSB first)
            octets = np.ascontiguousarray(outputs + 0.0, dtype="<f8").view(np.uint8)
            parts.append(np.unpackbits(octets, axis=1, bitorder="little"))
        return np.concatenate(parts, axis=1, dtype=np.float64)

    @property
    def width(self) -> int:
        """Number of features per output row (for outputs of ``len(sentinels)`` columns)."""
        return len(self.sentinels) * (65 if self.bits else 1) + sum(len(v) for v in self.sentinels)

    def linear(self, weights: np.ndarray, intercept: float) -> "LinearFeatures":
        """The linear score ``intercept + features(x) @ weights``, evaluated without building the
        feature matrix (:class:`LinearFeatures`)."""
        k = len(self.sentinels)
        weights = np.asarray(weights, dtype=np.float64)
        position, flags = k, []
        for values in self.sentinels:
            flags.append(weights[position:position + len(values)])
            position += len(values)
        tables = None
        if self.bits:
            bit_weights = weights[position:].reshape(k, 8, 8)  # column, byte, bit within the byte
            byte_bits = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)
            tables = np.einsum("cyb,vb->cyv", bit_weights, byte_bits)  # (column, byte, byte value)
        return LinearFeatures(self, weights[:k].copy(), tuple(flags), tables, float(intercept))

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


@dataclass(frozen=True)
class LinearFeatures:
    """``intercept + features(x) @ w`` for a :class:`FeatureMap`, computed column by column: the
    values by a product, each sentinel flag by a comparison, and the 64 bit features of a column by
    eight lookups in tables of 256 sums (one per byte of the IEEE-754 word, little-endian as
    :meth:`FeatureMap.__call__` numbers the bits).  No feature matrix is built."""

    features: FeatureMap
    value_weights: np.ndarray
    flag_weights: tuple
    tables: object  # (columns, 8, 256) float64, or None without bit features
    intercept: float

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        scores = outputs @ self.value_weights + self.intercept
        for column, (values, weights) in enumerate(zip(self.features.sentinels, self.flag_weights)):
            for value, weight in zip(values, weights):
                scores += weight * (outputs[:, column] == value)
        if self.tables is not None:
            words = np.ascontiguousarray(outputs + 0.0, dtype="<f8").view(np.uint8).reshape(outputs.shape[0], -1, 8)
            for column in range(outputs.shape[1]):
                for byte in range(8):
                    scores += self.tables[column, byte][words[:, column, byte]]
        return scores
