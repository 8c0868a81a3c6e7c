"""The zoo of faulty mechanisms, each paired with the neighbouring datasets that expose it.

:data:`FAULTY_MECHANISMS` maps a name to a :class:`FaultyCase`, a zero-argument factory of
``(mechanism, scenario)``: the mechanism (from :mod:`mechanisms.zoo.faulty`) carries the claim its
author would state and the exact truth that contradicts it; the scenario holds the worst-case
pairs under the claim's relation.  The registry lives here, one layer above the mechanisms, so
that :mod:`mechanisms` never imports :mod:`scenarios` (layers reach down only).  See
:mod:`mechanisms.zoo.faulty` for each mistake and its exact truth.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from mechanisms.correlated import CorrelatedGaussianMechanism
from mechanisms.dpsgd import DPSGD, SMALL_CONFIGURATION, GradientCanary
from mechanisms.gaussian import CalibrationWarning, GaussianMechanism
from mechanisms.truncated_laplace import TruncatedLaplaceMechanism, geng_bound
from mechanisms.validation import check_finite_positive, check_int, check_open_unit
from mechanisms.zoo import faulty_discrete
from mechanisms.zoo.faulty import HalfSizeNoiseCorrelatedGaussian, PerQueryLaplaceMechanism
from mechanisms.zoo.faulty_rare import SparseHistogram

from . import builders
from .scenario import from_pairs

__all__ = ["FAULTY_MECHANISMS", "FaultyCase", "FAULTY_TRAINERS", "FaultyTrainer"]


def gaussian_sensitivity_underestimated(d: int = 4, epsilon: float = 1.0, delta: float = 1e-5):
    """Analytic Gaussian calibrated to l2 sensitivity 1 on d column sums (true sensitivity √d).

    Exact μ = √d/σ instead of 1/σ (:class:`~mechanisms.gaussian.GaussianMechanism` always uses the
    true √d); for d = 4, (1, 1e-5): σ = 3.7306, μ = 0.5361, exact ε(1e-5) = 2.1547.
    """
    d = check_int("d", d, minimum=2)
    mechanism = GaussianMechanism(epsilon, delta, d=d, sensitivity=1.0)
    return mechanism, builders.counting(d)


def gaussian_classical_large_epsilon(epsilon: float = 7.0, delta: float = 0.1):
    """Classical σ = √(2 ln(1.25/δ))/ε used at large ε (Dwork & Roth Thm A.1 assumes ε < 1).

    At ε = 7, δ = 0.1: σ = 0.32108, μ = 3.1145, exact ε(0.1) = 8.0159 and δ(7) = 0.1672
    (docs/ground-truth.md §1: the classical bound holds only up to ε ≈ 5.74 at δ = 0.1).  The
    :class:`~mechanisms.gaussian.CalibrationWarning` is the point of this case and is silenced.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        mechanism = GaussianMechanism(epsilon, delta, d=1, calibration="classical")
    return mechanism, builders.counting(1)


def correlated_half_size_noise(mu: float = 1.0, d: int = 4):
    """:class:`HalfSizeNoiseCorrelatedGaussian` claiming μ-GDP under add/remove; exact 2μ."""
    mechanism = HalfSizeNoiseCorrelatedGaussian(mu, d)
    return mechanism, builders.counting(mechanism.d)


def correlated_replace(mu: float = 1.0, d: int = 4):
    """Algorithm 1 claiming μ-GDP under replacement; exact 2μ√(√d/(√d + 1)) (docs/ground-truth.md §5)."""
    mechanism = CorrelatedGaussianMechanism(mu, d, relation="replace")
    return mechanism, builders.counting(mechanism.d, relation="replace")


def truncated_laplace_half_bound(epsilon: float = 1.0, delta: float = 1e-5):
    """Geng's truncated Laplace with τ = half of (1/ε) ln(1 + (e^ε − 1)/(2δ)).

    Outputs within 1 of the bound are impossible under one neighbour: δ(ε') ≥ δ_∞ = r(e^ε − 1)/
    (2(1 − r)) with r = e^{−τε}; at (1, 1e-5): τ = 5.6806, δ_∞ = 2.941e-3, so ε(1e-5) = ∞.
    """
    epsilon = check_finite_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    mechanism = TruncatedLaplaceMechanism(epsilon, delta, bound=geng_bound(epsilon, delta) / 2.0)
    return mechanism, builders.counting(1)


def laplace_per_query(epsilon: float = 0.5, k: int = 4):
    """:class:`PerQueryLaplaceMechanism`: ε-DP claimed on k counts, exact pure ε = kε."""
    mechanism = PerQueryLaplaceMechanism(epsilon, d=check_int("k", k, minimum=2))
    return mechanism, builders.counting(mechanism.d)


