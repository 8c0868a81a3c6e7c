"""k-fold composition: k independent runs of one mechanism on the same dataset.

Privacy claims compose as follows (docs/ground-truth.md §6):

- (ε, δ)-DP  →  (kε, kδ)-DP, basic composition (Dwork & Roth 2014, Corollary B.2; Wu's
  lecture notes, Lemma 1.2); an error when kδ ≥ 1, where the claim would be vacuous;
- ε-DP  →  kε-DP;
- μ-GDP  →  √k·μ-GDP, exactly (Dong, Roth & Su 2022).

Exact truth: if the inner mechanism is Gaussian-shaped (it has ``exact_mu``), the composition is
exactly √k·μ-GDP under the same worst pair, so its profile, ε(δ) and trade-off follow from
:mod:`mechanisms.gdp`; :func:`Composition` then returns a :class:`GaussianComposition`.
Otherwise the exact methods raise ``NotImplementedError`` (truth unknown), except for k = 1 and
for the pure ε (δ = 0), which composes exactly: k times the inner pure ε.
The gap between the basic-composition claim and the exact √k·μ is what an audit of a composed
Gaussian mechanism shows.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from .base import GaussianShapedMechanism, ReferenceMechanism, mechanism_name
from .claims import ApproxDP, Claim, GaussianDP, PureDP, Relation, as_relation
from .parameters import FrozenParameters
from .validation import check_int, check_open_unit, check_size

__all__ = ["Composition", "GaussianComposition", "compose_claim"]


def _compose_approx(claim: ApproxDP, k: int) -> ApproxDP:
    if k * claim.delta >= 1.0:
        raise ValueError(f"basic composition of {claim} over `k` = {k} gives kδ = "
                         f"{k * claim.delta:g} >= 1, a vacuous claim; got k={k!r}")
    return ApproxDP(k * claim.epsilon, k * claim.delta, claim.relation)


#: How each claim type composes, keyed by the claim class.
_COMPOSERS: dict[type, Callable[[Any, int], Claim]] = {
    ApproxDP: _compose_approx,
    PureDP: lambda claim, k: PureDP(k * claim.epsilon, claim.relation),
    GaussianDP: lambda claim, k: GaussianDP(math.sqrt(k) * claim.mu, claim.relation),
}


def compose_claim(claim: Optional[Claim], k: int) -> Optional[Claim]:
    """The claim of k independent runs (``None`` for ``None``)."""
    if claim is None:
        return None
    composer = _COMPOSERS.get(type(claim))
    if composer is None:
        raise TypeError(f"cannot compose a claim of type {type(claim).__name__}: {claim!r}")
    return composer(claim, k)


class Composition(FrozenParameters, ReferenceMechanism):
    """k independent runs of ``mechanism`` on the same dataset, outputs concatenated.

    Output row i is (run 1, run 2, ..., run k), each run contributing the inner mechanism's
    k_inner columns, so the output has k·k_inner columns.  All runs are drawn in one call of the
    inner mechanism for size·k outputs, reshaped to (size, k·k_inner).

    Parameters
    ----------
    mechanism : callable
        Any mechanism ``(dataset, size, rng) -> (size, k_inner)``; the claim, exact truth and
        accuracy are available when the inner mechanism has them.
    k : int
        Number of runs, ≥ 1.

    Attributes
    ----------
    mechanism, k, d, relation
    claim : ApproxDP, PureDP, GaussianDP or None
        Basic composition of the inner claim (module docstring).

    Notes
    -----
    ``error_bound(alpha, k_queries)`` is conservative: a union bound across the runs.  The
    k_queries queries come from at most r = min(k, k_queries) runs, each contributing at most
    j = min(k_queries, number of inner queries); since the runs are independent copies,
    P(max > a) ≤ r · P(max over j queries of one run > a), so a = inner.error_bound(α/r, j)
    is valid whatever the inner error structure.  For independent Gaussian or Laplace noise
    it is slightly larger than the exact bound.

    References
    ----------
    Dwork & Roth (2014), Corollary B.2; Dong, Roth & Su (2022), "Gaussian differential
    privacy".
    """

    k: int

    def __new__(cls, mechanism: Any = None, k: Any = None) -> "Composition":
        # Gaussian-shapedness is decided by the presence of exact_mu, not by the type.
        if cls is Composition and callable(getattr(mechanism, "exact_mu", None)):
            cls = GaussianComposition
        return super().__new__(cls)

    def __init__(self, mechanism: Any, k: int) -> None:
        if not callable(mechanism):
            raise TypeError(f"`mechanism` must be callable (dataset, size, rng) -> array, "
                            f"got {mechanism!r}")
        self.k = check_int("k", k)
        self.mechanism = mechanism
        self.claim = compose_claim(getattr(mechanism, "claim", None), self.k)
        inner_relation = getattr(mechanism, "relation", None)
        if self.claim is not None:
            inner_relation = self.claim.relation
        self.relation = Relation.ADD_REMOVE if inner_relation is None else as_relation(inner_relation)
        self.d = getattr(mechanism, "d", None)
        self._freeze(mechanism=mechanism, k=self.k)

    def __reduce__(self) -> tuple:
        return (Composition, (self.mechanism, self.k))

    def _inner(self, attribute: str) -> Any:
        value = getattr(self.mechanism, attribute, None)
        if value is None:
            raise NotImplementedError(f"the inner mechanism {mechanism_name(self.mechanism)} "
                                      f"has no `{attribute}`")
        return value

    @property
    def row_dim(self) -> Optional[int]:
        """The inner mechanism's dataset row width (``None`` when it does not say)."""
        return getattr(self.mechanism, "row_dim", self.d)

    # -- sampling -------------------------------------------------------------------------------
    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        return self._sample(dataset, size, rng)  # the inner mechanism validates the dataset

    def _sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        draws = np.asarray(self.mechanism(data, size * self.k, rng), dtype=np.float64)
        if draws.ndim != 2 or draws.shape[0] != size * self.k:
            raise ValueError(f"the inner mechanism returned shape {draws.shape}, "
                             f"expected ({size * self.k}, k_inner)")
        return draws.reshape(size, self.k * draws.shape[1])

    def true_answer(self, dataset: Any) -> np.ndarray:
        """The inner true answer, tiled k times."""
        return np.tile(self._inner("true_answer")(dataset), self.k)

    @property
    def output_dim(self) -> int:
        """k · k_inner."""
        return self.k * int(self._inner("output_dim"))

    @property
    def query_columns(self) -> tuple[int, ...]:
        """The inner query columns of each run, offset by run."""
        width = int(self._inner("output_dim"))
        columns = self._inner("query_columns")
        return tuple(run * width + column for run in range(self.k) for column in columns)

    # -- exact privacy ----------------------------------------------------------------------------
    def _exact(self, method: str, *args: Any, relation: Any = None) -> Any:
        self._relation(relation)
        if self.k == 1:
            return self._inner(method)(*args, relation=relation)
        raise NotImplementedError(
            f"exact {method} of {self.name}: k-fold composition is exact here only for "
            "Gaussian-shaped inner mechanisms (those with exact_mu); truth unknown")

    def _pure_epsilon(self, relation: Any) -> float:
        """k · the inner pure ε: the essential supremum of a sum of independent privacy losses
        is the sum of their essential suprema, so pure ε composes exactly."""
        return self.k * float(self._inner("epsilon_for_delta")(0.0, relation=relation))

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """Exact for k = 1; for k > 1 only δ(ε') = 0 at ε' ≥ k·(inner pure ε) is known."""
        if self.k > 1:
            values = np.asarray(epsilon, dtype=np.float64)
            self._relation(relation)
            if np.all(values >= self._pure_epsilon(relation)):
                return np.zeros_like(values)
        return self._exact("privacy_profile", epsilon, relation=relation)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """Exact for k = 1 and for δ = 0 (k · inner pure ε); otherwise truth unknown."""
        if delta == 0:
            self._relation(relation)
            return self._pure_epsilon(relation)
        return self._exact("epsilon_for_delta", delta, relation=relation)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        return self._exact("tradeoff", alpha, relation=relation)

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_variance(self) -> np.ndarray:
        """The inner per-column variances, tiled k times."""
        return np.tile(np.asarray(self._inner("noise_variance")(), dtype=np.float64), self.k)

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Union bound across runs: inner.error_bound(α / min(self.k, k), min(k, inner queries))."""
        alpha = check_open_unit("alpha", alpha)
        k = check_int("k", k)
        inner_queries = len(getattr(self.mechanism, "query_columns", ())) or k
        runs = min(self.k, k)
        return float(self._inner("error_bound")(alpha / runs, min(k, inner_queries)))

    def worst_case_error(self) -> Optional[float]:
        bound = getattr(self.mechanism, "worst_case_error", None)
        return bound() if callable(bound) else None

    # -- presentation -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"Composition({mechanism_name(self.mechanism)}, k={self.k})"


class GaussianComposition(Composition, GaussianShapedMechanism):
    """A composition of a Gaussian-shaped mechanism: exactly √k·μ-GDP (Dong, Roth & Su)."""

    def exact_mu(self, relation: Any = None) -> float:
        """√k times the inner exact μ."""
        return math.sqrt(self.k) * float(self.mechanism.exact_mu(relation))

    privacy_profile = GaussianShapedMechanism.privacy_profile
    epsilon_for_delta = GaussianShapedMechanism.epsilon_for_delta
    tradeoff = GaussianShapedMechanism.tradeoff
