"""Running chunk tasks on a ``dask.distributed`` cluster (``backend="dask"``).

:class:`DaskExecutor` has the interface of :class:`audit.executor.ChunkExecutor`: a context
manager whose ``map(fn, args)`` yields results *in task order*, so every fold the engine does
(including floating-point sums) is the same as with joblib.  A chunk's random stream is keyed by the
chunk itself (:func:`audit.sampling.chunk_rng`), never by the worker that ran it, hence a report is
bit-identical to the local backends for the same seed.

Three properties matter at scale:

* **flat memory, streaming results.**  At most ``window`` tasks are outstanding (submitted but not
  yet handed to the caller); results are collected as they complete
  (:class:`distributed.as_completed`), buffered only until every earlier task has been yielded, and
  each future is released as soon as it is consumed, so neither the client nor the workers hold
  more than a window of results.
* **arguments shipped once.**  An argument that is the same object in every task of a ``map`` call
  (the engine's ``AuditJob``: mechanism, datasets, binnings) is submitted once as a task of its own
  and the chunk tasks depend on it, so it is serialised once per call, not once per chunk, and each
  worker fetches it once.  Unlike ``Client.scatter``, a task can be recomputed by the scheduler, so
  losing every worker that held it loses nothing.
* **lost workers lose no work.**  When a worker process dies, the scheduler reschedules the tasks it
  was running or holding (up to ``distributed.scheduler.allowed-failures`` deaths per task, 3 by
  default, after which the task fails with ``KilledWorker``).  Because a chunk's result depends only
  on the chunk, a recomputed chunk is identical to the lost one and so is the report.  Task
  ``retries`` are deliberately *not* used: they re-run tasks that raised, and a mechanism that
  raises does so deterministically for its seed.

The Dask extra is optional: without it, constructing the executor raises an ``ImportError`` that
says ``pip install "dpaudit[dask]"``.

References
----------
Dask Development Team, *Dask: Library for dynamic task scheduling* (2016), https://dask.org —
``distributed`` futures, ``as_completed`` and the scheduler's handling of worker failure.
"""

from __future__ import annotations

import logging
import numbers
import sys
import uuid
import warnings
from enum import Enum
from typing import Any, Callable, Iterator, Optional, Sequence

from .parallelism import check_n_jobs

__all__ = ["DaskExecutor", "INSTALL_HINT"]

logger = logging.getLogger(__name__)

INSTALL_HINT = 'pip install "dpaudit[dask]"'

#: Arguments of these types are cheap to send with every task and are never shipped separately.
_SCALARS = (numbers.Number, str, bytes, bool, Enum, type(None))


