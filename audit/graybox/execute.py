"""Running a mechanism under the tape: the record on D, the replays on D′ and on D (scaled noise).

One pair costs three executions of the mechanism (record, replay on D′, scaled replay on D),
each asked for the same number of output rows; a vectorized mechanism whose noise has E elements
per row is recorded once more with 2(E + 3) rows, so that its footprint fit has spare rows.

Bad input is one line each (:class:`~audit.graybox.findings.ReplayError`): a mechanism that
raises (on D or D′), returns something other than a finite ``(rows, k)`` array, or that a replay on
its own input does not reproduce (it draws randomness that cannot be intercepted: the clock, a C
extension's generator) or makes other calls when replayed on the same input.
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any, Optional

import numpy as np

from .findings import ReplayError
from .intercept import InterceptedGenerator, intercepting, reinstall
from .libraries import WATCHED_MODULES
from .tape import Tape
from .trace import Trace

__all__ = ["execute", "check_reproduced", "mechanism_name", "LAMBDA"]

#: The factor the scaled replay multiplies location-scale noise by.
LAMBDA = 2.0


def mechanism_name(mechanism: Any) -> str:
    return str(getattr(mechanism, "name", None) or getattr(mechanism, "__qualname__", None) or type(mechanism).__name__)


def execute(mechanism: Any, dataset: Any, rows: int, *, seed: int, source: Optional[Trace] = None,
            lam: float = 1.0, scaled_rows: Optional[slice] = None, side: str = "D", slack: int = 0,
            scale_all: bool = False) -> tuple[Trace, Optional[int]]:
    """One execution of ``mechanism(dataset, rows, rng)`` under a tape (a record if ``source`` is None)."""
    for _ in range(2):
        loaded = {name for name in WATCHED_MODULES if name in sys.modules}
        tape = Tape(source, rows=rows, lam=lam, scaled_rows=scaled_rows, slack=slack, scale_all=scale_all)
        rng = InterceptedGenerator(np.random.PCG64(seed))
        collecting = gc.isenabled()
        gc.disable()  # a record holds many small objects: the collector would rescan them at every call
        started = time.perf_counter()
        try:
            with intercepting(tape):
                output = mechanism(dataset, rows, rng)
        except ReplayError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code: reported with its name and where
            kind = "replay" if source is not None else "record"
            raise ReplayError(f"{mechanism_name(mechanism)} raised {type(exc).__name__} on {side} ({kind}): "
                              f"{str(exc).splitlines()[0] if str(exc) else ''}") from exc
        finally:
            if collecting:
                gc.enable()
        seconds = time.perf_counter() - started
        if {name for name in WATCHED_MODULES if name in sys.modules} == loaded:
            break
        reinstall()  # a library imported during the run was not patched: run once more with it patched
    output = np.asarray(output, dtype=np.float64) if not isinstance(output, np.ndarray) else output.astype(np.float64)
    if output.ndim == 1 and output.shape[0] == rows:
        output = output[:, None]
    if output.ndim != 2 or output.shape[0] != rows:
        raise ReplayError(f"{mechanism_name(mechanism)} returned shape {output.shape} on {side}, expected ({rows}, k)")
    return Trace(tuple(tape.calls), output, rows, seconds), tape.diverged


def check_reproduced(mechanism: Any, record: Trace, replay: Trace, diverged: Optional[int], rows: slice, *,
                     prefix: bool = False) -> None:
    """Raise if a replay on the record's own input did not make the same calls (a prefix of them
    when it was asked for fewer rows) or give the same output on ``rows``."""
    name = mechanism_name(mechanism)
    count = len(replay.calls) <= len(record.calls) if prefix else len(replay.calls) == len(record.calls)
    if diverged is not None or not count:
        raise ReplayError(f"{name} is not replayable: {len(record.calls)} random calls when recorded and "
                          f"{len(replay.calls)} when replayed on the same input (first difference at call "
                          f"{diverged if diverged is not None else min(len(record.calls), len(replay.calls))})")
    a, b = record.output[rows], replay.output[rows]
    if a.shape != b.shape:
        raise ReplayError(f"{name} is not replayable: its output has shape {b.shape} on replay, {a.shape} when recorded")
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if not np.all(same):
        r, j = np.argwhere(~same)[0]
        raise ReplayError(f"{name} is not replayable: replayed on the same input it gave {b[r, j]!r} instead of "
                          f"{a[r, j]!r} (row {r}, column {j}); it draws randomness that cannot be intercepted "
                          "(the clock, a C or Rust extension's own generator)")
