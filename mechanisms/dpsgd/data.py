"""The small data set DP-SGD is audited on: generated from a seed, shipped as code.

Rows are x = (1, z₁, …, z_d, 0): an intercept, d features z ~ N(0, I/d) (so ‖z‖ ≈ 1) and a last
**canary coordinate** that is zero for every real example.  Labels follow a logistic model
y ~ Bernoulli(sigmoid(b + ⟨w, z⟩)) with a fixed w of norm 3 and intercept b (positive b makes the
labels imbalanced, so the data's gradients share a direction).  Because the canary coordinate is
zero, the data never moves the model's weight on it and a gradient along it is a *Dirac canary*
(Nasr et al. 2023): it is the only thing that moves that coordinate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import check_int

__all__ = ["TrainingData", "make_training_data"]


@dataclass(frozen=True, eq=False)
class TrainingData:
    """Features ``x`` (n, p) with the intercept first and the canary coordinate last; labels ``y``."""

    x: np.ndarray
    y: np.ndarray
    seed: int

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def width(self) -> int:
        """p, the number of model parameters."""
        return int(self.x.shape[1])

    @property
    def canary_coordinate(self) -> int:
        return self.width - 1


def make_training_data(n: int = 100, d: int = 4, *, intercept: float = 1.5,
                       seed: int = 20261123) -> TrainingData:
    """``n`` examples of the logistic model of the module docstring, reproducible from ``seed``."""
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    w = rng.normal(size=d)
    w *= 3.0 / np.linalg.norm(w)
    z = rng.normal(scale=1.0 / np.sqrt(d), size=(n, d))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(intercept + z @ w)))).astype(np.float64)
    x = np.concatenate([np.ones((n, 1)), z, np.zeros((n, 1))], axis=1)
    x.setflags(write=False)
    y.setflags(write=False)
    return TrainingData(x, y, int(seed))
