"""Turn a per-sample callable into the vectorized mechanism protocol.

Most DP libraries release one noisy value per call.  :func:`vectorize` wraps such a callable
``fn(dataset) -> float | array`` into the protocol of :mod:`mechanisms.base`,
``mechanism(dataset, size, rng) -> (size, k) float64``, by calling it ``size`` times in a tight
loop.  That loop is the slow path (a few hundred thousand samples per second at best); the ready
adapters of :mod:`mechanisms.adapters.diffprivlib` and :mod:`mechanisms.adapters.opendp` use the
libraries' batch entry points instead.

**Seeding.**  A callable that draws from its library's own (often cryptographic, unseedable)
generator cannot be seeded by our ``rng``: its samples are not reproducible, and the audit's
statistics stay valid only because its draws are independent.  If the callable accepts a seed
(``random_state=`` in diffprivlib and scikit-learn, ``seed=`` elsewhere), name that keyword in
``seed_keyword``: every sample then gets its own 32-bit seed drawn from ``rng``, and the
wrapped mechanism is deterministic under a fixed ``rng``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..claims import Claim
from ..validation import check_int, check_size
from ._truth import ReferenceTruth

__all__ = ["VectorizedMechanism", "vectorize"]

#: Seeds handed to a seedable callable lie in [0, 2**32): numpy's legacy ``RandomState`` (used by
#: diffprivlib and scikit-learn for ``random_state=int``) accepts no more.
_SEED_BOUND = 2**32


@dataclass(frozen=True, eq=False)
class VectorizedMechanism(ReferenceTruth):
    """A per-sample callable sampled ``size`` times per call; see :func:`vectorize`.

    Attributes
    ----------
    fn : callable
        ``fn(dataset)`` or, with ``seed_keyword``, ``fn(dataset, **{seed_keyword: int})``,
        returning a float (k = 1) or an array of shape ``(k,)``.
    name : str
    claim : Claim or None
        The privacy the callable's author claims.
    output_dim : int
        k, the number of output columns.
    seed_keyword : str or None
        The keyword through which ``fn`` accepts a per-sample integer seed.
    reference : mechanism or None
        A mechanism with the same output law whose exact truth (``exact_mu``,
        ``privacy_profile``, ``epsilon_for_delta``, ``tradeoff``) and accuracy are reported.
    """

    fn: Callable[..., Any]
    name: str
    claim: Optional[Claim] = None
    output_dim: int = 1
    seed_keyword: Optional[str] = None
    reference: Optional[Any] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise TypeError(f"`fn` must be callable, got {self.fn!r}")
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"`name` must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "output_dim", check_int("output_dim", self.output_dim))
        if self.seed_keyword is not None and (
            not isinstance(self.seed_keyword, str) or not self.seed_keyword.isidentifier()
        ):
            raise ValueError(f"`seed_keyword` must be a keyword name or None, got {self.seed_keyword!r}")

    @property
    def deterministic(self) -> bool:
        """True if a fixed ``rng`` fixes the samples (``fn`` takes its seed from ``rng``)."""
        return self.seed_keyword is not None

    @property
    def vectorized(self) -> bool:
        """False: each row is its own call of ``fn``, so no random call's leading dimension stands
        for the rows (a gray-box replay must not scale noise per row, :mod:`audit.graybox`)."""
        return False

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Call ``fn`` ``size`` times on ``dataset``; return a ``(size, k)`` float64 array.

        ``rng`` is used only to draw per-sample seeds when ``seed_keyword`` is set.
        """
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        if self.seed_keyword is None:
            draws = (self.fn(dataset) for _ in range(size))
        else:
            seeds = rng.integers(0, _SEED_BOUND, size=size, dtype=np.int64).tolist()
            keyword = self.seed_keyword
            draws = (self.fn(dataset, **{keyword: seed}) for seed in seeds)
        return self._collect(draws, size)

    def _collect(self, draws: Any, size: int) -> np.ndarray:
        k = self.output_dim
        first = np.asarray(next(draws), dtype=np.float64)
        if first.shape not in ((k,), ()) or (first.shape == () and k != 1):
            expected = "a float or shape (1,)" if k == 1 else f"shape ({k},)"
            raise ValueError(
                f"{self.name}: `fn` must return {expected} (output_dim={k}), got shape {first.shape}"
            )
        out = np.empty((size, k), dtype=np.float64)
        out[0] = first
        if first.shape == ():
            # Scalars: fromiter converts each with float(), the fastest pure-Python path.
            out[1:, 0] = np.fromiter(draws, dtype=np.float64, count=size - 1)
        else:
            for row, value in enumerate(draws, start=1):
                value = np.asarray(value, dtype=np.float64)
                if value.shape != first.shape:  # no silent broadcasting of a stray scalar
                    raise ValueError(f"{self.name}: `fn` returned shape {value.shape} at sample "
                                     f"{row}, after shape {first.shape} at sample 0")
                out[row] = value
        return out


def vectorize(
    fn: Callable[..., Any],
    *,
    name: str,
    claim: Optional[Claim] = None,
    output_dim: int = 1,
    seed_keyword: Optional[str] = None,
    reference: Optional[Any] = None,
) -> VectorizedMechanism:
    """Wrap a per-sample callable into the mechanism protocol ``(dataset, size, rng)``.

    Parameters
    ----------
    fn : callable
        One release of the mechanism: ``fn(dataset) -> float | array of shape (k,)``.  The
        dataset is passed through unchanged.
    name : str
        Name for reports.
    claim : Claim, optional
        The privacy claimed for ``fn`` (e.g. ``ApproxDP(1.0, 1e-5)``); the audit tests it.
    output_dim : int, default 1
        k, the length of each output.
    seed_keyword : str, optional
        Keyword through which ``fn`` accepts an integer seed.  If given, each sample is drawn as
        ``fn(dataset, **{seed_keyword: s})`` with its own ``s`` in [0, 2³²) drawn from ``rng``, so
        the mechanism is deterministic under a fixed ``rng``.  If not, ``rng`` is unused and the
        samples come from ``fn``'s own generator (not reproducible).
    reference : mechanism, optional
        A mechanism with the same output law (e.g. ``GaussianMechanism(sigma=2.0)``) whose exact
        privacy and accuracy the report shows next to the claim; without it the exact-privacy
        methods raise ``NotImplementedError`` and there are no accuracy attributes.

    Returns
    -------
    VectorizedMechanism

    Examples
    --------
    >>> import numpy as np
    >>> from diffprivlib.mechanisms import Laplace                       # doctest: +SKIP
    >>> fn = lambda data, random_state: Laplace(
    ...     epsilon=1.0, sensitivity=1.0, random_state=random_state).randomise(float(np.sum(data)))
    >>> mech = vectorize(fn, name="Laplace(ε=1)", seed_keyword="random_state")  # doctest: +SKIP
    >>> mech(np.ones((5, 1)), 3, np.random.default_rng(1)).shape          # doctest: +SKIP
    (3, 1)
    """
    return VectorizedMechanism(fn, name, claim, output_dim, seed_keyword, reference)