def _require_distributed():
    """Import ``distributed`` or explain how to install it."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            'backend="dask" needs the optional Dask extra (dask.distributed), which is not '
            f"installed; install it with:  {INSTALL_HINT}") from exc
    return distributed


def _identity(value: Any) -> Any:
    """The task that materialises a shared argument on a worker."""
    return value


class DaskExecutor:
    """Maps chunk tasks over a Dask cluster, yielding results in task order.

    Parameters
    ----------
    n_jobs : int
        Worker processes of the ``LocalCluster`` started when no ``scheduler`` is given
        (-1: all cores).  Ignored when connecting to an existing cluster, whose size is its own.
    scheduler : None, str or distributed.Client
        ``None`` starts a ``LocalCluster`` (``n_jobs`` single-threaded worker processes on
        127.0.0.1) for the run and closes it afterwards; a string is a scheduler address such as
        ``"tcp://10.0.0.5:8786"`` (the cluster is left running); a ``Client`` is used as it is.
    window : int, optional
        Most tasks outstanding at once (submitted and not yet yielded).  Defaults to twice
        :attr:`batch_size`, so a batch of the engine is in flight at once while memory stays flat.
    share_arguments : bool
        Ship arguments common to every task of a ``map`` call once (default) rather than with
        every task.
    dashboard_address : str or None
        Where the started ``LocalCluster`` serves its dashboard; ``":0"`` (default) picks a free
        port, ``None`` disables it.  The address is printed to stderr.

    Examples
    --------
    >>> run_audit(mech, scenario, backend="dask", scheduler="tcp://10.0.0.5:8786")  # doctest: +SKIP
    """

    def __init__(self, n_jobs: int = 1, *, scheduler: Any = None, window: Optional[int] = None,
                 share_arguments: bool = True, dashboard_address: Optional[str] = ":0"):
        self._distributed = _require_distributed()
        self.n_jobs = check_n_jobs(n_jobs)
        if scheduler is not None and not isinstance(scheduler, (str, self._distributed.Client)):
            raise TypeError("`scheduler` must be None, a scheduler address such as "
                            f"'tcp://10.0.0.5:8786' or a distributed.Client, got {scheduler!r}")
        if isinstance(scheduler, str) and not scheduler.strip():
            raise ValueError(f"`scheduler` must be a non-empty scheduler address, got {scheduler!r}")
        if window is not None and (isinstance(window, bool) or not isinstance(window, numbers.Integral)):
            raise TypeError(f"`window` must be a positive integer, got {window!r}")
        if window is not None and window < 1:
            raise ValueError(f"`window` must be a positive integer, got {window!r}")
        if not isinstance(share_arguments, bool):
            raise TypeError(f"`share_arguments` must be True or False, got {share_arguments!r}")
        if dashboard_address is not None and not isinstance(dashboard_address, str):
            raise TypeError(f"`dashboard_address` must be a string such as ':8787' or None, "
                            f"got {dashboard_address!r}")
        self.scheduler = scheduler
        self.window = None if window is None else int(window)
        self.share_arguments = share_arguments
        self.dashboard_address = dashboard_address
        self.client = None
        self.cluster = None
        self._owns_client = False
        self._shared: dict[int, tuple[Any, Any]] = {}  # id(obj) -> (obj, future)

    # --- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> "DaskExecutor":
        distributed = self._distributed
        if isinstance(self.scheduler, distributed.Client):
            self.client = self.scheduler
        elif isinstance(self.scheduler, str):
            self.client = distributed.Client(self.scheduler)
            self._owns_client = True
            logger.info("connected to the Dask scheduler at %s (dashboard: %s)",
                        self.scheduler, self.client.dashboard_link)
        else:
            workers = self.n_jobs if self.n_jobs > 0 else _cpu_count()
            self.cluster = distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=self.dashboard_address)
            try:
                self.client = distributed.Client(self.cluster)
            except BaseException:
                self.cluster.close()
                self.cluster = None
                raise
            self._owns_client = True
            link = self.cluster.dashboard_link or "disabled"
            print(f"dpaudit: started a Dask LocalCluster with {workers} worker processes; "
                  f"dashboard: {link}", file=sys.stderr, flush=True)
        return self

    def __exit__(self, *exc) -> None:
        self._release_shared(keep=())
        if self._owns_client and self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client, self.cluster, self._owns_client = None, None, False

    # --- sizing -----------------------------------------------------------------------------------

    @property
    def threads(self) -> int:
        """Worker threads the cluster has now (it may grow or shrink during a run)."""
        if self.client is None:
            return self.n_jobs if self.n_jobs > 0 else _cpu_count()
        return max(1, sum(self.client.nthreads().values()))

    @property
    def batch_size(self) -> int:
        """Chunks handed out between two checkpoints: four per worker thread, as for joblib."""
        return max(8, 4 * self.threads)

    # --- mapping ----------------------------------------------------------------------------------

    def map(self, fn: Callable, args: Sequence[tuple]) -> Iterator[Any]:
        """``fn(*a)`` for each ``a`` in ``args`` on the cluster, yielded in the order of ``args``."""
        if self.client is None:
            raise RuntimeError("use the executor as a context manager")
        args = [tuple(a) for a in args]
        shared = self._share(args) if self.share_arguments else {}
        window = self.window or 2 * self.batch_size
        return self._stream(fn, args, shared, window)

    def _stream(self, fn, args, shared, window) -> Iterator[Any]:
        client, total = self.client, len(args)
        token = uuid.uuid4().hex
        name = getattr(fn, "__name__", "task")
        block = max(1, window // 4)
        completed = self._distributed.as_completed(loop=client.loop)
        index_of: dict = {}
        done: dict[int, Any] = {}
        live: dict = {}
        submitted = 0

        def submit(count: int) -> None:
            nonlocal submitted
            indices = range(submitted, min(total, submitted + count))
            if not indices:
                return
            columns = [[shared.get(p, args[i][p]) for i in indices] for p in range(len(args[indices[0]]))]
            keys = [f"{name}-{token}-{i}" for i in indices]
            futures = client.map(fn, *columns, key=keys, pure=False)
            for i, future in zip(indices, futures):
                index_of[future.key] = i
                live[future.key] = future
            completed.update(futures)
            submitted = indices[-1] + 1

        try:
            submit(window)
            for wanted in range(total):
                while wanted not in done:
                    finished = completed.next_batch(block=True)
                    # one round trip for every result ready; raises the task's own exception
                    for future, result in zip(finished, client.gather(finished)):
                        done[index_of.pop(future.key)] = result
                        live.pop(future.key).release()
                yield done.pop(wanted)
                outstanding = submitted - (wanted + 1)
                if submitted < total and outstanding <= window - block:
                    submit(window - outstanding)
        finally:
            completed.clear()
            if live:  # stopped early (an error, or the caller closed the generator)
                client.cancel(list(live.values()))

    def _share(self, args: list[tuple]) -> dict[int, Any]:
        """Futures for the arguments that are one and the same object in every task."""
        if not args:
            return {}
        first = args[0]
        positions = [p for p, value in enumerate(first)
                     if not isinstance(value, _SCALARS) and all(len(a) == len(first) and a[p] is value
                                                                for a in args)]
        shared = {}
        for p in positions:
            value = first[p]
            entry = self._shared.get(id(value))
            if entry is None or entry[0] is not value:
                key = f"shared-{type(value).__name__}-{uuid.uuid4().hex}"
                with warnings.catch_warnings():
                    # "Sending large graph": the value is embedded in the graph exactly once, on
                    # purpose, so that the scheduler can recompute it if every holder is lost.
                    warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
                    future = self.client.submit(_identity, value, key=key, pure=False)
                entry = (value, future)
                self._shared[id(value)] = entry
            shared[p] = entry[1]
        self._release_shared(keep={id(first[p]) for p in positions})
        return shared

    def _release_shared(self, keep) -> None:
        """Drop shared arguments no longer in use (an earlier phase's job), freeing worker memory."""
        for ident in [i for i in self._shared if i not in keep]:
            _, future = self._shared.pop(ident)
            future.release()


def _cpu_count() -> int:
    from dask.system import CPU_COUNT

    return int(CPU_COUNT)

