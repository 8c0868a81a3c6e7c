"""Training sets for the PyTorch/Opacus audits: a real one shipped in a package, and a synthetic one.

Neither downloads anything at run time:

- :func:`digits` is scikit-learn's ``load_digits`` (the UCI optical recognition of handwritten
  digits test set: 1797 images of 8 × 8 pixels with values 0–16, ten classes; Alpaydin & Kaynak
  1998), which ships inside scikit-learn.  Pixels are scaled to [0, 1]; ``n`` rows are taken in a
  fixed order drawn from ``seed``.
- :func:`synthetic` draws ``classes`` Gaussian clusters in ``features`` dimensions from a seed.

Both return a :class:`TrainingSet` of float32 features and int64 labels, the dtypes torch's
cross-entropy expects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_finite_positive, check_int

__all__ = ["TrainingSet", "digits", "synthetic", "training_set"]


@dataclass(frozen=True, eq=False)
class TrainingSet:
    """Features ``x`` (n, p) float32, labels ``y`` (n,) int64 in [0, classes), and a name."""

    x: np.ndarray
    y: np.ndarray
    classes: int
    name: str

    def __post_init__(self) -> None:
        x = np.ascontiguousarray(self.x, dtype=np.float32)
        y = np.ascontiguousarray(self.y, dtype=np.int64)
        if x.ndim != 2 or y.shape != (x.shape[0],):
            raise ValueError(f"`x` must be (n, p) and `y` (n,), got shapes {x.shape} and {y.shape}")
        if not np.isfinite(x).all():
            raise ValueError("`x` must be finite")
        classes = check_int("classes", self.classes, minimum=2)
        if y.size and (y.min() < 0 or y.max() >= classes):
            raise ValueError(f"labels `y` must lie in [0, {classes}), got [{y.min()}, {y.max()}]")
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "classes", classes)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def features(self) -> int:
        return int(self.x.shape[1])

    def __repr__(self) -> str:
        return f"{self.name}(n={self.n}, features={self.features}, classes={self.classes})"


def digits(n: int = 99, *, seed: int = 0) -> TrainingSet:
    """``n`` rows of scikit-learn's digits (pixels / 16), in an order drawn from ``seed``."""
    n = check_int("n", n, minimum=1)
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover - scikit-learn is in the learn and torch extras
        raise ImportError("the digits data set needs scikit-learn (pip install 'dpaudit[torch]')") from exc
    bunch = load_digits()
    if n > len(bunch.target):
        raise ValueError(f"`n` must be at most {len(bunch.target)} (the digits data set), got {n}")
    order = np.random.default_rng(seed).permutation(len(bunch.target))[:n]
    return TrainingSet(bunch.data[order] / 16.0, bunch.target[order], 10, f"digits[seed={seed}]")


def synthetic(n: int = 99, *, features: int = 8, classes: int = 2, separation: float = 2.0,
              seed: int = 0) -> TrainingSet:
    """``n`` rows from ``classes`` unit-variance Gaussian clusters whose means are ``separation``
    apart along the first axes (class k's mean is ``separation`` times the k-th unit vector)."""
    n = check_int("n", n, minimum=1)
    features = check_int("features", features, minimum=1)
    classes = check_int("classes", classes, minimum=2)
    if classes > features + 1:
        raise ValueError(f"`classes` must be at most features + 1 = {features + 1}, got {classes}")
    separation = check_finite_positive("separation", separation)
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    means = np.zeros((classes, features))
    means[np.arange(1, classes), np.arange(classes - 1)] = separation
    x = means[y] + rng.standard_normal((n, features))
    return TrainingSet(x, y, classes, f"synthetic[seed={seed}]")


def training_set(data, n: int, seed: int) -> TrainingSet:
    """A :class:`TrainingSet` as given, or the named one ("digits", "synthetic") with ``n`` rows."""
    if isinstance(data, TrainingSet):
        return data
    if data == "digits":
        return digits(n, seed=seed)
    if data == "synthetic":
        return synthetic(n, seed=seed)
    raise ValueError(f"`data` must be 'digits', 'synthetic' or a TrainingSet, got {data!r}")
