"""Shared behaviour of the ready library adapters: the counting query, validation, pickling.

Every ready adapter releases the counting query f(X) = Σ_rows X of a dataset of rows in [0, 1]
(d = 1) through one library mechanism.  Adding, removing or replacing a row moves f by at most 1,
so the library's claim is the one it makes for sensitivity 1 (unless the user declares another
``sensitivity``, in which case the claim is the library's and the exact truth still uses the
true sensitivity 1: auditing such a misuse is a use case).
"""

from __future__ import annotations

import abc
from dataclasses import fields
from typing import Any, ClassVar

import numpy as np

from ..validation import check_dataset, check_size
from ._truth import ReferenceTruth

__all__ = ["CountingAdapter"]


def _rebuild(cls: type, kwargs: dict) -> Any:
    return cls(**kwargs)


class CountingAdapter(ReferenceTruth, abc.ABC):
    """Base of the ready adapters (subclasses are frozen dataclasses of their parameters).

    Subclasses implement :meth:`_draw` and set ``name``, ``claim``, ``reference`` and the class
    attributes ``library`` and ``deterministic``.

    Attributes
    ----------
    library : str
        The library's distribution name, e.g. ``"diffprivlib"``.
    deterministic : bool
        True if a fixed ``rng`` fixes the samples; False if the library draws from its own
        generator, which cannot be seeded (the samples are then independent but not
        reproducible).
    """

    library: ClassVar[str]
    deterministic: ClassVar[bool]
    d: ClassVar[int] = 1
    output_dim: ClassVar[int] = 1
    query_columns: ClassVar[tuple[int, ...]] = (0,)

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent releases of f(dataset), as a ``(size, 1)`` float64 array."""
        data = check_dataset(dataset, self.d)
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        out = np.asarray(self._draw(float(data.sum()), size, rng), dtype=np.float64)
        if out.shape != (size,):
            # The batch paths lean on library internals; fail loudly if a release changed them.
            raise RuntimeError(
                f"{self.name}: the {self.library} batch path returned shape {out.shape}, expected "
                f"({size},); the installed {self.library} may be incompatible with this adapter"
            )
        return out.reshape(size, 1)

    @abc.abstractmethod
    def _draw(self, value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` noisy releases of the query answer ``value``, shape ``(size,)``."""

    def true_answer(self, dataset: Any) -> np.ndarray:
        """The noiseless answer f(X) = Σ_rows X, shape ``(1,)``."""
        return check_dataset(dataset, self.d).sum(axis=0)

    def __reduce__(self) -> tuple:
        # Library objects (OpenDP measurements, diffprivlib RNGs) need not pickle: ship the
        # parameters and rebuild in the worker process.
        kwargs = {f.name: getattr(self, f.name) for f in fields(self) if f.init}  # type: ignore[arg-type]
        return (_rebuild, (type(self), kwargs))
