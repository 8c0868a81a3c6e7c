"""Validation of the parallelism options shared by every executor: backend, workers, options.

The executors (:mod:`audit.executor` for joblib, :mod:`audit.dask_backend` for Dask) both import
from here and never from each other, so the imports run one way, ``executor → dask_backend → parallelism``,
with no way back (``dask_backend`` imports Dask itself only when a Dask executor is made).
"""

from __future__ import annotations

import difflib
import numbers
from typing import Any, Iterable, Mapping

from joblib.parallel import BACKENDS

__all__ = ["DASK_OPTIONS", "known_backends", "check_backend", "check_n_jobs", "check_backend_options"]

#: Keyword options of ``backend="dask"`` (the keyword parameters of
#: :class:`audit.dask_backend.DaskExecutor` after ``n_jobs``).
DASK_OPTIONS = ("scheduler", "window", "share_arguments", "dashboard_address")


def known_backends() -> tuple[str, ...]:
    """joblib's registered backends (``loky``, ``threading``, ... and any registered later) and ``dask``."""
    return tuple(sorted(set(BACKENDS) | {"dask"}))


def check_backend(backend: Any) -> str:
    """``backend`` if it names a joblib backend or ``"dask"``; TypeError/ValueError otherwise."""
    if not isinstance(backend, str) or not backend:
        raise TypeError(f"`backend` must be a backend name such as 'loky' or 'dask', got {backend!r}")
    known = known_backends()
    if backend not in known:
        raise ValueError(f"`backend` must be one of {', '.join(map(repr, known))}, got {backend!r}")
    return backend


def check_n_jobs(n_jobs: Any) -> int:
    """A worker count: a positive integer, or -1 for all cores."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"`n_jobs` must be an integer (1, 2, ... or -1 for all cores), got {n_jobs!r}")
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"`n_jobs` must be a positive integer or -1, got {n_jobs!r}")
    return int(n_jobs)


def check_backend_options(backend: str, options: Mapping[str, Any], function: str,
                          parameters: Iterable[str]) -> None:
    """Reject keyword arguments that are neither ``function``'s parameters nor options of ``backend``.

    A misspelt parameter (``sample=`` for ``samples=``) is named as such, with the closest
    parameter (:func:`difflib.get_close_matches`), instead of being reported as a backend option.

    Raises
    ------
    TypeError
        For an unknown keyword, or a Dask option given with another backend.
    """
    parameters = [name for name in parameters if name not in ("backend_options", "options")]
    for name in options:
        if name in DASK_OPTIONS:
            if backend != "dask":
                raise TypeError(f"{function}(): `{name}` is an option of backend='dask', not of "
                                f"backend={backend!r}")
            continue
        close = difflib.get_close_matches(name, list(parameters) + list(DASK_OPTIONS), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        raise TypeError(f"{function}() got an unknown keyword argument `{name}`: it is not a parameter "
                        f"of {function}{hint} (parameters: {', '.join(parameters)}; options of "
                        f"backend='dask': {', '.join(DASK_OPTIONS)})")
