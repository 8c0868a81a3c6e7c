"""The benchmarked audits: a mechanism, its worst neighbour pair, its raw noise and its exact P/Q.

Each case is the mechanism of issue 9 audited on the "add all-ones row" pair of
``scenarios.counting(d)`` (the pair of largest l1 and l2 sensitivity; Lebeda's size estimate
moves too), with:

* ``noise(rng, size)``: numpy producing the same noise directly, the physical limit the engine is
  compared with (numpy has no truncated-Laplace sampler: its noise is numpy uniforms through the
  exact inverse CDF, which is also how the mechanism draws it);
* ``survival()``: exact survival functions t ↦ P(T ≥ t) of the ideal 1-D statistic under the
  base and the neighbour dataset, and a threshold grid, for :mod:`benchmarks.limits`.  For the
  Gaussian-shaped cases the ideal statistic is the likelihood-ratio direction, which turns the
  pair into N(0, 1) against N(μ, 1) with the exact μ (Dong, Roth & Su 2022; Lebeda, Lemma 3.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy import stats

__all__ = ["Case", "CASES", "get_case"]


@dataclass(frozen=True)
class Case:
    """One benchmarked audit (see the module docstring)."""

    key: str
    title: str
    build: Callable[[], Any]  # () -> mechanism
    d: int  # row dimension of the counting scenario
    noise: Callable[[Any, np.random.Generator, int], np.ndarray]  # (mechanism, rng, size) -> (size, k)
    survival: Callable[[Any], tuple]  # mechanism -> (base_sf, neighbour_sf, thresholds)

    def pair(self):
        import scenarios

        return scenarios.counting(self.d).pairs[0]


def _gaussian():
    from mechanisms import GaussianMechanism

    return GaussianMechanism(epsilon=1.0, delta=1e-5)


def _lebeda():
    from mechanisms import CorrelatedGaussianMechanism

    return CorrelatedGaussianMechanism(mu=1.0, d=100)


def _truncated_laplace():
    from mechanisms import TruncatedLaplaceMechanism

    return TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5)


def _laplace():
    from mechanisms import LaplaceMechanism

    return LaplaceMechanism(epsilon=0.1)


def _normals(mechanism, rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.standard_normal((size, mechanism.output_dim))


def _truncated_laplace_noise(mechanism, rng: np.random.Generator, size: int) -> np.ndarray:
    return mechanism.quantile(rng.random((size, 1)))


def _laplace_noise(mechanism, rng: np.random.Generator, size: int) -> np.ndarray:
    return rng.laplace(0.0, mechanism.scale, (size, 1))


def _shifted_normal(mechanism):
    mu = float(mechanism.exact_mu())
    return (lambda t: stats.norm.sf(t), lambda t: stats.norm.sf(t - mu),
            np.linspace(-12.0, 12.0 + mu, 4001))


def _gaussian_sum(mechanism):
    sigma = float(mechanism.sigma)  # T = f(D) + N(0, σ²); the all-ones row shifts it by 1
    return (lambda t: stats.norm.sf(t / sigma), lambda t: stats.norm.sf((t - 1.0) / sigma),
            np.linspace(-12.0 * sigma, 1.0 + 12.0 * sigma, 4001))


def _truncated_laplace_survival(mechanism):
    tau = float(mechanism.bound)  # symmetric noise: P(Y ≥ t) = F(−t), accurate in the tail
    return (lambda t: mechanism.cdf(-t), lambda t: mechanism.cdf(1.0 - t),
            np.linspace(-tau - 0.5, tau + 1.5, 4001))


def _laplace_survival(mechanism):
    scale = float(mechanism.scale)
    return (lambda t: stats.laplace.sf(t, scale=scale), lambda t: stats.laplace.sf(t - 1.0, scale=scale),
            np.linspace(-40.0 * scale, 1.0 + 40.0 * scale, 4001))


CASES = {
    "gaussian": Case("gaussian", "Gaussian (analytic, ε=1, δ=1e-5, d=1)", _gaussian, 1, _normals,
                     _gaussian_sum),
    "lebeda": Case("lebeda", "Lebeda Algorithm 1 (μ=1, d=100)", _lebeda, 100, _normals,
                   _shifted_normal),
    "truncated-laplace": Case("truncated-laplace", "Truncated Laplace (ε=1, δ=1e-5)",
                              _truncated_laplace, 1, _truncated_laplace_noise,
                              _truncated_laplace_survival),
    "laplace": Case("laplace", "Laplace (ε=0.1)", _laplace, 1, _laplace_noise, _laplace_survival),
}


def get_case(key: str) -> Case:
    try:
        return CASES[key]
    except KeyError:
        raise ValueError(f"`case` must be one of {sorted(CASES)}, got {key!r}") from None
