"""The accountant's ε of DP-SGD: the Poisson-subsampled Gaussian composed T times (dp-accounting).

One step of DP-SGD with per-example clipping to C, Poisson sampling at rate q and noise N(0, σ²C²I)
is, for the add/remove relation, the pair (N(0, σ²), (1 − q)N(0, σ²) + qN(1, σ²)) and its reverse
(Abadi et al. 2016; Mironov, Talwar & Zhang 2019); T steps compose.  dp-accounting's privacy loss
distribution (PLD) of that composition (Koskela et al. 2020; Doroshenko et al. 2022, "Connect the
dots") gives ε(δ) and δ(ε):

- ``pessimistic=True`` (dp-accounting's default, what an accountant ships) is a **pessimistic
  estimate**: an upper bound on the true ε(δ) of the composition, up to the discretization;
- ``pessimistic=False`` is the optimistic estimate: a lower bound.

Together they bracket the exact value; at the default discretization 1e-4 the bracket is about
2e-4 wide in ε at (q, σ, T) = (0.1, 1, 10).  These are the only calls to dp-accounting in the
DP-SGD code, so another accountant can be swapped in here.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..validation import check_finite_positive, check_int, check_open_unit

__all__ = ["poisson_gaussian_epsilon", "poisson_gaussian_delta", "PoissonGaussianTruth", "DISCRETIZATION"]

#: dp-accounting's value discretization interval of the privacy loss.
DISCRETIZATION = 1e-4


@functools.lru_cache(maxsize=64)
def _pld(q: float, sigma: float, steps: int, pessimistic: bool):
    from dp_accounting.pld import privacy_loss_distribution as pld

    # Connect-the-dots is pessimistic only; the optimistic estimate uses privacy buckets.
    one = pld.from_gaussian_mechanism(sigma, sensitivity=1.0, pessimistic_estimate=pessimistic,
                                      value_discretization_interval=DISCRETIZATION,
                                      sampling_prob=q, use_connect_dots=pessimistic)
    return one.self_compose(steps) if steps > 1 else one


def _check(q, sigma, steps):
    q = check_open_unit("q", q) if q != 1 else 1.0
    return q, check_finite_positive("sigma", sigma), check_int("steps", steps, minimum=1)


def poisson_gaussian_epsilon(q: float, sigma: float, steps: int, delta: float, *,
                             pessimistic: bool = True) -> float:
    """ε(δ) of T = ``steps`` compositions of the Poisson-subsampled Gaussian (noise multiplier σ).

    Add/remove relation, sensitivity 1 (clip norm C with noise σC).  ``pessimistic=True`` is
    dp-accounting's pessimistic estimate (an upper bound on the exact ε); ``False`` the
    optimistic one (a lower bound).
    """
    q, sigma, steps = _check(q, sigma, steps)
    return _epsilon(q, sigma, steps, check_open_unit("delta", delta), bool(pessimistic))


@functools.lru_cache(maxsize=1024)
def _epsilon(q: float, sigma: float, steps: int, delta: float, pessimistic: bool) -> float:
    return float(_pld(q, sigma, steps, pessimistic).get_epsilon_for_delta(delta))


def poisson_gaussian_delta(q: float, sigma: float, steps: int, epsilon: float, *,
                           pessimistic: bool = True) -> float:
    """δ(ε) of the same composition (see :func:`poisson_gaussian_epsilon`)."""
    q, sigma, steps = _check(q, sigma, steps)
    if not epsilon >= 0:
        raise ValueError(f"`epsilon` must be >= 0, got {epsilon!r}")
    return float(_pld(q, sigma, steps, bool(pessimistic)).get_delta_for_epsilon(float(epsilon)))


class PoissonGaussianTruth:
    """The exact privacy of a trainer whose audited view is the composed Poisson-subsampled Gaussian
    (the module docstring), for the mechanisms' truth interface.  A subclass provides
    ``exact_sample_rate`` (q), ``steps`` (T), ``name`` and ``_exact_multiplier(relation)`` (σ, or
    ``NotImplementedError`` where the truth is unknown)."""

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """Exact ε(δ), as dp-accounting's pessimistic estimate (≥ the exact value by at most the
        bracket of :meth:`exact_epsilon_bracket`)."""
        return poisson_gaussian_epsilon(self.exact_sample_rate, self._exact_multiplier(relation), self.steps, delta)

    def exact_epsilon_bracket(self, delta: float, relation: Any = None) -> tuple[float, float]:
        """(optimistic, pessimistic) PLD estimates: the exact ε(δ) lies between them."""
        q, sigma = self.exact_sample_rate, self._exact_multiplier(relation)
        return (poisson_gaussian_epsilon(q, sigma, self.steps, delta, pessimistic=False),
                poisson_gaussian_epsilon(q, sigma, self.steps, delta))

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """Exact δ(ε) (pessimistic PLD estimate), vectorized in ε."""
        q, sigma = self.exact_sample_rate, self._exact_multiplier(relation)
        eps = np.asarray(epsilon, dtype=np.float64)
        values = [poisson_gaussian_delta(q, sigma, self.steps, float(e)) for e in eps.ravel()]
        return np.asarray(values).reshape(eps.shape)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        raise NotImplementedError(f"the trade-off curve of {self.name} is not implemented")