@dataclass(frozen=True)
class FaultyCase:
    """A registered faulty mechanism: calling it returns ``(mechanism, scenario)`` ready to audit.

    Attributes
    ----------
    name : str
        Registry key.
    fault : str
        One line: what the author got wrong.
    build : callable
        Zero-argument factory of ``(mechanism, scenario)``; the scenario has the claim's relation
        and the mechanism's row dimension.
    """

    name: str
    fault: str
    build: Callable[[], tuple[Any, Any]]

    def __call__(self) -> tuple[Any, Any]:
        return self.build()


# -- issue 16 factories ------------------------------------------------------------------------------------
def subsampled_wrong_relation(noise_multiplier: float = 1.0, sampling_probability: float = 0.3):
    """:class:`~mechanisms.zoo.faulty_discrete.WrongRelationSubsampledGaussian` on the replacement pair {x = 1} vs {x = 0}."""
    mechanism = faulty_discrete.WrongRelationSubsampledGaussian(noise_multiplier, sampling_probability)
    return mechanism, builders.counting(1, n=1, relation="replace")


def rounded_gaussian_real_query(epsilon: float = 1.0, delta: float = 1e-5):
    """:class:`RoundedGaussianFractionalView` on bounded rows, with a pair adding the row x = ½."""
    mechanism = faulty_discrete.RoundedGaussianFractionalView(epsilon, delta)
    base = np.zeros((4, 1))
    pairs = [(base, np.vstack([base, [[0.5]]])), (base, np.vstack([base, [[1.0]]]))]
    return mechanism, from_pairs(pairs, "add-remove")


def randomized_response_wrong_k(epsilon: float = 1.0, k: int = 4):
    """:class:`WrongCategoriesRandomizedResponse` on counts 3 and 4 ≡ 0 (mod 4): extreme categories."""
    mechanism = faulty_discrete.WrongCategoriesRandomizedResponse(epsilon, k)
    return mechanism, builders.counting(1, n=2 * (k - 1))


def sparse_histogram_low_threshold(epsilon: float = 1.0, delta: float = 1e-3, bins: int = 4):
    """:class:`~mechanisms.zoo.faulty_rare.SparseHistogram` on both kinds of pair, a new bin of count
    1 (its worst) and a count going 1 → 2.

    At (1, 1e-3) with K = 4 the new bin is released with probability p = e/2000 = 1.359e-3 under
    the neighbour and never under the base: exact δ(1) = p > 10⁻³, a violation that lives in an
    output region of probability ~10⁻³ that one side never produces.
    """
    mechanism = SparseHistogram(epsilon, delta, bins)
    return mechanism, from_pairs(mechanism.worst_pairs(), "add-remove")


#: Faulty mechanisms by name: zero-argument factories of (mechanism, scenario).
FAULTY_MECHANISMS: dict[str, FaultyCase] = {case.name: case for case in (
    FaultyCase("gaussian-sensitivity",
               "Gaussian calibrated to l2 sensitivity 1 on d = 4 counts (true sensitivity √d = 2)",
               gaussian_sensitivity_underestimated),
    FaultyCase("gaussian-classical-large-eps",
               "classical Gaussian calibration √(2 ln(1.25/δ))/ε used at ε = 7, δ = 0.1 (proved for ε < 1)",
               gaussian_classical_large_epsilon),
    FaultyCase("correlated-half-size-noise", HalfSizeNoiseCorrelatedGaussian.fault,
               correlated_half_size_noise),
    FaultyCase("correlated-replace",
               "Lebeda's Algorithm 1 (proved for add/remove) claimed under replacement, d = 4",
               correlated_replace),
    FaultyCase("truncated-laplace-half-bound",
               "truncated Laplace with τ half of Geng's bound: outputs near ±τ identify the dataset",
               truncated_laplace_half_bound),
    FaultyCase("laplace-per-query", PerQueryLaplaceMechanism.fault + " (k = 4, ε = 0.5)",
               laplace_per_query),
    # issue 16: discrete, categorical and subsampled mechanisms (see mechanisms.zoo.faulty_discrete)
    FaultyCase("subsampled-wrong-relation", faulty_discrete.WrongRelationSubsampledGaussian.fault,
               subsampled_wrong_relation),
    FaultyCase("rounded-gaussian-real-query", faulty_discrete.RoundedGaussianFractionalView.fault,
               rounded_gaussian_real_query),
    FaultyCase("randomized-response-wrong-k", faulty_discrete.WrongCategoriesRandomizedResponse.fault,
               randomized_response_wrong_k),
    # a violation in a rare output region that one side never produces
    FaultyCase("sparse-histogram-low-threshold", SparseHistogram.fault + " (K = 4, ε = 1, δ = 1e-3)",
               sparse_histogram_low_threshold),
)}


