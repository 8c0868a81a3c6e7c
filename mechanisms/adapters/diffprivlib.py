"""Adapters for IBM's diffprivlib mechanisms (tested with diffprivlib 0.6.6).

Each adapter releases the counting query f(X) = Σ_rows X (rows in [0, 1], d = 1, sensitivity 1
under add-remove and replace) through one diffprivlib mechanism, declares the claim diffprivlib
makes for it, and answers the exact truth from the reference mechanism of :mod:`mechanisms` with
the same law, built from the parameters diffprivlib itself computed (its σ, its Laplace scale,
its noise bound):

=====================  ======================================  ==================================
adapter                diffprivlib's noise                     exact truth
=====================  ======================================  ==================================
GaussianAnalytic       N(0, σ²), σ by Balle & Wang (2018)      Gaussian, μ = 1/σ
Gaussian               N(0, σ²), σ = Δ√(2 ln(1.25/δ))/ε, ε ≤ 1  Gaussian, μ = 1/σ
Laplace                Lap(b), b = Δ/(ε − ln(1 − δ))           Laplace of scale b
LaplaceBoundedNoise    Lap(λ) conditioned on [−τ, τ], λ = Δ/ε   truncated Laplace (λ, τ)
LaplaceTruncated       clamp(f + Lap(b), lower, upper)         Laplace of scale b (see below)
Geometric              two-sided geometric, ratio e^{−ε/Δ}     discrete Laplace, rate ε/Δ
Exponential            softmax(ε u/(Δ(2 − monotonic)))         exponential mechanism (same β)
=====================  ======================================  ==================================

``LaplaceTruncated`` is *not* the truncated Laplace mechanism of Geng et al. (that one is
``LaplaceBoundedNoise``): it adds ordinary, unbounded Laplace noise and clamps the result to
[lower, upper].  Clamping is post-processing, so its privacy is at least that of Laplace; and
when lower ≤ f(D), f(D') ≤ upper the clamp only merges outputs whose privacy loss is already
constant (±ε₀), so the worst pair's privacy is *exactly* Laplace's.

**Batching and seeding.**  diffprivlib releases one value per ``randomise(value)`` call from
its own generator (``secrets.SystemRandom`` unless ``random_state`` is given).  Two paths:

- ``batch="vectorized"`` (default): a copy of the diffprivlib object gets, in place of its
  generator, a stand-in that answers each scalar draw with a batch of ``size`` draws from our
  ``rng``.  diffprivlib's own ``randomise`` code (parameter checks, scale, sampler
  ``_laplace_sampler`` / two-normal Gaussian) then runs once on whole arrays.  Two classes need a
  step of ours: ``LaplaceTruncated`` clamps with ``numpy.clip`` (its ``_truncate`` compares
  scalars), and ``LaplaceBoundedNoise`` keeps the candidates inside diffprivlib's own
  [−τ, τ] (its loop returns the first accepted one; keeping all accepted i.i.d. candidates has
  the same law).  This uses diffprivlib internals (``_rng``, ``_scale``, ``_noise_bound``,
  ``_laplace_sampler``); a release that changes them makes the adapter raise, not misreport.
- ``batch="loop"``: the public API only: a fresh diffprivlib object with
  ``random_state=RandomState(seed)``, ``seed`` drawn from ``rng``, and ``size`` calls of
  ``randomise``.  Slow, and exactly what a user's code runs.

Both paths are deterministic under a fixed ``rng``.  Neither tests diffprivlib's secure
generator itself: the audit is of the noise law.

References
----------
Holohan, Braghin, Mac Aonghusa & Levacher (2019), "Diffprivlib: the IBM differential privacy
library"; Balle & Wang (2018), Algorithm 1; Dwork & Roth (2014), Theorem A.1 and 3.6;
Geng, Ding, Guo & Kumar (2020), "Tight analysis of privacy and utility tradeoff in approximate
differential privacy"; Holohan & Braghin (2021), "Secure random sampling in differential
privacy" (the samplers).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import numpy as np

from ..claims import ApproxDP, Claim, PureDP, Relation, as_relation
from ..discrete_laplace import DiscreteLaplaceMechanism
from ..exponential import ExponentialMechanism
from ..gaussian import GaussianMechanism
from ..laplace import LaplaceMechanism
from ..truncated_laplace import TruncatedLaplaceMechanism
from ..validation import check_choice, check_finite_positive, check_open_unit
from ._base import CountingAdapter
from ._extra import require

_dpl = require("diffprivlib.mechanisms", library="diffprivlib")

__all__ = ["BATCH_MODES", "GaussianAnalytic", "Gaussian", "Laplace", "LaplaceBoundedNoise",
           "LaplaceTruncated", "Geometric", "Exponential"]

#: How the adapters draw many samples (see the module docstring).
BATCH_MODES = ("vectorized", "loop")

#: Seeds for ``RandomState`` lie in [0, 2**32).
_SEED_BOUND = 2**32


class _BatchedDraws:
    """Stands in for diffprivlib's generator: every scalar draw becomes ``size`` draws.

    diffprivlib calls ``random()`` (uniform), ``random(n)`` (n uniforms) and
    ``normalvariate(0, 1)`` (``secrets.SystemRandom`` API).
    """

    __slots__ = ("_rng", "_size")

    def __init__(self, rng: np.random.Generator, size: int) -> None:
        self._rng = rng
        self._size = size

    def random(self, size: Optional[int] = None) -> np.ndarray:
        return self._rng.random(self._size if size is None else size)

    def normalvariate(self, mu: float = 0.0, sigma: float = 1.0) -> np.ndarray:
        return mu + sigma * self._rng.standard_normal(self._size)


def _delta_or_zero(delta: Any) -> float:
    return 0.0 if delta == 0 else check_open_unit("delta", delta)


@dataclass(frozen=True, eq=False)
class _DiffprivlibAdapter(CountingAdapter):
    """Shared construction and batching; subclasses name the class and the truth."""

    library: ClassVar[str] = "diffprivlib"
    deterministic: ClassVar[bool] = True
    _class_name: ClassVar[str]

    # -- hooks ------------------------------------------------------------------------------------
    def _library_kwargs(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "sensitivity": self.sensitivity}

    def _make_claim(self) -> Claim:
        return ApproxDP(self.epsilon, self.delta, self.relation)

    @abc.abstractmethod
    def _make_reference(self, prototype: Any) -> Optional[Any]:
        """The reference mechanism with this law, from the library object's own parameters."""

    def _vectorized(self, mech: Any, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        return mech.randomise(value)

    # -- construction -------------------------------------------------------------------------
    def _setup(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("epsilon", check_finite_positive("epsilon", self.epsilon))
        set_("sensitivity", check_finite_positive("sensitivity", self.sensitivity))
        set_("relation", as_relation(self.relation))
        check_choice("batch", self.batch, BATCH_MODES)
        # random_state=0 gives a picklable RandomState; the prototype itself never draws.
        prototype = self._construct(random_state=0)
        set_("_prototype", prototype)
        set_("claim", self._make_claim())
        set_("reference", self._make_reference(prototype))

    def _construct(self, random_state: Any) -> Any:
        cls = getattr(_dpl, self._class_name)
        try:
            return cls(**self._library_kwargs(), random_state=random_state)
        except (TypeError, ValueError) as exc:
            args = ", ".join(f"{key}={value!r}" for key, value in self._library_kwargs().items())
            raise ValueError(f"diffprivlib.{self._class_name} rejected {args}: {exc}") from None

    # -- sampling ---------------------------------------------------------------------------------
    def _draw(self, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        if self.batch == "loop":
            mech = self._construct(np.random.RandomState(int(rng.integers(_SEED_BOUND))))
            return np.fromiter((mech.randomise(value) for _ in range(size)), np.float64, size)
        mech = self._prototype.copy()
        mech._rng = _BatchedDraws(rng, size)  # noqa: SLF001 (see the module docstring)
        return self._vectorized(mech, value, size, rng)

    @property
    def name(self) -> str:
        parts = [f"ε={self.epsilon:g}"]
        if self.delta:
            parts.append(f"δ={self.delta:g}")
        parts.append(f"Δ={self.sensitivity:g}")
        parts += [f"{key}={value:g}" for key, value in self._extra_name_parts()]
        if self.relation is not Relation.ADD_REMOVE:
            parts.append(str(self.relation))
        return f"diffprivlib.{self._class_name}({', '.join(parts)})"

    def _extra_name_parts(self) -> tuple[tuple[str, float], ...]:
        return ()


@dataclass(frozen=True, eq=False)
class GaussianAnalytic(_DiffprivlibAdapter):
    """diffprivlib's analytic Gaussian mechanism (Balle & Wang 2018, Algorithm 1).

    Parameters
    ----------
    epsilon, delta : float
        The (ε, δ) diffprivlib calibrates σ to, and claims.
    sensitivity : float, default 1
        The sensitivity declared to diffprivlib (the true one of the counting query is 1).
    batch : {"vectorized", "loop"}, default "vectorized"
    relation : {"add-remove", "replace"}, default "add-remove"

    Attributes
    ----------
    sigma : float
        diffprivlib's calibrated σ (its ``_scale``).
    claim : ApproxDP
    reference : GaussianMechanism
        N(0, σ²) noise with this σ: exact μ = 1/σ, and δ(ε) = δ when Δ = 1 (analytic calibration
        is exact up to diffprivlib's bisection tolerance).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    batch: str = "vectorized"
    relation: Relation = Relation.ADD_REMOVE
    claim: Claim = field(init=False, repr=False)
    reference: Optional[Any] = field(init=False, repr=False)
    _prototype: Any = field(init=False, repr=False)

    _class_name: ClassVar[str] = "GaussianAnalytic"

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        self._setup()

    @property
    def sigma(self) -> float:
        return float(self._prototype._scale)

    def _make_reference(self, prototype: Any) -> GaussianMechanism:
        return GaussianMechanism(sigma=float(prototype._scale), relation=self.relation)


@dataclass(frozen=True, eq=False)
class Gaussian(GaussianAnalytic):
    """diffprivlib's classical Gaussian mechanism, σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth, Thm A.1).

    diffprivlib refuses ε > 1 (where the classical bound is unproven), so its claim always
    holds here.  Parameters, attributes and truth as :class:`GaussianAnalytic`.
    """

    _class_name: ClassVar[str] = "Gaussian"


@dataclass(frozen=True, eq=False)
class Laplace(_DiffprivlibAdapter):
    """diffprivlib's Laplace mechanism: Lap(b) noise with b = Δ/(ε − ln(1 − δ)).

    With δ > 0 diffprivlib claims (ε, δ)-DP (Holohan, Leith & Mason 2015) for the smaller scale;
    the exact truth is Laplace's pure ε₀ = 1/b, i.e. δ(ε) = 1 − √(1 − δ) ≈ δ/2 at the claimed ε.

    Parameters
    ----------
    epsilon : float
    delta : float, default 0
        δ in [0, 1); 0 gives the pure ε-DP claim.
    sensitivity : float, default 1
    batch : {"vectorized", "loop"}, default "vectorized"
    relation : {"add-remove", "replace"}, default "add-remove"

    Attributes
    ----------
    scale : float
        b = Δ/(ε − ln(1 − δ)), as diffprivlib computes it.
    claim : PureDP or ApproxDP
    reference : LaplaceMechanism
        Laplace noise of scale b (exact truth for d = 1).
    """

    epsilon: float
    delta: float = 0.0
    sensitivity: float = 1.0
    batch: str = "vectorized"
    relation: Relation = Relation.ADD_REMOVE
    claim: Claim = field(init=False, repr=False)
    reference: Optional[Any] = field(init=False, repr=False)
    _prototype: Any = field(init=False, repr=False)

    _class_name: ClassVar[str] = "Laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", _delta_or_zero(self.delta))
        self._setup()

    @property
    def scale(self) -> float:
        # The expression of diffprivlib's randomise(); its variance() returns 2·scale².
        return self.sensitivity / (self.epsilon - math.log1p(-self.delta))

    def _make_claim(self) -> Claim:
        if self.delta == 0:
            return PureDP(self.epsilon, self.relation)
        return ApproxDP(self.epsilon, self.delta, self.relation)

    def _make_reference(self, prototype: Any) -> LaplaceMechanism:
        # LaplaceMechanism's scale is sensitivity/epsilon: pass diffprivlib's effective ε.
        return LaplaceMechanism(self.epsilon - math.log1p(-self.delta), d=1,
                                sensitivity=self.sensitivity, relation=self.relation)


@dataclass(frozen=True, eq=False)
class LaplaceTruncated(Laplace):
    """diffprivlib's ``LaplaceTruncated``: Laplace noise, then the output *clamped* to [lower, upper].

    Not the truncated Laplace mechanism (that is :class:`LaplaceBoundedNoise`).  Its privacy is
    Laplace's by post-processing, and exactly Laplace's for pairs with both answers in
    [lower, upper] (module docstring); the exact truth is therefore that of Laplace of scale b,
    provided upper − lower ≥ 1 so that such a pair exists.  Its output law is not Laplace's
    (atoms at the bounds), so it has no accuracy attributes (``noise_variance``, ``error_bound``).

    Parameters
    ----------
    epsilon, delta, sensitivity, batch, relation
        As :class:`Laplace`.
    lower, upper : float
        The clamp interval; default [0, 1e6], wide enough for any audited count.
    """

    lower: float = 0.0
    upper: float = 1e6

    _class_name: ClassVar[str] = "LaplaceTruncated"

    def _library_kwargs(self) -> dict[str, Any]:
        return {**super()._library_kwargs(), "lower": self.lower, "upper": self.upper}

    def _make_reference(self, prototype: Any) -> Optional[LaplaceMechanism]:
        if not self.upper - self.lower >= 1.0:
            return None  # no neighbour pair of counts fits inside: truth not covered
        return super()._make_reference(prototype)

    @property
    def accuracy_reference(self) -> None:
        return None

    def _vectorized(self, mech: Any, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        # Laplace.randomise on arrays, then diffprivlib's _truncate done elementwise.
        noisy = _dpl.Laplace.randomise(mech, value)
        return np.clip(noisy, mech.lower, mech.upper)

    def _extra_name_parts(self) -> tuple[tuple[str, float], ...]:
        return (("lower", self.lower), ("upper", self.upper))


@dataclass(frozen=True, eq=False)
class LaplaceBoundedNoise(_DiffprivlibAdapter):
    """diffprivlib's ``LaplaceBoundedNoise``: the truncated Laplace mechanism of Geng et al.

    Noise Lap(λ) conditioned on [−τ, τ] (rejection sampling), λ = Δ/ε and
    τ = λ ln(1 + (e^ε − 1)/(2δ)): the calibration of docs/ground-truth.md §2, for which δ(ε) = δ exactly.

    Parameters
    ----------
    epsilon : float
    delta : float
        Must lie in (0, ½) (diffprivlib's requirement).
    sensitivity : float, default 1
    batch : {"vectorized", "loop"}, default "vectorized"
    relation : {"add-remove", "replace"}, default "add-remove"

    Attributes
    ----------
    scale, bound : float
        diffprivlib's λ (``_scale``) and τ (``_noise_bound``).
    reference : TruncatedLaplaceMechanism
        With diffprivlib's λ and τ.
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    batch: str = "vectorized"
    relation: Relation = Relation.ADD_REMOVE
    claim: Claim = field(init=False, repr=False)
    reference: Optional[Any] = field(init=False, repr=False)
    _prototype: Any = field(init=False, repr=False)

    _class_name: ClassVar[str] = "LaplaceBoundedNoise"

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        self._setup()

    def _construct(self, random_state: Any) -> Any:
        mech = super()._construct(random_state)
        mech.randomise(0.0)  # diffprivlib computes λ and τ lazily, on the first call
        return mech

    @property
    def scale(self) -> float:
        return float(self._prototype._scale)

    @property
    def bound(self) -> float:
        return float(self._prototype._noise_bound)

    def _make_reference(self, prototype: Any) -> TruncatedLaplaceMechanism:
        return TruncatedLaplaceMechanism(self.epsilon, self.delta, sensitivity=self.sensitivity,
                                         bound=float(prototype._noise_bound), relation=self.relation)

    def _vectorized(self, mech: Any, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        scale, bound = float(mech._scale), float(mech._noise_bound)
        accept = -math.expm1(-bound / scale)  # P(|Lap(λ)| ≤ τ) = 1 − e^{−τ/λ}
        out = np.empty(size, dtype=np.float64)
        filled = 0
        while filled < size:
            need = size - filled
            candidates = int(need / accept * 1.05) + 16
            noise = scale * mech._laplace_sampler(*rng.random((4, candidates)))
            kept = noise[(noise >= -bound) & (noise <= bound)][:need]
            out[filled:filled + kept.size] = kept
            filled += kept.size
        return value + out

    def _extra_name_parts(self) -> tuple[tuple[str, float], ...]:
        return ()


# -- discrete mechanisms (issue 16) ----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _PureDiffprivlib(_DiffprivlibAdapter):
    """The discrete diffprivlib mechanisms: parameters ε and Δ, claim pure ε-DP."""

    epsilon: float
    sensitivity: float = 1.0
    batch: str = "vectorized"
    relation: Relation = Relation.ADD_REMOVE
    claim: Claim = field(init=False, repr=False)
    reference: Optional[Any] = field(init=False, repr=False)
    _prototype: Any = field(init=False, repr=False)

    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        self._setup()

    def _make_claim(self) -> Claim:
        return PureDP(self.epsilon, self.relation)


@dataclass(frozen=True, eq=False)
class Geometric(_PureDiffprivlib):
    """diffprivlib's ``Geometric``: two-sided geometric noise with ratio e^{−ε/Δ} on the count.

    diffprivlib stores s = −ε/Δ, draws u ~ U(−½, ½)·(1 + e^s) and returns value + sgn(u)⌊ln|u|/s⌋:
    the discrete Laplace law P(y) = ((1 − r)/(1 + r)) r^{|y|}, r = e^{−s} (derivation in
    ``tests/mechanisms/test_adapters_discrete.py``, which also checks the samples' frequencies).  Claim: ε-DP.
    Exact truth: :class:`~mechanisms.discrete_laplace.DiscreteLaplaceMechanism` with rate |s| (true
    sensitivity 1), when |s| is within 1e-12 relative of a rational with denominator ≤ 10⁴;
    otherwise unknown.
    """

    _class_name: ClassVar[str] = "Geometric"

    def _library_kwargs(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "sensitivity": int(self.sensitivity)}

    def _make_reference(self, prototype: Any) -> Optional[Any]:
        rate = abs(float(prototype._scale))  # diffprivlib's s = −ε/Δ
        reference = DiscreteLaplaceMechanism(rate, relation=self.relation)
        # The library computes with the float s; a rational within 1e-12 relative is the same law
        # to far below anything an audit or the truth's own rounding resolves.
        return reference if abs(float(reference.rate) - rate) <= 1e-12 * rate else None

    def _draw(self, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        count = int(round(value))
        if count != value:
            raise ValueError(f"`dataset` must hold 0/1 entries (diffprivlib's Geometric randomises "
                             f"integers), got a sum of {value!r}")
        return super()._draw(count, size, rng)

    def _vectorized(self, mech: Any, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        scale = float(mech._scale)  # diffprivlib's randomise, on arrays (same operations)
        unif = (rng.random(size) - 0.5) * (1 + np.exp(scale))
        sign = np.where(unif < 0, -1.0, 1.0)
        return np.round(value + sign * np.floor(np.log(sign * unif) / scale))


@dataclass(frozen=True, eq=False)
class Exponential(_PureDiffprivlib):
    """diffprivlib's ``Exponential`` choosing among candidates t_i with utility −|c(X) − t_i|.

    diffprivlib samples softmax(β u) by inverting its cumulative probabilities with one uniform,
    β = ε/(Δ(2 − monotonic)).  The utility depends on the data, so a diffprivlib object is built
    per call of the adapter (for the dataset's count) and its ``_probabilities`` are inverted for
    ``size`` uniforms at once.  Claim: ε-DP.  Exact truth:
    :class:`~mechanisms.exponential.ExponentialMechanism` with the same candidates and β (its
    output is the candidate index, as here).
    """

    candidates: tuple = (0.0, 2.0, 4.0, 6.0, 8.0)
    monotonic: bool = False

    _class_name: ClassVar[str] = "Exponential"

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", tuple(float(t) for t in self.candidates))
        self._setup()

    def _utility(self, value: float) -> list:
        return [-abs(value - t) for t in self.candidates]

    def _library_kwargs(self, value: float = 0.0) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "utility": self._utility(value),
                "monotonic": self.monotonic}

    def _construct(self, random_state: Any, value: float = 0.0) -> Any:
        try:
            return _dpl.Exponential(**self._library_kwargs(value), random_state=random_state)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"diffprivlib.Exponential rejected epsilon={self.epsilon!r}, "
                             f"sensitivity={self.sensitivity!r}: {exc}") from None

    def _make_reference(self, prototype: Any) -> Optional[Any]:
        if self.sensitivity != 1.0:
            return None  # the reference's β assumes the declared Δ is the true sensitivity 1
        return ExponentialMechanism(self.epsilon, self.candidates, monotone=self.monotonic,
                                    relation=self.relation)

    def _draw(self, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        if self.batch == "loop":
            mech = self._construct(np.random.RandomState(int(rng.integers(_SEED_BOUND))), value)
            return np.fromiter((mech.randomise() for _ in range(size)), np.float64, size)
        cumulative = np.asarray(self._construct(0, value)._probabilities, dtype=np.float64)
        index = np.searchsorted(cumulative, rng.random(size), side="left")  # first cdf ≥ u
        return np.minimum(index, cumulative.size - 1).astype(np.float64)

    @property
    def accuracy_reference(self) -> Optional[Any]:
        return None  # a selection, not an estimate with an additive error

    def _extra_name_parts(self) -> tuple[tuple[str, float], ...]:
        return (("m", len(self.candidates)),)
