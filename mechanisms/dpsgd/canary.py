"""Canaries for auditing DP-SGD, and the adversary's scores of what it sees.

Two threat models (Nasr, Song, Thakurta, Papernot & Carlini 2021; Nasr et al. 2023):

- :class:`GradientCanary` — the adversary inserts an example whose (unclipped) gradient is a vector
  it chooses, whatever the model; with every update visible, it scores the run by
  :class:`ProjectionSum`, the sum over steps of the noisy update's projection on the canary's
  direction.  Along the data set's canary coordinate (zero for every real example, see
  :mod:`mechanisms.dpsgd.data`) this is a *Dirac canary*: one step's projection is exactly
  N(0, s²) without the canary and (1 − q)N(0, s²) + qN(c, s²) with it (c = min(‖g‖, C) the clipped
  norm, s the noise standard deviation), so the full view's privacy is the composed
  Poisson-subsampled Gaussian and the sum has the exact law of :func:`projection_sum_survival`;
- :class:`InputCanary` — an input example (x, y) trained on like any other; the black-box
  adversary sees only the final model's loss on it.

All are frozen and picklable (they travel to the audit's workers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import special, stats

__all__ = ["GradientCanary", "InputCanary", "ProjectionSum", "LikelihoodRatioSum",
           "projection_sum_survival"]


@dataclass(frozen=True)
class GradientCanary:
    """A gradient the adversary inserts: ``norm`` times a unit ``direction``.

    ``direction`` is ``"dirac"`` (the data's canary coordinate), ``"opposing"`` (against the data
    set's mean gradient at θ = 0, the worst case for batch-level clipping), or a vector of the
    model's width.  The default norm exceeds any sensible clip norm, so a correct trainer clips it
    to exactly C.
    """

    direction: object = "dirac"
    norm: float = 100.0

    def __post_init__(self) -> None:
        if not (isinstance(self.norm, (int, float)) and np.isfinite(self.norm) and self.norm > 0):
            raise ValueError(f"`norm` must be a positive finite number, got {self.norm!r}")
        if isinstance(self.direction, str) and self.direction not in ("dirac", "opposing"):
            raise ValueError(f"`direction` must be 'dirac', 'opposing' or a vector, got {self.direction!r}")

    def unit(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The unit direction for data (x, y) (rows with the canary coordinate last)."""
        width = x.shape[1]
        if isinstance(self.direction, str) and self.direction == "dirac":
            u = np.zeros(width)
            u[-1] = 1.0
            return u
        opposing = -((0.5 - y) @ x) if isinstance(self.direction, str) else None  # minus the mean gradient at θ = 0
        return self.normalised(opposing, width)

    def normalised(self, opposing: Optional[np.ndarray], size: int) -> np.ndarray:
        """The unit vector along ``opposing`` (the "opposing" direction, computed by the model) or
        along the user's vector ``direction``, which must have length ``size``."""
        if opposing is not None:
            u = np.asarray(opposing, dtype=np.float64).reshape(-1)
        else:
            u = np.asarray(self.direction, dtype=np.float64).reshape(-1)
            if u.shape != (size,):
                raise ValueError(f"canary `direction` must have length {size}, got shape {u.shape}")
        norm = np.linalg.norm(u)
        if not norm > 0:
            raise ValueError("canary `direction` must be a non-zero vector")
        return u / norm

    @property
    def label(self) -> str:
        kind = self.direction if isinstance(self.direction, str) else "vector"
        return f"gradient canary[{kind}, ‖g‖={self.norm:g}]"


@dataclass(frozen=True)
class InputCanary:
    """An input example (x, y); ``x=None`` is ``scale`` times the canary coordinate, label 1.

    With the default x the canary is the only example that moves the canary coordinate, and its
    final loss log(1 + e^{−scale·θ_canary}) is a decreasing function of the projection sum.
    """

    x: Optional[tuple] = None
    y: float = 1.0
    scale: float = 10.0

    def __post_init__(self) -> None:
        if self.y not in (0.0, 1.0):
            raise ValueError(f"canary label `y` must be 0 or 1, got {self.y!r}")
        if not (np.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"`scale` must be positive, got {self.scale!r}")

    def features(self, width: int) -> np.ndarray:
        if self.x is None:
            x = np.zeros(width)
            x[-1] = self.scale
            return x
        x = np.asarray(self.x, dtype=np.float64).reshape(-1)
        if x.shape != (width,) or not np.isfinite(x).all():
            raise ValueError(f"canary `x` must be {width} finite numbers, got {self.x!r}")
        return x

    @property
    def label(self) -> str:
        return "input canary[" + ("canary coordinate" if self.x is None else "x") + f", y={self.y:g}]"


@dataclass(frozen=True)
class ProjectionSum:
    """Score of the every-update view: Σ_t ⟨update_t, u⟩ (outputs are T blocks of ``width``)."""

    direction: tuple
    steps: int

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        u = np.asarray(self.direction)
        return outputs.reshape(outputs.shape[0], self.steps, u.size) @ u @ np.ones(self.steps)


@dataclass(frozen=True)
class LikelihoodRatioSum:
    """Σ_t log(1 − q + q·exp((c·y_t − c²/2)/s²)), y_t = ⟨update_t, u⟩: the log-likelihood ratio of
    the Dirac canary's view (Neyman–Pearson optimal for the pair of the module docstring)."""

    direction: tuple
    steps: int
    q: float
    shift: float
    noise: float

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        u = np.asarray(self.direction)
        y = outputs.reshape(outputs.shape[0], self.steps, u.size) @ u
        z = (self.shift * y - 0.5 * self.shift**2) / self.noise**2
        # log(1 − q + q e^z) = logaddexp(log(1 − q), log q + z)
        return np.logaddexp(np.log1p(-self.q), np.log(self.q) + z).sum(axis=1)


def projection_sum_survival(q: float, steps: int, shift: float, noise: float):
    """Exact survival functions of :class:`ProjectionSum` for a Dirac canary.

    Without the canary S ~ N(0, T s²); with it S ~ Σ_k Bin(k; T, q) N(k c, T s²) (each step adds c
    with probability q, independently).  Returns ``(base_sf, neighbour_sf)``, vectorized in t.
    """
    scale = noise * np.sqrt(steps)
    k = np.arange(steps + 1)
    weights = stats.binom.pmf(k, steps, q)

    def base_sf(t):
        return special.ndtr(-np.asarray(t, dtype=np.float64) / scale)

    def neighbour_sf(t):
        t = np.asarray(t, dtype=np.float64)
        return special.ndtr((k * shift - t[..., None]) / scale) @ weights

    return base_sf, neighbour_sf