# == DP-SGD trainers with implementation mistakes (issue 17) =======================================
# A registry of its own: two of these four have no derivable exact truth ("unknown") (the
# shuffling one's violation rests on a closed-form lower bound and a Monte Carlo estimate), so
# they do not belong in FAULTY_MECHANISMS, whose entries all carry an exact truth that
# contradicts the claim.
def _dpsgd(**changes):
    mechanism = DPSGD(**dict(SMALL_CONFIGURATION, **changes))
    return mechanism, builders.counting(1, n=0)


def dpsgd_batch_clipping():
    """The summed batch gradient (canary included) is clipped to C instead of each example.

    One example can then move the clipped sum by up to 2C (an example whose gradient opposes the
    others' flips clip(Σ) from C·â to −C·â), twice the sensitivity the accountant assumes.  The
    canary is a gradient of norm 100 against the data's mean gradient at θ = 0.  Exact truth:
    **unknown** (it depends on the data's batch sums; the accountant at noise multiplier σ/2 bounds
    it from above).
    """
    return _dpsgd(clipping="batch", canary=GradientCanary("opposing"))


def dpsgd_unscaled_noise(clip: float = 2.0):
    """Noise N(0, σ²) instead of N(0, σ²C²) with C = ``clip`` > 1.  Exact truth (Dirac canary,
    every update visible): the composed Poisson-subsampled Gaussian at noise multiplier σ/C."""
    return _dpsgd(clip=check_finite_positive("clip", clip), noise="unscaled")


def dpsgd_shuffling(background: float = -1.0):
    """Each epoch shuffles the examples into K = 1/q equal batches, while the claim is the Poisson
    accountant's (dp-accounting, add/remove).

    The adversary crafted the training set: all n = 50 examples have the known gradient
    ``background``·C·u along the Dirac canary's coordinate u (``DPSGD(background=...)``), so every
    batch sum is known but for the canary (the kind of dataset behind the lower bounds of Chua,
    Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, ICML 2024).  Shuffled batches of fixed sizes
    put the added canary in exactly one batch per epoch, where it takes the slot of a known example
    (shift (1 − g)C = 2C at g = −1), and lengthen batch 0 by one known example (shift gC = −C):
    per epoch y ~ N(0, σ²I) without it and Σ_J P(J) N(d_J, σ²I) with it
    (:mod:`mechanisms.dpsgd.shuffle`).  Under Poisson sampling the same data set meets the claim.
    At the small configuration (q = 0.5, σ = 1, T = 4, δ = 1e-3; claim ε = 4.481) the pair's
    ε(1e-3), which is the trainer's (nothing else moves any coordinate), is at least 11.21 (exact
    quadrature of a rounded view: a lower bound), and at least 7.63 from closed-form threshold
    events; the Monte Carlo estimate of the exact likelihood ratio gives 11.20 [11.16, 11.24]
    (2·10⁶ draws).  Exact truth: **unknown** (no closed form; the lower bounds prove the violation).

    With the logistic data instead (``background=None``, i.e. the other examples contribute 0 along
    u) the pair is "one of K coordinates shifted" against "none", which here is *more* private than
    Poisson sampling (Monte Carlo ε(1e-3) ≈ 3.73 < 4.48): that adversary cannot refute the claim.
    """
    return _dpsgd(sampling="shuffle", background=background)  # DPSGD validates `background`


def dpsgd_accountant_half_steps():
    """T steps trained, T/2 given to the accountant.  Exact truth: the accountant at T steps."""
    return _dpsgd(accountant_steps=SMALL_CONFIGURATION["steps"] // 2)


@dataclass(frozen=True)
class FaultyTrainer(FaultyCase):
    """A registered faulty DP-SGD trainer; ``truth`` is ``"exact"`` or ``"unknown"``."""

    truth: str = "unknown"


#: Faulty DP-SGD trainers by name (the small configuration, δ = 1e-3): factories of
#: (mechanism, scenario), each with whether its exact truth is known.
FAULTY_TRAINERS: dict[str, FaultyTrainer] = {case.name: case for case in (
    FaultyTrainer("dpsgd-batch-clipping", "the batch's summed gradient is clipped instead of each "
                  "example's (sensitivity 2C, not C)", dpsgd_batch_clipping, "unknown"),
    FaultyTrainer("dpsgd-unscaled-noise", "noise N(0, σ²) not scaled by the clip norm C = 2",
                  dpsgd_unscaled_noise, "exact"),
    FaultyTrainer("dpsgd-shuffling", "shuffled equal batches, accounted as Poisson sampling "
                  "(crafted training set: every other gradient known)", dpsgd_shuffling, "unknown"),
    FaultyTrainer("dpsgd-accountant-half-steps", "the accountant is given T/2 of the T steps",
                  dpsgd_accountant_half_steps, "exact"),
)}
