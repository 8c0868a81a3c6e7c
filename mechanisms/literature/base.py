"""Shared machinery of the DP-testing literature's benchmark mechanisms.

The mechanisms of StatDP (Ding et al., CCS 2018) and DP-Sniper (Bichsel et al., S&P 2021) take
a vector of query answers, not a dataset of rows: their inputs are pairs of answer vectors that
the authors declare neighbouring (each answer differs by at most 1, "component-wise", or one
answer differs by at most 1).  Such pairs cannot be checked by :func:`scenarios.is_neighbor`;
audits use :func:`scenarios.custom`, and the reports say the pairs were vouched for.

Every mechanism here states two things separately:

- ``claim``: the pure ε-DP its authors claim (:class:`mechanisms.PureDP`);
- ``truth``: a :class:`LiteratureTruth`, what is *known* of the true pure ε: an exact value, a
  proven lower value, a proof that the claim holds (exact value unknown), or nothing.

The engine's exact-value methods (:meth:`LiteratureMechanism.epsilon_for_delta`,
:meth:`~LiteratureMechanism.privacy_profile`, :meth:`~LiteratureMechanism.tradeoff`) answer
only what the truth determines and raise ``NotImplementedError`` otherwise, which the engine
reports as unknown.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Optional

import numpy as np

from ..claims import PureDP, as_relation
from ..laplace import LaplaceMechanism, _check_delta_closed, _check_epsilons
from ..validation import check_finite_positive, check_size

__all__ = ["TruthKind", "LiteratureTruth", "LiteratureMechanism", "laplace_noise", "statdp_patterns"]


class TruthKind(str, Enum):
    """How much is known about a mechanism's true pure ε."""

    EXACT = "exact"      # the true ε is `epsilon` (may be inf)
    LOWER = "lower"      # the true ε is at least `epsilon` (and at most `upper`, if given)
    HOLDS = "holds"      # a published proof gives ε ≤ `upper`; the exact value is unknown
    UNKNOWN = "unknown"  # nothing proven either way

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class LiteratureTruth:
    """What is known about the true pure ε of a literature mechanism.

    Attributes
    ----------
    kind : TruthKind
    epsilon : float or None
        The exact ε (``EXACT``, possibly ``inf``) or a proven lower value (``LOWER``).
    upper : float or None
        A proven upper bound on ε, where one is known.
    source : str
        Where the value comes from (theorem, or the derivation in the mechanism's docstring).
    """

    kind: TruthKind
    epsilon: Optional[float]
    upper: Optional[float]
    source: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", TruthKind(self.kind))
        if self.kind in (TruthKind.EXACT, TruthKind.LOWER) and self.epsilon is None:
            raise ValueError(f"a {self.kind} truth needs `epsilon`, got None")
        if self.kind is TruthKind.HOLDS and self.upper is None:
            raise ValueError("a 'holds' truth needs the proven `upper` bound, got None")

    @property
    def pure_upper(self) -> Optional[float]:
        """The smallest ε known to be satisfied (exact value or proven upper bound)."""
        if self.kind is TruthKind.EXACT:
            return self.epsilon
        return self.upper

    def violates(self, claimed: float) -> Optional[bool]:
        """True if the truth refutes a pure ``claimed``-DP claim, False if it confirms it, None if unknown."""
        if self.kind in (TruthKind.EXACT, TruthKind.LOWER) and self.epsilon > claimed * (1 + 1e-12):
            return True
        upper = self.pure_upper
        if upper is not None and upper <= claimed * (1 + 1e-12):
            return False
        return None

    def describe(self) -> str:
        """Short text for tables: ``0.1``, ``≥ 0.213``, ``≤ 0.1 (proof)``, ``∞``, ``unknown``."""
        def show(value: float) -> str:
            return "∞" if math.isinf(value) else f"{value:.4g}"

        if self.kind is TruthKind.EXACT:
            return show(self.epsilon)
        if self.kind is TruthKind.LOWER:
            suffix = f", ≤ {show(self.upper)}" if self.upper is not None else ""
            return f"≥ {show(self.epsilon)}{suffix}"
        if self.kind is TruthKind.HOLDS:
            return f"≤ {show(self.upper)} (proof)"
        return "unknown"


def statdp_patterns(dimensions: int, component_wise: bool, low: float = -10.0,
                    high: float = 10.0) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """StatDP's input patterns (Ding et al. 2018, Sec. 5), as DP-Sniper generates them.

    Base a = (1, …, 1); "one above" b = (0, 1, …, 1) and "one below" b = (2, 1, …, 1); with
    component-wise neighbours also "one above rest below" (2, 0, …, 0), "one below rest above"
    (0, 2, …, 2), "half half" (2, …, 2, 0, …, 0) with ⌊d/2⌋ twos, "all above" (2, …, 2), "all below"
    (0, …, 0), and "X shape" a = (1, …, 1, 0, …, 0) against b = (0, …, 0, 1, …, 1).  Values are
    clipped to [low, high].  Each pair stands for both orders (the engine audits both).
    """
    d, h = dimensions, dimensions // 2
    ones = np.ones(d)

    def vector(*parts):
        return np.clip(np.concatenate([np.full(n, v, dtype=np.float64) for v, n in parts]), low, high)

    pairs = [(ones, vector((0, 1), (1, d - 1)), "one above"), (ones, vector((2, 1), (1, d - 1)), "one below")]
    if component_wise:
        pairs += [(ones, vector((2, 1), (0, d - 1)), "one above rest below"),
                  (ones, vector((0, 1), (2, d - 1)), "one below rest above"),
                  (ones, vector((2, h), (0, d - h)), "half half"),
                  (ones, vector((2, d)), "all above"), (ones, vector((0, d)), "all below"),
                  (vector((1, h), (0, d - h)), vector((0, h), (1, d - h)), "X shape")]
    return [(np.clip(a, low, high), b, label) for a, b, label in pairs]


