"""Adapters for OpenDP's Gaussian and Laplace measurements (tested with OpenDP 0.16).

The integer versions (``make_discrete_gaussian``, ``make_discrete_laplace``: OpenDP's
measurements on ``atom_domain(T=int)``) are at the end of the module.

Each adapter releases the counting query f(X) = Σ_rows X (rows in [0, 1], d = 1, sensitivity 1)
with noise from an OpenDP measurement, and takes its claim from OpenDP's own privacy map
evaluated at ``d_in = sensitivity``:

- :func:`make_gaussian`: ``dp.m.make_gaussian`` is ρ-zCDP with ρ = Δ²/(2σ²) (Bun & Steinke
  2016).  OpenDP states (ε, δ) through ``dp.c.make_zCDP_to_approxDP(m).map(Δ)``, a privacy
  profile whose ε at δ is the adapter's claim.  That conversion is loose: at σ = 2, δ = 1e-5 it
  gives ε = 2.16572 where the exact Gaussian has 1.99309 (docs/ground-truth.md §1, §7).  The exact
  truth is the Gaussian's, μ = 1/σ.
- :func:`make_laplace`: ``dp.m.make_laplace`` is pure ε-DP with ε = Δ/b; the exact truth is
  Laplace of scale b.

**Sampling.**  OpenDP samples exactly (a discrete Gaussian or Laplace on the grid 2^k, with
k = −1074 for floats by default, then rounded to a float), which is slow per call.  The adapters
build the same noise on ``vector_domain(atom_domain(T=float))`` (l2 resp. l1 distance) and apply
it to the answer repeated ``size`` times: one library call returns ``size`` independent releases.
The grid is so fine that the law is the continuous one to far below anything an audit resolves.

Importing this module calls ``dp.enable_features("contrib")``, which OpenDP requires for these
measurements (it is a process-wide OpenDP setting).

**Seeding.**  OpenDP draws from its own cryptographically secure generator, which cannot be
seeded: these adapters ignore ``rng``, are *not* deterministic under a fixed ``rng``, and audits
of them are reproducible only in distribution.

References
----------
Bun & Steinke (2016), "Concentrated differential privacy: simplifications, extensions, and lower
bounds", Proposition 1.3 (the zCDP → (ε, δ) conversion OpenDP improves on numerically);
OpenDP 0.16 documentation of ``make_gaussian``, ``make_laplace`` and ``make_zCDP_to_approxDP``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import numpy as np

from ..claims import ApproxDP, Claim, PureDP, Relation, ZCDP, as_relation
from ..discrete_gaussian import DiscreteGaussianMechanism
from ..discrete_laplace import DiscreteLaplaceMechanism
from ..gaussian import GaussianMechanism
from ..laplace import LaplaceMechanism
from ..validation import check_finite_positive, check_int, check_open_unit
from ._base import CountingAdapter
from ._extra import require

dp = require("opendp.prelude", library="opendp")
dp.enable_features("contrib")

__all__ = ["OpenDPGaussian", "OpenDPLaplace", "OpenDPDiscreteGaussian", "OpenDPDiscreteLaplace",
           "make_gaussian", "make_laplace", "make_discrete_gaussian", "make_discrete_laplace"]

#: Outputs per OpenDP call: bounds the Python list OpenDP returns (about 2.5 MB of floats).
_CHUNK = 1 << 16


def _spaces(distance: str) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """(scalar input space, vector input space) for the named vector distance."""
    atom = dp.atom_domain(T=float, nan=False)
    vector_metric = getattr(dp, distance)(T=float)
    return (atom, dp.absolute_distance(T=float)), (dp.vector_domain(atom), vector_metric)


def _release(measurement: Any, value: float, size: int) -> np.ndarray:
    out = np.empty(size, dtype=np.float64)
    for start in range(0, size, _CHUNK):
        stop = min(size, start + _CHUNK)
        out[start:stop] = measurement(np.full(stop - start, value))
    return out


@dataclass(frozen=True, eq=False)
class OpenDPGaussian(CountingAdapter):
    """f(X) + N(0, σ²) sampled by OpenDP's ``make_gaussian``; build with :func:`make_gaussian`.

    Attributes
    ----------
    scale : float
        σ.
    delta : float
        The δ at which OpenDP's converted profile is stated as the claim.
    sensitivity : float
        The ``d_in`` given to OpenDP's privacy map.
    rho : float
        OpenDP's ρ = ``make_gaussian(...).map(sensitivity)`` (zCDP).
    claim : ApproxDP
        (ε, δ) with ε = ``make_zCDP_to_approxDP(m).map(sensitivity).epsilon(delta)``.
    reference : GaussianMechanism
        N(0, σ²): exact μ = 1/σ.
    """

    scale: float
    delta: float = 1e-5
    sensitivity: float = 1.0
    relation: Relation = Relation.ADD_REMOVE
    claim: Claim = field(init=False, repr=False)
    reference: Optional[Any] = field(init=False, repr=False)
    rho: float = field(init=False, repr=False)
    _profile: Any = field(init=False, repr=False)
    _vector: Any = field(init=False, repr=False)

    library: ClassVar[str] = "opendp"
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("scale", check_finite_positive("scale", self.scale))
        set_("delta", check_open_unit("delta", self.delta))
        set_("sensitivity", check_finite_positive("sensitivity", self.sensitivity))
        set_("relation", as_relation(self.relation))
        scalar_space, vector_space = _spaces("l2_distance")
        scalar = dp.m.make_gaussian(*scalar_space, scale=self.scale)
        profile = dp.c.make_zCDP_to_approxDP(scalar).map(self.sensitivity)
        set_("rho", float(scalar.map(self.sensitivity)))
        set_("_profile", profile)
        set_("_vector", dp.m.make_gaussian(*vector_space, scale=self.scale))
        set_("claim", ApproxDP(float(profile.epsilon(self.delta)), self.delta, self.relation))
        set_("reference", GaussianMechanism(sigma=self.scale, relation=self.relation))

    def library_delta(self, epsilon: float) -> float:
        """δ(ε) of OpenDP's converted profile (the whole curve it claims, not one point)."""
        return float(self._profile.delta(check_finite_positive("epsilon", epsilon)))

    def _draw(self, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        return _release(self._vector, value, size)  # OpenDP's own generator: rng unused

    @property
    def name(self) -> str:
        relation = "" if self.relation is Relation.ADD_REMOVE else f", {self.relation}"
        return f"opendp.make_gaussian(σ={self.scale:g}, Δ={self.sensitivity:g}{relation})"


@dataclass(frozen=True, eq=False)
class OpenDPLaplace(CountingAdapter):
    """f(X) + Lap(b) sampled by OpenDP's ``make_laplace``; build with :func:`make_laplace`.

    Attributes
    ----------
    scale : float
        b.
    sensitivity : float
        The ``d_in`` given to OpenDP's privacy map.
    claim : PureDP
        ε = ``make_laplace(...).map(sensitivity)`` = Δ/b.
    reference : LaplaceMechanism
        Laplace noise of scale b.
    """

    scale: float
    sensitivity: float = 1.0
    relation: Relation = Relation.ADD_REMOVE
    claim: Claim = field(init=False, repr=False)
    reference: Optional[Any] = field(init=False, repr=False)
    _vector: Any = field(init=False, repr=False)

    library: ClassVar[str] = "opendp"
    deterministic: ClassVar[bool] = False

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("scale", check_finite_positive("scale", self.scale))
        set_("sensitivity", check_finite_positive("sensitivity", self.sensitivity))
        set_("relation", as_relation(self.relation))
        scalar_space, vector_space = _spaces("l1_distance")
        epsilon = float(dp.m.make_laplace(*scalar_space, scale=self.scale).map(self.sensitivity))
        set_("_vector", dp.m.make_laplace(*vector_space, scale=self.scale))
        set_("claim", PureDP(epsilon, self.relation))
        # LaplaceMechanism's scale is sensitivity/epsilon; its truth uses the true sensitivity 1.
        set_("reference", LaplaceMechanism(1.0 / self.scale, d=1, sensitivity=1.0,
                                           relation=self.relation))

    def _draw(self, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        return _release(self._vector, value, size)  # OpenDP's own generator: rng unused

    @property
    def name(self) -> str:
        relation = "" if self.relation is Relation.ADD_REMOVE else f", {self.relation}"
        return f"opendp.make_laplace(b={self.scale:g}, Δ={self.sensitivity:g}{relation})"


def make_gaussian(scale: float, *, delta: float = 1e-5, sensitivity: float = 1.0,
                  relation: Any = "add-remove") -> OpenDPGaussian:
    """OpenDP's Gaussian measurement on the counting query, with its converted (ε, δ) claim.

    Parameters
    ----------
    scale : float
        σ, OpenDP's ``scale`` (the standard deviation).
    delta : float, default 1e-5
        The δ at which OpenDP's zCDP → (ε, δ) profile gives the claimed ε.
    sensitivity : float, default 1
        ``d_in`` for OpenDP's privacy maps (the true sensitivity of the counting query is 1).
    relation : {"add-remove", "replace"}, default "add-remove"

    Examples
    --------
    >>> mech = make_gaussian(2.0)                                           # doctest: +SKIP
    >>> round(mech.claim.epsilon, 5), round(mech.epsilon_for_delta(1e-5), 5)  # doctest: +SKIP
    (2.16572, 1.99309)
    """
    return OpenDPGaussian(scale, delta, sensitivity, relation)


def make_laplace(scale: float, *, sensitivity: float = 1.0,
                 relation: Any = "add-remove") -> OpenDPLaplace:
    """OpenDP's Laplace measurement on the counting query, claiming pure ε = Δ/b.

    Parameters
    ----------
    scale : float
        b, OpenDP's ``scale``.
    sensitivity : float, default 1
        ``d_in`` for OpenDP's privacy map.
    relation : {"add-remove", "replace"}, default "add-remove"
    """
    return OpenDPLaplace(scale, sensitivity, relation)


# -- discrete measurements (issue 16) --------------------------------------------------------------
def _integer_count(value: float) -> int:
    count = int(round(value))
    if count != value:
        raise ValueError(f"`dataset` must hold 0/1 entries (OpenDP's integer measurements need an "
                         f"integer count), got a sum of {value!r}")
    return count


def _release_int(measurement: Any, value: int, size: int) -> np.ndarray:
    out = np.empty(size, dtype=np.float64)
    for start in range(0, size, _CHUNK):
        stop = min(size, start + _CHUNK)
        out[start:stop] = measurement([value] * (stop - start))  # exact integers below 2^53
    return out


def _int_vector_space(distance: str) -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=int)), getattr(dp, distance)(T=int)


