"""The Poisson-subsampled Gaussian mechanism (one DP-SGD coordinate) and its k-fold composition.

Rows x_i ∈ [0, 1] contribute g(x_i) = 2x_i − 1 ∈ [−1, 1] (a gradient clipped to norm C = 1).
Each of k steps includes every row independently with probability q and releases

    Y_j = Σ_i B_ij g(x_i) + σ Z_j,   B_ij ~ Bernoulli(q),  Z_j ~ N(0, 1),

so the output is a (size, k) array.  σ is the noise multiplier (noise standard deviation / C).

Worst pairs (both relations): the other rows' sampled contributions are independent noise added
to both sides, which can only reduce the divergence (post-processing), so the supremum is reached
when they contribute nothing (no other rows, or rows x = ½):

- add/remove a row with |g| = 1: (1 − q)N(0, σ²) + qN(±1, σ²) against N(0, σ²);
- replace g = +1 by g = −1: (1 − q)N(0, σ²) + qN(1, σ²) against (1 − q)N(0, σ²) + qN(−1, σ²).

These are the dominating pairs dp-accounting uses for ``ADD_OR_REMOVE_ONE`` and ``REPLACE_ONE``
(``privacy_loss_mechanism.GaussianPrivacyLoss`` with ``sampling_prob``), composed k times.

Truth.  The privacy profile, ε(δ) and the implied trade-off curve come from dp-accounting's
privacy-loss-distribution accountant with ``pessimistic_estimate=True`` and value discretisation
1e-4: its δ(ε) is an *upper bound* on the exact profile (within ~1e-4 relative, checked for k = 1
against direct numerical integration in ``tests/mechanisms/test_subsampled.py``), so the "exact" ε reported
next to an audit is at least the true one, by a hair.  The trade-off curve is the one that profile
implies (:func:`mechanisms.conversions.profile_tradeoff`), a lower bound on the true curve.

References
----------
Abadi et al. (2016), DP-SGD; Mironov, Talwar & Zhang (2019) and Zhu, Dong & Wang (2022) for the
dominating pairs; Koskela, Jälkö & Honkela (2020) and Doroshenko et al. (2022) for PLD accounting.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Optional

import numpy as np

from .claims import ApproxDP, ProfileClaim, Relation, as_relation
from .conversions import epsilon_grid, profile_tradeoff
from .laplace import _check_delta_closed, _check_epsilons
from .parameters import FrozenParameters
from .validation import check_dataset, check_epsilon_delta, check_finite_positive, check_int

__all__ = ["PoissonSubsampledGaussian", "VALUE_DISCRETIZATION"]

#: dp-accounting's PLD discretisation of the privacy loss used for the truth.
VALUE_DISCRETIZATION = 1e-4


def _dp_accounting():
    try:
        import dp_accounting
    except ImportError as exc:  # pragma: no cover - installed with the test and accounting extras
        raise ImportError("the subsampled Gaussian's truth comes from dp-accounting: "
                          "pip install 'dpaudit[accounting]'") from exc
    return dp_accounting


def _neighbouring(relation: Relation):
    dp_accounting = _dp_accounting()
    return (dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE if relation is Relation.ADD_REMOVE
            else dp_accounting.NeighboringRelation.REPLACE_ONE)


class PoissonSubsampledGaussian(FrozenParameters):
    """k steps of the Poisson-subsampled Gaussian sum of contributions 2x − 1 (module docstring).

    Parameters
    ----------
    noise_multiplier : float
        σ (noise standard deviation over the clipping norm 1).
    sampling_probability : float
        q ∈ (0, 1].
    steps : int, default 1
        k, the number of composed steps (output columns).
    epsilon, delta : float, optional
        An (ε, δ)-DP claim (both or neither).  By default the claim is dp-accounting's own
        profile of the event (``ProfileClaim.from_dp_event``): "our accountant says ...".
    relation : {"add-remove", "replace"}
    """

    d = 1
    row_dim = 1

    def __init__(self, noise_multiplier: float, sampling_probability: float, steps: int = 1,
                 epsilon: Optional[float] = None, delta: Optional[float] = None,
                 relation: Any = "add-remove") -> None:
        self.noise_multiplier = check_finite_positive("noise_multiplier", noise_multiplier)
        q = check_finite_positive("sampling_probability", sampling_probability)
        if q > 1.0:
            raise ValueError(f"`sampling_probability` must be in (0, 1], got {sampling_probability!r}")
        self.sampling_probability = q
        self.steps = check_int("steps", steps)
        self.relation = as_relation(relation)
        self.epsilon, self.delta = check_epsilon_delta(epsilon, delta)
        if self.epsilon is not None:
            self.claim = ApproxDP(self.epsilon, self.delta, self.relation)
        else:
            self.claim = ProfileClaim.from_dp_event(self.dp_event(), self.relation,
                                                    value_discretization_interval=VALUE_DISCRETIZATION)
        self._freeze(noise_multiplier=self.noise_multiplier, sampling_probability=q, steps=self.steps,
                     epsilon=self.epsilon, delta=self.delta, relation=self.relation.value)

    def dp_event(self):
        """dp-accounting's description: SelfComposed(PoissonSampled(q, Gaussian(σ)), k)."""
        dp_accounting = _dp_accounting()

        event = dp_accounting.PoissonSampledDpEvent(self.sampling_probability,
                                                    dp_accounting.GaussianDpEvent(self.noise_multiplier))
        return event if self.steps == 1 else dp_accounting.SelfComposedDpEvent(event, self.steps)

    # -- sampling ---------------------------------------------------------------------------------
    @property
    def output_dim(self) -> int:
        return self.steps

    def true_answer(self, dataset: Any) -> np.ndarray:
        """The sum of all contributions, Σ(2x_i − 1), per step (what q = 1 would release)."""
        data = check_dataset(dataset, 1)
        return np.full(self.steps, float(np.sum(2.0 * data - 1.0)))

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = check_dataset(dataset, 1)
        size = check_int("size", size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        out = self.noise_multiplier * rng.standard_normal((size, self.steps))
        values, counts = np.unique(2.0 * data.ravel() - 1.0, return_counts=True)
        for value, count in zip(values, counts):  # rows with equal contributions: one binomial
            if value != 0.0:
                out += value * rng.binomial(int(count), self.sampling_probability, (size, self.steps))
        return out

    # -- truth (dp-accounting PLD, pessimistic) ---------------------------------------------------
    @functools.cached_property
    def _pld(self):
        privacy_loss_distribution = _dp_accounting().pld.privacy_loss_distribution
        single = privacy_loss_distribution.from_gaussian_mechanism(
            self.noise_multiplier, sensitivity=1.0, pessimistic_estimate=True,
            value_discretization_interval=VALUE_DISCRETIZATION,
            sampling_prob=self.sampling_probability, neighboring_relation=_neighbouring(self.relation))
        return single if self.steps == 1 else single.self_compose(self.steps)

    def _check_relation(self, relation: Any) -> None:
        if relation is not None and as_relation(relation) is not self.relation:
            raise NotImplementedError(f"{self.name}: the truth is computed for its own relation "
                                      f"{self.relation.value!r}, got {relation!r}")

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """dp-accounting's pessimistic δ(ε) (an upper bound on the exact profile), vectorized."""
        self._check_relation(relation)
        epsilon = _check_epsilons(epsilon)
        values = self._pld.get_delta_for_epsilon(epsilon.ravel().tolist())  # one vectorized call
        return np.asarray(values, dtype=np.float64).reshape(epsilon.shape)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """dp-accounting's pessimistic ε(δ) (at least the exact one); ∞ for δ = 0."""
        self._check_relation(relation)
        delta = _check_delta_closed(delta)
        return math.inf if delta == 0.0 else float(self._pld.get_epsilon_for_delta(delta))

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """The trade-off curve implied by the pessimistic profile (a lower bound on the true one)."""
        self._check_relation(relation)
        grid = epsilon_grid(min(self.epsilon_for_delta(1e-12), 60.0))
        return profile_tradeoff(alpha, grid, self.privacy_profile(grid))

    @property
    def name(self) -> str:
        suffix = "" if self.relation is Relation.ADD_REMOVE else f", {self.relation}"
        return (f"PoissonSubsampledGaussian(σ={self.noise_multiplier:g}, q={self.sampling_probability:g}, "
                f"k={self.steps}{suffix})")