def laplace_noise(rng: np.random.Generator, scale: float, shape: Any) -> np.ndarray:
    """Laplace(0, scale) draws of ``shape`` (one vectorized call)."""
    return rng.laplace(0.0, scale, shape)


class LiteratureMechanism(abc.ABC):
    """A benchmark mechanism on a vector of ``input_dim`` query answers.

    Subclasses set ``epsilon`` (the published privacy parameter), ``input_dim``, ``claim``,
    ``truth`` and implement :meth:`_sample`.  A mechanism whose worst pair is a single Laplace
    shift of known ε₀ sets ``laplace_epsilon`` so its whole privacy profile is exact.

    Calling it validates the input at the door: a 1-D array (or ``(1, input_dim)`` row) of
    ``input_dim`` finite numbers.
    """

    epsilon: float
    input_dim: int
    claim: PureDP
    truth: LiteratureTruth
    #: ε₀ of a worst pair that is one Laplace shift (then ε(δ), δ(ε) and T(α) are exact).
    laplace_epsilon: Optional[float] = None
    #: The algorithm's source, shown by ``name``.
    source: str = ""

    def _init_claim(self, epsilon: float, relation: Any, claimed: Optional[float] = None) -> None:
        self.epsilon = check_finite_positive("epsilon", epsilon)
        self.relation = as_relation(relation)
        self.claim = PureDP(self.epsilon if claimed is None else claimed, self.relation)

    # -- sampling -------------------------------------------------------------------------------
    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        queries = self.check_input(dataset)
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        return np.ascontiguousarray(self._sample(queries, size, rng), dtype=np.float64)

    def check_input(self, dataset: Any) -> np.ndarray:
        """The input as a float64 vector of ``input_dim`` finite query answers."""
        try:
            array = np.asarray(dataset, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"`dataset` must be a vector of {self.input_dim} query answers, got "
                            f"{type(dataset).__name__}") from exc
        if array.ndim == 2 and array.shape[0] == 1:
            array = array[0]
        if array.shape != (self.input_dim,):
            raise ValueError(f"`dataset` must be a vector of {self.input_dim} query answers for "
                             f"{self.name}, got shape {array.shape}")
        if not np.isfinite(array).all():
            raise ValueError(f"`dataset` must hold finite query answers, got {array.tolist()}")
        return array

    @abc.abstractmethod
    def _sample(self, queries: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``size`` outputs, shape ``(size, k)``, for a validated input vector."""

    # -- exact privacy (only what the truth determines) --------------------------------------------
    def _laplace(self) -> Optional[LaplaceMechanism]:
        if self.laplace_epsilon is None:
            return None
        return LaplaceMechanism(self.laplace_epsilon)  # d = 1: shift 1, scale 1/ε₀

    def _unknown(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"{what} of {self.name} is not known (truth: "
                                   f"{self.truth.describe()}; {self.truth.source})")

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """Exact ε(δ): δ = 0 gives the exact pure ε where known; δ > 0 only for Laplace-shaped ones."""
        delta = _check_delta_closed(delta)
        laplace = self._laplace()
        if laplace is not None:
            return laplace.epsilon_for_delta(delta)
        if delta == 0.0 and self.truth.kind is TruthKind.EXACT:
            return float(self.truth.epsilon)
        raise self._unknown(f"ε(δ = {delta:g})")

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """Exact δ(ε'); known everywhere for Laplace-shaped mechanisms, else 0 above a proven pure ε."""
        laplace = self._laplace()
        if laplace is not None:
            return laplace.privacy_profile(epsilon)
        epsilon = _check_epsilons(epsilon)
        upper = self.truth.pure_upper
        if upper is not None and math.isfinite(upper) and np.all(epsilon >= upper):
            return np.zeros_like(epsilon)
        raise self._unknown("the privacy profile δ(ε')")

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """Exact trade-off curve of the worst pair (Laplace-shaped mechanisms only)."""
        laplace = self._laplace()
        if laplace is None:
            raise self._unknown("the trade-off curve")
        return laplace.tradeoff(alpha)

    # -- presentation -----------------------------------------------------------------------------
    @property
    def parameters(self) -> str:
        """The parameters shown in ``name`` (subclasses add theirs)."""
        return f"ε={self.epsilon:g}"

    @property
    def name(self) -> str:
        return f"{type(self).__name__}({self.parameters})"

    def __repr__(self) -> str:
        return self.name
