"""Adapters that put third-party DP mechanisms under audit.

- :func:`vectorize` (:mod:`.vectorize`) wraps any per-sample callable ``fn(dataset)`` into the
  mechanism protocol ``(dataset, size, rng) -> (size, k) float64``.
- :mod:`mechanisms.adapters.diffprivlib`: ``GaussianAnalytic``, ``Gaussian``, ``Laplace``,
  ``LaplaceBoundedNoise``, ``LaplaceTruncated``, ``Geometric``, ``Exponential``.
- :mod:`mechanisms.adapters.opendp`: ``make_gaussian``, ``make_laplace``,
  ``make_discrete_gaussian``, ``make_discrete_laplace``.

The library modules need the optional extra (``pip install "dpaudit[thirdparty]"``) and are not
imported here: ``import mechanisms.adapters`` works without them, and importing a library module
without its library raises an ``ImportError`` that says how to install it.
"""

from ._extra import INSTALL_HINT
from .vectorize import VectorizedMechanism, vectorize

#: The library adapter modules, importable once the extra is installed.
LIBRARY_MODULES = ("mechanisms.adapters.diffprivlib", "mechanisms.adapters.opendp")

__all__ = ["INSTALL_HINT", "LIBRARY_MODULES", "VectorizedMechanism", "vectorize"]
