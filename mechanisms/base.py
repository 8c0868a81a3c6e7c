"""The mechanism protocol and the base classes of the reference mechanisms.

**Protocol.**  A mechanism is any callable ``mechanism(dataset, size, rng) -> ndarray`` that
returns a float64 array of shape ``(size, k)`` holding ``size`` independent draws of M(dataset),
drawn in one vectorized call from the ``numpy.random.Generator`` ``rng``.  For the reference
mechanisms ``dataset`` is an ``(n, d)`` array of rows in [0, 1]^d and the query is the vector of
column sums.  That is all the audit engine needs; everything else below is optional.

**Optional attributes** (the reference mechanisms have all of them; a user callable may have
any subset, and the report shows what is known):

- ``name`` (str), ``claim`` (a :mod:`mechanisms.claims` object);
- exact truth: ``exact_mu(relation)`` where Gaussian-shaped, ``privacy_profile(epsilon,
  relation=...)``, ``epsilon_for_delta(delta, relation=...)``, ``tradeoff(alpha, relation=...)``;
  a method that cannot answer for a relation raises ``NotImplementedError``;
- accuracy: ``true_answer(dataset)`` (the k noiseless outputs), ``noise_variance()`` (per output
  column), ``error_bound(alpha, k=1)`` (the claimed a with P(max over k queries |error| > a) ≤ α),
  ``query_columns`` (which output columns are the queries), ``worst_case_error()`` (a bound no
  error may exceed, where the noise is bounded).
"""

from __future__ import annotations

import abc
from typing import Any, Optional, Protocol, runtime_checkable

import numpy as np

from .claims import Claim, Relation, as_relation
from .gdp import gdp_delta, gdp_epsilon, gdp_tradeoff
from .validation import check_dataset, check_size

__all__ = ["Mechanism", "ReferenceMechanism", "GaussianShapedMechanism", "mechanism_name"]


@runtime_checkable
class Mechanism(Protocol):
    """Anything the audit engine can sample: ``(dataset, size, rng) -> (size, k) float64``."""

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray: ...


def mechanism_name(mechanism: Any) -> str:
    """A readable name for reports and error messages."""
    name = getattr(mechanism, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(mechanism, "__name__", None) or type(mechanism).__name__


class ReferenceMechanism(abc.ABC):
    """Shared behaviour of the reference mechanisms: validation at the door, naming, accuracy.

    Subclasses set ``self.d`` (row dimension), ``self.relation`` and ``self.claim`` in their
    constructor and implement :meth:`true_answer`, :meth:`_sample`, :meth:`privacy_profile`,
    :meth:`epsilon_for_delta`, :meth:`tradeoff`, :meth:`noise_variance` and :meth:`error_bound`.
    """

    d: int
    relation: Relation
    claim: Claim

    # -- sampling ---------------------------------------------------------------------------
    @property
    def row_dim(self) -> int:
        """Width of a dataset row (``d`` unless a subclass structures rows differently)."""
        return self.d

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        data = check_dataset(dataset, self.row_dim)
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        return self._sample(data, size, rng)

    @abc.abstractmethod
    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``size`` outputs for a validated dataset."""

    @abc.abstractmethod
    def true_answer(self, dataset: Any) -> np.ndarray:
        """The noiseless output vector f(dataset) of length k."""

    @property
    def output_dim(self) -> int:
        """k, the number of output columns."""
        return int(self.true_answer(np.zeros((0, self.row_dim))).shape[0])

    @property
    def query_columns(self) -> tuple[int, ...]:
        """Output columns that are query answers (accuracy claims refer to these)."""
        return tuple(range(self.output_dim))

    # -- exact privacy ------------------------------------------------------------------------
    def _relation(self, relation: Optional[Any]) -> Relation:
        return self.relation if relation is None else as_relation(relation)

    @abc.abstractmethod
    def privacy_profile(self, epsilon, relation=None) -> np.ndarray:
        """Exact δ_M(ε) over all neighbour pairs of ``relation`` (vectorized in ε)."""

    @abc.abstractmethod
    def epsilon_for_delta(self, delta: float, relation=None) -> float:
        """Exact ε_M(δ): the smallest ε with δ_M(ε) ≤ δ."""

    @abc.abstractmethod
    def tradeoff(self, alpha, relation=None) -> np.ndarray:
        """Exact trade-off curve of the worst neighbour pair of ``relation``."""

    # -- accuracy -----------------------------------------------------------------------------
    @abc.abstractmethod
    def noise_variance(self) -> np.ndarray:
        """Variance of the error of each output column, shape ``(k,)``."""

    @abc.abstractmethod
    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Claimed a with P(max over k queries |error| > a) ≤ α."""

    def worst_case_error(self) -> Optional[float]:
        """A bound that no error ever exceeds, or ``None`` for unbounded noise."""
        return None

    # -- presentation -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return repr(self)


class GaussianShapedMechanism(ReferenceMechanism):
    """A mechanism whose worst pair has trade-off curve exactly G_μ: truth follows from μ."""

    @abc.abstractmethod
    def exact_mu(self, relation=None) -> float:
        """Exact μ of the worst neighbour pair under ``relation``."""

    def privacy_profile(self, epsilon, relation=None) -> np.ndarray:
        return gdp_delta(epsilon, self.exact_mu(relation))

    def epsilon_for_delta(self, delta: float, relation=None) -> float:
        return gdp_epsilon(delta, self.exact_mu(relation))

    def tradeoff(self, alpha, relation=None) -> np.ndarray:
        return gdp_tradeoff(alpha, self.exact_mu(relation))
