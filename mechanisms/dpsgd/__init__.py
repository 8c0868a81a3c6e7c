"""DP-SGD as a mechanism under audit: the trainer, its accountant, canaries and data.

- :mod:`.trainer`: :class:`DPSGD`, DP-SGD on logistic regression (or a one-hidden-layer network)
  vectorized over independent training runs, with its claim and, where known, its exact privacy;
- :mod:`.accounting`: the accountant's ε(δ) and δ(ε) for the composed Poisson-subsampled Gaussian;
- :mod:`.canary`: gradient and input canaries, and the adversary's scores on the updates;
- :mod:`.data`: the generated logistic-regression training set;
- :mod:`.mlp`: the one-hidden-layer network (``model="mlp"``);
- :mod:`.shuffle`: the law of the canary's view when batches are shuffled, not Poisson-sampled.

Faulty trainers (implementation mistakes) are registered in ``scenarios.faulty_cases``; every
public name of these modules is importable from ``mechanisms.dpsgd``.
"""

from .accounting import DISCRETIZATION, PoissonGaussianTruth, poisson_gaussian_delta, poisson_gaussian_epsilon
from .canary import GradientCanary, InputCanary, LikelihoodRatioSum, ProjectionSum, projection_sum_survival
from .data import TrainingData, make_training_data
from .mlp import OneHiddenLayer
from .shuffle import EpsilonEstimate, ShuffledCanaryPair, ShuffledLikelihoodRatio, batch_sizes
from .trainer import DPSGD, SMALL_CONFIGURATION, VIEWS

__all__ = [
    # trainer
    "DPSGD",
    "VIEWS",
    "SMALL_CONFIGURATION",
    # accounting
    "poisson_gaussian_epsilon",
    "poisson_gaussian_delta",
    "DISCRETIZATION",
    "PoissonGaussianTruth",
    # canary
    "GradientCanary",
    "InputCanary",
    "ProjectionSum",
    "LikelihoodRatioSum",
    "projection_sum_survival",
    # data
    "TrainingData",
    "make_training_data",
    # mlp
    "OneHiddenLayer",
    # shuffle
    "ShuffledCanaryPair",
    "ShuffledLikelihoodRatio",
    "EpsilonEstimate",
    "batch_sizes",
]
