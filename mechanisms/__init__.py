"""Reference mechanisms with their claims and their exact privacy and accuracy.

Every mechanism follows the protocol of :mod:`mechanisms.base`: a callable
``mechanism(dataset, size, rng) -> (size, k) float64 array``.  The reference mechanisms also
carry the privacy they ``claim`` and the exact truth (privacy profile, ε(δ), trade-off curve,
μ where Gaussian-shaped) so that audits can say how tight both the claim and the audit are.

The reference mechanisms are the flat modules of this package (exported below).  Beside them:
:mod:`mechanisms.dpsgd` (DP-SGD as a mechanism), :mod:`mechanisms.literature` (the DP-testing
literature's benchmark mechanisms), :mod:`mechanisms.zoo` (deliberately broken mechanisms and
search examples), :mod:`mechanisms.adapters` (third-party libraries under audit), and the shared
helpers :mod:`mechanisms.parameters` and :mod:`mechanisms.validation`.
"""

from . import moved
from .base import GaussianShapedMechanism, Mechanism, ReferenceMechanism, mechanism_name
from .claims import ApproxDP, Claim, GaussianDP, ProfileClaim, PureDP, Relation, RenyiDP, ZCDP
from .composition import Composition
from .correlated import CorrelatedGaussianMechanism
from .discrete_gaussian import DiscreteGaussianMechanism
from .discrete_laplace import DiscreteLaplaceMechanism
from .exponential import ExponentialMechanism
from .randomized_response import RandomizedResponse
from .subsampled_gaussian import PoissonSubsampledGaussian
from .gaussian import CalibrationWarning, GaussianMechanism
from .grouped import GroupedCorrelatedGaussianMechanism
from .laplace import LaplaceMechanism
from .truncated_laplace import TruncatedLaplaceMechanism

# The old paths of modules that moved into dpsgd/, literature/ and zoo/ stay importable as
# aliases of the new modules, with a DeprecationWarning naming the new path (mechanisms/moved.py).
moved.install()

#: Reference mechanisms by the name scenario files use.
REFERENCE_MECHANISMS = {
    "gaussian": GaussianMechanism,
    "laplace": LaplaceMechanism,
    "truncated-laplace": TruncatedLaplaceMechanism,
    "correlated-gaussian": CorrelatedGaussianMechanism,
    "grouped-correlated-gaussian": GroupedCorrelatedGaussianMechanism,
    "composition": Composition,
    "discrete-gaussian": DiscreteGaussianMechanism,
    "discrete-laplace": DiscreteLaplaceMechanism,
    "randomized-response": RandomizedResponse,
    "exponential": ExponentialMechanism,
    "subsampled-gaussian": PoissonSubsampledGaussian,
}

__all__ = [
    "ApproxDP",
    "CalibrationWarning",
    "Claim",
    "Composition",
    "CorrelatedGaussianMechanism",
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "GaussianDP",
    "GaussianMechanism",
    "GaussianShapedMechanism",
    "GroupedCorrelatedGaussianMechanism",
    "LaplaceMechanism",
    "Mechanism",
    "PoissonSubsampledGaussian",
    "ProfileClaim",
    "PureDP",
    "REFERENCE_MECHANISMS",
    "ReferenceMechanism",
    "RandomizedResponse",
    "Relation",
    "RenyiDP",
    "TruncatedLaplaceMechanism",
    "ZCDP",
    "mechanism_name",
]
