"""The zoo: deliberately broken mechanisms and search examples, kept apart from the reference ones.

Nothing here is a mechanism to use.  The zoo holds what an auditor is tested against:

- :mod:`.faulty`: documented mistakes (Lebeda's algorithm releasing n + η, Laplace scaled per
  query) that carry the claim their author would state and the exact truth that contradicts it;
  :func:`exact_truth` puts the two side by side for any mechanism;
- :mod:`.faulty_discrete`: the same for the discrete, categorical and subsampled mechanisms;
- :mod:`.faulty_rare`: mistakes whose violation lives in a rare output region that one side never
  produces (a stability-based histogram with too low a threshold);
- :mod:`.search_examples`: correct mechanisms whose worst neighbouring pair is not the obvious one,
  targets for :func:`scenarios.search`.

The registries that pair each faulty mechanism with its worst-case neighbouring datasets
(``scenarios.faulty_cases.FAULTY_MECHANISMS`` and ``FAULTY_TRAINERS``) live in :mod:`scenarios`,
since layers only reach down.  Faulty PyTorch trainers will live here too, as modules of their
own that need the optional torch extra and that this package does not import.
"""

from .faulty import HalfSizeNoiseCorrelatedGaussian, PerQueryLaplaceMechanism, exact_truth, laplace_product_profile
from .faulty_discrete import (RoundedGaussianFractionalView, RoundedGaussianRealQuery,
                              WrongCategoriesRandomizedResponse, WrongRelationSubsampledGaussian)
from .faulty_rare import SparseHistogram
from .search_examples import SEARCH_EXAMPLES, ClippedBoxMean, ExponentialMedian, ThresholdHistogram

__all__ = [
    # faulty
    "HalfSizeNoiseCorrelatedGaussian",
    "PerQueryLaplaceMechanism",
    "exact_truth",
    "laplace_product_profile",
    # faulty_discrete
    "WrongRelationSubsampledGaussian",
    "RoundedGaussianRealQuery",
    "RoundedGaussianFractionalView",
    "WrongCategoriesRandomizedResponse",
    # faulty_rare
    "SparseHistogram",
    # search_examples
    "ClippedBoxMean",
    "ThresholdHistogram",
    "ExponentialMedian",
    "SEARCH_EXAMPLES",
]