@dataclass(frozen=True, eq=False)
class _OpenDPInteger(CountingAdapter):
    """Shared construction of OpenDP's integer measurements on the count (subclasses: hooks)."""

    scale: float
    sensitivity: int = 1
    relation: Relation = Relation.ADD_REMOVE
    claim: Claim = field(init=False, repr=False)
    reference: Optional[Any] = field(init=False, repr=False)
    _vector: Any = field(init=False, repr=False)

    library: ClassVar[str] = "opendp"
    deterministic: ClassVar[bool] = False
    _distance: ClassVar[str]
    _label: ClassVar[str]

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("scale", check_finite_positive("scale", self.scale))
        set_("sensitivity", check_int("sensitivity", self.sensitivity))
        set_("relation", as_relation(self.relation))
        vector = self._measurement(*_int_vector_space(self._distance))
        set_("_vector", vector)
        set_("claim", self._claim(vector.map(self.sensitivity)))
        set_("reference", self._reference())

    def _draw(self, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        return _release_int(self._vector, _integer_count(value), size)  # OpenDP's generator

    @property
    def name(self) -> str:
        relation = "" if self.relation is Relation.ADD_REMOVE else f", {self.relation}"
        return f"opendp.{self._label}({self._scale_text}, Δ={self.sensitivity}{relation})"


@dataclass(frozen=True, eq=False)
class OpenDPDiscreteGaussian(_OpenDPInteger):
    """c(X) + N_ℤ(0, σ²) from OpenDP's ``make_gaussian`` on integers; claims OpenDP's ρ-zCDP.

    OpenDP samples the discrete Gaussian exactly (CKS 2020); its privacy map gives ρ = Δ²/(2σ²),
    stated here as a :class:`~mechanisms.claims.ZCDP` claim checked through its (ε, δ) conversion.
    Exact truth: :class:`~mechanisms.discrete_gaussian.DiscreteGaussianMechanism` with σ, when σ²
    is within 1e-12 relative of a rational with denominator ≤ 10⁴ (σ = 2, 3.5, 1.3, ...);
    otherwise ``None`` (unknown).
    """

    _distance: ClassVar[str] = "l2_distance"
    _label: ClassVar[str] = "make_gaussian[int]"

    def _measurement(self, domain: Any, metric: Any) -> Any:
        return dp.m.make_gaussian(domain, metric, scale=self.scale)

    def _claim(self, rho: Any) -> Claim:
        return ZCDP(float(rho), self.relation)

    def _reference(self) -> Optional[Any]:
        reference = DiscreteGaussianMechanism(self.scale, relation=self.relation)
        close = abs(float(reference.sigma_squared) - self.scale**2) <= 1e-12 * self.scale**2
        return reference if close else None

    @property
    def _scale_text(self) -> str:
        return f"σ={self.scale:g}"


@dataclass(frozen=True, eq=False)
class OpenDPDiscreteLaplace(_OpenDPInteger):
    """c(X) + discrete Laplace noise P(y) ∝ e^{−|y|/b} from OpenDP's ``make_laplace`` on integers.

    Claim: OpenDP's pure ε = Δ/b.  Exact truth:
    :class:`~mechanisms.discrete_laplace.DiscreteLaplaceMechanism` with rate 1/b, when 1/b is within
    1e-12 relative of a rational with denominator ≤ 10⁴; otherwise ``None`` (unknown).
    """

    _distance: ClassVar[str] = "l1_distance"
    _label: ClassVar[str] = "make_laplace[int]"

    def _measurement(self, domain: Any, metric: Any) -> Any:
        return dp.m.make_laplace(domain, metric, scale=self.scale)

    def _claim(self, epsilon: Any) -> Claim:
        return PureDP(float(epsilon), self.relation)

    def _reference(self) -> Optional[Any]:
        reference = DiscreteLaplaceMechanism(1.0 / self.scale, relation=self.relation)
        return reference if abs(float(reference.rate) * self.scale - 1.0) <= 1e-12 else None

    @property
    def _scale_text(self) -> str:
        return f"b={self.scale:g}"


def make_discrete_gaussian(scale: float, *, sensitivity: int = 1,
                           relation: Any = "add-remove") -> OpenDPDiscreteGaussian:
    """OpenDP's discrete Gaussian on the count, claiming its ρ-zCDP (see the class)."""
    return OpenDPDiscreteGaussian(scale, sensitivity, relation)


def make_discrete_laplace(scale: float, *, sensitivity: int = 1,
                          relation: Any = "add-remove") -> OpenDPDiscreteLaplace:
    """OpenDP's discrete Laplace on the count, claiming pure ε = Δ/b (see the class)."""
    return OpenDPDiscreteLaplace(scale, sensitivity, relation)
