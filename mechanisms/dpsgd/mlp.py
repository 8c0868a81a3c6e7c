"""A one-hidden-layer network for :class:`~mechanisms.dpsgd.DPSGD` (``model="mlp"``), vectorized over runs.

f_θ(x) = Σ_k v_k tanh(⟨W_k, x⟩), with W ∈ R^{h×p} and v ∈ R^h, and the logistic loss
ℓ(θ; x, y) = log(1 + e^{f}) − y f.  With ρ = sigmoid(f) − y and z = tanh(W x) the per-example
gradient is

    ∂ℓ/∂v = ρ z,        ∂ℓ/∂W = ρ (v ⊙ (1 − z²)) xᵀ,

so its squared norm is ρ²(‖z‖² + ‖v ⊙ (1 − z²)‖² ‖x‖²), and per-example clipping needs tensors of
shape (runs, n, h) only, never (runs, n, h, p).  θ is laid out as (W row by row, v), so
``size(p) = h·p + h``; training starts from a fixed θ₀ drawn from ``init_seed`` (the same in every
run: the initialisation is part of the mechanism, not of its randomness).

**Dirac canary.**  The data's last input coordinate is zero for every real example
(:mod:`mechanisms.dpsgd.data`), so ∂ℓ/∂W_{k,p−1} = 0 for every real example and W_{·,p−1} never
changes ⟨W_k, x⟩ of one.  The parameter W_{0,p−1} (index p − 1) is therefore a coordinate no real
example touches and that does not influence any real example's gradient: a gradient canary on it
sees exactly the Poisson-subsampled Gaussian steps, as for logistic regression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import special

from ..validation import check_int

__all__ = ["OneHiddenLayer"]


@dataclass(frozen=True)
class OneHiddenLayer:
    """The network of the module docstring with ``hidden`` tanh units."""

    hidden: int = 8
    init_seed: int = 20261124

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", check_int("hidden", self.hidden, minimum=1))
        object.__setattr__(self, "init_seed", check_int("init_seed", self.init_seed, minimum=0))

    def size(self, p: int) -> int:
        return self.hidden * p + self.hidden

    def dirac_index(self, p: int) -> int:
        """Index of W_{0,p−1}, the weight of hidden unit 0 on the canary input coordinate."""
        return p - 1

    def initial(self, p: int) -> np.ndarray:
        """θ₀: W ~ N(0, 1/p), v ~ N(0, 1/h), from ``init_seed``."""
        rng = np.random.default_rng(self.init_seed)
        w = rng.normal(scale=1.0 / np.sqrt(p), size=(self.hidden, p))
        v = rng.normal(scale=1.0 / np.sqrt(self.hidden), size=self.hidden)
        return np.concatenate([w.ravel(), v])

    def _split(self, theta: np.ndarray, p: int):
        h = self.hidden
        return theta[:, :h * p].reshape(-1, h, p), theta[:, h * p:h * p + h]

    def output(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """f_θ(x) for θ (runs, P) and x (n, p): shape (runs, n)."""
        w, v = self._split(theta, x.shape[1])
        return np.einsum("rnh,rh->rn", np.tanh(np.einsum("rhp,np->rnh", w, x)), v)

    def clipped_sum(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray, x_norm: np.ndarray,
                    mask: np.ndarray, clip: Optional[float]) -> np.ndarray:
        """Σ_i mask_ri · clip_C(∇ℓ(θ_r; x_i, y_i)), shape (runs, P); ``clip=None`` does not clip."""
        w, v = self._split(theta, x.shape[1])
        z = np.tanh(np.einsum("rhp,np->rnh", w, x))
        rho = special.expit(np.einsum("rnh,rh->rn", z, v)) - y
        back = v[:, None, :] * (1.0 - z**2)  # (runs, n, h): ∂f/∂(Wx)
        coef = rho * mask
        if clip is not None:
            norm = np.abs(rho) * np.sqrt((z**2).sum(axis=2) + (back**2).sum(axis=2) * x_norm**2)
            coef = coef * np.minimum(1.0, clip / np.maximum(norm, 1e-300))
        grad_w = np.einsum("rnh,np->rhp", coef[:, :, None] * back, x)
        grad_v = np.einsum("rn,rnh->rh", coef, z)
        return np.concatenate([grad_w.reshape(theta.shape[0], -1), grad_v], axis=1)

    def example_gradient(self, theta: np.ndarray, x: np.ndarray, y: float) -> np.ndarray:
        """∇ℓ(θ_r; x, y) for one example x (p,), unclipped: shape (runs, P)."""
        x = x[None, :]
        return self.clipped_sum(theta, x, np.array([y]), np.linalg.norm(x, axis=1),
                                np.ones((theta.shape[0], 1)), None)
