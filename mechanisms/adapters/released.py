"""Everything a library call releases, as one fixed-length vector per call.

A library's model or query returns more than one number: a fitted model's parameters, its
``classes_``, the shapes of its arrays; a query may return an array whose length depends on the
data, NaN, or raise.  An audit sees only what the mechanism's output vector holds, so a difference
that is not in the vector cannot be certified.  :func:`encode` writes one released value into a
block of fixed width:

    [size, leading dimension, count of non-finite values, values padded with 0 to ``capacity``]

(non-finite values are written as 0 and counted; a size beyond ``capacity`` keeps the first
``capacity`` values and still records the true size).  Two releases of different shape or with a
different number of NaN therefore differ in a coordinate that is always present, and the audit can
certify that difference like any other event.  :func:`released` concatenates the blocks of several
values.  Both functions are plain numpy so that a reproduction script can carry their source.

:class:`LibraryRelease` turns a per-call function ``release(data, random_state, **params)`` into the
mechanism protocol ``(dataset, size, rng) -> (size, k)``.  Each call of the protocol hands the
library one ``numpy.random.RandomState`` seeded from ``rng`` (diffprivlib and scikit-learn accept
it as ``random_state``), so a seeded library is deterministic under a fixed ``rng``; a library with
its own unseedable generator (OpenDP) ignores it.  A call that raises is an output too: the last
column is 1 for a release that raised and 0 otherwise, so an exception on one dataset and not on
its neighbour is an event.  Library warnings are silenced inside the call (they are not part of
what the release returns; a reproduction script shows them).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import numpy as np

from ..claims import Claim
from ..validation import check_int, check_size

__all__ = ["encode", "released", "LibraryRelease", "RAISED", "HEADER"]

#: Fixed columns of one block before its values: size, leading dimension, non-finite count.
HEADER = 3
#: What the last column of a :class:`LibraryRelease` output is for a call that raised.
RAISED = 1.0
_SEED_BOUND = 2**32


def encode(value, capacity):
    """One released value as ``3 + capacity`` floats: size, leading dimension, number of
    non-finite entries, then the entries (non-finite ones as 0) padded with 0 to ``capacity``.

    ``None`` encodes as size −1.  Entries beyond ``capacity`` are left out; the size records them.
    """
    if value is None:
        return np.concatenate([[-1.0, 0.0, 0.0], np.zeros(capacity)])
    array = np.asarray(value, dtype=np.float64)
    flat = array.ravel()
    finite = np.isfinite(flat)
    body = np.zeros(capacity)
    kept = np.where(finite, flat, 0.0)[:capacity]
    body[:kept.size] = kept
    leading = array.shape[0] if array.ndim else 1
    return np.concatenate([[flat.size, leading, flat.size - np.count_nonzero(finite)], body])


def released(*blocks):
    """Concatenate ``(value, capacity)`` blocks encoded by :func:`encode` into one vector."""
    return np.concatenate([encode(value, capacity) for value, capacity in blocks])


@dataclass(frozen=True, eq=False)
class LibraryRelease:
    """``release(data, random_state, **params)`` called ``size`` times, as a mechanism.

    Attributes
    ----------
    release : callable
        One release: ``release(data, random_state, **params) -> 1-D array`` of length
        ``output_dim - 1`` (the last column is added here: 1 if the call raised).
    params : mapping
        Keyword arguments of ``release`` (the grid point).
    name : str
    claim : Claim
        The privacy the library claims for this release.
    output_dim : int
        k, including the final "raised" column.
    batch : callable, optional
        ``batch(data, size, rng) -> (size, output_dim - 1)``: a faster path with the same law as
        ``size`` calls of ``release`` (e.g. a vectorized adapter of :mod:`mechanisms.adapters`).
    deterministic : bool
        Whether a fixed ``rng`` fixes the samples (False for libraries that draw from their own
        generator).
    reference : mechanism, optional
        A mechanism with the same law whose exact privacy reports show.
    """

    release: Callable[..., Any]
    params: Mapping[str, Any]
    name: str
    claim: Claim
    output_dim: int
    batch: Optional[Callable[..., Any]] = None
    deterministic: bool = True
    reference: Optional[Any] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.release):
            raise TypeError(f"`release` must be callable, got {self.release!r}")
        object.__setattr__(self, "output_dim", check_int("output_dim", self.output_dim, minimum=2))
        object.__setattr__(self, "params", dict(self.params))

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        data = np.asarray(dataset, dtype=np.float64)
        out = np.zeros((size, self.output_dim))
        if self.batch is not None:
            out[:, :-1] = self.batch(data, size, rng)
            return out
        state = np.random.RandomState(int(rng.integers(_SEED_BOUND)))
        width = self.output_dim - 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for row in range(size):
                try:
                    value = np.asarray(self.release(data, state, **self.params), dtype=np.float64)
                except Exception:  # noqa: BLE001 - any exception the library raises is an output
                    out[row, -1] = RAISED
                    continue
                if value.shape != (width,):
                    raise ValueError(f"{self.name}: `release` returned shape {value.shape}, expected "
                                     f"({width},) (output_dim={self.output_dim} with the raised column)")
                out[row, :-1] = value
        return out

    @property
    def vectorized(self) -> bool:
        """Whether one call draws the randomness of all ``size`` rows at once (a ``batch`` path).
        Without one, each row is its own ``release`` call, so no random call's leading dimension
        stands for the rows (a gray-box replay must not scale noise per row, :mod:`audit.graybox`)."""
        return self.batch is not None

    def __reduce__(self) -> tuple:
        # The release function and its parameters pickle; library objects are built per call.
        return (_rebuild, (self.release, self.params, self.name, self.claim, self.output_dim,
                           self.batch, self.deterministic, self.reference))

    # -- exact truth, where a reference mechanism with the same law is known ---------------------
    def _ask(self, method: str, *args: Any, **kwargs: Any) -> Any:
        answer = getattr(self.reference, method, None)
        if answer is None:
            raise NotImplementedError(f"{self.name}: no exact {method} is known")
        return answer(*args, **kwargs)

    def exact_mu(self, relation: Any = None) -> float:
        return self._ask("exact_mu", relation)

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        return self._ask("privacy_profile", epsilon, relation=relation)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        return self._ask("epsilon_for_delta", delta, relation=relation)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        return self._ask("tradeoff", alpha, relation=relation)


def _rebuild(*args: Any) -> LibraryRelease:
    return LibraryRelease(*args)
