"""Canaries for auditing a PyTorch/Opacus training loop, and how each enters the data.

Two threat models (Nasr, Song, Thakurta, Papernot & Carlini 2021; Nasr et al. 2023, §3):

- :class:`DiracCanary` (white box, every step observed).  The model under audit is wrapped in a
  *probe* (:mod:`mechanisms.training.probe`): a bias-free linear map of ``probe`` extra input
  columns, which no real example uses, plus one flag column.  A canary row has its flag set and
  ``norm·K`` on probe column i; the wrapper then outputs the constant logits (0, …, 0) for it,
  with label 1, and routes the gradient of the loss only into the probe, so the canary's
  per-example gradient is exactly ``norm`` times the unit vector of probe coordinate i (the
  cross-entropy's derivative at constant logits is 1/K in the first class), whatever the model's
  state: a *Dirac* gradient canary.  With ``norm`` above the clip norm C, per-example clipping
  makes it exactly C·e_i.  The adversary reads the probe's weights after every optimizer step.
  A row of the audited dataset with weight w ∈ [0, 1] is the canary scaled by w (w = 0: an
  example with zero gradient).
- :class:`InputCanary` (black box, last iterate).  An input example (x, y) trained on like any
  other row; the adversary sees only the final model's cross-entropy loss on it.

``background=g`` on a :class:`DiracCanary` replaces the training set by n *crafted* rows whose
gradient is g·C·e₀ (flagged rows with g·C·K on probe column 0, :meth:`DiracCanary.crafted_rows`): the white-box
adversary who chose the whole training set (Nasr et al. 2021), as in the shuffled-batch lower
bounds of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang (ICML 2024).  Per-example clipping
turns them into clip(g)·C·e₀, a data set the accountant covers like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from ..validation import check_finite_positive, check_int

__all__ = ["DiracCanary", "InputCanary", "Canary", "canary_from"]


@dataclass(frozen=True)
class DiracCanary:
    """A white-box gradient canary on probe coordinate 0 (module docstring).

    Parameters
    ----------
    norm : the canary's per-example gradient norm before clipping (default far above any clip norm).
    probe : probe coordinates (the first carries the canary; the rest only noise, whose energy
        the adversary also reads).
    background : None (the user's data set) or g: the training set is replaced by crafted rows of
        gradient g·C·e₀ (before clipping).
    """

    norm: float = 1e4
    probe: int = 16
    background: Optional[float] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "norm", check_finite_positive("norm", self.norm))
        object.__setattr__(self, "probe", check_int("probe", self.probe, minimum=2))
        if self.background is not None:
            if isinstance(self.background, bool) or not isinstance(self.background, (int, float)) \
                    or not np.isfinite(self.background):
                raise ValueError(f"`background` must be None or a finite number, got {self.background!r}")
            object.__setattr__(self, "background", float(self.background))

    @property
    def label(self) -> str:
        crafted = "" if self.background is None else f", crafted data {self.background:g}·C·e₀"
        return f"Dirac gradient canary[‖g‖={self.norm:g}{crafted}]"

    def rows(self, weights: np.ndarray, features: int, classes: int, coordinates: Optional[np.ndarray] = None):
        """Canary rows (x with probe and flag columns, y): row i is weight w_i on probe coordinate
        ``coordinates[i]`` (default 0), so its gradient is w_i·norm along that coordinate."""
        weights = np.asarray(weights, dtype=np.float64)
        coordinates = np.zeros(weights.size, dtype=np.int64) if coordinates is None else coordinates
        x = np.zeros((weights.size, features + self.probe + 1), dtype=np.float32)
        x[np.arange(weights.size), features + coordinates] = weights * self.norm * classes
        x[:, -1] = 1.0
        return x, np.ones(weights.size, dtype=np.int64)

    def crafted_rows(self, n: int, features: int, classes: int, clip: float):
        """The crafted training set: n flagged rows of gradient ``background``·C·e₀."""
        x = np.zeros((n, features + self.probe + 1), dtype=np.float32)
        x[:, features] = self.background * clip * classes
        x[:, -1] = 1.0
        return x, np.ones(n, dtype=np.int64)


@dataclass(frozen=True)
class InputCanary:
    """An input example: ``x``, or ``scale`` on feature ``feature`` and 0 elsewhere, or (both
    None) every feature equal to ``scale``; label ``y`` (default: the last class).

    A feature that no training example uses (digits' pixel 0 is blank in every image) makes the
    canary the only example whose gradient reaches the first layer's weights on that feature."""

    x: Optional[tuple] = None
    y: Optional[int] = None
    scale: float = 1.0
    feature: Optional[int] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_finite_positive("scale", self.scale))
        if self.feature is not None:
            object.__setattr__(self, "feature", check_int("feature", self.feature, minimum=0))
            if self.x is not None:
                raise ValueError(f"give `x` or `feature`, not both, got x={self.x!r}, feature={self.feature!r}")
        if self.y is not None:
            object.__setattr__(self, "y", check_int("y", self.y, minimum=0))

    @property
    def label(self) -> str:
        if self.x is not None:
            return "input canary[x]"
        where = "all features" if self.feature is None else f"feature {self.feature}"
        return f"input canary[{where} = {self.scale:g}]"

    def example(self, features: int, classes: int) -> tuple[np.ndarray, int]:
        """(x, y) of the canary for a data set of ``features`` features and ``classes`` classes."""
        if self.x is None and self.feature is not None:
            if self.feature >= features:
                raise ValueError(f"canary `feature` must be below {features} features, got {self.feature}")
            x = np.zeros(features, dtype=np.float32)
            x[self.feature] = self.scale
        elif self.x is None:
            x = np.full(features, self.scale, dtype=np.float32)
        else:
            x = np.asarray(self.x, dtype=np.float32).reshape(-1)
            if x.shape != (features,) or not np.isfinite(x).all():
                raise ValueError(f"canary `x` must be {features} finite numbers, got {self.x!r}")
        y = classes - 1 if self.y is None else self.y
        if y >= classes:
            raise ValueError(f"canary label `y` must be below {classes} classes, got {y}")
        return x, int(y)

    def one_run_examples(self, m: int, features: int, classes: int, rng: np.random.Generator):
        """m input canaries for a one-run audit: x_i = ``scale``·s_i with s_i a vector of
        independent uniform signs (±1 per feature) and y_i a uniform label, drawn from ``rng``;
        returns (x (m, features) float32, y (m,) int64).

        Random directions, so that no canary is a copy of another or of the data; ``x``,
        ``feature`` and ``y`` describe a single canary and are not used (a canary with either
        set is refused)."""
        m = check_int("m", m, minimum=1)
        if self.x is not None or self.feature is not None or self.y is not None:
            raise ValueError(f"one-run input canaries are random examples; {self.label} with y={self.y!r} "
                             "describes a single canary: use InputCanary(scale=...)")
        signs = rng.integers(0, 2, size=(m, features)) * 2 - 1
        return (self.scale * signs).astype(np.float32), rng.integers(0, classes, size=m).astype(np.int64)


Canary = Union[DiracCanary, InputCanary]


def canary_from(value) -> Canary:
    """A canary as given, or by name: "dirac" (:class:`DiracCanary`), "input" (:class:`InputCanary`)."""
    if isinstance(value, (DiracCanary, InputCanary)):
        return value
    if value == "dirac":
        return DiracCanary()
    if value == "input":
        return InputCanary()
    raise ValueError(f"`canary` must be 'dirac', 'input', a DiracCanary or an InputCanary, got {value!r}")
