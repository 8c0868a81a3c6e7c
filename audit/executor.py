"""Running chunk tasks in parallel, streaming results back in task order.

Results are consumed in the order of the task list, whatever order workers finish in, so every
reduction (including floating-point sums) is the same for any number of workers or backend.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Iterator, Sequence

from joblib import Parallel, delayed

__all__ = ["ChunkExecutor", "make_executor", "check_backend"]

def check_backend(backend: Any) -> str:
    if not isinstance(backend, str) or not backend:
        raise TypeError(f"`backend` must be a backend name such as 'loky' or 'dask', got {backend!r}")
    return backend


def check_n_jobs(n_jobs: Any) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"`n_jobs` must be an integer (1, 2, ... or -1 for all cores), got {n_jobs!r}")
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"`n_jobs` must be a positive integer or -1, got {n_jobs!r}")
    return int(n_jobs)


class ChunkExecutor:
    """Maps a function over tasks with joblib, yielding results in task order as they stream in."""

    def __init__(self, backend: str = "loky", n_jobs: int = 1):
        self.backend = check_backend(backend)
        self.n_jobs = check_n_jobs(n_jobs)
        self._parallel = None

    def __enter__(self) -> "ChunkExecutor":
        self._parallel = Parallel(n_jobs=self.n_jobs, backend=self.backend, return_as="generator")
        self._parallel.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._parallel is not None:
            self._parallel.__exit__(*exc)
            self._parallel = None

    @property
    def batch_size(self) -> int:
        """Results between two checkpoints of the engine."""
        workers = self.n_jobs if self.n_jobs > 0 else 2
        return max(8, 4 * workers)

    def map(self, fn: Callable, args: Sequence[tuple]) -> Iterator[Any]:
        if self._parallel is None:
            raise RuntimeError("use the executor as a context manager")
        return iter(self._parallel(delayed(fn)(*a) for a in args))


def make_executor(backend: str, n_jobs: int, **options) -> ChunkExecutor:
    """The executor for ``backend``: joblib's backends, or a Dask cluster for ``"dask"``."""
    backend = check_backend(backend)
    if backend == "dask":
        from .dask_backend import DaskExecutor  # optional extra

        return DaskExecutor(n_jobs=n_jobs, **options)
    if options:
        raise TypeError(f"backend {backend!r} takes no options, got {sorted(options)}; "
                        "options such as `scheduler` belong to backend='dask'")
    return ChunkExecutor(backend=backend, n_jobs=n_jobs)
